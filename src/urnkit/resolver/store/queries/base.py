"""What the query modules share: their base class, the time stored, conditions on many values."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection


def now() -> datetime:
    """The current time in UTC, the only time zone stored."""
    return datetime.now(UTC)


def utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def one_of(
    column: sa.Column[Any], values: Collection[Any], dialect: str
) -> Iterator[sa.ColumnElement[bool]]:
    """Conditions that together select the rows whose ``column`` is one of ``values``: on
    PostgreSQL one ``= ANY(array)``, a single parameter (an IN list of 5,000 parameters cost more
    to build and parse than the import it served); elsewhere IN lists of 1,000, which every
    driver accepts.

    >>> from urnkit.resolver.store.tables import records
    >>> [str(c) for c in one_of(records.c.id, [1, 2, 3], "sqlite")]
    ['records.id IN (__[POSTCOMPILE_id_1])']
    """
    items = list(values)
    if dialect == "postgresql":
        if items:
            yield column == sa.any_(sa.bindparam(None, items, type_=postgresql.ARRAY(column.type)))
        return
    for start in range(0, len(items), 1_000):
        yield column.in_(items[start : start + 1_000])


class Queries:
    """The queries of one area over a transaction's connection, to a database ``dialect``
    ("sqlite", "postgresql")."""

    __slots__ = ("connection", "dialect")

    def __init__(self, connection: Connection, dialect: str) -> None:
        self.connection = connection
        self.dialect = dialect

    def _insert(self, table: sa.Table) -> Any:
        """An INSERT that can take ``ON CONFLICT DO NOTHING`` on either database."""
        return (postgresql.insert if self.dialect == "postgresql" else sqlite.insert)(table)
