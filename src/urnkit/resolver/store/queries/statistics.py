"""The statistics' queries (``tx.statistics``): resolutions counted per prefix and day, records
counted by prefix or status."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Literal

import sqlalchemy as sa

from urnkit.resolver.store.queries.base import Queries
from urnkit.resolver.store.tables import records, resolution_counts


class Statistics(Queries):
    """The statistics' queries: ``resolution_counts``, and counts of ``records``."""

    __slots__ = ()

    def add_resolution_counts(self, counts: Sequence[tuple[str, date, int]]) -> None:
        """Add (prefix, day, count) rows to ``resolution_counts``: an upsert that adds, so that
        processes sharing the database add up. Rows go in key order (no deadlock between two)."""
        if not counts:
            return
        statement = self._insert(resolution_counts)
        statement = statement.on_conflict_do_update(
            index_elements=[resolution_counts.c.prefix, resolution_counts.c.day],
            set_={"count": resolution_counts.c.count + statement.excluded["count"]},
        )
        self.connection.execute(
            statement,
            [{"prefix": p, "day": day, "count": count} for p, day, count in sorted(counts)],
        )

    def resolution_counts(self, since: date) -> list[tuple[str, date, int]]:
        """(prefix, day, count) from ``since`` on, the newest day first, then by prefix."""
        table = resolution_counts
        rows = self.connection.execute(
            sa.select(table.c.prefix, table.c.day, table.c.count)
            .where(table.c.day >= since)
            .order_by(table.c.day.desc(), table.c.prefix)
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def record_counts(self, by: Literal["prefix", "status"]) -> dict[str, int]:
        """How many records there are by ``prefix`` (the URN's own) or by ``status``."""
        column = records.c[by]
        rows = self.connection.execute(sa.select(column, sa.func.count()).group_by(column))
        return {row[0]: row[1] for row in rows}
