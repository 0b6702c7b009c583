"""Resolution (``urnkit.resolver.services.resolution``), in process, on SQLite and
PostgreSQL: components (RFC 8141 §2.3), reserved URNs (RFC 8458 §4.5), unknown URNs."""

from __future__ import annotations

import pytest
from services_support import Principals

from urnkit.resolver.domain import (
    Location,
    NotFoundError,
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
    kept = KeptRedirects()
    made = {text: Resolution("redirect", parse_urn(text), "https://e.org/") for text in TEXTS}
    kept.get("", 1)
    for text, found in made.items():
        kept.keep(text, 1, found)
    assert [kept.get(text, 1) for text in TEXTS] == [None, made[TEXTS[1]], made[TEXTS[2]]]


TEXTS = ("urn:nbn:fi-1", "urn:nbn:fi-2", "urn:nbn:fi-3")
