"""SQLite's times of records and history as integers (migration times_as_integers): microseconds
since 1970, UTC, stored and read back exactly; the migration rewrites the text stored before it,
to the microsecond, past the triggers that guard history, and back again on a downgrade."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from importlib import import_module
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy.dialects import sqlite
from store_support import add_organisation, downgrade, sample_record

from urnkit.resolver.store import Store
from urnkit.resolver.store.tables import UnixMicroseconds, unix_microseconds

MIGRATION = import_module("urnkit.resolver.migrations.versions.0019_times_as_integers")
# What SQLAlchemy wrote before the migration, and a time without its fraction (SQLite's own).
TEXTS = ["2026-11-27 14:41:21.027875", "1999-12-31 23:59:59.999999", "2026-01-02 03:04:05"]
MOMENTS = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9998, 12, 31), timezones=st.just(UTC)
)
OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('times') / 'times.db'}")
    store.upgrade()
    with store.transaction() as tx:
        add_organisation(tx)
    yield store
    store.close()


def _raw(store: Store, query: str) -> list[tuple[object, ...]]:
    with store.snapshot() as tx:
        return [tuple(row) for row in tx.connection.exec_driver_sql(query)]


@settings(max_examples=30, deadline=None)
@given(moment=MOMENTS, offset=OFFSETS)
def test_a_time_is_stored_as_an_integer_and_read_back_exactly(
    sqlite_store: Store, moment: datetime, offset: timezone
) -> None:
    # An input boundary: any instant from 1970 to 9999 to the microsecond, in any zone.
    urn = f"urn:nbn:fi:times-{unix_microseconds(moment)}-{offset.utcoffset(None)}"
    written = moment.astimezone(offset)
    record = replace(sample_record(urn), created=written, updated=written)
    with sqlite_store.transaction() as tx:
        owner = tx.organisations.id("Library")
        assert owner is not None
        if tx.records.id(record.key) is not None:
            return
        tx.records.insert(record, owner)
    with sqlite_store.snapshot() as tx:
        stored = tx.records.get(record.key)
        record_id = tx.records.id(record.key)
    assert stored is not None
    assert stored.created == moment
    assert stored.created.utcoffset() == timedelta(0)
    assert _raw(
        sqlite_store, f"SELECT created, typeof(updated) FROM records WHERE id = {record_id}"
    )[0] == (unix_microseconds(moment), "integer")


@settings(max_examples=200, deadline=None)
@given(moment=MOMENTS)
def test_the_migration_converts_any_text_exactly_and_back(moment: datetime) -> None:
    # The migration's SQL against Python's own arithmetic, on SQLAlchemy's text format.
    text = moment.replace(tzinfo=None).isoformat(" ", "microseconds")
    connection = sqlite3.connect(":memory:")
    as_integer = MIGRATION._AS_INTEGER.format(c="?")
    (stored,) = connection.execute(f"SELECT {as_integer}", (text,) * 2).fetchone()
    assert stored == unix_microseconds(moment)
    (back,) = connection.execute(
        f"SELECT {MIGRATION._AS_TEXT.format(c='?')}", (stored,) * 2
    ).fetchone()
    assert back == text
    connection.close()


@pytest.mark.parametrize("text", TEXTS)
def test_a_time_still_stored_as_text_is_read_as_before(text: str) -> None:
    # Written by a release before the migration while it ran: read, not refused.
    read = UnixMicroseconds().result_processor(sqlite.dialect(), None)
    assert read(text) == datetime.fromisoformat(text).replace(tzinfo=UTC)
    assert read(unix_microseconds(read(text))) == read(text)


def test_the_migration_rewrites_what_was_stored_and_back(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'before.db'}")
    store.upgrade("title_index_from_records")
    with store.transaction() as tx:
        owner = add_organisation(tx)
    with store.engine.begin() as connection:  # rows as the release before wrote them: text
        for n, text in enumerate(TEXTS, 1):
            connection.exec_driver_sql(
                "INSERT INTO records (id, equivalence_key, urn, prefix, status, metadata,"
                " successors, owner_id, created, updated) VALUES (?, ?, ?, 'fi:t', 'active',"
                " '{}', '[]', ?, ?, ?)",
                (n, f"urn:nbn:fi:t-{n}", f"urn:nbn:fi:t-{n}", owner, TEXTS[0], text),
            )
            connection.exec_driver_sql(
                "INSERT INTO history (record_id, at, action, actor) VALUES (?, ?, 'created', 'x')",
                (n, text),
            )
    store.upgrade()
    expected = [datetime.fromisoformat(text).replace(tzinfo=UTC) for text in TEXTS]
    with store.snapshot() as tx:
        records = [tx.records.get(f"urn:nbn:fi:t-{n}") for n in (1, 2, 3)]
        entries = [tx.records.history(n, {})[0].at for n in (1, 2, 3)]
    assert [r.updated for r in records if r is not None] == expected
    assert entries == expected
    assert {row[0] for row in _raw(store, "SELECT typeof(at) FROM history")} == {"integer"}
    # The guards are back: the record cannot change while its newest entry has no document.
    with (
        pytest.raises(sa.exc.DBAPIError, match="given its document"),
        store.engine.begin() as connection,
    ):
        connection.exec_driver_sql("UPDATE records SET updated = 0 WHERE id = 1")
    downgrade(store, "title_index_from_records")
    texts = _raw(store, "SELECT updated FROM records ORDER BY id")
    assert [text for (text,) in texts] == [*TEXTS[:2], TEXTS[2] + ".000000"]
    store.close()
