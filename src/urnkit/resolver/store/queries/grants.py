"""Location grants (``tx.grants``): the organisations a record's owner lets add and maintain
their own locations on it (migration location_grants)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from urnkit.resolver.store.queries.base import Queries, utc
from urnkit.resolver.store.tables import location_grants, organisations


class Grants(Queries):
    """The grants' queries: ``location_grants``."""

    __slots__ = ()

    def grant(self, record_id: int, organisation_id: int, at: datetime, by: str) -> bool:
        """Grant an organisation its own locations on a record; False if it holds a grant."""
        statement = (
            self._insert(location_grants)
            .values(record_id=record_id, organisation_id=organisation_id, granted=at, granted_by=by)
            .on_conflict_do_nothing()
        )
        return bool(self.connection.execute(statement).rowcount)

    def revoke(self, record_id: int, organisation_id: int) -> bool:
        """Take a grant back; False if the organisation held none."""
        statement = sa.delete(location_grants).where(
            location_grants.c.record_id == record_id,
            location_grants.c.organisation_id == organisation_id,
        )
        return bool(self.connection.execute(statement).rowcount)

    def holds(self, record_id: int, organisation: str) -> bool:
        """Whether the organisation called ``organisation`` holds a grant on a record."""
        query = (
            sa.select(location_grants.c.record_id)
            .join(organisations)
            .where(location_grants.c.record_id == record_id, organisations.c.name == organisation)
        )
        return self.connection.scalar(query) is not None

    def of_record(self, record_id: int) -> list[tuple[str, datetime, str]]:
        """(organisation, granted, granted by) of each grant on a record, by organisation."""
        rows = self.connection.execute(
            sa.select(organisations.c.name, location_grants.c.granted, location_grants.c.granted_by)
            .join(organisations)
            .where(location_grants.c.record_id == record_id)
            .order_by(organisations.c.name)
        )
        return [(name, utc(granted), by) for name, granted, by in rows]
