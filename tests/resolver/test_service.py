"""The resolver's service rules (``urnkit.resolver.service``), in process, on SQLite and PostgreSQL.

* Authorization: a registrant writes only under the prefixes delegated to its organisation and
  their sub-namespaces (RFC 8458 §4.3), never under a sibling (``fi:demox`` is not ``fi:demo``);
  an admin writes anywhere; a revoked token authenticates no one.
* Registration: ``put`` says whether it created; equivalent spellings are one record (RFC 8141
  §3, RFC 8458 §4.3); a deactivated URN is never written again and is not its own successor;
  every change appends one history entry and none is rewritten (RFC 8458 §4.1: no reuse).
* Generation never hands out a taken URN, and reserves at most ``MAX_GENERATE`` at once.
* Batches are all or nothing; imports skip what is present, duplicates within a batch included,
  and give each record to the holder of the longest delegated prefix covering it; an export
  imported into a new database gives the same records.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resolver_support import fresh_database

from urnkit.namespaces import nbn
from urnkit.resolver import service as service_module
from urnkit.resolver.domain import (
    ConflictError,
    ForbiddenError,
    InvalidURNError,
    Location,
    NotFoundError,
    Principal,
    Record,
    UnacceptableError,
    UnauthenticatedError,
    merge_patch,
)
from urnkit.resolver.service import MAX_BATCH, MAX_GENERATE, Service, record_json
from urnkit.resolver.store import Store, links, url_hash
from urnkit.urn import URN

DB_SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
HERE = [Location("https://example.org/here")]
THERE = [Location("https://example.org/there", priority=2, label="copy", media_type="text/html")]


@dataclass(frozen=True)
class Principals:
    """The callers of a test: registrants of Demo Library (``fi:demo``) and Other Library
    (``fi:demox``, a sibling), and an admin of Other Library."""

    demo: Principal
    other: Principal
    admin: Principal
    demo_token: str


def _set_up(service: Service) -> Principals:
    service.store.upgrade()
    service.create_organisation("Demo Library")
    service.create_organisation("Other Library")
    service.delegate("Demo Library", "FI:Demo")
    service.delegate("Other Library", "fi:demox", "random")
    demo_token = service.create_token("Demo Library", "registrant")
    return Principals(
        demo=service.authenticate(demo_token),
        other=service.authenticate(service.create_token("Other Library")),
        admin=service.authenticate(service.create_token("Other Library", "admin")),
        demo_token=demo_token,
    )


@pytest.fixture
def service(database_url: str) -> Iterator[Service]:
    """A service on a new, empty database (``who`` gives it the schema and its callers)."""
    store = Store(database_url)
    yield Service(store)
    store.close()


@pytest.fixture
def who(service: Service) -> Principals:
    """The current schema, two organisations with sibling prefixes, and their tokens'
    principals."""
    return _set_up(service)


def _all(service: Service) -> list[Record]:
    return list(service.export_records(page=7))


def _comparable(record: Record) -> dict[str, Any]:
    """A record as the API shows it, without the times an import sets anew."""
    shown = record_json(record)
    del shown["created"], shown["updated"]
    return shown


# --- authentication and authorization ------------------------------------------------------------


def test_authentication(service: Service, who: Principals) -> None:
    assert who.demo.organisation == "Demo Library"
    assert who.demo.role == "registrant"
    assert (who.admin.organisation, who.admin.role) == ("Other Library", "admin")
    for token in (None, "", "urnkit_unknown", who.demo_token + "x"):
        with pytest.raises(UnauthenticatedError):
            service.authenticate(token)


def test_a_revoked_token_authenticates_no_one(service: Service, who: Principals) -> None:
    service.revoke_token(who.demo.token_id)
    with pytest.raises(UnauthenticatedError):
        service.authenticate(who.demo_token)
    with pytest.raises(NotFoundError):  # revoked once, for good
        service.revoke_token(who.demo.token_id)
    service.authenticate(service.create_token("Demo Library"))  # the organisation's others work


# (caller, URN, allowed): RFC 8458 §4.3, a national library delegates sub-namespaces; "The
# sub-namespace MAY be further divided by the partner organization", and "Being part of the
# prefix, sub-namespace identifier strings are case-insensitive".
AUTHORIZATION = [
    ("demo", "urn:nbn:fi:demo-1", True),
    ("demo", "URN:NBN:FI:DEMO-2", True),
    ("demo", "urn:nbn:fi:demo:sub-1", True),
    ("demo", "urn:nbn:fi:Demo:sub:deeper-1", True),
    ("demo", "urn:nbn:fi:demox-1", False),  # a sibling prefix, not a sub-namespace
    ("demo", "urn:nbn:fi:dem-1", False),
    ("demo", "urn:nbn:fi-1", False),  # the parent
    ("demo", "urn:nbn:se:demo-1", False),
    ("other", "urn:nbn:fi:demox-1", True),
    ("other", "urn:nbn:fi:demo-1", False),
    ("other", "urn:nbn:fi:demo:x-1", False),
    ("admin", "urn:nbn:fi:demo-1", True),  # an admin writes anywhere
    ("admin", "urn:nbn:se:elsewhere-1", True),
]


def test_authorization_matrix(service: Service, who: Principals, subtests: pytest.Subtests) -> None:
    for number, (caller, urn, allowed) in enumerate(AUTHORIZATION):
        with subtests.test(caller=caller, urn=urn, allowed=allowed):
            # Names of its own for each case: "-1" becomes "-1-0", "-1-1", …
            _check_authorization(service, who, getattr(who, caller), f"{urn}-{number}", allowed)


def _check_authorization(
    service: Service, who: Principals, principal: Principal, urn: str, allowed: bool
) -> None:
    """``principal`` may put ``urn`` and patch or deactivate a record beside it, or none."""
    existing = f"{urn}-existing"
    service.put(who.admin, existing, HERE, {"v": 0})
    before = service.history(existing)
    if allowed:
        assert service.put(principal, urn, HERE, {})[1] is True
        assert service.patch(principal, existing, {"metadata": {"v": 1}}).metadata == {"v": 1}
        assert service.deactivate(principal, existing, "gone", []).status == "deactivated"
        assert len(service.history(existing)) == len(before) + 2
        return
    with pytest.raises(ForbiddenError):
        service.put(principal, urn, HERE, {})
    with pytest.raises(ForbiddenError):
        service.put(principal, existing, THERE, {})
    with pytest.raises(ForbiddenError):
        service.patch(principal, existing, {"metadata": {"v": 1}})
    with pytest.raises(ForbiddenError):
        service.deactivate(principal, existing, "gone", [])
    with pytest.raises(NotFoundError):
        service.get(urn)
    assert service.history(existing) == before
    assert service.get(existing).metadata == {"v": 0}


def test_a_prefix_delegated_on_belongs_to_its_holder(service: Service, who: Principals) -> None:
    # RFC 8458 §4.3: sub-namespaces are delegated further; the longest delegated prefix
    # covering a URN decides who may write it, so fi:demo's holder cannot write under a
    # fi:demo:lab delegated to another organisation.
    service.delegate("Other Library", "fi:demo:lab")
    with pytest.raises(ForbiddenError, match=r"'fi:demo:lab'.*delegated to 'Other Library'"):
        service.put(who.demo, "urn:nbn:fi:demo:lab-1", HERE, {})
    record, created = service.put(who.other, "urn:nbn:fi:demo:lab-1", HERE, {})
    assert (created, record.owner) == (True, "Other Library")
    assert service.put(who.demo, "urn:nbn:fi:demo:other-1", HERE, {})[1]  # the rest stays


def test_generation_is_authorized_too(service: Service, who: Principals) -> None:
    with pytest.raises(ForbiddenError):
        service.generate(who.demo, "fi:demox")
    with pytest.raises(ForbiddenError):
        service.generate(who.other, "fi:demo")
    assert [r.owner for r in service.generate(who.admin, "fi:demo")] == ["Demo Library"]
    with pytest.raises(NotFoundError):
        service.generate(who.admin, "se:nowhere")
    with pytest.raises(ForbiddenError):
        Service.require_admin(who.demo)
    Service.require_admin(who.admin)


# --- put: create, replace, equivalence -----------------------------------------------------------


def test_put_creates_then_replaces(service: Service, who: Principals) -> None:
    record, created = service.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"title": "One"})
    assert created is True
    assert (record.urn, record.key, record.prefix) == (
        "urn:nbn:fi:demo-1",
        "urn:nbn:fi:demo-1",
        "fi:demo",
    )
    assert (record.status, record.owner, record.locations) == ("active", "Demo Library", (*HERE,))
    assert service.get("urn:nbn:fi:demo-1") == record

    replaced, created = service.put(who.demo, "urn:nbn:fi:demo-1", THERE, {"title": "Two"})
    assert created is False
    assert (replaced.locations, dict(replaced.metadata)) == ((*THERE,), {"title": "Two"})
    assert replaced.created == record.created
    assert replaced.updated >= record.updated
    assert service.get("urn:nbn:fi:demo-1") == replaced
    assert len(_all(service)) == 1


EQUIVALENT = [
    # RFC 8141 §3: "urn" and the NID are case-insensitive; RFC 8458 §4.3: so is the prefix.
    ("URN:NBN:FI:DEMO-1", "urn:nbn:fi:demo-1"),
    ("urn:nbn:fi:demo:Sub-x", "UrN:nBn:Fi:DeMo:sUB-x"),
    # RFC 8458 §4.3 step 3: the characters of percent-encodings in a single case.
    ("urn:nbn:fi:demo-a%7e", "urn:nbn:fi:demo-a%7E"),
]


def test_equivalent_spellings_are_one_record(
    service: Service, who: Principals, subtests: pytest.Subtests
) -> None:
    for number, (first, second) in enumerate(EQUIVALENT):
        with subtests.test(first=first, second=second):
            record, created = service.put(who.demo, first, HERE, {})
            assert created is True
            again, created = service.put(who.demo, second, THERE, {})
            assert created is False
            assert again.urn == record.urn == first  # stored as first written
            assert service.get(second) == service.get(first) == again
            assert [r.urn for r in _all(service)] == [f for f, _ in EQUIVALENT[: number + 1]]
    with subtests.test("NBN strings are case-sensitive"):
        # RFC 8458 §4.2: NBN strings "can be case sensitive at the preference of the assigning
        # authority; parsers therefore MUST treat these as case sensitive".
        assert service.put(who.demo, "urn:nbn:fi:demo-ABC", HERE, {})[1] is True
        assert service.put(who.demo, "urn:nbn:fi:demo-abc", THERE, {})[1] is True
        assert service.get("urn:nbn:fi:demo-ABC").locations == (*HERE,)
        assert service.get("urn:nbn:fi:demo-abc").locations == (*THERE,)


@DB_SETTINGS
@given(data=st.data())
def test_any_respelling_finds_the_record(
    service: Service, who: Principals, data: st.DataObject
) -> None:
    number = data.draw(st.integers(1, 10**9))
    head = "urn:nbn:fi:demo-"  # each of its letters in either case (RFC 8141 §3, RFC 8458 §4.3)
    flips = data.draw(st.lists(st.booleans(), min_size=len(head), max_size=len(head)))
    spelling = "".join(c.swapcase() if f else c for c, f in zip(head, flips, strict=True))
    service.put(who.demo, f"{head}{number}", HERE, {})
    assert service.put(who.demo, f"{spelling}{number}", HERE, {"again": True})[1] is False
    assert service.get(f"{spelling}{number}").metadata == {"again": True}


UNFIT_NAMES = [
    "urn:nbn:fi:demo-1?+resolver",  # RFC 8141 §2: components are not part of the name
    "urn:nbn:fi:demo-1?=lang=fi",
    "urn:nbn:fi:demo-1#page=2",
    "urn:nbn:fi:demo:1",  # RFC 8458 §4.2 read strictly: no hyphen
    "urn:isbn:0451450523",  # URN:NBNs only
]
UNFIT_LOCATIONS = [
    Location("mailto:someone@example.org"),
    Location("https:///no-host"),
    Location("/relative"),
    Location("https://example.org/a b"),
    Location("https://example.org/", priority=-1),
]


def test_unfit_names_and_locations_are_refused(
    service: Service, who: Principals, subtests: pytest.Subtests
) -> None:
    for text in UNFIT_NAMES:
        with subtests.test(urn=text), pytest.raises(UnacceptableError):
            service.put(who.admin, text, HERE, {})
    for location in UNFIT_LOCATIONS:
        with subtests.test(location=location), pytest.raises(UnacceptableError):
            service.put(who.demo, "urn:nbn:fi:demo-1", [*HERE, location], {})
    assert _all(service) == []


# --- deactivation --------------------------------------------------------------------------------


def test_a_deactivated_urn_is_not_written_again(service: Service, who: Principals) -> None:
    # RFC 8458 §4.1: "A URN:NBN, once it has been generated from a NBN, MUST NOT be reused".
    service.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"title": "One"})
    service.put(who.demo, "urn:nbn:fi:demo-2", HERE, {})
    gone = service.deactivate(who.demo, "urn:nbn:fi:demo-1", "withdrawn", ["urn:nbn:fi:demo-2"])
    assert (gone.status, gone.note, gone.successors) == (
        "deactivated",
        "withdrawn",
        ("urn:nbn:fi:demo-2",),
    )
    history = service.history("urn:nbn:fi:demo-1")
    with pytest.raises(ConflictError):
        service.put(who.demo, "urn:nbn:fi:demo-1", THERE, {})
    with pytest.raises(ConflictError):
        service.put(who.admin, "URN:NBN:FI:DEMO-1", THERE, {})
    with pytest.raises(ConflictError):
        service.patch(who.demo, "urn:nbn:fi:demo-1", {"metadata": {"title": "Again"}})
    assert service.get("urn:nbn:fi:demo-1") == gone
    assert service.history("urn:nbn:fi:demo-1") == history
    resolution = service.resolve("urn:nbn:fi:demo-1")
    assert (resolution.kind, resolution.record) == ("gone", gone)
    with pytest.raises(NotFoundError):
        service.deactivate(who.demo, "urn:nbn:fi:demo-404", None, [])


def test_a_urn_is_not_its_own_successor(
    service: Service, who: Principals, subtests: pytest.Subtests
) -> None:
    record, _ = service.put(who.demo, "urn:nbn:fi:demo-1", HERE, {})
    for successor in ("urn:nbn:fi:demo-1", "URN:NBN:FI:DEMO-1", "urn:nbn:fi:demo-1?=x=1#y"):
        with subtests.test(successor=successor), pytest.raises(UnacceptableError):
            service.deactivate(
                who.demo, "urn:nbn:fi:demo-1", None, ["urn:nbn:fi:demo-2", successor]
            )
    assert service.get("urn:nbn:fi:demo-1") == record
    assert len(service.history("urn:nbn:fi:demo-1")) == 1


# --- history -------------------------------------------------------------------------------------


def test_every_change_appends_one_entry_and_none_is_rewritten(
    service: Service, who: Principals
) -> None:
    urn = "urn:nbn:fi:demo-1"
    changes: list[tuple[str, Callable[[], Record]]] = [
        ("created", lambda: service.put(who.demo, urn, HERE, {"a": 1})[0]),
        ("replaced", lambda: service.put(who.admin, urn.upper(), THERE, {"a": 2})[0]),
        ("patched", lambda: service.patch(who.demo, urn, {"metadata": {"b": 3}})),
        ("patched", lambda: service.patch(who.demo, urn, {"locations": HERE})),
        ("deactivated", lambda: service.deactivate(who.demo, urn, "old", [])),
    ]
    seen: list[Any] = []
    for action, change in changes:
        record = change()
        history = service.history(urn)
        assert history[: len(seen)] == seen  # earlier entries are never rewritten
        assert len(history) == len(seen) + 1
        entry = history[-1]
        assert entry.action == action
        assert dict(entry.record) == record_json(record)
        assert entry.actor.startswith("Other Library" if action == "replaced" else "Demo Library")
        seen = history
    assert [e.at for e in seen] == sorted(e.at for e in seen)
    with pytest.raises(ConflictError):
        service.put(who.demo, urn, HERE, {})
    with pytest.raises(ForbiddenError):
        service.patch(who.other, urn, {"metadata": {}})
    assert service.history(urn) == seen  # refusals leave no trace


@DB_SETTINGS
@given(patches=st.lists(st.dictionaries(st.sampled_from("abc"), st.none() | st.integers())))
def test_patching_metadata_is_rfc7396(
    service: Service, who: Principals, patches: list[dict[str, int | None]]
) -> None:
    urn = f"urn:nbn:fi:demo-{len(_all(service))}"
    expected: Any = {"a": 0, "keep": {"x": 1}}
    service.put(who.demo, urn, HERE, expected)
    for patch in patches:
        expected = merge_patch(expected, {**patch, "keep": {"y": None}})
        record = service.patch(who.demo, urn, {"metadata": {**patch, "keep": {"y": None}}})
        assert dict(record.metadata) == expected
    assert dict(service.get(urn).metadata) == expected
    assert len(service.history(urn)) == 1 + len(patches)


def test_patch_refusals(service: Service, who: Principals) -> None:
    record, _ = service.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"a": 1})
    for patch in ({"status": "active"}, {"metadata": ["a"]}, {"metadata": None}):
        with pytest.raises(UnacceptableError):
            service.patch(who.demo, "urn:nbn:fi:demo-1", patch)
    with pytest.raises(NotFoundError):
        service.patch(who.demo, "urn:nbn:fi:demo-2", {"metadata": {}})
    assert service.get("urn:nbn:fi:demo-1") == record


# --- resolution ----------------------------------------------------------------------------------


def test_resolution(service: Service, who: Principals) -> None:
    service.put(
        who.demo,
        "urn:nbn:fi:demo-1",
        [Location("https://example.org/b?x=1", priority=2), Location("https://example.org/a")],
        {},
    )
    # RFC 8141 §2.3.2: the q-component is copied into the locator's query; §3: neither the
    # q- nor the f-component changes which record it is.
    found = service.resolve("URN:NBN:FI:DEMO-1?=lang=fi#section")
    assert (found.kind, found.target) == ("redirect", "https://example.org/a?lang=fi")
    service.patch(who.demo, "urn:nbn:fi:demo-1", {"locations": [Location("https://e.org/?q")]})
    assert service.resolve("urn:nbn:fi:demo-1?=p=2").target == "https://e.org/?q&p=2"
    assert service.resolve("urn:nbn:fi:demo-1").target == "https://e.org/?q"
    reserved = service.generate(who.demo, "fi:demo")[0]
    assert service.resolve(reserved.urn).kind == "surrogate"  # RFC 8458 §4.5: no location yet
    with pytest.raises(NotFoundError):
        service.resolve("urn:nbn:fi:demo-404")


# --- generation ----------------------------------------------------------------------------------


def test_generation_skips_taken_sequential_names(service: Service, who: Principals) -> None:
    # The next sequential names, registered by hand first, are never handed out again.
    taken = [service.put(who.demo, f"urn:nbn:fi:demo-{n}", HERE, {"n": n})[0] for n in (1, 3)]
    made = service.generate(who.demo, "fi:demo", 3)
    assert [r.urn for r in made] == ["urn:nbn:fi:demo-2", "urn:nbn:fi:demo-4", "urn:nbn:fi:demo-5"]
    assert all(
        (r.status, r.owner, r.prefix) == ("reserved", "Demo Library", "fi:demo") for r in made
    )
    assert [service.get(r.urn) for r in taken] == taken  # untouched
    assert [r.urn for r in service.generate(who.demo, "fi:demo", 1)] == ["urn:nbn:fi:demo-6"]
    assert [service.history(r.urn)[-1].action for r in made] == ["reserved"] * 3


def test_generation_skips_taken_random_names(
    service: Service, who: Principals, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.put(who.other, "urn:nbn:fi:demox-taken", HERE, {})
    draws = iter(["taken", "taken", "fresh1", "taken", "fresh2"])
    monkeypatch.setattr(service_module, "random_nbn_string", lambda: next(draws))
    made = service.generate(who.other, "fi:demox", 2)
    assert [r.urn for r in made] == ["urn:nbn:fi:demox-fresh1", "urn:nbn:fi:demox-fresh2"]
    assert service.get("urn:nbn:fi:demox-taken").status == "active"


def test_random_names_are_fit_to_register(service: Service, who: Principals) -> None:
    made = service.generate(who.other, "fi:demox", 50)
    assert len({r.key for r in made}) == 50
    for record in made:
        assert URN.parse(record.urn).equivalence_key() == record.key
        assert nbn.validate(record.urn, strict=True) == []


def test_generation_under_dnb_countries_adds_the_check_digit(
    service: Service, who: Principals
) -> None:
    service.delegate("Demo Library", "de:demo")
    service.delegate("Demo Library", "at:demo", "random")
    names = [r.urn for r in service.generate(who.demo, "de:demo", 12)]
    names += [r.urn for r in service.generate(who.demo, "at:demo", 12)]
    for name in names:
        assert name[-1] == nbn.dnb_check_digit(name[:-1])
        assert nbn.validate(name, strict=True) == []
    assert [name[:-1] for name in names[:3]] == [f"urn:nbn:de:demo-{n}" for n in (1, 2, 3)]


def test_generation_limits(service: Service, who: Principals) -> None:
    made = service.generate(who.demo, "fi:demo", MAX_GENERATE)
    assert len({r.key for r in made}) == MAX_GENERATE
    assert made[-1].urn == f"urn:nbn:fi:demo-{MAX_GENERATE}"
    for count in (0, -1, MAX_GENERATE + 1):
        with pytest.raises(UnacceptableError):
            service.generate(who.demo, "fi:demo", count)
    assert len(_all(service)) == MAX_GENERATE
    assert service.generate(who.demo, "fi:demo")[0].urn == f"urn:nbn:fi:demo-{MAX_GENERATE + 1}"


def test_concurrent_generation_never_repeats(service: Service, who: Principals) -> None:
    made: list[list[Record]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def generate(prefix: str, principal: Principal) -> None:
        store = Store(service.store.url)  # a store of its own, as another process would have
        try:
            barrier.wait(timeout=30)
            made.append(Service(store).generate(principal, prefix, 20))
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            store.close()

    threads = [
        threading.Thread(target=generate, args=(prefix, principal))
        for prefix, principal in [("fi:demo", who.demo), ("fi:demox", who.other)] * 2
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    keys = [r.key for batch in made for r in batch]
    assert len(keys) == len(set(keys)) == 80
    assert sorted(int(k.rsplit("-", 1)[1]) for k in keys if "demox" not in k) == list(range(1, 41))


# --- batches -------------------------------------------------------------------------------------


def test_a_batch_is_all_or_nothing(service: Service, who: Principals) -> None:
    existing, _ = service.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"v": 1})
    history = service.history("urn:nbn:fi:demo-1")
    items: list[tuple[str, list[Location], dict[str, Any]]] = [
        ("urn:nbn:fi:demo-2", HERE, {}),
        ("urn:nbn:fi:demo-1", THERE, {"v": 2}),
        ("urn:nbn:fi:demox-3", HERE, {}),  # not delegated to Demo Library
        ("urn:nbn:fi:demo-4", HERE, {}),
    ]
    with pytest.raises(ForbiddenError) as refused:
        service.batch(who.demo, items)
    assert refused.value.extensions["index"] == 2
    assert [r.urn for r in _all(service)] == ["urn:nbn:fi:demo-1"]
    assert service.get("urn:nbn:fi:demo-1") == existing
    assert service.history("urn:nbn:fi:demo-1") == history

    items[2] = ("urn:nbn:fi:demo-3", [Location("not a url")], {})
    with pytest.raises(UnacceptableError) as unacceptable:
        service.batch(who.demo, items)
    assert unacceptable.value.extensions["index"] == 2
    assert [r.urn for r in _all(service)] == ["urn:nbn:fi:demo-1"]

    items[2] = ("urn:nbn:fi:demo-3", HERE, {})
    status, body = service.batch(who.demo, items)
    assert status == 200
    assert body == {
        "count": 4,
        "results": [
            {"urn": "urn:nbn:fi:demo-2", "result": "created"},
            {"urn": "urn:nbn:fi:demo-1", "result": "replaced"},
            {"urn": "urn:nbn:fi:demo-3", "result": "created"},
            {"urn": "urn:nbn:fi:demo-4", "result": "created"},
        ],
    }
    assert service.get("urn:nbn:fi:demo-1").metadata == {"v": 2}


def test_a_batch_retried_with_its_key_is_not_written_twice(
    service: Service, who: Principals
) -> None:
    items: list[tuple[str, list[Location], dict[str, Any]]] = [("urn:nbn:fi:demo-1", HERE, {})]
    first = service.batch(who.demo, items, idempotency_key="k1")
    assert service.batch(who.demo, items, idempotency_key="k1") == first
    assert len(service.history("urn:nbn:fi:demo-1")) == 1
    with pytest.raises(ConflictError):
        service.batch(who.demo, [("urn:nbn:fi:demo-2", HERE, {})], idempotency_key="k1")
    with pytest.raises(NotFoundError):
        service.get("urn:nbn:fi:demo-2")


def test_batch_sizes() -> None:
    # Refused before the database is asked: an in-memory store without a schema will do.
    service = Service(Store("sqlite://"))
    principal = Principal("Demo Library", "admin", 1)
    for size in (0, MAX_BATCH + 1):
        with pytest.raises(UnacceptableError):
            service.batch(principal, [("urn:nbn:fi:demo-1", HERE, {})] * size)
    service.store.close()


# --- import and export ---------------------------------------------------------------------------


def test_import_skips_what_is_present_and_duplicates_in_a_batch(
    service: Service, who: Principals
) -> None:
    rows: list[Mapping[str, Any]] = [
        {"urn": "urn:nbn:fi:demo-1", "locations": [{"url": "https://example.org/1"}]},
        {"urn": "URN:NBN:FI:DEMO-1", "locations": [{"url": "https://example.org/dup"}]},
        {"urn": "urn:nbn:fi:demo-2", "metadata": {"t": 2}, "status": "reserved"},
        {"urn": "urn:nbn:fi:demo-1"},
    ]
    assert service.import_records(rows) == (2, 2)
    first = service.get("urn:nbn:fi:demo-1")
    assert first.locations == (Location("https://example.org/1"),)  # the first row wins
    assert service.get("urn:nbn:fi:demo-2").status == "reserved"
    assert service.import_records(rows) == (0, 4)  # a rerun adds nothing
    assert service.get("urn:nbn:fi:demo-1") == first
    assert [e.action for e in service.history("urn:nbn:fi:demo-1")] == ["imported"]


def test_import_across_batches(service: Service, who: Principals) -> None:
    rows = [{"urn": f"urn:nbn:fi:demo-{n}"} for n in (1, 2, 1, 3, 3, 2, 4)]
    progress: list[tuple[int, int]] = []
    assert service.import_records(rows, batch_size=2, progress=lambda *p: progress.append(p)) == (
        4,
        3,
    )
    assert progress == [(2, 0), (3, 1), (3, 3), (4, 3)]
    assert [r.urn for r in _all(service)] == [f"urn:nbn:fi:demo-{n}" for n in (1, 2, 3, 4)]


def test_import_gives_records_to_the_prefix_holder(service: Service, who: Principals) -> None:
    service.create_organisation("Sub Library")
    service.delegate("Sub Library", "fi:demo:sub")
    rows = [
        {"urn": "urn:nbn:fi:demo-1"},
        {"urn": "urn:nbn:fi:demo:sub-1"},  # the longest covering prefix wins
        {"urn": "urn:nbn:FI:DEMO:SUB:deeper-1"},
        {"urn": "urn:nbn:fi:demox-1"},  # a sibling, not a sub-namespace
    ]
    assert service.import_records(rows) == (4, 0)
    assert [(r.urn, r.owner) for r in _all(service)] == [
        ("urn:nbn:fi:demo-1", "Demo Library"),
        ("urn:nbn:fi:demo:sub-1", "Sub Library"),
        ("urn:nbn:FI:DEMO:SUB:deeper-1", "Sub Library"),
        ("urn:nbn:fi:demox-1", "Other Library"),
    ]
    with pytest.raises(UnacceptableError):
        service.import_records([{"urn": "urn:nbn:se:nowhere-1"}])
    assert service.import_records([{"urn": "urn:nbn:se:nowhere-1"}], owner="Sub Library") == (1, 0)
    assert service.get("urn:nbn:se:nowhere-1").owner == "Sub Library"
    with pytest.raises(NotFoundError):
        service.import_records([{"urn": "urn:nbn:fi:demo-9"}], owner="Nobody")


def test_import_stores_any_text_exactly(service: Service, who: Principals) -> None:
    """PostgreSQL imports by COPY's text format, which escapes backslash, tab, newline and CR."""
    awkward = 'tab\there, line\nbreak, CR\r, back\\slash \\N \\t, quote" ä \u2028 \x01 end\\'
    service.create_organisation("Awkward Org \\N\\")
    service.delegate("Awkward Org \\N\\", "fi:odd")
    rows: list[dict[str, Any]] = [
        {
            "urn": "urn:nbn:fi:odd-1",
            "locations": [
                {"url": "https://example.org/a\\b", "label": awkward, "media_type": "text/x"},
                {"url": "https://example.org/2", "priority": 0},
            ],
            "metadata": {awkward: [awkward, {"n": 1.5, "\\": None}], "title": "\\N"},
            "successors": [awkward],
            "note": awkward,
            "status": "deactivated",
        },
        {"urn": "urn:nbn:fi:odd-2", "metadata": {"title": "\\"}, "note": "\\N"},
    ]
    assert service.import_records(rows) == (2, 0)
    for row in rows:
        record = service.get(row["urn"])
        assert record.owner == "Awkward Org \\N\\"
        assert record.metadata == row["metadata"]
        assert record.note == row["note"]
        assert list(record.successors) == row.get("successors", [])
        [entry] = service.history(row["urn"])
        assert (entry.action, entry.actor) == ("imported", "Awkward Org \\N\\")
        assert entry.record == record_json(record)
    first = service.get("urn:nbn:fi:odd-1")
    assert [loc.url for loc in first.locations] == [
        "https://example.org/2",
        "https://example.org/a\\b",
    ]
    assert first.locations[1].label == awkward
    assert service.store.resolution_row("urn:nbn:fi:odd-1") == (
        "deactivated",
        "https://example.org/2\nhttps://example.org/a\\b",  # targets: one URL a line
        None,
        "fi:odd",
    )


