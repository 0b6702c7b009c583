"""The resolver's store (``urnkit.resolver.store``) on SQLite and PostgreSQL.

* The Alembic migrations build exactly the schema that ``store.metadata`` describes (Alembic's
  autogenerate comparison finds nothing to change), and the comparison does see a drift.
* ``schema_state`` goes from ``empty`` to ``current``; upgrading again changes nothing.
* The database itself, not only the code, refuses to delete records (RFC 8458 §4.1: a URN:NBN
  "MUST NOT be reused") and to change or delete history rows: raw SQL fails.
* Sequential numbers taken by concurrent transactions never overlap, and a URN's equivalence key
  is unique even when several transactions insert it at once.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from uuid import uuid4

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resolver_support import fresh_database

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.store import (
    Store,
    Transaction,
    links,
    metadata,
    successions,
    url_hash,
)

T = TypeVar("T")
THREADS = 6
DB_SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture
def empty_store(database_url: str) -> Iterator[Store]:
    """A store on a new database without any schema."""
    store = Store(database_url)
    yield store
    store.close()


@pytest.fixture
def store(empty_store: Store) -> Store:
    """A store on a new database with the current schema."""
    empty_store.upgrade()
    return empty_store


def _differences(store: Store, target: sa.MetaData) -> list[Any]:
    with store.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "compare_server_default": True}
        )
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


def _record(urn: str, owner: str = "Library") -> Record:
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


def _organisation(tx: Transaction, name: str = "Library") -> int:
    organisation_id = tx.create_organisation(name)
    assert organisation_id is not None
    return organisation_id


def _in_threads(count: int, work: Callable[[int], T]) -> list[T]:
    """``work(0)`` … ``work(count - 1)`` in threads released together; the results that are not
    None, in order. An exception in any thread fails the test."""
    barrier = threading.Barrier(count)
    results: list[T | None] = [None] * count
    errors: list[BaseException] = []

    def run(number: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[number] = work(number)
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread hangs"
    if errors:
        raise errors[0]
    return [result for result in results if result is not None]


# --- schema --------------------------------------------------------------------------------------


def test_migrations_build_the_schema_the_metadata_describes(store: Store) -> None:
    # Tables, columns, types, nullability, indexes, unique constraints and foreign keys.
    assert _differences(store, metadata) == []
    tables = set(sa.inspect(store.engine).get_table_names())
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
        organisation_id = _organisation(tx)
        tx.delegate(organisation_id, "fi:demo", "sequential")
        assert tx.insert_record(_record("urn:nbn:fi:demo-1"), organisation_id) is not None
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
        assert tx.prefixes() == [("fi:demo", "Library", "sequential")]
        record = tx.record("urn:nbn:fi:demo-1")
    assert record is not None
    assert record.locations == (Location("https://example.org/x"),)


# --- what the database refuses -------------------------------------------------------------------


@pytest.fixture
def filled(store: Store) -> Store:
    """The store with one record, its location and two history rows."""
    with store.transaction() as tx:
        organisation_id = _organisation(tx)
        record_id = tx.insert_record(_record("urn:nbn:fi:demo-1"), organisation_id)
        assert record_id is not None
        tx.append_history([(record_id, "created", "test", {}), (record_id, "patched", "test", {})])
    return store


def _raw(store: Store, statement: str) -> None:
    """Run ``statement`` on a plain engine of the same database: none of the store's code."""
    engine = sa.create_engine(store.url)
    try:
        with engine.begin() as connection:
            connection.execute(sa.text(statement))
    finally:
        engine.dispose()


def _count(store: Store, table: str) -> int:
    with store.engine.connect() as connection:
        count: int = connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()
        return count


def test_the_database_refuses_to_delete_records(filled: Store, subtests: pytest.Subtests) -> None:
    # RFC 8458 §4.1: "A URN:NBN, once it has been generated from a NBN, MUST NOT be reused", so
    # its record stays; a raw DELETE fails in the database itself.
    _raw(filled, "DELETE FROM locations")  # locations can go: they are replaced on update
    for statement in (
        "DELETE FROM records",
        "DELETE FROM records WHERE equivalence_key = 'urn:nbn:fi:demo-1'",
        *(["TRUNCATE records CASCADE"] if filled.engine.dialect.name == "postgresql" else []),
    ):
        with subtests.test(statement=statement):
            with pytest.raises(sa.exc.DBAPIError, match="never deleted"):
                _raw(filled, statement)
            assert _count(filled, "records") == 1
    with subtests.test("records can still be updated"):
        _raw(filled, "UPDATE records SET note = 'changed', status = 'deactivated'")
        with filled.snapshot() as tx:
            record = tx.record("urn:nbn:fi:demo-1")
        assert record is not None
        assert (record.note, record.status) == ("changed", "deactivated")


