"""OAI-PMH's queries (``tx.oai``): the repositories harvested and the records their items gave;
records listed by datestamp for the repository this resolver is."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime

import sqlalchemy as sa

from urnkit.resolver.domain import HarvestRun, HarvestSource, Record
from urnkit.resolver.store.queries.base import Queries, now, utc
from urnkit.resolver.store.queries.records import listing_condition, records_where
from urnkit.resolver.store.tables import (
    harvest_runs,
    oai_items,
    oai_sources,
    organisations,
    prefixes,
    records,
)

HARVEST_RUNS_KEPT = 10  # the newest runs of each source kept in harvest_runs


class OAI(Queries):
    """OAI-PMH's queries: ``oai_sources``, ``oai_items``, and ``records`` by datestamp."""

    __slots__ = ()

    def create_source(
        self,
        name: str,
        base_url: str,
        organisation_id: int,
        url_pattern: str,
        set_spec: str | None,
        metadata_prefix: str = "oai_dc",
    ) -> bool:
        """Add a harvest source; False when the name is taken."""
        statement = (
            self._insert(oai_sources)
            .values(
                name=name,
                base_url=base_url,
                organisation_id=organisation_id,
                url_pattern=url_pattern,
                set_spec=set_spec,
                metadata_prefix=metadata_prefix,
                created=now(),
            )
            .on_conflict_do_nothing()
            .returning(oai_sources.c.id)
        )
        return self.connection.scalar(statement) is not None

    def sources(self, names: Collection[str] = ()) -> list[HarvestSource]:
        """The harvest sources called ``names`` (every one when empty), by name."""
        query = (
            sa.select(oai_sources, organisations.c.name.label("organisation"))
            .join(organisations)
            .order_by(oai_sources.c.name)
        )
        if names:
            query = query.where(oai_sources.c.name.in_(list(names)))
        return [
            HarvestSource(
                id=row.id,
                name=row.name,
                base_url=row.base_url,
                organisation=row.organisation,
                url_pattern=row.url_pattern,
                set_spec=row.set_spec,
                metadata_prefix=row.metadata_prefix,
                granularity=row.granularity,
                next_from=row.next_from,
                harvested=None if row.harvested is None else utc(row.harvested),
                created=utc(row.created),
                resumption_token=row.resumption_token,
                resumption_from=row.resumption_from,
            )
            for row in self.connection.execute(query)
        ]

    def finish_harvest(self, source_id: int, granularity: str, next_from: str) -> None:
        """Store where the next incremental harvest of a source starts, after a success."""
        self.connection.execute(
            sa.update(oai_sources)
            .where(oai_sources.c.id == source_id)
            .values(
                granularity=granularity,
                next_from=next_from,
                harvested=now(),
                resumption_token=None,
                resumption_from=None,
            )
        )

    def stop_harvest(self, source_id: int, token: str, next_from: str | None) -> None:
        """Store where a harvest stopped at its deadline: the resumption ``token`` its next
        run asks with and the ``next_from`` that list gives once read to its end."""
        self.connection.execute(
            sa.update(oai_sources)
            .where(oai_sources.c.id == source_id)
            .values(resumption_token=token, resumption_from=next_from)
        )

    def update_source(
        self,
        source_id: int,
        base_url: str,
        organisation_id: int,
        url_pattern: str,
        set_spec: str | None,
        metadata_prefix: str,
    ) -> bool:
        """Change a harvest source; its next harvest is full when the feed it reads (base URL,
        set, format) changed. False when there is no such source."""
        feed = (oai_sources.c.base_url, oai_sources.c.set_spec, oai_sources.c.metadata_prefix)
        same_feed = sa.and_(
            *(
                column.is_not_distinct_from(value)
                for column, value in zip(feed, (base_url, set_spec, metadata_prefix), strict=True)
            )
        )
        statement = (
            sa.update(oai_sources)
            .where(oai_sources.c.id == source_id)
            .values(
                base_url=base_url,
                organisation_id=organisation_id,
                url_pattern=url_pattern,
                set_spec=set_spec,
                metadata_prefix=metadata_prefix,
                next_from=sa.case((same_feed, oai_sources.c.next_from), else_=None),
                resumption_token=sa.case((same_feed, oai_sources.c.resumption_token), else_=None),
                resumption_from=sa.case((same_feed, oai_sources.c.resumption_from), else_=None),
            )
        )
        return self.connection.execute(statement).rowcount == 1

    def record_run(self, run: HarvestRun) -> None:
        """Keep a harvest's run; only the newest :data:`HARVEST_RUNS_KEPT` of its source stay."""
        self.connection.execute(
            harvest_runs.insert().values(
                source_id=run.source_id,
                started=run.started,
                finished=run.finished,
                outcome=run.outcome,
                summary=run.summary,
                refused=list(run.refused),
            )
        )
        kept = (
            sa.select(harvest_runs.c.id)
            .where(harvest_runs.c.source_id == run.source_id)
            .order_by(harvest_runs.c.id.desc())
            .limit(HARVEST_RUNS_KEPT)
        )
        self.connection.execute(
            sa.delete(harvest_runs).where(
                harvest_runs.c.source_id == run.source_id,
                harvest_runs.c.id.not_in(kept.scalar_subquery()),
            )
        )

    def last_runs(self) -> dict[int, HarvestRun]:
        """The last run of each source harvested, by the source's id."""
        newest = sa.select(sa.func.max(harvest_runs.c.id)).group_by(harvest_runs.c.source_id)
        query = sa.select(harvest_runs).where(harvest_runs.c.id.in_(newest.scalar_subquery()))
        return {
            row.source_id: HarvestRun(
                row.source_id,
                utc(row.started),
                utc(row.finished),
                row.outcome,
                row.summary,
                tuple(row.refused),
            )
            for row in self.connection.execute(query)
        }

    def item_records(self, source_id: int, identifier: str) -> list[int]:
        """The ids of the records that a source's OAI item gave."""
        query = sa.select(oai_items.c.record_id).where(
            oai_items.c.source_id == source_id, oai_items.c.identifier == identifier
        )
        return sorted(self.connection.scalars(query))

    def add_items(self, source_id: int, identifier: str, record_ids: Iterable[int]) -> None:
        """Remember that a source's OAI item gave these records (already known: no change)."""
        rows = [
            {"source_id": source_id, "identifier": identifier, "record_id": record_id}
            for record_id in record_ids
        ]
        if rows:
            self.connection.execute(self._insert(oai_items).on_conflict_do_nothing(), rows)

    def records(
        self,
        prefix: str | None,
        start: datetime | None,
        end: datetime | None,
        after: tuple[datetime, int] | None,
        limit: int,
    ) -> list[tuple[int, Record]]:
        """Up to ``limit`` records updated in [``start``, ``end``), under ``prefix`` if given,
        in (updated, id) order after the position ``after``: the pages of an OAI-PMH list."""
        condition = listing_condition(prefix, start, end)
        if after is not None:
            condition = sa.and_(
                condition,
                sa.tuple_(records.c.updated, records.c.id)
                > sa.tuple_(
                    sa.literal(after[0], records.c.updated.type), sa.literal(after[1], sa.Integer)
                ),
            )
        return records_where(
            self.connection, condition, records.c.updated, records.c.id, limit=limit
        )

    def count_records(
        self, prefix: str | None, start: datetime | None, end: datetime | None
    ) -> int:
        """How many records :meth:`records` lists in all."""
        query = sa.select(sa.func.count()).where(listing_condition(prefix, start, end))
        counted: int = self.connection.scalar(query.select_from(records)) or 0
        return counted

    def earliest_datestamp(self) -> datetime | None:
        """The oldest ``records.updated``: OAI-PMH's earliestDatestamp."""
        earliest = self.connection.scalar(sa.select(sa.func.min(records.c.updated)))
        return None if earliest is None else utc(earliest)

    def latest_change(self) -> datetime | None:
        """When the repository last changed: the newest ``records.updated`` or delegation (a
        set), None when it holds neither (``Last-Modified`` of its responses)."""
        found = [
            self.connection.scalar(sa.select(sa.func.max(records.c.updated))),
            self.connection.scalar(sa.select(sa.func.max(prefixes.c.created))),
        ]
        return max((utc(moment) for moment in found if moment is not None), default=None)
