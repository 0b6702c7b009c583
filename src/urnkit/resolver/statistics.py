"""Resolutions counted per prefix per day (UTC), cheaply on the hot path.

Resolution only adds one to an in-memory count (:meth:`ResolutionTally.add`, a few hundred
nanoseconds, no I/O); :meth:`ResolutionTally.take` hands the counts over, summed per prefix and
day, for the service to add to the database every few seconds and at shutdown. The database adds
(``count = count + excluded.count``), so server processes sharing it add up. Counts taken since
the last flush are lost if the process is killed outright (``kill -9``): these are statistics,
not records.

>>> tally = ResolutionTally()
>>> tally.add("urn:nbn:fi:test-1", day=20000)
>>> tally.add("urn:nbn:fi:test-2", day=20000)
>>> tally.take()
[('fi:test', datetime.date(2024, 10, 4), 2)]
>>> tally.take()
[]
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import date, timedelta

from urnkit.resolver.domain import prefix_of

_EPOCH = date(1970, 1, 1)
DayCount = tuple[str, date, int]
"""A prefix, a day (UTC) and how many resolutions of its URNs that day saw."""


class ResolutionTally:
    """Resolutions of registered URNs counted in memory by (day, equivalence key) until taken.

    Keys, not prefixes, are counted: finding a URN's prefix costs microseconds, so it is done
    once per distinct key when the counts are taken, off the hot path.
    """

    def __init__(self) -> None:
        self._counts: dict[tuple[int, str], int] = {}
        self._returned: dict[tuple[str, int], int] = {}  # taken, not stored: see give_back

    def add(self, key: str, day: int | None = None) -> None:
        """Count one resolution of the record with equivalence key ``key`` on ``day`` (days
        since 1970-01-01, UTC; today by default)."""
        slot = (int(time.time() // 86400) if day is None else day, key)
        counts = self._counts
        counts[slot] = counts.get(slot, 0) + 1

    def take(self) -> list[DayCount]:
        """The counts so far, summed per prefix and day, sorted; the tally starts again at zero."""
        counts, self._counts = self._counts, {}
        summed, self._returned = self._returned, {}
        prefixes: dict[str, str] = {}
        for (day, key), count in counts.items():
            prefix = prefixes.get(key)
            if prefix is None:
                prefix = prefixes[key] = prefix_of(key)
            summed[prefix, day] = summed.get((prefix, day), 0) + count
        return sorted(
            (prefix, _EPOCH + timedelta(days=day), count) for (prefix, day), count in summed.items()
        )

    def give_back(self, taken: Iterable[DayCount]) -> None:
        """Return counts :meth:`take` gave (their flush failed): the next :meth:`take` has them.

        >>> tally = ResolutionTally()
        >>> tally.give_back([("fi:test", date(2024, 10, 4), 2)])
        >>> tally.add("urn:nbn:fi:test-1", day=20000)
        >>> tally.take()
        [('fi:test', datetime.date(2024, 10, 4), 3)]
        """
        for prefix, day, count in taken:
            slot = (prefix, (day - _EPOCH).days)
            self._returned[slot] = self._returned.get(slot, 0) + count
