"""What the database itself guarantees, on SQLite and PostgreSQL.

* The database itself, not only the code, refuses to delete records (RFC 8458 §4.1: a URN:NBN
  "MUST NOT be reused") and to change or delete history rows: raw SQL fails.
* Nothing names what is not there: a record its owner, a location its record and holder, a
  history entry its record (foreign keys on SQLite, checks once a statement on PostgreSQL).
* Sequential numbers taken by concurrent transactions never overlap, and a URN's equivalence key
  is unique even when several transactions insert it at once.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import TypeVar
from uuid import uuid4

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_support import add_organisation, downgrade, raw_sql, sample_record

from urnkit.resolver.store import Store

T = TypeVar("T")
NOW = {"the record": "as it is now"}  # what Records.history gives for the newest entry
THREADS = 6
DB_SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


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


# --- what the database refuses -------------------------------------------------------------------


@pytest.fixture
def filled(store: Store) -> Store:
    """The store with one record, its location and two history rows: "created", given its
    document when the record changed, and "patched", the newest, without one."""
    with store.transaction() as tx:
        organisation_id = add_organisation(tx)
        record = sample_record("urn:nbn:fi:demo-1")
        record_id = tx.records.insert(record, organisation_id)
        assert record_id is not None
        tx.records.append_history([(record_id, "created", "test")])
        tx.records.update(record_id, record, {"as": "created"}, "patched", "test")
    return store


def _count(store: Store, table: str) -> int:
    with store.engine.connect() as connection:
        count: int = connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()
        return count


def test_the_database_refuses_to_delete_records(filled: Store, subtests: pytest.Subtests) -> None:
    # RFC 8458 §4.1: "A URN:NBN, once it has been generated from a NBN, MUST NOT be reused", so
    # its record stays; a raw DELETE fails in the database itself.
    # Locations can go (they are replaced on update), once the newest history entry holds the
    # record as it was (migration current_history).
    raw_sql(filled, "UPDATE history SET record = '{}' WHERE record IS NULL")
    raw_sql(filled, "DELETE FROM locations")
    for statement in (
        "DELETE FROM records",
        "DELETE FROM records WHERE equivalence_key = 'urn:nbn:fi:demo-1'",
        *(["TRUNCATE records CASCADE"] if filled.engine.dialect.name == "postgresql" else []),
    ):
        with subtests.test(statement=statement):
            with pytest.raises(sa.exc.DBAPIError, match="never deleted"):
                raw_sql(filled, statement)
            assert _count(filled, "records") == 1
    with subtests.test("records can still be updated"):
        raw_sql(filled, "UPDATE records SET note = 'changed', status = 'deactivated'")
        with filled.snapshot() as tx:
            record = tx.records.get("urn:nbn:fi:demo-1")
        assert record is not None
        assert (record.note, record.status) == ("changed", "deactivated")


def test_the_database_refuses_to_change_history(filled: Store, subtests: pytest.Subtests) -> None:
    with filled.snapshot() as tx:
        record_id = tx.records.id("urn:nbn:fi:demo-1")
        assert record_id is not None
        before = tx.records.history(record_id, NOW)
    assert [(entry.action, entry.record) for entry in before] == [
        ("created", {"as": "created"}),
        ("patched", NOW),
    ]
    for statement in (
        "UPDATE history SET action = 'rewritten'",
        "UPDATE history SET record_id = record_id",
        # A document is written once, where there was none, and nothing else with it.
        """UPDATE history SET record = '{"as": "rewritten"}' WHERE action = 'created'""",
        "UPDATE history SET record = NULL WHERE action = 'created'",
        "UPDATE history SET record = '{}', actor = 'someone' WHERE record IS NULL",
        "UPDATE history SET record = '{}', at = at + 1 WHERE record IS NULL"
        if filled.engine.dialect.name == "sqlite"
        else "UPDATE history SET record = '{}', at = at + interval '1 s' WHERE record IS NULL",
        "DELETE FROM history",
        "DELETE FROM history WHERE action = 'patched'",
        # PostgreSQL's TRUNCATE skips row triggers; a statement trigger refuses it.
        *(["TRUNCATE history"] if filled.engine.dialect.name == "postgresql" else []),
    ):
        with subtests.test(statement=statement):
            with pytest.raises(sa.exc.DBAPIError, match="append-only"):
                raw_sql(filled, statement)
            with filled.snapshot() as tx:
                assert tx.records.history(record_id, NOW) == before


def test_a_record_changes_only_after_its_history(filled: Store, subtests: pytest.Subtests) -> None:
    # Migration current_history: the newest entry stands for the record as it is, so the record
    # cannot change before that entry holds the record as it was; and only one entry is "now".
    with filled.snapshot() as tx:
        record_id = tx.records.id("urn:nbn:fi:demo-1")
        assert record_id is not None
        record = tx.records.get("urn:nbn:fi:demo-1")
    for statement in (
        "UPDATE records SET note = 'changed'",
        "UPDATE records SET metadata = '{}'",
        "UPDATE records SET updated = created",
        "DELETE FROM locations",
        "UPDATE locations SET url = 'https://example.org/elsewhere'",
        f"INSERT INTO locations (record_id, url, priority, owner_id) "
        f"SELECT {record_id}, 'https://example.org/more', 2, owner_id FROM records",
    ):
        with subtests.test(statement=statement):
            with pytest.raises(sa.exc.DBAPIError, match="before the record changes"):
                raw_sql(filled, statement)
            with filled.snapshot() as tx:
                assert tx.records.get("urn:nbn:fi:demo-1") == record
    with (
        subtests.test("a second entry without a document"),
        pytest.raises(sa.exc.DBAPIError, match="one history entry without a document"),
        filled.transaction() as tx,
    ):
        tx.records.append_history([(record_id, "created", "test")])
    with subtests.test("what is not in a history document changes freely: targets"):
        raw_sql(filled, "UPDATE records SET targets = NULL")


def test_one_statement_is_checked_whole(filled: Store, subtests: pytest.Subtests) -> None:
    # Migration history_guards_per_statement: PostgreSQL checks an insert once a statement, over
    # all its rows; what a statement's own rows break is refused as row by row.
    with filled.transaction() as tx:
        organisation_id = tx.organisations.id("Library")
        assert organisation_id is not None
        fresh = tx.records.insert(sample_record("urn:nbn:fi:demo-2"), organisation_id)
        current = tx.records.id("urn:nbn:fi:demo-1")
    assert fresh is not None
    assert current is not None
    entry = f"({fresh}, '2026-11-27', 'created', 'test')"
    with (
        subtests.test("two entries without a document for one record, in one statement"),
        pytest.raises(sa.exc.DBAPIError, match="one history entry without a document"),
    ):
        raw_sql(
            filled, f"INSERT INTO history (record_id, at, action, actor) VALUES {entry}, {entry}"
        )
    with (
        subtests.test("locations of a fresh record and of one with a current entry"),
        pytest.raises(sa.exc.DBAPIError, match="before the record changes"),
    ):
        raw_sql(
            filled,
            "INSERT INTO locations (record_id, url, priority, owner_id) VALUES"
            f" ({fresh}, 'https://example.org/fresh', 9, {organisation_id}),"
            f" ({current}, 'https://example.org/current', 9, {organisation_id})",
        )
    with subtests.test("the fresh record's locations, then its entry: accepted"):
        raw_sql(
            filled,
            "INSERT INTO locations (record_id, url, priority, owner_id) VALUES"
            f" ({fresh}, 'https://example.org/fresh', 9, {organisation_id}),"
            f" ({fresh}, 'https://example.org/fresh-2', 10, {organisation_id})",
        )
        raw_sql(filled, f"INSERT INTO history (record_id, at, action, actor) VALUES {entry}")
        with filled.snapshot() as tx:
            record = tx.records.get("urn:nbn:fi:demo-2")
            assert record is not None
            assert [loc.url for loc in record.locations][-2:] == [
                "https://example.org/fresh",
                "https://example.org/fresh-2",
            ]
            assert [entry.action for entry in tx.records.history(fresh, NOW)] == ["created"]


def test_the_guards_hold_before_and_after_checking_per_statement(empty_store: Store) -> None:
    # Migration history_guards_per_statement and back to current_history's row triggers.
    def refused() -> list[str]:
        with empty_store.transaction() as tx:
            organisation_id = tx.organisations.id("Library") or add_organisation(tx)
            record_id = tx.records.id("urn:nbn:fi:demo-1")
            if record_id is None:
                record_id = tx.records.insert(sample_record("urn:nbn:fi:demo-1"), organisation_id)
                assert record_id is not None
                tx.records.append_history([(record_id, "created", "test")])
        messages = []
        for statement in (
            "INSERT INTO history (record_id, at, action, actor)"
            f" VALUES ({record_id}, '2026-11-27', 'created', 'test')",
            "INSERT INTO locations (record_id, url, priority, owner_id)"
            f" VALUES ({record_id}, 'https://example.org/more', 9, {organisation_id})",
            "DELETE FROM history",
        ):
            with pytest.raises(sa.exc.DBAPIError) as raised:
                raw_sql(empty_store, statement)
            messages.append(str(raised.value.orig).splitlines()[0])
        return messages

    expected = [
        "a record has one history entry without a document, its newest",
        "the newest history entry of a record is given its document before the record changes",
        "history is append-only",
    ]
    empty_store.upgrade()
    assert refused() == expected
    downgrade(empty_store, "harvest_runs")
    assert refused() == expected
    empty_store.upgrade()
    assert refused() == expected


# The references of records, locations and history (RFC 8458 §4.1: nothing is forgotten, so
# nothing may name what is not there): SQLite refuses them by its foreign keys, PostgreSQL by
# the checks of migration references_per_statement, with the foreign keys' error code.
MISSING = 999_999
_COPIED_RECORD = (
    "INSERT INTO records (equivalence_key, urn, prefix, status, metadata, successors, owner_id,"
    " created, updated) SELECT 'urn:nbn:fi:demo-2', 'urn:nbn:fi:demo-2', prefix, status,"
    " metadata, successors, {owner}, created, updated FROM records"
)
_DANGLING = (
    _COPIED_RECORD.format(owner=MISSING),
    "INSERT INTO locations (record_id, url, priority, owner_id)"
    f" SELECT {MISSING}, 'https://example.org/none', 9, owner_id FROM records",
    "INSERT INTO locations (record_id, url, priority, owner_id)"
    f" SELECT id, 'https://example.org/none', 9, {MISSING} FROM records",
    "INSERT INTO history (record_id, at, action, actor)"
    f" SELECT {MISSING}, at, 'created', 'test' FROM history WHERE action = 'created'",
    f"UPDATE records SET owner_id = {MISSING}",
    f"UPDATE locations SET record_id = {MISSING}",
    f"UPDATE locations SET owner_id = {MISSING}",
    "DELETE FROM organisations",
    f"UPDATE organisations SET id = {MISSING}",
    f"UPDATE records SET id = {MISSING}",
)


def _refuses_dangling(store: Store) -> list[str]:
    """The statements of :data:`_DANGLING` the database refuses as a foreign key would (on the
    store's own connections: SQLite checks foreign keys where they are turned on)."""
    refusals = {}
    for statement in _DANGLING:
        try:
            with store.engine.begin() as connection:
                connection.execute(sa.text(statement))
        except sa.exc.IntegrityError as error:
            refusals[statement] = str(error.orig)
    reason = (
        "FOREIGN KEY constraint failed"
        if store.engine.dialect.name == "sqlite"
        else ("names no row of|is named by other rows|violates foreign key constraint")
    )
    assert all(re.search(reason, message) for message in refusals.values()), refusals
    return list(refusals)


def _counts(store: Store) -> list[int]:
    return [_count(store, table) for table in ("organisations", "records", "locations", "history")]


def test_the_database_refuses_references_to_nothing(filled: Store) -> None:
    # Every statement would pass the history guards: the newest entry holds its document.
    raw_sql(filled, "UPDATE history SET record = '{}' WHERE record IS NULL")
    before = _counts(filled)
    assert _refuses_dangling(filled) == list(_DANGLING)
    assert _counts(filled) == before
    # What nothing names can go; a reference to what is there is accepted.
    with filled.transaction() as tx:
        add_organisation(tx, "Unused")
        owner = tx.organisations.id("Library")
    raw_sql(filled, "DELETE FROM organisations WHERE name = 'Unused'")
    raw_sql(filled, _COPIED_RECORD.format(owner=owner))
    assert _counts(filled) == [before[0], before[1] + 1, *before[2:]]


def test_references_hold_before_and_after_checking_per_statement(filled: Store) -> None:
    # Migration references_per_statement (PostgreSQL's foreign keys dropped for its checks) and
    # back to the foreign keys; SQLite keeps its foreign keys throughout.
    raw_sql(filled, "UPDATE history SET record = '{}' WHERE record IS NULL")

    def foreign_keys() -> set[tuple[str, str]]:
        inspector = sa.inspect(filled.engine)
        return {
            (table, key["constrained_columns"][0])
            for table in ("records", "locations", "history")
            for key in inspector.get_foreign_keys(table)
        }

    declared = {("records", "owner_id"), ("locations", "record_id"), ("locations", "owner_id")}
    declared |= {("history", "record_id")}
    postgresql = filled.engine.dialect.name == "postgresql"
    assert foreign_keys().isdisjoint(declared) if postgresql else declared <= foreign_keys()
    downgrade(filled, "times_as_integers")
    assert declared <= foreign_keys()
    assert len(_refuses_dangling(filled)) == len(_DANGLING)
    filled.upgrade()
    assert _refuses_dangling(filled) == list(_DANGLING)


def test_many_locations_and_entries_go_a_hundred_rows_a_statement(store: Store) -> None:
    # PostgreSQL checks the references of an insert once a statement (migration
    # references_per_statement): a batch sent a row a statement would be checked row by row.
    statements: list[str] = []

    def note(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        statements.append(statement.split("(")[0].strip())

    batch = [sample_record(f"urn:nbn:fi:demo-{n}") for n in range(250)]
    sa.event.listen(store.engine, "before_cursor_execute", note)
    try:
        with store.transaction() as tx:
            owner = add_organisation(tx)
            ids = tx.bulk.insert_records(batch, {"Library": owner})
            tx.records.append_history([(rid, "created", "test") for rid in ids.values()])
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", note)
    assert len(ids) == 250
    assert statements.count("INSERT INTO locations") == 3
    assert statements.count("INSERT INTO history") == 3


def test_the_equivalence_key_is_unique(filled: Store) -> None:
    with filled.transaction() as tx:
        organisation_id = tx.organisations.id("Library")
        assert organisation_id is not None
        assert tx.records.insert(sample_record("urn:nbn:fi:demo-1"), organisation_id) is None
    with pytest.raises(sa.exc.IntegrityError):
        raw_sql(
            filled,
            "INSERT INTO records (equivalence_key, urn, prefix, status, metadata, successors, "
            "owner_id, created, updated) SELECT equivalence_key, urn, prefix, status, metadata, "
            "successors, owner_id, created, updated FROM records",
        )
    assert _count(filled, "records") == 1


# --- concurrency ---------------------------------------------------------------------------------


def test_numbers_follow_on(store: Store) -> None:
    with store.transaction() as tx:
        tx.organisations.delegate(add_organisation(tx), "fi:demo", "sequential")
    with store.transaction() as tx:
        assert tx.organisations.take_numbers("fi:demo", 3) == 1
        assert tx.organisations.take_numbers("fi:demo", 1) == 4

    def take_then_fail() -> None:
        with store.transaction() as tx:
            assert tx.organisations.take_numbers("fi:demo", 10) == 5
            raise RuntimeError("rolled back")

    with pytest.raises(RuntimeError):
        take_then_fail()
    with store.transaction() as tx:
        assert (
            tx.organisations.take_numbers("fi:demo", 2) == 5
        )  # the rolled-back numbers were not taken


@DB_SETTINGS
@given(counts=st.lists(st.integers(1, 1_000), min_size=1, max_size=6))
def test_numbers_taken_one_after_another_are_consecutive(store: Store, counts: list[int]) -> None:
    prefix = f"fi:p{uuid4().hex[:10]}"
    with store.transaction() as tx:
        organisation_id = tx.organisations.id("Library") or add_organisation(tx)
        assert tx.organisations.delegate(organisation_id, prefix, "sequential")
    firsts = []
    for count in counts:
        with store.transaction() as tx:
            firsts.append(tx.organisations.take_numbers(prefix, count))
    assert firsts == [1 + sum(counts[:n]) for n in range(len(counts))]


def test_concurrent_transactions_take_disjoint_ranges(store: Store) -> None:
    with store.transaction() as tx:
        tx.organisations.delegate(add_organisation(tx), "fi:demo", "sequential")
    rounds = 5

    def take(number: int) -> list[range]:
        own = Store(store.url)  # a store of its own, as another process would have
        taken = []
        try:
            for round_ in range(rounds):
                count = 1 + (number + round_) % 4
                with own.transaction() as tx:
                    first = tx.organisations.take_numbers("fi:demo", count)
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
        add_organisation(tx)

    def insert(number: int) -> int | None:
        own = Store(store.url)
        try:
            with own.transaction() as tx:
                organisation_id = tx.organisations.id("Library")
                assert organisation_id is not None
                # Equivalent spellings: one equivalence key (RFC 8458 §4.3).
                urn = "urn:nbn:fi:demo-1" if number % 2 else "URN:NBN:FI:DEMO-1"
                return tx.records.insert(sample_record(urn), organisation_id)
        finally:
            own.close()

    ids = _in_threads(THREADS, insert)
    assert len(ids) == 1
    assert _count(store, "records") == 1