def test_the_database_refuses_to_change_history(filled: Store, subtests: pytest.Subtests) -> None:
    with filled.snapshot() as tx:
        record_id = tx.record_id("urn:nbn:fi:demo-1")
        assert record_id is not None
        before = tx.history(record_id)
    assert [entry.action for entry in before] == ["created", "patched"]
    for statement in (
        "UPDATE history SET action = 'rewritten'",
        "UPDATE history SET record_id = record_id",
        "DELETE FROM history",
        "DELETE FROM history WHERE action = 'patched'",
        # PostgreSQL's TRUNCATE skips row triggers; a statement trigger refuses it.
        *(["TRUNCATE history"] if filled.engine.dialect.name == "postgresql" else []),
    ):
        with subtests.test(statement=statement):
            with pytest.raises(sa.exc.DBAPIError, match="append-only"):
                _raw(filled, statement)
            with filled.snapshot() as tx:
                assert tx.history(record_id) == before


def test_the_equivalence_key_is_unique(filled: Store) -> None:
    with filled.transaction() as tx:
        organisation_id = tx.organisation_id("Library")
        assert organisation_id is not None
        assert tx.insert_record(_record("urn:nbn:fi:demo-1"), organisation_id) is None
    with pytest.raises(sa.exc.IntegrityError):
        _raw(
            filled,
            "INSERT INTO records (equivalence_key, urn, prefix, status, metadata, successors, "
            "owner_id, created, updated) SELECT equivalence_key, urn, prefix, status, metadata, "
            "successors, owner_id, created, updated FROM records",
        )
    assert _count(filled, "records") == 1


# --- concurrency ---------------------------------------------------------------------------------


def test_numbers_follow_on(store: Store) -> None:
    with store.transaction() as tx:
        tx.delegate(_organisation(tx), "fi:demo", "sequential")
    with store.transaction() as tx:
        assert tx.take_numbers("fi:demo", 3) == 1
        assert tx.take_numbers("fi:demo", 1) == 4

    def take_then_fail() -> None:
        with store.transaction() as tx:
            assert tx.take_numbers("fi:demo", 10) == 5
            raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        take_then_fail()
    with store.transaction() as tx:
        assert tx.take_numbers("fi:demo", 2) == 5  # the rolled-back numbers were not taken


@DB_SETTINGS
@given(counts=st.lists(st.integers(1, 1_000), min_size=1, max_size=6))
def test_numbers_taken_one_after_another_are_consecutive(store: Store, counts: list[int]) -> None:
    prefix = f"fi:p{uuid4().hex[:10]}"
    with store.transaction() as tx:
        organisation_id = tx.organisation_id("Library") or _organisation(tx)
        assert tx.delegate(organisation_id, prefix, "sequential")
    firsts = []
    for count in counts:
        with store.transaction() as tx:
            firsts.append(tx.take_numbers(prefix, count))
    assert firsts == [1 + sum(counts[:n]) for n in range(len(counts))]


def test_concurrent_transactions_take_disjoint_ranges(store: Store) -> None:
    with store.transaction() as tx:
        tx.delegate(_organisation(tx), "fi:demo", "sequential")
    rounds = 5

    def take(number: int) -> list[range]:
        own = Store(store.url)  # a store of its own, as another process would have
        taken = []
        try:
            for round_ in range(rounds):
                count = 1 + (number + round_) % 4
                with own.transaction() as tx:
                    first = tx.take_numbers("fi:demo", count)
                    time.sleep(0.002)  # hold the transaction open: the others must wait
                taken.append(range(first, first + count))
        finally:
            own.close()
        return taken

    ranges = [r for taken in _in_threads(THREADS, take) for r in taken]
    assert len(ranges) == THREADS * rounds
    numbers = [n for r in ranges for n in r]
    assert len(numbers) == len(set(numbers)), "two transactions took the same number"
    assert sorted(numbers) == list(range(1, len(numbers) + 1))  # and none was skipped


def test_concurrent_inserts_of_one_urn_store_it_once(store: Store) -> None:
    with store.transaction() as tx:
        _organisation(tx)

    def insert(number: int) -> int | None:
        own = Store(store.url)
        try:
            with own.transaction() as tx:
                organisation_id = tx.organisation_id("Library")
                assert organisation_id is not None
                # Equivalent spellings: one equivalence key (RFC 8458 §4.3).
                urn = "urn:nbn:fi:demo-1" if number % 2 else "URN:NBN:FI:DEMO-1"
                return tx.insert_record(_record(urn), organisation_id)
        finally:
            own.close()

    ids = _in_threads(THREADS, insert)
    assert len(ids) == 1
    assert _count(store, "records") == 1


# --- resolution targets --------------------------------------------------------------------------

A, B, C = "https://a.example/x", "https://b.example/x", "https://c.example/x"


