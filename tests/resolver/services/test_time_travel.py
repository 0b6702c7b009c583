"""Time travel's service (RFC 7089 Memento), on SQLite and PostgreSQL: a record's versions as
its history replays them (services/records.py), the one in force at a moment, restricted
locations kept from the past as from the present, and archived copies of locations that link
checking found broken."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from services_support import Principals
from time_travel_support import AFTER, BEFORE, Clock, T

from urnkit.resolver.domain import PUBLIC, LinkCheck, Location, Reader, next_link_state
from urnkit.resolver.domain.versions import location_then
from urnkit.resolver.services import Services
from urnkit.resolver.services.time_travel import TimeTravel

A, B = "https://a.example/thesis", "https://b.example/thesis"
SHUT = "https://library.example/deposit"
ARCHIVE = "https://web.archive.org/web/{datetime}/{url}"


def _moved(services: Services, who: Principals, clock: Clock, urn: str) -> None:
    """The acceptance scenario: made at A, moved to B at T, deactivated for a successor."""
    clock.at = BEFORE
    services.records.put(who.demo, urn, [Location(A)], {"title": "Thesis"})
    clock.at = T
    services.records.patch(who.demo, urn, {"locations": [Location(B)]})
    clock.at = AFTER
    services.records.put(who.demo, "urn:nbn:fi:demo-next", [Location(B)], {})
    services.records.deactivate(who.demo, urn, "superseded", ["urn:nbn:fi:demo-next"])


def test_the_version_in_force_before_t_leads_to_a_after_t_to_b(
    services: Services, who: Principals, monkeypatch: pytest.MonkeyPatch
) -> None:
    _moved(services, who, Clock(monkeypatch), "urn:nbn:fi:demo-1")
    versions = services.time_travel.versions("URN:NBN:FI:DEMO-1", PUBLIC)  # RFC 8141 §3
    assert versions.urn == "urn:nbn:fi:demo-1"
    assert not versions.restricted
    assert [entry.at for entry in versions.entries] == [BEFORE, T, AFTER]
    assert [entry.action for entry in versions.entries] == ["created", "patched", "deactivated"]

    def then(moment: datetime) -> str | None:
        return location_then(versions.entries[versions.in_force(moment)].record)

    # RFC 7089 §4.1: the version in force at the Accept-Datetime.
    assert then(T - timedelta(seconds=1)) == A
    assert then(T) == B
    assert then(AFTER - timedelta(days=1)) == B
    assert then(AFTER) is None  # deactivated: its page answers
    assert versions.entries[-1].record["successors"] == ["urn:nbn:fi:demo-next"]
    # RFC 7089 §4.5.3: before the record existed, the first version, the closest.
    assert then(datetime(1990, 1, 1, tzinfo=UTC)) == A
    assert versions.index_at(T) == 1
    assert versions.index_at(T + timedelta(seconds=1)) is None


def test_restricted_locations_stay_restricted_in_the_past(
    services: Services, who: Principals, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock(monkeypatch)
    services.networks.save("Demo Library", "rooms", ["192.0.2.0/24"])
    located = [Location(SHUT, 1, restricted_to="rooms"), Location(A, 2)]
    services.records.put(who.demo, "urn:nbn:fi:demo-2", located, {})
    clock.at = T
    services.records.patch(who.demo, "urn:nbn:fi:demo-2", {"locations": [Location(B)]})
    inside = services.networks.reader(None, "192.0.2.7")
    assert inside != PUBLIC
    first = services.time_travel.versions("urn:nbn:fi:demo-2", inside).entries[0].record
    assert [loc["url"] for loc in first["locations"]] == [SHUT, A]
    assert location_then(first) == SHUT
    outside_versions = services.time_travel.versions("urn:nbn:fi:demo-2", PUBLIC)
    assert outside_versions.restricted  # what a reader sees depends on where it is
    outside = outside_versions.entries[0].record
    assert [loc["url"] for loc in outside["locations"]] == [A]
    assert location_then(outside) == A
    holder = Reader(organisation="Demo Library")
    assert (
        location_then(services.time_travel.versions("urn:nbn:fi:demo-2", holder).entries[0].record)
        == SHUT
    )


def _check(services: Services, url: str, verdict: str, at: datetime) -> None:
    """A check of ``url`` as link checking saves it."""
    check = LinkCheck(url, verdict, 200 if verdict == "ok" else 404, verdict, at)  # type: ignore[arg-type]
    with services.store.transaction() as tx:
        previous = tx.links.states([url]).get(url)
        tx.links.save_checks([next_link_state(previous, check)], [check])


def test_a_record_whose_locations_all_broke_offers_archived_copies(
    services: Services, who: Principals
) -> None:
    time_travel = TimeTravel(services.store, services.records, (ARCHIVE,))
    services.records.put(who.demo, "urn:nbn:fi:demo-3", [Location(A), Location(B, 2)], {})
    record = services.records.get("urn:nbn:fi:demo-3")
    assert time_travel.archived_copies(record) == []  # never checked: not known broken
    _check(services, A, "ok", BEFORE)
    _check(services, A, "ok", T)
    _check(services, A, "gone", AFTER)
    assert time_travel.archived_copies(record) == []  # B is not known broken
    _check(services, B, "gone", AFTER)  # never seen working: asked for when found broken
    copies = time_travel.archived_copies(record)
    assert [(copy.location, copy.at) for copy in copies] == [(A, T), (B, AFTER)]
    assert copies[0].url == f"https://web.archive.org/web/20210601120000/{A}"
    assert services.time_travel.archived_copies(record) == []  # no web archive named
    _check(services, B, "ok", AFTER + timedelta(days=1))
    assert time_travel.archived_copies(record) == []  # one works again
