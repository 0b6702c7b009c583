"""What is known of a registered URN, as the resolver's answers need it: the record, its
locations' link states, the URNs it succeeds and its history; and which of its locations are
current (a deactivated record's are former ones, kept for its owner and its history only).

>>> LocationState(Location("https://example.org/1")).state
'unknown'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from urnkit.resolver.domain.records import HistoryEntry, Location, Record


@dataclass(frozen=True, slots=True)
class LocationState:
    """A location and what link checking last found of it: ``ok`` or ``broken`` since
    ``since``, or ``unknown`` (never checked)."""

    location: Location
    state: str = "unknown"
    since: datetime | None = None


@dataclass(frozen=True, slots=True)
class Description:
    """All that is known of a registered URN: the record, its locations' link states, the URNs
    it succeeds, and its history (oldest first)."""

    record: Record
    locations: tuple[LocationState, ...]
    predecessors: tuple[str, ...]
    history: tuple[HistoryEntry, ...]
    # When any of it last changed: the record, a link state, a predecessor (Last-Modified).
    modified: datetime
    # The organisations holding locations left out: restricted to networks the reader is not in.
    withheld: tuple[str, ...] = ()
    # Whether the record has locations restricted to networks: what it shows depends on who.
    restricted: bool = False
    # Read only for the RFC 2483 request that needs it: the URN's current name (§4.7, I2N),
    # the URNs related to it with their relation (§4.8, I2Ns: itself, successors, predecessors).
    current: str | None = None
    related: tuple[tuple[str, str], ...] = ()

    @property
    def usable(self) -> tuple[Location, ...]:
        """The locations a client may be sent to: an active record's, links known broken left
        out, best first (what ``records.targets`` holds)."""
        if self.record.status != "active":
            return ()
        return tuple(entry.location for entry in self.locations if entry.state != "broken")


def current_locations(record: Record) -> tuple[Location, ...]:
    """The locations ``record`` presents as current: none once it is deactivated (RFC 8458
    §4.4: a deactivated URN resolves to no resource), else all of them.

    >>> from datetime import UTC, datetime
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "deactivated", "Org", t, t,
    ...                 locations=(Location("https://example.org/1"),))
    >>> current_locations(record)
    ()
    """
    return () if record.status == "deactivated" else record.locations


def presented(record: Record) -> Record:
    """``record`` as it is published to anyone: with only its :func:`current_locations`."""
    locations = current_locations(record)
    return record if locations == record.locations else replace(record, locations=locations)
