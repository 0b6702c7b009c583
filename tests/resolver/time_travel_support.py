"""What the time travel tests share: the acceptance scenario's moments, and a clock that
history's entries take their time from in this process (history is append-only: no entry is
moved back in time afterwards)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from urnkit.resolver.store.queries import records as record_queries

BEFORE = datetime(2019, 1, 1, tzinfo=UTC)  # the record is made: location A
T = datetime(2021, 6, 1, 12, 0, tzinfo=UTC)  # its location changes to B
AFTER = datetime(2023, 3, 1, tzinfo=UTC)  # deactivated, a successor named


class Clock:
    """The time history's new entries are given (``at``), in place of the present."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: datetime = BEFORE) -> None:
        self.at = at
        monkeypatch.setattr(record_queries, "now", lambda: self.at)
