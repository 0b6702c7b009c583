"""The networks' queries (``tx.networks``): each organisation's named networks, and the
locations restricted to one of them."""

from __future__ import annotations

import sqlalchemy as sa

from urnkit.resolver.store.queries.base import Queries, now
from urnkit.resolver.store.tables import locations, networks, organisations

NetworkRow = tuple[int, str, str, str]
"""A network as stored: its organisation's id and name, its name, its ranges (one a line)."""


class Networks(Queries):
    """The networks' queries: ``networks``, and ``locations.restricted_to``."""

    __slots__ = ()

    def all(self, organisation_id: int | None = None) -> list[NetworkRow]:
        """Every network (of ``organisation_id`` if given), by organisation and name."""
        query = (
            sa.select(organisations.c.id, organisations.c.name, networks.c.name, networks.c.ranges)
            .join(organisations, organisations.c.id == networks.c.organisation_id)
            .order_by(organisations.c.name, networks.c.name)
        )
        if organisation_id is not None:
            query = query.where(networks.c.organisation_id == organisation_id)
        return [(row[0], row[1], row[2], row[3]) for row in self.connection.execute(query)]

    def save(self, organisation_id: int, name: str, ranges: str) -> bool:
        """Create or replace a network; whether it is new."""
        statement = self._insert(networks).values(
            organisation_id=organisation_id, name=name, ranges=ranges, updated=now()
        )
        existed = self.connection.scalar(
            sa.select(sa.func.count())
            .select_from(networks)
            .where(networks.c.organisation_id == organisation_id, networks.c.name == name)
        )
        self.connection.execute(
            statement.on_conflict_do_update(
                index_elements=[networks.c.organisation_id, networks.c.name],
                set_={"ranges": statement.excluded.ranges, "updated": statement.excluded.updated},
            )
        )
        return not existed

    def delete(self, organisation_id: int, name: str) -> bool:
        """Delete a network; whether there was one."""
        deleted = self.connection.execute(
            sa.delete(networks).where(
                networks.c.organisation_id == organisation_id, networks.c.name == name
            )
        )
        return bool(deleted.rowcount)

    def restricted_locations(self, organisation_id: int, name: str) -> int:
        """How many locations held by the organisation are restricted to its network ``name``."""
        count: int = self.connection.execute(
            sa.select(sa.func.count())
            .select_from(locations)
            .where(locations.c.owner_id == organisation_id, locations.c.restricted_to == name)
        ).scalar_one()
        return count
