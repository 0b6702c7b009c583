"""What the in-process tests of the services share (``tests/resolver/services``): two
organisations with sibling prefixes and their callers, two sets of locations, all records.

The fixtures ``services`` and ``who`` (``conftest.py``) give a test these on a new database.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from urnkit.resolver.domain import Location, Principal, Record
from urnkit.resolver.services import Services
from urnkit.resolver.services.outbound import FetchGuard
from urnkit.resolver.store import now

LOCAL_NETWORK = "127.0.0.1"
LOCAL = FetchGuard.from_setting(LOCAL_NETWORK)
"""What the tests' link checks and harvests may fetch from: the public internet and
127.0.0.1, where the tests' sites and repositories listen. The server refuses loopback unless
the operator allows it (``fetch_allowed_networks``), as ``test_outbound.py`` shows."""

HERE = [Location("https://example.org/here")]
THERE = [Location("https://example.org/there", priority=2, label="copy", media_type="text/html")]


# Locations stored before the rules of location URLs.
OLD_LOCATIONS = (
    Location("https://reader:secret@example.org/old", priority=1),  # user information
    Location("https://example.org:99999/old", priority=2),  # a port past 65535
)
NEW_USERINFO = Location("https://someone:password@example.org/new", priority=3)


def stored_before_the_rules(services: Services) -> str:
    """A record of Demo Library stored before the rules of NSSs and location URLs, as a
    database upgraded from an older version holds it (an import checks location URLs, so the
    rows go in as that version wrote them); its URN."""
    urn = "urn:nbn:fi:demo-old%0Aname"
    moment = now()
    record = Record(urn, urn, "fi:demo", "active", "Demo Library", moment, moment)
    record = replace(record, locations=held(OLD_LOCATIONS), metadata={"title": "Old"})
    with services.store.transaction() as tx:
        owner_id = tx.organisations.id("Demo Library")
        assert owner_id is not None
        assert tx.records.insert(record, owner_id) is not None
    return urn


def held(found: Iterable[Location], organisation: str = "Demo Library") -> tuple[Location, ...]:
    """``found`` as stored: each location names the organisation holding it."""
    return tuple(replace(loc, organisation=organisation) for loc in found)


@dataclass(frozen=True)
class Principals:
    """The callers of a test: registrants of Demo Library (``fi:demo``) and Other Library
    (``fi:demox``, a sibling), and an admin of Other Library."""

    demo: Principal
    other: Principal
    admin: Principal
    demo_token: str


def set_up(services: Services) -> Principals:
    """The current schema, two organisations with sibling prefixes, and their tokens'
    principals."""
    services.store.upgrade()
    services.admin.create_organisation("Demo Library")
    services.admin.create_organisation("Other Library")
    services.admin.delegate("Demo Library", "FI:Demo")
    services.admin.delegate("Other Library", "fi:demox", "random")
    demo_token = services.admin.create_token("Demo Library", "registrant")
    return Principals(
        demo=services.access.authenticate(demo_token),
        other=services.access.authenticate(services.admin.create_token("Other Library")),
        admin=services.access.authenticate(services.admin.create_token("Other Library", "admin")),
        demo_token=demo_token,
    )


def all_records(services: Services) -> list[Record]:
    """Every record, read as an export reads them (pages of 7)."""
    return list(services.transfer.export_records(page=7))