def test_import_leaves_out_links_known_broken(service: Service, who: Principals) -> None:
    broken, fine = "https://example.org/broken", "https://example.org/fine"
    moment = datetime.now(UTC)
    with service.store.transaction() as tx:
        tx.connection.execute(
            links.insert().values(
                url_hash=url_hash(broken),
                url=broken,
                status="broken",
                failures=3,
                since=moment,
                checked=moment,
            )
        )
    rows = [
        {"urn": f"urn:nbn:fi:demo-{n}", "locations": [{"url": broken}, {"url": fine}]}
        for n in (1, 2)
    ]
    rows.append({"urn": "urn:nbn:fi:demo-3", "locations": [{"url": broken}]})
    assert service.import_records(rows, batch_size=2) == (3, 0)
    for n, targets in ((1, fine), (2, fine), (3, None)):
        assert service.store.resolution_row(f"urn:nbn:fi:demo-{n}") == (
            "active",
            targets,
            None,
            "fi:demo",
        )


def test_an_import_raises_what_its_rows_raise_after_the_batches_before(
    service: Service, who: Principals, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the second batch on, PostgreSQL imports prepare batches in a child process: what
    the rows raise is raised at its place, and the child does not outlive the import."""
    children: list[subprocess.Popen[bytes]] = []

    class Recorded(subprocess.Popen[bytes]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            children.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    failure = ValueError("line 13: not a JSON object")

    def rows() -> Iterator[dict[str, Any]]:
        yield from ({"urn": f"urn:nbn:fi:demo-{n}"} for n in range(12))
        raise failure

    with pytest.raises(ValueError, match="line 13") as raised:
        service.import_records(rows(), batch_size=5)
    assert raised.value is failure

    def early() -> Iterator[dict[str, Any]]:  # fails in the second batch
        yield from ({"urn": f"urn:nbn:fi:demo-early-{n}"} for n in range(7))
        raise failure

    with pytest.raises(ValueError, match="line 13"):
        service.import_records(early(), batch_size=5)
    assert service.get("urn:nbn:fi:demo-early-4").urn == "urn:nbn:fi:demo-early-4"
    with pytest.raises(NotFoundError):
        service.get("urn:nbn:fi:demo-early-5")
    assert service.import_records([{"urn": f"urn:nbn:fi:demo-{n}"} for n in range(10)]) == (0, 10)
    with pytest.raises(NotFoundError):
        service.get("urn:nbn:fi:demo-10")  # its batch never came whole
    rest = ({"urn": f"urn:nbn:fi:demo-{n}"} for n in range(20))
    assert service.import_records(rest, batch_size=5) == (10, 10)
    assert all(child.poll() is not None for child in children)
    postgresql = service.store.engine.dialect.name == "postgresql"
    assert len(children) == (2 if postgresql else 0)


@pytest.fixture
def second_database_url(database_url: str, tmp_path: Path) -> Iterator[str]:
    """Another new, empty database of the same kind as ``database_url``."""
    kind = "sqlite" if database_url.startswith("sqlite") else "postgresql"
    directory = tmp_path / "second"
    directory.mkdir()
    with fresh_database(kind, directory) as url:
        yield url


def test_export_then_import_gives_the_same_records(
    service: Service, who: Principals, second_database_url: str
) -> None:
    service.put(who.demo, "URN:NBN:FI:DEMO-1", [*HERE, *THERE], {"title": "One", "n": [1, 2]})
    service.put(who.demo, "urn:nbn:fi:demo:sub-%C3%A4", THERE, {"title": "Ä"})
    service.put(who.demo, "urn:nbn:fi:demo-2", HERE, {})
    service.patch(who.demo, "urn:nbn:fi:demo-2", {"metadata": {"patched": True}})
    service.deactivate(who.demo, "urn:nbn:fi:demo-2", "superseded", ["URN:NBN:FI:DEMO-1"])
    service.generate(who.demo, "fi:demo", 2)
    service.generate(who.other, "fi:demox", 2)
    exported = _all(service)
    # What ``urnkit export`` writes, one JSON object a line, read back.
    rows = [json.loads(json.dumps(record_json(r), ensure_ascii=False)) for r in exported]

    target = Service(Store(second_database_url))
    try:
        _set_up(target)
        assert target.import_records(rows) == (len(rows), 0)
        assert [_comparable(r) for r in _all(target)] == [_comparable(r) for r in exported]
        assert target.import_records(rows) == (0, len(rows))
    finally:
        target.store.close()


def test_export_by_prefix_and_page(service: Service, who: Principals) -> None:
    rows = [{"urn": f"urn:nbn:{p}-{n}"} for n in range(5) for p in ("fi:demo", "fi:demox")]
    rows.append({"urn": "urn:nbn:fi:demo:sub-1"})
    service.import_records(rows)
    for page in (1, 2, 100):
        assert [r.urn for r in service.export_records("FI:Demo", page=page)] == [
            *(f"urn:nbn:fi:demo-{n}" for n in range(5)),
            "urn:nbn:fi:demo:sub-1",
        ]
    everything = [r.urn for r in service.export_records(page=3)]
    assert everything == [row["urn"] for row in rows]
    assert len(set(everything)) == len(everything)


def test_read_ahead_keeps_order_and_raises_where_the_producer_failed() -> None:
    def items() -> Iterator[int]:
        yield from range(3)
        raise ValueError("row 4 is bad")

    seen: list[int] = []
    with pytest.raises(ValueError, match="row 4 is bad"):
        seen.extend(service_module._read_ahead(items(), depth=1))
    assert seen == [0, 1, 2]


def test_read_ahead_stops_its_thread_when_the_consumer_leaves() -> None:
    produced: list[int] = []

    def endless() -> Iterator[int]:
        number = 0
        while True:
            produced.append(number)
            yield number
            number += 1

    reader = service_module._read_ahead(endless(), depth=2)
    assert [next(reader) for _ in range(3)] == [0, 1, 2]
    reader.close()  # joins the producer; a thread left blocked would hang here
    assert len(produced) <= 3 + 2 + 1
    assert not any(t.name == "urnkit-read-ahead" for t in threading.enumerate())


def test_an_import_stopped_by_a_bad_row_keeps_the_batches_before_it(
    service: Service, who: Principals
) -> None:
    rows: list[dict[str, Any]] = [{"urn": f"urn:nbn:fi:demo-{n}"} for n in range(10)]
    rows.append({"urn": "urn:nbn:fi:demo-%zz"})
    with pytest.raises(InvalidURNError, match="'urn:nbn:fi:demo-%zz' is not a URN"):
        service.import_records([*rows, {"urn": "urn:nbn:fi:demo-late"}], batch_size=5)
    assert service.import_records(rows[:10]) == (0, 10)  # both whole batches were committed
    with pytest.raises(NotFoundError):
        service.get("urn:nbn:fi:demo-late")
