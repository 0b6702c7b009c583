"""The forwarding table's queries (``tx.forwarding``): the national resolvers by country
(RFC 8458 §4.4) and what their health checks found."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from urnkit.resolver.domain.forwarding import Forwarding, Health
from urnkit.resolver.store.queries.base import Queries, now, utc
from urnkit.resolver.store.tables import forwarding


class ForwardingTable(Queries):
    """The forwarding table's queries: ``forwarding``."""

    __slots__ = ()

    def entries(self, country: str | None = None) -> list[Forwarding]:
        """The forwarding table by country (only ``country``'s row if given)."""
        query = sa.select(
            forwarding.c.country,
            forwarding.c.url_template,
            forwarding.c.health,
            forwarding.c.checked,
            forwarding.c.detail,
            forwarding.c.note,
        ).order_by(forwarding.c.country)
        if country is not None:
            query = query.where(forwarding.c.country == country)
        return [
            Forwarding(
                row.country,
                row.url_template,
                row.health,
                None if row.checked is None else utc(row.checked),
                row.detail,
                row.note,
            )
            for row in self.connection.execute(query)
        ]

    def put(self, country: str, url_template: str, note: str | None) -> bool:
        """Create or replace a country's row; True when it was created. A changed template's
        health is unknown again; the same template keeps what the last check found."""
        moment = now()
        created = self.connection.scalar(
            self._insert(forwarding)
            .values(
                country=country,
                url_template=url_template,
                health="unknown",
                note=note,
                updated=moment,
            )
            .on_conflict_do_nothing()
            .returning(forwarding.c.country)
        )
        if created is not None:
            return True
        changed = forwarding.c.url_template != url_template
        self.connection.execute(
            sa.update(forwarding)
            .where(forwarding.c.country == country)
            .values(
                url_template=url_template,
                note=note,
                updated=moment,
                health=sa.case((changed, "unknown"), else_=forwarding.c.health),
                checked=sa.case((changed, sa.null()), else_=forwarding.c.checked),
                detail=sa.case((changed, sa.null()), else_=forwarding.c.detail),
            )
        )
        return False

    def remove(self, country: str) -> bool:
        """Delete a country's row; False when there is none."""
        statement = sa.delete(forwarding).where(forwarding.c.country == country)
        return self.connection.execute(statement).rowcount == 1

    def record_health(self, country: str, health: Health, detail: str, checked: datetime) -> None:
        """What a health check found of a country's resolver."""
        self.connection.execute(
            sa.update(forwarding)
            .where(forwarding.c.country == country)
            .values(health=health, detail=detail, checked=checked)
        )
