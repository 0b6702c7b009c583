"""Every index the resolver keeps, and the query that needs it: each query's plan, on SQLite and
PostgreSQL, uses its index (docs/storage.md). An index no query here needs has no reason to
cost bytes on every URN."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from urnkit.resolver.store import Store, metadata
from urnkit.resolver.store.fast_lookup import RESOLUTION_QUERY
from urnkit.resolver.store.tables import (
    harvest_runs,
    history,
    link_checks,
    links,
    locations,
    record_identifiers,
    records,
    staff_sessions,
    successions,
)

# (index on SQLite, on PostgreSQL, the query that needs it, as the store's modules ask it)
NEEDS: list[tuple[str, str, Any]] = [
    # Resolution (fast_lookup.RESOLUTION_QUERY), and every lookup of a record by its URN.
    (
        "sqlite_autoindex_records_1",
        "records_equivalence_key_key",
        RESOLUTION_QUERY.params(key="urn:nbn:fi:lib-1"),
    ),
    # Listing and export under a prefix, the statistics per prefix.
    (
        "ix_records_prefix",
        "ix_records_prefix",
        sa.select(records.c.id).where(records.c.prefix == "fi:lib").order_by(records.c.id),
    ),
    # OAI-PMH's lists in datestamp order, from= and until= (queries/oai.py).
    (
        "ix_records_updated",
        "ix_records_updated",
        sa.select(records.c.id)
        .where(records.c.updated >= sa.literal("2026-01-01"))
        .order_by(records.c.updated, records.c.id),
    ),
    # A record's locations (records_where, resolution's targets when they change).
    (
        "ix_locations_record_id",
        "ix_locations_record_id",
        sa.select(locations.c.url).where(locations.c.record_id == 7),
    ),
    # Reverse lookup: the records with a location at a URL (search by URL, link states).
    (
        "ix_locations_url",
        "ix_locations_url",
        sa.select(locations.c.record_id).where(locations.c.url == "https://example.org/x"),
    ),
    # A record's history.
    (
        "ix_history_record_id",
        "ix_history_record_id",
        sa.select(history.c.at).where(history.c.record_id == 7).order_by(history.c.id),
    ),
    # The URLs due for link checking, oldest check first (queries/links.py claim).
    (
        "ix_links_checked",
        "ix_links_checked",
        sa.select(links.c.url_hash).where(links.c.checked <= sa.literal("2026-01-01")),
    ),
    # A URL's checks.
    (
        "ix_link_checks_url_hash",
        "ix_link_checks_url_hash",
        sa.select(link_checks.c.at).where(link_checks.c.url_hash == "ab"),
    ),
    # A record's predecessors (resolution's Link header).
    (
        "sqlite_autoindex_successions_1",
        "successions_pkey",
        sa.select(successions.c.predecessor_urn).where(successions.c.successor_key == "x"),
    ),
    # The records carrying another identifier (resolution of urn:isbn:…, search by identifier):
    # the unique constraint's index, led by organisation_id (NULL for URNs: indexed too).
    (
        "sqlite_autoindex_record_identifiers_2",
        "record_identifiers_pkey",
        sa.select(record_identifiers.c.record_id).where(
            record_identifiers.c.key == "urn:isbn:9780804429573",
            record_identifiers.c.organisation_id.is_(None),
        ),
    ),
    # A record's identifiers, rewritten with it (queries/identifiers.py replace).
    (
        "ix_record_identifiers_record_id",
        "ix_record_identifiers_record_id",
        sa.select(record_identifiers.c.key).where(record_identifiers.c.record_id == 7),
    ),
    # A harvest source's newest runs, the older ones pruned (queries/oai.py record_run).
    (
        "ix_harvest_runs_source_id",
        "ix_harvest_runs_source_id",
        sa.select(harvest_runs.c.id)
        .where(harvest_runs.c.source_id == 3)
        .order_by(harvest_runs.c.id.desc()),
    ),
    # Whether an organisation's local id is held (the unique constraint's index).
    (
        "sqlite_autoindex_record_identifiers_2",
        "uq_record_identifiers_local_id",
        sa.select(record_identifiers.c.record_id).where(
            record_identifiers.c.organisation_id == 1, record_identifiers.c.key == "shelf-1"
        ),
    ),
    # Ending every session of an account: sign-out elsewhere, a new password, disabling
    # (queries/accounts.py end_sessions); also what deleting an account's row checks.
    (
        "ix_staff_sessions_account_id",
        "ix_staff_sessions_account_id",
        sa.select(staff_sessions.c.id).where(staff_sessions.c.account_id == 7),
    ),
]


def _plan(store: Store, query: Any) -> str:
    dialect = store.engine.dialect
    sql = str(query.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
    with store.engine.connect() as connection:
        if dialect.name == "sqlite":
            rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}").all()
            return "\n".join(str(row[-1]) for row in rows)
        # A few rows: the planner would read them whole; asked not to, it shows the index
        # the query can use.
        connection.exec_driver_sql("SET enable_seqscan = off")
        return "\n".join(connection.exec_driver_sql(f"EXPLAIN {sql}").scalars())


@pytest.mark.parametrize(("sqlite", "postgresql", "query"), NEEDS, ids=[n[0] for n in NEEDS])
def test_each_index_serves_its_query(
    store: Store, sqlite: str, postgresql: str, query: Any
) -> None:
    expected = sqlite if store.engine.dialect.name == "sqlite" else postgresql
    assert expected in _plan(store, query)


def test_every_index_has_its_query(store: Store) -> None:
    indexes = {index.name for table in metadata.tables.values() for index in table.indexes}
    needed = {name for name, _, _ in NEEDS}
    assert indexes <= needed
