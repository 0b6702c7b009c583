"""A record's other identifiers (``tx.identifiers``): the URNs of other namespaces and the
local id its metadata carries (:mod:`urnkit.resolver.domain.identifiers`), indexed in
``record_identifiers`` on every write, and the records they lead to."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from urnkit.resolver.domain import ConflictError
from urnkit.resolver.domain.identifiers import LOCAL_ID, identifier_keys, local_id
from urnkit.resolver.store.queries.base import Queries, one_of
from urnkit.resolver.store.tables import record_identifiers, records

_CLAIM = sa.text("SELECT pg_advisory_xact_lock(:key)")

Identified = tuple[int, int, Mapping[str, Any]]
"""A record as its identifiers are indexed: its row id, its owner's id, its metadata."""


class Identifiers(Queries):
    """The identifiers' queries: ``record_identifiers``."""

    __slots__ = ()

    def replace(self, identified: Sequence[Identified], *, fresh: bool = False) -> None:
        """Make ``record_identifiers`` hold what each record's metadata carries (``fresh``:
        records just inserted, which hold none yet). A local id another record of the
        organisation holds is refused (:class:`ConflictError`) before the database's unique
        constraint would refuse it."""
        if not fresh:
            ids = [record_id for record_id, _, _ in identified]
            for condition in one_of(record_identifiers.c.record_id, ids, self.dialect):
                self.connection.execute(sa.delete(record_identifiers).where(condition))
        rows: list[dict[str, Any]] = []
        held: dict[tuple[int, str], int] = {}
        for record_id, owner_id, metadata in identified:
            rows += [
                {"key": key, "record_id": record_id, "organisation_id": None}
                for key in sorted(identifier_keys(metadata))
            ]
            own = local_id(metadata)
            if own is not None:
                if held.setdefault((owner_id, own), record_id) != record_id:
                    self._refuse(own, held[(owner_id, own)])
                rows.append({"key": own, "record_id": record_id, "organisation_id": owner_id})
        for (owner_id, own), record_id in sorted(held.items()):
            self._claim(owner_id, own)
            holder = self.connection.scalar(
                sa.select(record_identifiers.c.record_id).where(
                    record_identifiers.c.organisation_id == owner_id,
                    record_identifiers.c.key == own,
                    record_identifiers.c.record_id != record_id,
                )
            )
            if holder is not None:
                self._refuse(own, holder)
        if rows:
            self.connection.execute(record_identifiers.insert(), rows)

    def _claim(self, owner_id: int, own: str) -> None:
        """On PostgreSQL, wait for any other transaction claiming the organisation's local id
        ``own`` to end (a transaction-scoped advisory lock), so that the check after it sees
        what that one wrote: two concurrent claims give one record and one 409, not a unique
        violation. SQLite's writers are serialized already (``BEGIN IMMEDIATE``)."""
        if self.dialect == "postgresql":
            name = f"record_identifiers:{owner_id}:{own}".encode()
            key = int.from_bytes(hashlib.sha256(name).digest()[:8], "big", signed=True)
            self.connection.execute(_CLAIM, {"key": key})

    def _refuse(self, own: str, holder: int) -> None:
        urn = self.connection.scalar(sa.select(records.c.urn).where(records.c.id == holder))
        raise ConflictError(
            f"metadata.{LOCAL_ID} {own!r} is already the local id of {urn} of this "
            "organisation; a local id names one record",
            pointer=f"/metadata/{LOCAL_ID}",
            holder=urn,
        )

    def refresh(self, keys: Collection[str]) -> None:
        """:meth:`replace` for the records with equivalence keys among ``keys`` (imports)."""
        found: list[Identified] = []
        for condition in one_of(records.c.equivalence_key, keys, self.dialect):
            query = sa.select(records.c.id, records.c.owner_id, records.c.metadata).where(condition)
            found += [(row[0], row[1], row[2]) for row in self.connection.execute(query)]
        self.replace(found)

    def carriers(self, key: str, limit: int) -> list[tuple[str, str | None]]:
        """The URNs (each with its ``metadata.title``, if a string) of up to ``limit`` records
        carrying the URN whose equivalence key is ``key`` in their ``metadata.identifiers``,
        oldest first."""
        query = (
            sa.select(records.c.urn, records.c.metadata)
            .join(record_identifiers, record_identifiers.c.record_id == records.c.id)
            .where(record_identifiers.c.key == key, record_identifiers.c.organisation_id.is_(None))
            .order_by(records.c.id)
            .limit(limit)
        )
        return [
            (urn, title if isinstance(title := metadata.get("title"), str) else None)
            for urn, metadata in self.connection.execute(query)
        ]


def identified_by(text: str, key: str | None) -> sa.ColumnElement[bool]:
    """The condition on ``records`` of carrying the identifier ``text``: the URN whose
    equivalence key is ``key``, or, when ``key`` is None, the local id ``text`` (in any
    organisation)."""
    if key is None:
        condition = sa.and_(
            record_identifiers.c.key == text, record_identifiers.c.organisation_id.is_not(None)
        )
    else:
        condition = sa.and_(
            record_identifiers.c.key == key, record_identifiers.c.organisation_id.is_(None)
        )
    return records.c.id.in_(sa.select(record_identifiers.c.record_id).where(condition))
