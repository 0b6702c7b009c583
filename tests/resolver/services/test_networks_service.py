"""The networks as several server processes see them (SQLite and PostgreSQL): each process
keeps them for ``network_refresh`` seconds, so a change made elsewhere routes resolution within
that bound, and a change made through the process itself at once."""

from __future__ import annotations

import time

from services_support import Principals

from urnkit.resolver.domain import Location
from urnkit.resolver.services import Services
from urnkit.resolver.store import Store

SHUT, OPEN = "https://library.example/deposit", "https://example.org/open"
REFRESH = 3.0  # seconds: long enough to see the old networks, short enough to wait for


def test_a_change_elsewhere_routes_within_the_refresh_bound(
    services: Services, who: Principals, database_url: str
) -> None:
    services.networks.save("Demo Library", "rooms", ["192.0.2.0/24"])
    located = [Location(SHUT, 1, restricted_to="rooms"), Location(OPEN, 2)]
    services.records.put(who.demo, "urn:nbn:fi:demo-1", located, {})
    elsewhere = Services(Store(database_url), network_refresh=REFRESH)  # another process
    try:
        assert elsewhere.resolution.resolve("urn:nbn:fi:demo-1", "192.0.2.7").target == SHUT
        assert elsewhere.resolution.resolve("urn:nbn:fi:demo-1", "198.51.100.7").target == OPEN
        services.networks.save("Demo Library", "rooms", ["198.51.100.0/24"])
        # Here at once; there, the old networks until they are REFRESH seconds old.
        assert services.resolution.resolve("urn:nbn:fi:demo-1", "198.51.100.7").target == SHUT
        assert elsewhere.resolution.resolve("urn:nbn:fi:demo-1", "198.51.100.7").target == OPEN
        time.sleep(REFRESH + 0.1)
        assert elsewhere.resolution.resolve("urn:nbn:fi:demo-1", "198.51.100.7").target == SHUT
        assert elsewhere.resolution.resolve("urn:nbn:fi:demo-1", "192.0.2.7").target == OPEN
    finally:
        elsewhere.store.close()


def test_an_unrestricted_record_resolves_without_reading_the_networks(
    services: Services, who: Principals
) -> None:
    services.records.put(who.demo, "urn:nbn:fi:demo-2", [Location(OPEN)], {})
    assert services.store.resolution_row("urn:nbn:fi:demo-2") == (
        "active",
        OPEN,
        None,
        "fi:demo",
        None,  # records.restricted: NULL, the hot path's test
    )
    assert services.resolution.resolve("urn:nbn:fi:demo-2", "192.0.2.7").target == OPEN
    assert not services.networks.fresh()  # never loaded: nothing asked for them


def test_the_holder_reads_its_restricted_copies_in_the_history_others_do_not(
    services: Services, who: Principals
) -> None:
    services.networks.save("Demo Library", "rooms", ["192.0.2.0/24"])
    located = [Location(SHUT, 1, restricted_to="rooms")]
    services.records.put(who.demo, "urn:nbn:fi:demo-3", located, {})
    services.records.put(who.demo, "urn:nbn:fi:demo-3", [Location(OPEN)], {})
    for reader, seen in (
        (services.access.reader(who.demo), True),
        (services.access.reader(who.admin), True),
        (services.access.reader(who.other), False),
        (services.access.reader(None), False),
    ):
        entries = services.records.history("urn:nbn:fi:demo-3", reader)
        urls = [loc["url"] for entry in entries for loc in entry.record["locations"]]
        assert (SHUT in urls) is seen
        assert OPEN in urls