def _mark(store: Store, status: str, *urls: str) -> None:
    """Record ``urls`` as link checking would: in ``links`` with ``status``; then refresh."""
    with store.transaction() as tx:
        for url in urls:
            tx.connection.execute(sa.delete(links).where(links.c.url_hash == url_hash(url)))
            tx.connection.execute(
                links.insert().values(
                    url_hash=url_hash(url),
                    url=url,
                    status=status,
                    failures=0 if status == "ok" else 3,
                    since=datetime.now(UTC),
                    checked=datetime.now(UTC),
                )
            )
        tx.refresh_targets(set(urls))


def _with_locations(urn: str, *found: Location) -> Record:
    return replace(_record(urn), locations=found)


def test_targets_are_the_locations_best_first_without_broken_links(store: Store) -> None:
    # RFC 8458 §4.4: resolution leads to the resource: to the best location that is not known
    # broken; a record whose every location is broken gets no target (its surrogate page).
    with store.transaction() as tx:
        organisation_id = _organisation(tx)
        found = (Location(B, priority=1), Location(A, priority=2), Location(C, priority=2))
        tx.insert_record(_with_locations("urn:nbn:fi:demo-1", *found), organisation_id)
    assert store.resolution_row("urn:nbn:fi:demo-1") == (
        "active",
        f"{B}\n{A}\n{C}",
        None,
        "fi:demo",
    )
    _mark(store, "broken", B)
    assert store.resolution_row("urn:nbn:fi:demo-1") == ("active", f"{A}\n{C}", None, "fi:demo")
    _mark(store, "broken", A, C)
    assert store.resolution_row("urn:nbn:fi:demo-1") == ("active", None, None, "fi:demo")
    _mark(store, "ok", A, B, C)
    assert store.resolution_row("urn:nbn:fi:demo-1") == (
        "active",
        f"{B}\n{A}\n{C}",
        None,
        "fi:demo",
    )


def test_writes_leave_out_links_known_broken(store: Store) -> None:
    with store.transaction() as tx:
        organisation_id = _organisation(tx)
    _mark(store, "broken", A)
    with store.transaction() as tx:
        tx.insert_record(
            _with_locations("urn:nbn:fi:demo-1", Location(A), Location(B)), organisation_id
        )
        tx.insert_records(
            [_with_locations("urn:nbn:fi:demo-2", Location(A), Location(C))],
            {"Library": organisation_id},
        )
        imported = [_with_locations("urn:nbn:fi:demo-3", Location(A), Location(B))]
        tx.import_batch(
            imported,
            {"Library": organisation_id},
            [
                {
                    "urn": "urn:nbn:fi:demo-3",
                    "status": "active",
                    "metadata": {},
                    "successors": [],
                    "note": None,
                    "locations": [{"url": A, "priority": 1}, {"url": B, "priority": 1}],
                }
            ],
        )
        record_id = tx.record_id("urn:nbn:fi:demo-1")
        assert record_id is not None
        tx.update_record(record_id, _with_locations("urn:nbn:fi:demo-1", Location(C), Location(A)))
    assert store.resolution_row("urn:nbn:fi:demo-1") == ("active", C, None, "fi:demo")
    assert store.resolution_row("urn:nbn:fi:demo-2") == ("active", C, None, "fi:demo")
    assert store.resolution_row("urn:nbn:fi:demo-3") == ("active", B, None, "fi:demo")


def test_upgrading_fills_in_the_targets_of_stored_records(empty_store: Store) -> None:
    empty_store.upgrade("0001")
    moment = datetime.now(UTC)
    with empty_store.engine.begin() as connection:
        organisation_id = connection.execute(
            sa.text("INSERT INTO organisations (name, created) VALUES ('L', :t) RETURNING id"),
            {"t": moment},
        ).scalar_one()
        for key, urls in (("urn:nbn:fi:demo-1", [(2, A), (1, B)]), ("urn:nbn:fi:demo-2", [])):
            record_id = connection.execute(
                sa.text(
                    "INSERT INTO records (equivalence_key, urn, prefix, status, metadata, "
                    "successors, owner_id, created, updated) VALUES (:k, :k, 'fi:demo', "
                    "'active', '{}', '[]', :o, :t, :t) RETURNING id"
                ),
                {"k": key, "o": organisation_id, "t": moment},
            ).scalar_one()
            for priority, url in urls:
                connection.execute(
                    sa.text(
                        "INSERT INTO locations (record_id, url, priority, owner_id) "
                        "VALUES (:r, :u, :p, :o)"
                    ),
                    {"r": record_id, "u": url, "p": priority, "o": organisation_id},
                )
    empty_store.upgrade()
    assert empty_store.resolution_row("urn:nbn:fi:demo-1") == (
        "active",
        f"{B}\n{A}",
        None,
        "fi:demo",
    )
    assert empty_store.resolution_row("urn:nbn:fi:demo-2") == ("active", None, None, "fi:demo")


