"""The store's schema on SQLite and PostgreSQL.

* The Alembic migrations build exactly the schema that ``store.metadata`` describes (Alembic's
  autogenerate comparison finds nothing to change), and the comparison does see a drift.
* ``schema_state`` goes from ``empty`` to ``current``; upgrading again changes nothing.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from store_support import add_organisation, sample_record

from urnkit.resolver.domain import Location
from urnkit.resolver.store import Store, metadata

# The title search's indexes (migrations title_search, title_words, title_index_from_records,
# title_word_index), which SQLAlchemy's metadata cannot describe: two FTS5 tables, their shadow
# tables and the view they read titles from on SQLite, expression indexes on PostgreSQL. Their
# own tests: tests/resolver/store/test_title_search.py.
TITLE_INDEX = {
    *(
        f"{table}{part}"
        for table in ("record_titles", "record_title_words")
        for part in ("", "_config", "_data", "_idx")
    ),
    "record_title_source",
    "ix_records_title",
    "ix_records_title_words",
}
# SQLite's change counter for resolution and the keys of its moves (migrations
# resolution_changes, resolution_changed_keys), kept by triggers and not in the metadata: their
# own tests, tests/resolver/store/test_resolution_changes.py and
# tests/resolver/web/test_redirect_cache.py.
CHANGE_COUNTER = {"resolution_changes", "resolution_changed_keys"}


# The foreign keys PostgreSQL checks once a statement instead (migration
# references_per_statement; their tests: tests/resolver/store/test_store_integrity.py).
CHECKED_PER_STATEMENT = {
    ("records", "owner_id"),
    ("locations", "record_id"),
    ("locations", "owner_id"),
    ("history", "record_id"),
}


def _described_on(dialect: str) -> Any:
    """Alembic's ``include_object`` for ``dialect``: what SQLAlchemy's metadata describes."""

    def described(obj: object, name: str | None, kind: str, reflected: bool, _: object) -> bool:
        if kind == "foreign_key_constraint" and dialect == "postgresql":
            assert isinstance(obj, sa.ForeignKeyConstraint)
            return (obj.table.name, obj.column_keys[0]) not in CHECKED_PER_STATEMENT
        return name not in TITLE_INDEX and name not in CHANGE_COUNTER

    return described


def _differences(store: Store, target: sa.MetaData) -> list[Any]:
    with store.engine.connect() as connection:
        options = {
            "compare_type": True,
            "compare_server_default": True,
            "include_object": _described_on(store.engine.dialect.name),
        }
        context = MigrationContext.configure(connection, opts=options)
        return list(compare_metadata(context, target))


def _schema(store: Store) -> dict[str, Any]:
    """What the database holds, table by table: columns, indexes, unique constraints, keys."""
    inspector = sa.inspect(store.engine)
    return {
        table: {
            "columns": [
                (c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(table)
            ],
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]), i["unique"])
                for i in inspector.get_indexes(table)
            ),
            "unique": sorted(
                tuple(u["column_names"]) for u in inspector.get_unique_constraints(table)
            ),
            "primary": inspector.get_pk_constraint(table)["constrained_columns"],
            "foreign": sorted(
                (tuple(f["constrained_columns"]), f["referred_table"])
                for f in inspector.get_foreign_keys(table)
            ),
        }
        for table in sorted(inspector.get_table_names())
    }


def test_migrations_build_the_schema_the_metadata_describes(store: Store) -> None:
    # Tables, columns, types, nullability, indexes, unique constraints and foreign keys.
    assert _differences(store, metadata) == []
    tables = set(sa.inspect(store.engine).get_table_names()) - TITLE_INDEX - CHANGE_COUNTER
    assert tables == set(metadata.tables) | {"alembic_version"}


def test_the_comparison_sees_a_drift(store: Store) -> None:
    drifted = sa.MetaData()
    for table in metadata.tables.values():
        table.to_metadata(drifted)
    drifted.tables["records"].append_column(sa.Column("extra", sa.Text))
    sa.Index("ix_history_action", drifted.tables["history"].c.action)
    drifted.tables["tokens"].c.label.nullable = False
    kinds = {
        # Alembic reports additions as tuples, column modifications as lists of tuples.
        difference[0] if isinstance(difference, tuple) else difference[0][0]
        for difference in _differences(store, drifted)
    }
    assert {"add_column", "add_index", "modify_nullable"} <= kinds


def test_schema_state_goes_from_empty_to_current(empty_store: Store) -> None:
    assert empty_store.schema_state() == "empty"
    empty_store.upgrade()
    assert empty_store.schema_state() == "current"


def test_a_database_with_foreign_tables_is_not_empty(empty_store: Store) -> None:
    with empty_store.engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE unrelated (id INTEGER PRIMARY KEY)"))
    assert empty_store.schema_state() == "outdated"
    empty_store.upgrade()
    assert empty_store.schema_state() == "current"


def test_upgrading_twice_changes_nothing(store: Store) -> None:
    with store.transaction() as tx:
        organisation_id = add_organisation(tx)
        tx.organisations.delegate(organisation_id, "fi:demo", "sequential")
        assert tx.records.insert(sample_record("urn:nbn:fi:demo-1"), organisation_id) is not None
    schema = _schema(store)
    with store.engine.connect() as connection:
        version = connection.execute(sa.text("SELECT version_num FROM alembic_version")).all()

    store.upgrade()

    assert _schema(store) == schema
    assert store.schema_state() == "current"
    with store.engine.connect() as connection:
        assert connection.execute(sa.text("SELECT version_num FROM alembic_version")).all() == (
            version
        )
    with store.snapshot() as tx:
        assert tx.organisations.prefixes() == [("fi:demo", "Library", "sequential")]
        record = tx.records.get("urn:nbn:fi:demo-1")
    assert record is not None
    assert record.locations == (Location("https://example.org/x", organisation="Library"),)
