"""The registered URNs nearest a text in the order of equivalence keys (``tx.neighbours``):
what the 404 page suggests (docs/resolution.md, "Pasted URNs").

Two range queries on the unique index of ``records.equivalence_key``, one each way from the
text's key, each stopping after ``limit`` rows: never a scan, whatever the register's size.
The keys sharing the longest prefix with a key sit next to it in that order (on PostgreSQL,
in the database's collation order, which for the ASCII of URNs mostly agrees)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from urnkit.resolver.store.queries.base import Queries
from urnkit.resolver.store.tables import records


def neighbour_queries(key: str, limit: int) -> tuple[sa.Select[Any], sa.Select[Any]]:
    """The two queries: up to ``limit`` keys from ``key`` upwards, and below it downwards."""
    key_column = records.c.equivalence_key
    columns = (key_column, records.c.urn)
    above = sa.select(*columns).where(key_column >= key).order_by(key_column).limit(limit)
    below = sa.select(*columns).where(key_column < key).order_by(key_column.desc()).limit(limit)
    return above, below


class Neighbours(Queries):
    """The neighbours' queries: ``records`` by equivalence key."""

    __slots__ = ()

    def around(self, key: str, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` records' (equivalence key, URN) on each side of ``key``."""
        found: list[tuple[str, str]] = []
        for query in neighbour_queries(key, limit):
            found += [(row[0], row[1]) for row in self.connection.execute(query)]
        return found
