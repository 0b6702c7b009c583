"""What the store's tests share: a record, an organisation, SQL that bypasses the store."""

from __future__ import annotations

from datetime import UTC, datetime
from importlib.resources import files

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.store import Store, Transaction


def sample_record(urn: str, owner: str = "Library") -> Record:
    """A record for ``urn``, whose equivalence key is ``urn`` in lower case (no percent-encoding,
    NBN strings of digits)."""
    moment = datetime.now(UTC)
    key = urn.lower()
    return Record(
        urn,
        key,
        key.split(":", 2)[2].split("-")[0],
        "active",
        owner,
        moment,
        moment,
        locations=(Location("https://example.org/x"),),
        metadata={"title": "X"},
    )


def add_organisation(tx: Transaction, name: str = "Library") -> int:
    """A new organisation's id."""
    organisation_id = tx.organisations.create(name)
    assert organisation_id is not None
    return organisation_id


def raw_sql(store: Store, statement: str) -> None:
    """Run ``statement`` on a plain engine of the same database: none of the store's code."""
    engine = sa.create_engine(store.url)
    try:
        with engine.begin() as connection:
            connection.execute(sa.text(statement))
    finally:
        engine.dispose()


def downgrade(store: Store, revision: str) -> None:
    """Take ``store``'s schema down to ``revision`` with alembic's own command."""
    config = Config()
    config.set_main_option("script_location", str(files("urnkit.resolver") / "migrations"))
    with store.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def title_index_matches(store: Store) -> bool:
    """Whether SQLite's title index holds every record's title and nothing else: FTS5's
    integrity check against its external content (migration title_index_from_records)."""
    with store.snapshot() as tx:
        return tx.titles.agrees()
