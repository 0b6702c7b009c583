"""What the query modules share: their base class, the time stored, conditions on many values."""

from __future__ import annotations

import json
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


def inserted_in_pages(table: sa.TableClause) -> Any:
    """An INSERT of many rows sent as statements of 100 rows each, not a statement a row:
    PostgreSQL checks the references of an insert into ``records``, ``locations`` or
    ``history`` once a statement (migration references_per_statement). SQLAlchemy pages an
    INSERT's rows so only when it returns something: the ids, unused.

    >>> str(inserted_in_pages(sa.table("t", sa.column("id"), sa.column("x"))))
    'INSERT INTO t (id, x) VALUES (:id, :x) RETURNING t.id'
    """
    return table.insert().returning(table.c.id).execution_options(insertmanyvalues_page_size=100)


def one_of(
    column: sa.Column[Any], values: Collection[Any], dialect: str
) -> Iterator[sa.ColumnElement[bool]]:
    """The condition that selects the rows whose ``column`` is one of ``values`` (texts or
    integers), none for no values, with a single parameter: on PostgreSQL ``= ANY(array)``,
    on SQLite ``IN`` the elements of a JSON array (``json_each``), probing ``column``'s index
    with each. An IN list of 1,000 parameters cost more to build and parse than the import it
    served (benchmarks/storage_bench.py).

    >>> from urnkit.resolver.store.tables import records
    >>> [str(c) for c in one_of(records.c.id, [1, 2, 3], "sqlite")]
    ['records.id IN (SELECT value FROM json_each(:elements_1))']
    >>> list(one_of(records.c.id, [], "sqlite"))
    []
    """
    items = list(values)
    if not items:
        return
    if dialect == "postgresql":
        yield column == sa.any_(sa.bindparam(None, items, type_=postgresql.ARRAY(column.type)))
        return
    elements = sa.bindparam("elements", json.dumps(items), sa.Text(), unique=True)
    yield column.in_(_ELEMENTS.bindparams(elements))


# Written out: SQLAlchemy's table-valued json_each is slow to build, a fresh alias each time.
_ELEMENTS = sa.text("SELECT value FROM json_each(:elements)").columns(sa.column("value"))


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
