"""What is known of a registered URN, as the resolver's answers need it: the record, its
locations' link states, the URNs it succeeds and its history.

>>> LocationState(Location("https://example.org/1")).state
'unknown'
"""

from __future__ import annotations

from dataclasses import dataclass
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

    @property
    def usable(self) -> tuple[Location, ...]:
        """The locations a client may be sent to: an active record's, links known broken left
        out, best first (what ``records.targets`` holds)."""
        if self.record.status != "active":
            return ()
        return tuple(entry.location for entry in self.locations if entry.state != "broken")
