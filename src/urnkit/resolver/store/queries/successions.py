"""Who succeeds whom (``tx.successions``): the records a deactivated record names as its
successors (RFC 8458 §4.1), registered here or not, and each record's predecessors."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

import sqlalchemy as sa

from urnkit.resolver.store.queries.base import Queries, one_of, utc
from urnkit.resolver.store.tables import records, successions


class Successions(Queries):
    """The successions' queries: ``successions``, and the successors ``records`` name."""

    __slots__ = ()

    def named_successors(self, keys: Collection[str]) -> list[tuple[int, str, list[str]]]:
        """(row id, URN, successors) of the deactivated records among ``keys``."""
        found: list[tuple[int, str, list[str]]] = []
        for condition in one_of(records.c.equivalence_key, keys, self.dialect):
            query = sa.select(records.c.id, records.c.urn, records.c.successors).where(
                condition, records.c.status == "deactivated"
            )
            found += [(row[0], row[1], list(row[2])) for row in self.connection.execute(query)]
        return found

    def replace(self, predecessors: Sequence[tuple[int, str, Collection[str]]]) -> None:
        """Make each (predecessor row id, its URN, its successors' equivalence keys) what
        ``successions`` holds of that predecessor."""
        ids = [record_id for record_id, _, _ in predecessors]
        for condition in one_of(successions.c.predecessor_id, ids, self.dialect):
            self.connection.execute(sa.delete(successions).where(condition))
        rows = [
            {"successor_key": key, "predecessor_id": record_id, "predecessor_urn": urn}
            for record_id, urn, keys in predecessors
            for key in keys
        ]
        if rows:
            self.connection.execute(successions.insert(), rows)

    def predecessors(self, key: str) -> list[str]:
        """The URNs of the deactivated records naming the URN with equivalence key ``key`` as a
        successor, oldest first."""
        query = (
            sa.select(successions.c.predecessor_urn)
            .where(successions.c.successor_key == key)
            .order_by(successions.c.predecessor_id)
        )
        return list(self.connection.scalars(query))

    def predecessors_updated(self, key: str) -> datetime | None:
        """When the last of the predecessors of the URN with equivalence key ``key`` changed
        (None for none): a record's representations name its predecessors."""
        query = (
            sa.select(sa.func.max(records.c.updated))
            .join(successions, successions.c.predecessor_id == records.c.id)
            .where(successions.c.successor_key == key)
        )
        moment = self.connection.scalar(query)
        return None if moment is None else utc(moment)