def test_upgrading_finds_who_succeeds_whom_among_stored_records(empty_store: Store) -> None:
    # Migration "successions": the predecessors of records deactivated before it (RFC 5829's
    # predecessor-version links) are read with resolution; a successor that is no URN (imported
    # as it was) is nobody's.
    empty_store.upgrade("0002")
    with empty_store.transaction() as tx:
        organisation_id = _organisation(tx)
        tx.insert_record(_record("urn:nbn:fi:demo-2"), organisation_id)
        old = replace(
            _record("urn:nbn:fi:demo-1"),
            status="deactivated",
            successors=("URN:NBN:FI:demo-2", "not a urn"),
        )
        tx.insert_record(old, organisation_id)
    empty_store.upgrade()
    url = "https://example.org/x"  # where _record locates every record
    assert empty_store.resolution_row("urn:nbn:fi:demo-2") == (
        "active",
        url,
        "urn:nbn:fi:demo-1",
        "fi:demo",
    )
    assert empty_store.resolution_row("urn:nbn:fi:demo-1") == ("deactivated", url, None, "fi:demo")


# --- resolution's lookups on the event loop ------------------------------------------------------


def _resolvable(store: Store, count: int) -> list[str]:
    """``count`` active records ``urn:nbn:fi:demo-N``, the first two successors of others;
    their keys."""
    with store.transaction() as tx:
        organisation_id = _organisation(tx)
        for n in range(count):
            tx.insert_record(_record(f"urn:nbn:fi:demo-{n}"), organisation_id)
        successions_of = {"urn:nbn:fi:old-1": 0, "urn:nbn:fi:old-2": 0, "urn:nbn:fi:old-3": 1}
        rows = []
        for old, successor in successions_of.items():
            predecessor_id = tx.insert_record(_record(old), organisation_id)
            rows.append(
                {
                    "successor_key": f"urn:nbn:fi:demo-{successor}",
                    "predecessor_id": predecessor_id,
                    "predecessor_urn": old,
                }
            )
        tx.connection.execute(successions.insert(), rows)
    return [f"urn:nbn:fi:demo-{n}" for n in range(count)]


def _lookups(store: Store, keys: list[str]) -> list[Any]:
    """The rows of ``keys`` looked up at once, each by a task of its own, in a new event loop."""
    return asyncio.run(_at_once(store, keys))


async def _at_once(store: Store, keys: list[str]) -> list[Any]:
    """The rows of ``keys`` looked up at once; TimeoutError after 10 s rather than a hang."""
    found = asyncio.gather(*(store.resolution_row_async(key) for key in keys))
    return list(await asyncio.wait_for(found, 10))


def _sorted_predecessors(row: Any) -> Any:
    if row is None or row[2] is None:
        return row
    return (row[0], row[1], "\n".join(sorted(row[2].split("\n"))), row[3])


def test_concurrent_lookups_each_get_the_row_of_their_key(store: Store) -> None:
    # On PostgreSQL the lookups of concurrent requests share queries (_BatchedLookups): each
    # must still get its own key's row, missing keys None, a key asked twice twice.
    keys = _resolvable(store, 40)
    asked = [*keys, *keys[:10], "urn:nbn:fi:demo-missing", "urn:nbn:fi:demo-x\u00e4"] * 3
    expected = [store.resolution_row(key) for key in asked]
    assert expected[0] is not None
    assert expected[0][2] is not None  # predecessors are read too
    assert sorted(expected[0][2].split("\n")) == ["urn:nbn:fi:old-1", "urn:nbn:fi:old-2"]
    assert expected[40 + 10] is None
    found = _lookups(store, asked)
    assert list(map(_sorted_predecessors, found)) == list(map(_sorted_predecessors, expected))
    # A second event loop (the first one closed) gets a connection of its own.
    assert _lookups(store, keys[:3]) == expected[:3]


def test_lookups_survive_the_server_closing_their_connection(tmp_path: Path) -> None:
    # PostgreSQL's only: the lookups' connection, closed by the server (a restart, a failover,
    # an idle timeout), is replaced and the lookups asked meanwhile are answered on the new one.
    with fresh_database("postgresql", tmp_path) as url:
        store = Store(url)
        try:
            store.upgrade()
            keys = _resolvable(store, 5)
            expected = [store.resolution_row(key) for key in keys]

            async def before_and_after() -> list[list[Any]]:
                found = [await _at_once(store, keys)]
                # The server's goodbye read by the loop before the next lookup, or not yet.
                for pause in (0.2, 0):
                    _raw(
                        store,
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()",
                    )
                    await asyncio.sleep(pause)
                    found.append(await _at_once(store, keys))
                return found

            found = asyncio.run(before_and_after())
        finally:
            store.close()
    assert found == [expected] * 3
