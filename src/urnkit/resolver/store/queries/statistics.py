"""The statistics' queries (``tx.statistics``): resolutions counted per prefix and day, records
counted by prefix or status, and what records' statuses by day are derived from: records by day
of creation and status, and status changes by day (aggregates: their rows are bounded by the days
and statuses, not by the records)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, time
from typing import Any, Literal

import sqlalchemy as sa

from urnkit.resolver.store.queries.base import Queries
from urnkit.resolver.store.tables import history, records, resolution_counts

DayStatusCount = tuple[date | None, str, int]
"""A day of creation (None: before the days asked for), a status and how many records."""
StatusChange = tuple[date, date | None, str, str, int]
"""A day of change, the changed records' day of creation (None: before the days asked for), the
status before and after, and how many records changed so."""


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

    def created_by_day(self, since: date) -> list[DayStatusCount]:
        """Records by day of creation (UTC) and status now, from ``since`` on; those created
        before ``since`` by status alone (day None)."""
        day = self._created_day(since)
        rows = self.connection.execute(
            sa.select(day, records.c.status, sa.func.count()).group_by(day, records.c.status)
        )
        return [(_day(row[0]), row[1], row[2]) for row in rows]

    def status_changes(self, since: date) -> list[StatusChange]:
        """The changes of records' status from ``since`` on, counted by day (UTC) of change,
        day of the record's creation (before ``since``: None), status before and after. A
        history entry holds the record as it was after its change, the newest none: the record
        now (migration ``current_history``); the status before is its previous entry's."""
        previous, earlier = history.alias("previous"), history.alias("earlier")
        before = previous.c.record["status"].as_string()
        after = sa.func.coalesce(history.c.record["status"].as_string(), records.c.status)
        latest_before = (
            sa.select(sa.func.max(earlier.c.id))
            .where(earlier.c.record_id == history.c.record_id, earlier.c.id < history.c.id)
            .correlate(history)
            .scalar_subquery()
        )
        changed, created = self._day_of(history.c.at), self._created_day(since)
        rows = self.connection.execute(
            sa.select(changed, created, before, after, sa.func.count())
            .select_from(history.join(records, records.c.id == history.c.record_id))
            .join(previous, previous.c.id == latest_before)
            .where(history.c.at >= _start(since), before != after)
            .group_by(changed, created, before, after)
        )
        return [(_changed(row[0]), _day(row[1]), row[2], row[3], row[4]) for row in rows]

    def _created_day(self, since: date) -> sa.ColumnElement[Any]:
        """The day (UTC) a record was created, or NULL before ``since``."""
        return sa.case(
            (records.c.created < _start(since), sa.null()), else_=self._day_of(records.c.created)
        )

    def _day_of(self, moment: sa.ColumnElement[datetime]) -> sa.ColumnElement[Any]:
        """The day (UTC) of a time of records or history: SQLite stores them as microseconds
        since 1970 (``tables.unix_microseconds``, migration times_as_integers)."""
        if self.dialect == "sqlite":
            return sa.func.date(sa.type_coerce(moment, sa.BigInteger) // 1_000_000, "unixepoch")
        return sa.cast(sa.func.timezone("UTC", moment), sa.Date)


def _start(day: date) -> datetime:
    """The first moment of ``day`` (UTC)."""
    return datetime.combine(day, time(), UTC)


def _changed(value: date | str) -> date:
    """A day as the database hands it back: a date (PostgreSQL), ISO 8601 text (SQLite)."""
    return date.fromisoformat(value) if isinstance(value, str) else value


def _day(value: date | str | None) -> date | None:
    """A day as the database hands it back, or NULL."""
    return None if value is None else _changed(value)
