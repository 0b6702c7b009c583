"""Records (``urnkit.resolver.services.records``), in process, on SQLite and PostgreSQL.

* Registration: ``put`` says whether it created; equivalent spellings are one record (RFC 8141
  §3, RFC 8458 §4.3); a deactivated URN is never written again and is not its own successor;
  every change appends one history entry and none is rewritten (RFC 8458 §4.1: no reuse).
* Generation never hands out a taken URN, and reserves at most ``MAX_GENERATE`` at once.
* Batches are all or nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from services_support import (
    HERE,
    NEW_USERINFO,
    OLD_LOCATIONS,
    THERE,
    Principals,
    all_records,
    held,
    stored_before_the_rules,
)

from urnkit.namespaces import nbn
from urnkit.resolver.domain import (
    ConflictError,
    ForbiddenError,
    Location,
    NotFoundError,
    Principal,
    Record,
    UnacceptableError,
    merge_patch,
)
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services import Services
from urnkit.resolver.services import records as records_module
from urnkit.resolver.services.locations import LocationEdit
from urnkit.resolver.services.records import MAX_BATCH, MAX_GENERATE
from urnkit.resolver.store import Store
from urnkit.urn import URN

DB_SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# --- put: create, replace, equivalence -----------------------------------------------------------


def test_put_creates_then_replaces(services: Services, who: Principals) -> None:
    record, created = services.records.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"title": "One"})
    assert created is True
    assert (record.urn, record.key, record.prefix) == (
        "urn:nbn:fi:demo-1",
        "urn:nbn:fi:demo-1",
        "fi:demo",
    )
    assert (record.status, record.owner, record.locations) == ("active", "Demo Library", held(HERE))
    assert services.records.get("urn:nbn:fi:demo-1") == record

    replaced, created = services.records.put(who.demo, "urn:nbn:fi:demo-1", THERE, {"title": "Two"})
    assert created is False
    assert (replaced.locations, dict(replaced.metadata)) == (held(THERE), {"title": "Two"})
    assert replaced.created == record.created
    assert replaced.updated >= record.updated
    assert services.records.get("urn:nbn:fi:demo-1") == replaced
    assert len(all_records(services)) == 1


EQUIVALENT = [
    # RFC 8141 §3: "urn" and the NID are case-insensitive; RFC 8458 §4.3: so is the prefix.
    ("URN:NBN:FI:DEMO-1", "urn:nbn:fi:demo-1"),
    ("urn:nbn:fi:demo:Sub-x", "UrN:nBn:Fi:DeMo:sUB-x"),
    # RFC 8458 §4.3 step 3: the characters of percent-encodings in a single case.
    ("urn:nbn:fi:demo-a%7e", "urn:nbn:fi:demo-a%7E"),
]


def test_equivalent_spellings_are_one_record(
    services: Services, who: Principals, subtests: pytest.Subtests
) -> None:
    for number, (first, second) in enumerate(EQUIVALENT):
        with subtests.test(first=first, second=second):
            record, created = services.records.put(who.demo, first, HERE, {})
            assert created is True
            again, created = services.records.put(who.demo, second, THERE, {})
            assert created is False
            assert again.urn == record.urn == first  # stored as first written
            assert services.records.get(second) == services.records.get(first) == again
            assert [r.urn for r in all_records(services)] == [
                f for f, _ in EQUIVALENT[: number + 1]
            ]
    with subtests.test("NBN strings are case-sensitive"):
        # RFC 8458 §4.2: NBN strings "can be case sensitive at the preference of the assigning
        # authority; parsers therefore MUST treat these as case sensitive".
        assert services.records.put(who.demo, "urn:nbn:fi:demo-ABC", HERE, {})[1] is True
        assert services.records.put(who.demo, "urn:nbn:fi:demo-abc", THERE, {})[1] is True
        # The writer's organisation holds them.
        assert services.records.get("urn:nbn:fi:demo-ABC").locations == held(HERE)
        assert services.records.get("urn:nbn:fi:demo-abc").locations == held(THERE)


@DB_SETTINGS
@given(data=st.data())
def test_any_respelling_finds_the_record(
    services: Services, who: Principals, data: st.DataObject
) -> None:
    number = data.draw(st.integers(1, 10**9))
    head = "urn:nbn:fi:demo-"  # each of its letters in either case (RFC 8141 §3, RFC 8458 §4.3)
    flips = data.draw(st.lists(st.booleans(), min_size=len(head), max_size=len(head)))
    spelling = "".join(c.swapcase() if f else c for c, f in zip(head, flips, strict=True))
    services.records.put(who.demo, f"{head}{number}", HERE, {})
    assert services.records.put(who.demo, f"{spelling}{number}", HERE, {"again": True})[1] is False
    assert services.records.get(f"{spelling}{number}").metadata == {"again": True}


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
    Location("https://example.org:99999/"),  # no port past 65535
    Location("https://user:password@example.org/"),  # published: no user information
]


def test_unfit_names_and_locations_are_refused(
    services: Services, who: Principals, subtests: pytest.Subtests
) -> None:
    for text in UNFIT_NAMES:
        with subtests.test(urn=text), pytest.raises(UnacceptableError):
            services.records.put(who.admin, text, HERE, {})
    for location in UNFIT_LOCATIONS:
        with subtests.test(location=location), pytest.raises(UnacceptableError):
            services.records.put(who.demo, "urn:nbn:fi:demo-1", [*HERE, location], {})
    assert all_records(services) == []


def test_a_registered_record_is_not_written_through_a_name_with_components(
    services: Services, who: Principals, subtests: pytest.Subtests
) -> None:
    # RFC 8141 §2: the r-, q- and f-components are not part of the name, registered or not.
    services.records.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"title": "One"})
    for text in UNFIT_NAMES[:3]:
        with subtests.test(urn=text), pytest.raises(UnacceptableError, match="alone"):
            services.records.put(who.demo, text, THERE, {})
        with subtests.test(urn=text, batch=True), pytest.raises(UnacceptableError, match="alone"):
            services.records.batch(who.demo, [(text, THERE, {})])
    assert services.records.get("urn:nbn:fi:demo-1").metadata == {"title": "One"}


# Every control character, percent-encoded in either case: %00-%1F and %7F.
CONTROLS = [f"%{byte:02{case}}" for byte in [*range(0x20), 0x7F] for case in "Xx"]


def test_registration_refuses_every_percent_encoded_control_character(
    services: Services, who: Principals
) -> None:
    # RFC 8141 §2 allows any pct-encoded octet; the resolver's rule refuses these in an NSS.
    for number, encoded in enumerate(CONTROLS):
        urn = f"urn:nbn:fi:demo-{number}a{encoded}b"
        with pytest.raises(UnacceptableError) as refused:
            services.records.put(who.demo, urn, HERE, {})
        problem = refused.value
        assert (problem.extensions["rule"], problem.extensions["section"]) == (
            "no-encoded-controls",
            "RFC 8141 §2",
        )
        assert problem.extensions["position"] == urn.index("%")
        assert encoded in problem.detail
        with pytest.raises(UnacceptableError):
            services.records.batch(who.demo, [(urn, HERE, {})])
    assert all_records(services) == []


@DB_SETTINGS
@given(octet=st.integers(0x20, 0xFF).filter(lambda octet: octet != 0x7F))
def test_any_other_percent_encoded_octet_is_registered(
    services: Services, who: Principals, octet: int
) -> None:
    urn = f"urn:nbn:fi:demo-{octet}a%{octet:02X}b"
    services.records.put(who.demo, urn, HERE, {})
    assert services.records.get(urn).urn == urn


def test_a_name_stored_before_the_control_character_rule_stays_readable(
    services: Services, who: Principals
) -> None:
    urn = "urn:nbn:fi:demo-old%0Aname"
    # An import carries records stored elsewhere or before the rule (an export's round trip).
    assert services.transfer.import_records(
        [(1, {"urn": urn, "locations": [{"url": HERE[0].url}]})]
    ) == (1, 0)
    assert services.records.get(urn).locations[0].url == HERE[0].url
    assert services.resolution.resolve(urn).target == HERE[0].url
    services.records.describe(who.demo, urn, {"title": "Still changed through its pages"})
    assert services.records.get(urn).metadata == {"title": "Still changed through its pages"}


def test_the_owner_writes_a_record_stored_before_the_rules_back(
    services: Services, who: Principals
) -> None:
    urn = stored_before_the_rules(services)
    stored = services.records.get(urn)
    # A PUT of a registered record is no new registration: its NSS (RFC 8141 §2's
    # pct-encoded %0A) and its stored URLs are not checked again.
    replaced, created = services.records.put(who.demo, urn, stored.locations, stored.metadata)
    assert (created, replaced.locations) == (False, stored.locations)
    count, body = services.records.batch(who.demo, [(urn, stored.locations, stored.metadata)])
    assert (count, body["results"]) == (200, [{"urn": urn, "result": "replaced"}])
    reordered = [replace(OLD_LOCATIONS[1], priority=0), OLD_LOCATIONS[0]]
    patched = services.records.patch(
        who.demo, urn, {"metadata": {"title": "Kept"}, "locations": reordered}
    )
    assert [loc.url for loc in patched.locations] == [OLD_LOCATIONS[1].url, OLD_LOCATIONS[0].url]
    edited = services.grants.edit_locations(who.demo, urn, LocationEdit("up", OLD_LOCATIONS[0].url))
    assert [loc.url for loc in edited.locations] == [loc.url for loc in OLD_LOCATIONS]
    # A new location is checked: user information would be published.
    for write in (
        lambda: services.records.put(who.demo, urn, [*OLD_LOCATIONS, NEW_USERINFO], {}),
        lambda: services.records.patch(
            who.demo, urn, {"locations": [*OLD_LOCATIONS, NEW_USERINFO]}
        ),
        lambda: services.grants.edit_locations(
            who.demo, urn, LocationEdit("add", NEW_USERINFO.url, NEW_USERINFO)
        ),
        lambda: services.records.batch(who.demo, [(urn, [*OLD_LOCATIONS, NEW_USERINFO], {})]),
    ):
        with pytest.raises(UnacceptableError, match=r"location 3: .* holds user information"):
            write()
    assert services.records.get(urn) == edited
    with pytest.raises(UnacceptableError, match="%0A"):  # a new registration still is checked
        services.records.put(who.demo, "urn:nbn:fi:demo-new%0Aname", HERE, {})


def test_a_grantee_adds_its_own_beside_locations_stored_before_the_rules(
    services: Services, who: Principals
) -> None:
    urn = stored_before_the_rules(services)
    services.grants.grant(who.demo, urn, "Other Library")
    record = services.grants.put_own(who.other, urn, THERE)
    assert record.locations == (*held(OLD_LOCATIONS), *held(THERE, "Other Library"))
    record = services.grants.edit_locations(
        who.other, urn, LocationEdit("add", HERE[0].url, replace(HERE[0], priority=5))
    )
    assert [loc.url for loc in record.locations][-1] == HERE[0].url
    with pytest.raises(UnacceptableError, match=r"location 2: .* holds user information"):
        services.grants.put_own(who.other, urn, [*THERE, NEW_USERINFO])
    with pytest.raises(UnacceptableError, match=r"location 3: .* holds user information"):
        services.grants.edit_locations(
            who.other, urn, LocationEdit("add", NEW_USERINFO.url, NEW_USERINFO)
        )
    assert services.records.get(urn) == record


# --- deactivation --------------------------------------------------------------------------------


def test_a_deactivated_urn_is_not_written_again(services: Services, who: Principals) -> None:
    # RFC 8458 §4.1: "A URN:NBN, once it has been generated from a NBN, MUST NOT be reused".
    services.records.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"title": "One"})
    services.records.put(who.demo, "urn:nbn:fi:demo-2", HERE, {})
    gone = services.records.deactivate(
        who.demo, "urn:nbn:fi:demo-1", "withdrawn", ["urn:nbn:fi:demo-2"]
    )
    assert (gone.status, gone.note, gone.successors) == (
        "deactivated",
        "withdrawn",
        ("urn:nbn:fi:demo-2",),
    )
    history = services.records.history("urn:nbn:fi:demo-1")
    with pytest.raises(ConflictError):
        services.records.put(who.demo, "urn:nbn:fi:demo-1", THERE, {})
    with pytest.raises(ConflictError):
        services.records.put(who.admin, "URN:NBN:FI:DEMO-1", THERE, {})
    with pytest.raises(ConflictError):
        services.records.patch(who.demo, "urn:nbn:fi:demo-1", {"metadata": {"title": "Again"}})
    assert services.records.get("urn:nbn:fi:demo-1") == gone
    assert services.records.history("urn:nbn:fi:demo-1") == history
    resolution = services.resolution.resolve("urn:nbn:fi:demo-1")
    assert (resolution.kind, resolution.record) == ("gone", gone)
    with pytest.raises(NotFoundError):
        services.records.deactivate(who.demo, "urn:nbn:fi:demo-404", None, [])


def test_a_urn_is_not_its_own_successor(
    services: Services, who: Principals, subtests: pytest.Subtests
) -> None:
    record, _ = services.records.put(who.demo, "urn:nbn:fi:demo-1", HERE, {})
    for successor in ("urn:nbn:fi:demo-1", "URN:NBN:FI:DEMO-1", "urn:nbn:fi:demo-1?=x=1#y"):
        with subtests.test(successor=successor), pytest.raises(UnacceptableError):
            services.records.deactivate(
                who.demo, "urn:nbn:fi:demo-1", None, ["urn:nbn:fi:demo-2", successor]
            )
    assert services.records.get("urn:nbn:fi:demo-1") == record
    assert len(services.records.history("urn:nbn:fi:demo-1")) == 1


# --- history -------------------------------------------------------------------------------------


def test_every_change_appends_one_entry_and_none_is_rewritten(
    services: Services, who: Principals
) -> None:
    urn = "urn:nbn:fi:demo-1"
    changes: list[tuple[str, Callable[[], Record]]] = [
        ("created", lambda: services.records.put(who.demo, urn, HERE, {"a": 1})[0]),
        ("replaced", lambda: services.records.put(who.admin, urn.upper(), THERE, {"a": 2})[0]),
        ("patched", lambda: services.records.patch(who.demo, urn, {"metadata": {"b": 3}})),
        ("patched", lambda: services.records.patch(who.demo, urn, {"locations": HERE})),
        ("deactivated", lambda: services.records.deactivate(who.demo, urn, "old", [])),
    ]
    seen: list[Any] = []
    for action, change in changes:
        record = change()
        history = services.records.history(urn)
        assert history[: len(seen)] == seen  # earlier entries are never rewritten
        assert len(history) == len(seen) + 1
        entry = history[-1]
        assert entry.action == action
        assert dict(entry.record) == record_json(record)
        assert entry.actor.startswith("Other Library" if action == "replaced" else "Demo Library")
        seen = history
    assert [e.at for e in seen] == sorted(e.at for e in seen)
    with pytest.raises(ConflictError):
        services.records.put(who.demo, urn, HERE, {})
    with pytest.raises(ForbiddenError):
        services.records.patch(who.other, urn, {"metadata": {}})
    assert services.records.history(urn) == seen  # refusals leave no trace


@DB_SETTINGS
@given(patches=st.lists(st.dictionaries(st.sampled_from("abc"), st.none() | st.integers())))
def test_patching_metadata_is_rfc7396(
    services: Services, who: Principals, patches: list[dict[str, int | None]]
) -> None:
    urn = f"urn:nbn:fi:demo-{len(all_records(services))}"
    expected: Any = {"a": 0, "keep": {"x": 1}}
    services.records.put(who.demo, urn, HERE, expected)
    for patch in patches:
        expected = merge_patch(expected, {**patch, "keep": {"y": None}})
        record = services.records.patch(who.demo, urn, {"metadata": {**patch, "keep": {"y": None}}})
        assert dict(record.metadata) == expected
    assert dict(services.records.get(urn).metadata) == expected
    assert len(services.records.history(urn)) == 1 + len(patches)


def test_patch_refusals(services: Services, who: Principals) -> None:
    record, _ = services.records.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"a": 1})
    for patch in ({"status": "active"}, {"metadata": ["a"]}, {"metadata": None}):
        with pytest.raises(UnacceptableError):
            services.records.patch(who.demo, "urn:nbn:fi:demo-1", patch)
    with pytest.raises(NotFoundError):
        services.records.patch(who.demo, "urn:nbn:fi:demo-2", {"metadata": {}})
    assert services.records.get("urn:nbn:fi:demo-1") == record


# --- generation ----------------------------------------------------------------------------------


def test_generation_skips_taken_sequential_names(services: Services, who: Principals) -> None:
    # The next sequential names, registered by hand first, are never handed out again.
    taken = [
        services.records.put(who.demo, f"urn:nbn:fi:demo-{n}", HERE, {"n": n})[0] for n in (1, 3)
    ]
    made = services.records.generate(who.demo, "fi:demo", 3)
    assert [r.urn for r in made] == ["urn:nbn:fi:demo-2", "urn:nbn:fi:demo-4", "urn:nbn:fi:demo-5"]
    assert all(
        (r.status, r.owner, r.prefix) == ("reserved", "Demo Library", "fi:demo") for r in made
    )
    assert [services.records.get(r.urn) for r in taken] == taken  # untouched
    assert [r.urn for r in services.records.generate(who.demo, "fi:demo", 1)] == [
        "urn:nbn:fi:demo-6"
    ]
    assert [services.records.history(r.urn)[-1].action for r in made] == ["reserved"] * 3


def test_generation_skips_taken_random_names(
    services: Services, who: Principals, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.records.put(who.other, "urn:nbn:fi:demox-taken", HERE, {})
    draws = iter(["taken", "taken", "fresh1", "taken", "fresh2"])
    monkeypatch.setattr(records_module, "random_nbn_string", lambda: next(draws))
    made = services.records.generate(who.other, "fi:demox", 2)
    assert [r.urn for r in made] == ["urn:nbn:fi:demox-fresh1", "urn:nbn:fi:demox-fresh2"]
    assert services.records.get("urn:nbn:fi:demox-taken").status == "active"


def test_random_names_are_fit_to_register(services: Services, who: Principals) -> None:
    made = services.records.generate(who.other, "fi:demox", 50)
    assert len({r.key for r in made}) == 50
    for record in made:
        assert URN.parse(record.urn).equivalence_key() == record.key
        assert nbn.validate(record.urn, strict=True) == []


def test_generation_under_dnb_countries_adds_the_check_digit(
    services: Services, who: Principals
) -> None:
    services.admin.delegate("Demo Library", "de:demo")
    services.admin.delegate("Demo Library", "at:demo", "random")
    names = [r.urn for r in services.records.generate(who.demo, "de:demo", 12)]
    names += [r.urn for r in services.records.generate(who.demo, "at:demo", 12)]
    for name in names:
        assert name[-1] == nbn.dnb_check_digit(name[:-1])
        assert nbn.validate(name, strict=True) == []
    assert [name[:-1] for name in names[:3]] == [f"urn:nbn:de:demo-{n}" for n in (1, 2, 3)]


def test_generation_limits(services: Services, who: Principals) -> None:
    made = services.records.generate(who.demo, "fi:demo", MAX_GENERATE)
    assert len({r.key for r in made}) == MAX_GENERATE
    assert made[-1].urn == f"urn:nbn:fi:demo-{MAX_GENERATE}"
    for count in (0, -1, MAX_GENERATE + 1):
        with pytest.raises(UnacceptableError):
            services.records.generate(who.demo, "fi:demo", count)
    assert len(all_records(services)) == MAX_GENERATE
    assert (
        services.records.generate(who.demo, "fi:demo")[0].urn
        == f"urn:nbn:fi:demo-{MAX_GENERATE + 1}"
    )


def test_concurrent_generation_never_repeats(services: Services, who: Principals) -> None:
    made: list[list[Record]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def generate(prefix: str, principal: Principal) -> None:
        store = Store(services.store.url)  # a store of its own, as another process would have
        try:
            barrier.wait(timeout=30)
            made.append(Services(store).records.generate(principal, prefix, 20))
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


def test_a_batch_is_all_or_nothing(services: Services, who: Principals) -> None:
    existing, _ = services.records.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"v": 1})
    history = services.records.history("urn:nbn:fi:demo-1")
    items: list[tuple[str, list[Location], dict[str, Any]]] = [
        ("urn:nbn:fi:demo-2", HERE, {}),
        ("urn:nbn:fi:demo-1", THERE, {"v": 2}),
        ("urn:nbn:fi:demox-3", HERE, {}),  # not delegated to Demo Library
        ("urn:nbn:fi:demo-4", HERE, {}),
    ]
    with pytest.raises(ForbiddenError) as refused:
        services.records.batch(who.demo, items)
    assert refused.value.extensions["index"] == 2
    assert [r.urn for r in all_records(services)] == ["urn:nbn:fi:demo-1"]
    assert services.records.get("urn:nbn:fi:demo-1") == existing
    assert services.records.history("urn:nbn:fi:demo-1") == history

    items[2] = ("urn:nbn:fi:demo-3", [Location("not a url")], {})
    with pytest.raises(UnacceptableError) as unacceptable:
        services.records.batch(who.demo, items)
    assert unacceptable.value.extensions["index"] == 2
    assert [r.urn for r in all_records(services)] == ["urn:nbn:fi:demo-1"]

    items[2] = ("urn:nbn:fi:demo-3", HERE, {})
    status, body = services.records.batch(who.demo, items)
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
    assert services.records.get("urn:nbn:fi:demo-1").metadata == {"v": 2}


def test_a_batch_retried_with_its_key_is_not_written_twice(
    services: Services, who: Principals
) -> None:
    items: list[tuple[str, list[Location], dict[str, Any]]] = [("urn:nbn:fi:demo-1", HERE, {})]
    first = services.records.batch(who.demo, items, idempotency_key="k1")
    assert services.records.batch(who.demo, items, idempotency_key="k1") == first
    assert len(services.records.history("urn:nbn:fi:demo-1")) == 1
    with pytest.raises(ConflictError):
        services.records.batch(who.demo, [("urn:nbn:fi:demo-2", HERE, {})], idempotency_key="k1")
    with pytest.raises(NotFoundError):
        services.records.get("urn:nbn:fi:demo-2")


def test_a_batch_follows_the_rules_of_every_way_in(services: Services, who: Principals) -> None:
    """docs/rows.md: a URN repeated in a batch refuses it, naming the first record (RFC 8141
    §3: equivalent URNs are one); an admin's records belong to their prefixes' holders, and a
    prefix nobody holds is refused, as the import refuses it."""
    items: list[tuple[str, list[Location], dict[str, Any]]] = [
        ("urn:nbn:fi:demo-1", HERE, {}),
        ("urn:nbn:fi:demox-2", HERE, {}),
        ("URN:NBN:FI:DEMO-1", THERE, {}),
    ]
    with pytest.raises(UnacceptableError, match="the URN of record 0 again") as repeated:
        services.records.batch(who.admin, items)
    assert (repeated.value.extensions["index"], repeated.value.extensions["first"]) == (2, 0)
    assert all_records(services) == []
    services.records.batch(who.admin, items[:2])
    assert [(r.urn, r.owner) for r in all_records(services)] == [
        ("urn:nbn:fi:demo-1", "Demo Library"),
        ("urn:nbn:fi:demox-2", "Other Library"),
    ]
    with pytest.raises(UnacceptableError, match="'se:kb' is delegated to no organisation"):
        services.records.batch(who.admin, [("urn:nbn:se:kb-1", HERE, {})])


def test_batch_sizes() -> None:
    # Refused before the database is asked: an in-memory store without a schema will do.
    services = Services(Store("sqlite://"))
    principal = Principal("Demo Library", "admin", 1)
    for size in (0, MAX_BATCH + 1):
        with pytest.raises(UnacceptableError):
            services.records.batch(principal, [("urn:nbn:fi:demo-1", HERE, {})] * size)
    services.store.close()
