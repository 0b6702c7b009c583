"""Resolution (``urnkit.resolver.services.resolution``), in process, on SQLite and
PostgreSQL: components (RFC 8141 §2.3), reserved URNs (RFC 8458 §4.5), unknown URNs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from services_support import Principals

from urnkit.resolver.domain import (
    Location,
    NotFoundError,
    UnavailableError,
    parse_urn,
)
from urnkit.resolver.services import Services
from urnkit.resolver.services.resolution import KeptRedirects, Resolution

# --- resolution ----------------------------------------------------------------------------------


def test_resolution(services: Services, who: Principals) -> None:
    services.records.put(
        who.demo,
        "urn:nbn:fi:demo-1",
        [Location("https://example.org/b?x=1", priority=2), Location("https://example.org/a")],
        {},
    )
    # RFC 8141 §2.3.2: the q-component is copied into the locator's query; §3: neither the
    # q- nor the f-component changes which record it is.
    found = services.resolution.resolve("URN:NBN:FI:DEMO-1?=lang=fi#section")
    assert (found.kind, found.target) == ("redirect", "https://example.org/a?lang=fi")
    services.records.patch(
        who.demo, "urn:nbn:fi:demo-1", {"locations": [Location("https://e.org/?q")]}
    )
    assert services.resolution.resolve("urn:nbn:fi:demo-1?=p=2").target == "https://e.org/?q&p=2"
    assert services.resolution.resolve("urn:nbn:fi:demo-1").target == "https://e.org/?q"
    reserved = services.records.generate(who.demo, "fi:demo")[0]
    assert (
        services.resolution.resolve(reserved.urn).kind == "surrogate"
    )  # RFC 8458 §4.5: no location yet
    with pytest.raises(NotFoundError):
        services.resolution.resolve("urn:nbn:fi:demo-404")


def test_redirect_now_gives_a_records_redirect_kept_while_nothing_changes(
    services: Services, who: Principals
) -> None:
    # RFC 8458 §4.2: resolution leads where the record leads now, whichever path answers.
    resolution = services.resolution
    services.records.put(who.demo, "urn:nbn:fi:demo-now", [Location("https://e.org/1")], {})
    found = resolution.redirect_now("URN:NBN:fi:demo-now")
    if services.store.resolution_changes() is None:  # PostgreSQL: no counter, nothing kept
        assert found is None
        return
    assert found is not None
    assert (found.kind, found.target, found.kept) == ("redirect", "https://e.org/1", True)
    assert resolution.redirect_now("URN:NBN:fi:demo-now") is found
    # Another record's change leaves this one's redirect kept.
    services.records.put(who.demo, "urn:nbn:fi:demo-other", [Location("https://e.org/o")], {})
    elsewhere = {"locations": [Location("https://e.org/p")]}
    services.records.patch(who.demo, "urn:nbn:fi:demo-other", elsewhere)
    assert resolution.redirect_now("URN:NBN:fi:demo-now") is found
    moved = {"locations": [Location("https://e.org/2")]}
    services.records.patch(who.demo, "urn:nbn:fi:demo-now", moved)
    again = resolution.redirect_now("URN:NBN:fi:demo-now")
    assert again is not None
    assert again.target == "https://e.org/2"
    # RFC 8458 §4.5: a reserved URN's surrogate; not registered; RFC 8141 §2: not a URN.
    reserved = services.records.generate(who.demo, "fi:demo")[0]
    for text in (reserved.urn, "urn:nbn:fi:demo-404", "urn:a"):
        assert resolution.redirect_now(text) is None


def test_kept_redirects_let_the_oldest_go_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(KeptRedirects, "MOST", 2)
    kept = KeptRedirects(lambda since, until: [])
    made = {text: _redirect(text) for text in TEXTS}
    kept.get("", 1)
    for text, found in made.items():
        kept.keep(text, 1, found)
    assert [kept.get(text, 1) for text in TEXTS] == [None, made[TEXTS[1]], made[TEXTS[2]]]
    kept.get("", 2)  # a move of the key gone first forgets nothing else
    kept.keep(TEXTS[0], 2, made[TEXTS[0]])  # nor keeps it twice
    assert [kept.get(text, 2) for text in TEXTS] == [made[TEXTS[0]], None, made[TEXTS[2]]]


def test_kept_redirects_forget_the_keys_that_changed() -> None:
    # RFC 8458 §4.2: resolution leads where the record leads now; RFC 8141 §3: two texts of
    # one URN are one record's.
    moves: dict[tuple[int, int], list[str] | None] = {(1, 2): ["urn:nbn:fi-1"], (2, 3): None}
    kept = KeptRedirects(lambda since, until: moves[since, until])
    texts = ("urn:nbn:fi-1", "URN:NBN:fi-1", "urn:nbn:fi-2")
    made = {text: _redirect(text) for text in texts}
    kept.get("", 1)
    for text, found in made.items():
        kept.keep(text, 1, found)
    assert [kept.get(text, 2) for text in texts] == [None, None, made["urn:nbn:fi-2"]]
    kept.keep("urn:nbn:fi-1", 2, made["urn:nbn:fi-1"])
    assert [kept.get(text, 3) for text in texts] == [None, None, None]  # keys not known


def test_kept_redirects_forget_all_when_the_keys_cannot_be_read() -> None:
    def unreadable(since: int, until: int) -> list[str]:
        raise UnavailableError("the database is unavailable")

    kept = KeptRedirects(unreadable)
    kept.get("", 1)
    kept.keep(TEXTS[0], 1, _redirect(TEXTS[0]))
    with pytest.raises(UnavailableError):
        kept.get(TEXTS[0], 2)
    assert kept.get(TEXTS[0], 2) is None


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(st.sampled_from(("keep", "change", "unknown", "get")), st.integers(0, 5)),
        max_size=60,
    )
)
def test_kept_redirects_never_give_an_answer_older_than_its_records_change(
    steps: list[tuple[str, int]],
) -> None:
    # RFC 8458 §4.2. A model of the database: each key's version, bumped by a change (a move
    # naming it) or by a move whose keys are unknown (each key may have changed). Never an
    # answer kept before its key's last change; always the one kept since, while MOST holds.
    texts = [f"urn:nbn:fi-{n % 3}" if n < 3 else f"URN:NBN:fi-{n % 3}" for n in range(6)]
    counter, versions = 0, dict.fromkeys(range(3), 0)
    log: dict[int, str | None] = {}

    def changed(since: int, until: int) -> list[str] | None:
        keys = [log.get(n) for n in range(since + 1, until + 1)]
        return None if None in keys else [key for key in keys if key is not None]

    kept = KeptRedirects(changed)
    given_out: dict[str, tuple[Resolution, int]] = {}
    for action, n in steps:
        key = n % 3
        if action in ("change", "unknown"):
            counter += 1
            log[counter] = f"urn:nbn:fi-{key}" if action == "change" else None
            for moved in range(3) if action == "unknown" else (key,):
                versions[moved] += 1
        elif action == "keep" and kept.get(texts[n], counter) is None:
            found = given_out[texts[n]] = (_redirect(texts[n]), versions[key])
            kept.keep(texts[n], counter, found[0])
        elif action == "get":
            got = kept.get(texts[n], counter)
            fresh = texts[n] in given_out and given_out[texts[n]][1] == versions[key]
            assert got is (given_out[texts[n]][0] if fresh else None)


def _redirect(text: str) -> Resolution:
    """A record's redirect for the URN ``text``, under its equivalence key."""
    urn = parse_urn(text)
    return Resolution("redirect", urn, "https://e.org/", urn.equivalence_key(), kept=True)


TEXTS = ("urn:nbn:fi-1", "urn:nbn:fi-2", "urn:nbn:fi-3")
