"""The resolver's database: SQLAlchemy Core, one code path for SQLite and PostgreSQL.

* :mod:`~urnkit.resolver.store.tables` — the tables, which only the Alembic migrations create
  and change (:mod:`~urnkit.resolver.store.schema`);
* :mod:`~urnkit.resolver.store.engine` — connections and their settings;
* :mod:`~urnkit.resolver.store.databases` — the primary and its streaming standbys, and which
  of them a read goes to;
* :mod:`~urnkit.resolver.store.store` — :class:`Store`: transactions, snapshots, the schema,
  locks across processes, and resolution's lookups (:mod:`~urnkit.resolver.store.fast_lookup`);
* :mod:`~urnkit.resolver.store.transaction` — :class:`Transaction`, a unit of work with the
  queries of each area: ``tx.records``, ``tx.organisations``, ``tx.links``, ``tx.successions``,
  ``tx.identifiers``, ``tx.oai``, ``tx.forwarding``, ``tx.statistics``
  (:mod:`~urnkit.resolver.store.queries`) and
  ``tx.bulk`` (:mod:`~urnkit.resolver.store.bulk_import`).

>>> store = Store("sqlite://")
>>> store.schema_state()
'empty'
"""

from urnkit.resolver.store.bulk_import import (
    SqliteStagedImport,
    StagedImport,
    stage_import,
    stage_sqlite_import,
)
from urnkit.resolver.store.engine import DEFAULT_DATABASE_URL, create_engine
from urnkit.resolver.store.fast_lookup import ResolutionRow
from urnkit.resolver.store.queries.base import now
from urnkit.resolver.store.queries.links import url_hash
from urnkit.resolver.store.queries.organisations import token_hash
from urnkit.resolver.store.store import Store
from urnkit.resolver.store.tables import (
    forwarding,
    history,
    idempotency_keys,
    link_checks,
    links,
    locations,
    metadata,
    oai_items,
    oai_sources,
    organisations,
    prefixes,
    record_identifiers,
    records,
    resolution_counts,
    successions,
    tokens,
)
from urnkit.resolver.store.transaction import Transaction

__all__ = [
    "DEFAULT_DATABASE_URL",
    "ResolutionRow",
    "SqliteStagedImport",
    "StagedImport",
    "Store",
    "Transaction",
    "create_engine",
    "forwarding",
    "history",
    "idempotency_keys",
    "link_checks",
    "links",
    "locations",
    "metadata",
    "now",
    "oai_items",
    "oai_sources",
    "organisations",
    "prefixes",
    "record_identifiers",
    "records",
    "resolution_counts",
    "stage_import",
    "stage_sqlite_import",
    "successions",
    "token_hash",
    "tokens",
    "url_hash",
]
