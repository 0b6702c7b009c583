"""Title search by its indexes (migrations title_search, title_words, title_word_index) on
SQLite (FTS5: trigrams, and words) and PostgreSQL (pg_trgm, and text search's words): the same
records as reading every title would find, in order, a page at a time; the indexes kept by every
change; their queries served by them (the query plans)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from importlib import import_module
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from resolver_support import urnkit_here
from services_support import HERE, set_up
from store_support import add_organisation, downgrade, raw_sql, sample_record, title_index_matches

from urnkit.resolver.services import Services
from urnkit.resolver.store import Store
from urnkit.resolver.store.bulk_import import _trigger_suspended
from urnkit.resolver.store.queries import records as records_queries
from urnkit.resolver.store.queries.records import sqlite_title_ids, title_condition
from urnkit.resolver.store.queries.titles import SQLITE_TITLE_TABLES
from urnkit.resolver.store.tables import records

# Letters in both cases ASCII only, so that the oracle's case folding is every database's
# (SQLite folds ASCII only); beside them, letters and digits that the word table's tokenizer
# takes into a word and ASCII does not (é, ß, ², a combining accent), and separators.
ALPHABET = "abcAB1 %_\\.-é"
WORDY = "aB1 0.-@/:e_é\u00df\u00b2\u0301"
TITLES = ["Tale of Two", "tALE", "50% off_sale", "back\\slash", "a", "", "Ab_c", "xyz%"]


def _found(services: Services, title: str, limit: int = 3) -> list[str]:
    """Every URN the search gives, page after page of ``limit``."""
    urns: list[str] = []
    cursor: int | None = 0
    while cursor is not None:
        page, cursor = services.records.records(None, cursor, limit, title=title)
        urns += [record.urn for record in page]
    return urns


def _stored(services: Services, titles: Sequence[object]) -> list[str]:
    who = set_up(services)
    urns = []
    for n, title in enumerate(titles, 1):
        urn = f"urn:nbn:fi:demo-{n}"
        services.records.put(who.demo, urn, HERE, {"title": title})
        urns.append(urn)
    return urns


def test_the_index_finds_what_reading_every_title_finds(services: Services) -> None:
    titles: list[object] = [*TITLES, 2026, None]
    urns = _stored(services, titles)
    for needle in ["tale", "TALE", "%", "_", "\\", "a", "ab_", "0% o", "202", "zzz", "."]:
        expected = [
            urn
            for urn, title in zip(urns, titles, strict=True)
            if title is not None and needle.lower() in str(title).lower()
        ]
        assert _found(services, needle) == expected, needle


def test_a_changed_title_is_found_by_its_new_words_only(services: Services) -> None:
    who = set_up(services)
    services.records.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"title": "Old tale of words"})
    services.records.patch(who.demo, "urn:nbn:fi:demo-1", {"metadata": {"title": "New words"}})
    assert _found(services, "old") == []
    assert _found(services, "old tale of w") == []  # words: the word table (SQLite)
    assert _found(services, "new w") == ["urn:nbn:fi:demo-1"]
    assert _found(services, "x new words") == []
    assert _found(services, "New words") == ["urn:nbn:fi:demo-1"]
    services.records.patch(who.demo, "urn:nbn:fi:demo-1", {"metadata": {"title": 1729}})
    assert _found(services, "words") == []
    assert _found(services, "72") == ["urn:nbn:fi:demo-1"]
    services.records.patch(who.demo, "urn:nbn:fi:demo-1", {"metadata": {"title": None}})
    assert _found(services, "72") == []
    if services.store.engine.dialect.name == "sqlite":
        # Migrations title_index_from_records, title_word_index: both FTS5 tables were handed
        # each old title to remove, and keep none of its trigrams or words.
        assert title_index_matches(services.store)
        with services.store.snapshot() as tx:
            old = tx.connection.exec_driver_sql(
                "SELECT rowid FROM record_title_words WHERE record_title_words MATCH 'tale'"
            )
            assert old.all() == []


def test_the_index_check_sees_a_title_changed_behind_its_back(tmp_path: Path) -> None:
    # What the tests above rely on: the check compares the index with the records' titles.
    store = Store(f"sqlite:///{tmp_path / 'titles.db'}")
    store.upgrade()
    with store.transaction() as tx:
        tx.records.insert(sample_record("urn:nbn:fi:lib-1"), add_organisation(tx))
    assert title_index_matches(store)
    raw_sql(store, "DROP TRIGGER record_titles_update")
    raw_sql(store, "UPDATE records SET metadata = json_object('title', 'Other')")
    assert not title_index_matches(store)
    store.close()


def test_the_index_reads_titles_from_the_records(tmp_path: Path) -> None:
    # Migration title_index_from_records, on SQLite: records stored under the index that kept
    # its own copy of each title (revision history_guards_per_statement) are found after the
    # upgrade, and again after a downgrade; the index then keeps no title of its own.
    store = Store(f"sqlite:///{tmp_path / 'titles.db'}")
    store.upgrade("history_guards_per_statement")
    with store.transaction() as tx:
        owner = add_organisation(tx)
        for n, title in enumerate(["Old tale", "Other", 1729], 1):
            record = sample_record(f"urn:nbn:fi:lib-{n}")
            tx.records.insert(replace(record, metadata={"title": title}), owner)
    store.upgrade()
    services = Services(store)
    assert _found(services, "tale") == ["urn:nbn:fi:lib-1"]
    assert _found(services, "172") == ["urn:nbn:fi:lib-3"]
    assert title_index_matches(store)
    with store.snapshot() as tx:
        tables = set(tx.connection.scalars(sa.text("SELECT name FROM sqlite_master")))
    assert "record_titles_content" not in tables
    downgrade(store, "history_guards_per_statement")
    assert _found(services, "tale") == ["urn:nbn:fi:lib-1"]
    store.close()


def test_imported_records_are_found(services: Services) -> None:
    who = set_up(services)
    rows = [
        {"urn": f"urn:nbn:fi:demo-{n}", "metadata": {"title": f"Thesis {n}"}} for n in range(30)
    ]
    # Text titles are indexed by the import itself, others by the trigger.
    rows += [{"urn": "urn:nbn:fi:demo-90", "metadata": {"title": 1729}}]
    rows += [{"urn": "urn:nbn:fi:demo-91", "metadata": {"title": None}}]
    services.transfer.import_records(enumerate(rows, 1), batch_size=7)
    assert _found(services, "thesis 2") == ["urn:nbn:fi:demo-2"] + [
        f"urn:nbn:fi:demo-{n}" for n in range(20, 30)
    ]
    assert _found(services, "172") == ["urn:nbn:fi:demo-90"]
    assert _found(services, "none") == []
    # On SQLite the import drops the trigger inside its transaction: it is back afterwards.
    services.records.put(who.demo, "urn:nbn:fi:demo-92", HERE, {"title": "Put after"})
    assert _found(services, "put after") == ["urn:nbn:fi:demo-92"]
    if services.store.engine.dialect.name == "sqlite":
        assert title_index_matches(services.store)


class Catalogue:
    """The records a property test stored so far, across its examples, and their titles."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.who = set_up(services)
        self.titles: dict[str, str] = {}

    def add(self, title: str) -> None:
        urn = f"urn:nbn:fi:demo-{len(self.titles) + 1}"
        self.services.records.put(self.who.demo, urn, HERE, {"title": title})
        self.titles[urn] = title


@pytest.fixture
def catalogue(services: Services, monkeypatch: pytest.MonkeyPatch) -> Catalogue:
    # Searches with words: the first record after the cursor read by trigrams, the others
    # found by their words (Records._titled).
    monkeypatch.setattr(records_queries, "TITLE_PROBE", 1)
    return Catalogue(services)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# Parts shorter than a trigram, of characters outside ASCII (more bytes than characters).
@example(titles=["0000²", "xéy", "aé"], needle="0²")
@example(titles=["xéy"], needle="xé")
@given(
    titles=st.lists(st.text(ALPHABET, max_size=8), max_size=4),
    needle=st.text(ALPHABET, min_size=1, max_size=4),
)
def test_any_title_and_part(catalogue: Catalogue, titles: list[str], needle: str) -> None:
    # An input boundary: LIKE's own characters, short and long parts, on either database;
    # the records of every example so far are searched (one database per test).
    _search_every_title(catalogue, titles, needle)


@pytest.mark.parametrize("probe", [1, 2, 5])
def test_the_index_finds_what_the_first_records_do_not(
    services: Services, monkeypatch: pytest.MonkeyPatch, probe: int
) -> None:
    # A search with words reads TITLE_PROBE records by id (on SQLite by its trigram table), then
    # asks the word index for the rest of the page: the same records, in order, page after
    # page, wherever the probe ends.
    monkeypatch.setattr(records_queries, "TITLE_PROBE", probe)
    titles: list[object] = [*TITLES, *TITLES]
    urns = _stored(services, titles)
    for needle in ["tale", "Tale of", "of Two", "a", "50% off", "zzz"]:
        expected = [
            urn
            for urn, title in zip(urns, titles, strict=True)
            if needle.lower() in str(title).lower()
        ]
        for limit in (1, 2, 3, 20):
            assert _found(services, needle, limit) == expected, (needle, limit)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@example(titles=["Ab cd"], start=0, length=4, other="x")  # the last word started: "c"
@example(titles=["xaB1 e"], start=1, length=5, other="x")  # the first word ended: "aB1"
# Whole words beside what the word table's tokenizer splits at or joins to a word: hyphens,
# full stops, several spaces, letters outside ASCII, a combining accent.
@example(titles=["x record-66 y"], start=0, length=11, other="x")
@example(titles=["a  bé 1.5 ß"], start=0, length=9, other="x")
@example(titles=["e\u0301 ab c"], start=0, length=6, other="x")
@example(titles=["x ab²c"], start=0, length=4, other="x")
@given(
    titles=st.lists(
        st.lists(st.text(WORDY, min_size=1, max_size=5), max_size=4).map(" ".join),
        min_size=1,
        max_size=4,
    ),
    start=st.integers(0, 13),
    length=st.integers(1, 9),
    other=st.text(WORDY, min_size=1, max_size=9),
)
def test_any_title_and_words(
    catalogue: Catalogue, titles: list[str], start: int, length: int, other: str
) -> None:
    # Parts with whole words (the word indexes, migrations title_words and title_word_index):
    # words of letters and digits beside what PostgreSQL's parser or SQLite's tokenizer reads
    # otherwise (numbers, versions, e-mail addresses, paths, URLs, hyphenated words, letters
    # outside ASCII, several spaces); the part cut from a title, or any.
    needle = titles[0][start : start + length] or other
    _search_every_title(catalogue, titles, needle)


def _search_every_title(catalogue: Catalogue, titles: list[str], needle: str) -> None:
    for title in titles:
        catalogue.add(title)
    expected = [urn for urn, title in catalogue.titles.items() if needle.lower() in title.lower()]
    assert _found(catalogue.services, needle) == expected


def test_the_word_table_is_filled_from_the_records_stored_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Migration title_word_index, on SQLite: records stored before it are found by their words
    # after the upgrade (past the first record, which the search reads by trigrams); the
    # downgrade drops the table and leaves the trigram table kept by the triggers of revision
    # title_index_from_records.
    monkeypatch.setattr(records_queries, "TITLE_PROBE", 1)
    store = Store(f"sqlite:///{tmp_path / 'titles.db'}")
    store.upgrade("resolution_changes")
    with store.transaction() as tx:
        owner = add_organisation(tx)
        for n, title in enumerate([None, "An old tale", "Other tales", 1729], 1):
            record = sample_record(f"urn:nbn:fi:lib-{n}")
            tx.records.insert(replace(record, metadata={"title": title}), owner)
    store.upgrade()
    with store.snapshot() as tx:
        by_word = tx.connection.exec_driver_sql(
            "SELECT rowid FROM record_title_words WHERE record_title_words MATCH 'tale*'"
        )
        assert by_word.scalars().all() == [
            tx.records.id("urn:nbn:fi:lib-2"),
            tx.records.id("urn:nbn:fi:lib-3"),
        ]
    services = Services(store)
    assert _found(services, "An old tale") == ["urn:nbn:fi:lib-2"]
    assert _found(services, "x 1729") == []
    assert title_index_matches(store)
    downgrade(store, "resolution_changes")
    with store.snapshot() as tx:
        rows = tx.connection.execute(sa.text("SELECT name, sql FROM sqlite_master")).all()
        schema: dict[str, str | None] = dict(rows)
    assert not {name for name in schema if name.startswith("record_title_words")}
    before = import_module("urnkit.resolver.migrations.versions.0018_title_index_from_records")
    triggers = {schema["record_titles_insert"], schema["record_titles_update"]}
    assert triggers == {sql for sql in before.UPGRADE if sql.startswith("CREATE TRIGGER")}
    with store.transaction() as tx:
        record = sample_record("urn:nbn:fi:lib-5")
        tx.records.insert(replace(record, metadata={"title": "A new tale"}), owner)
    assert _found(services, "new") == ["urn:nbn:fi:lib-5"]
    raw_sql(store, "INSERT INTO record_titles (record_titles, rank) VALUES ('integrity-check', 1)")
    store.close()


def test_records_stored_before_the_index_are_found(empty_store: Store) -> None:
    # The migration fills the index from the records stored so far.
    empty_store.upgrade("successions")
    with empty_store.transaction() as tx:  # the record alone: the history of then is not today's
        record = replace(sample_record("urn:nbn:fi:lib-1"), metadata={"title": "Before the index"})
        tx.records.insert(record, add_organisation(tx))
    empty_store.upgrade()
    assert _found(Services(empty_store), "before") == ["urn:nbn:fi:lib-1"]


def test_the_title_query_is_served_by_its_index(services: Services) -> None:
    _stored(services, TITLES)
    store = services.store
    with store.snapshot() as tx:
        connection = tx.connection
        if store.engine.dialect.name == "sqlite":
            step = connection.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT rowid FROM record_titles WHERE title LIKE '%tale%'"
                " AND rowid > 0 ORDER BY rowid LIMIT 20"
            ).all()[0][3]
            # FTS5's trigram index answers the LIKE ("L0"), in rowid order (">").
            assert "VIRTUAL TABLE INDEX" in step
            assert "L0" in step
            # As Records._titled asks: no whole word, the trigram table answers the LIKE; whole
            # words, the word table answers their MATCH ("M"), in rowid order, and the trigram
            # table is not read.
            (step,) = _sqlite_plan(connection, "tale")
            assert step.startswith("SCAN record_titles VIRTUAL TABLE INDEX")
            assert "L0" in step
            (step,) = _sqlite_plan(connection, "Tale of Two")
            assert step.startswith("SCAN record_title_words VIRTUAL TABLE INDEX")
            assert ":M" in step
            assert ">" in step
        else:
            connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
            # No whole word: the trigram index (migration title_search).
            assert "ix_records_title " in _postgresql_plan(connection, "tale")
            # Whole words: the word index (migration title_words), and not the trigram index.
            plan = _postgresql_plan(connection, "Tale of Two")
            assert "ix_records_title_words" in plan
            assert "ix_records_title " not in plan


def _sqlite_plan(connection: sa.Connection, title: str) -> list[str]:
    """The steps of SQLite's plan for the store's query of titles holding ``title``."""
    query, arguments = sqlite_title_ids(title)
    arguments |= {"after": 0, "last": 1_000}
    plan = connection.execute(sa.text(f"EXPLAIN QUERY PLAN {query.text}"), arguments)
    return [step[3] for step in plan]


def _postgresql_plan(connection: sa.Connection, title: str) -> str:
    """The plan of the store's query for records whose title holds ``title``."""
    # As Records.page asks the index, past the records it reads first.
    query = sa.select(records.c.id).where(title_condition(title)).order_by(records.c.id + 0)
    query = query.limit(20)
    sql = query.compile(dialect=connection.dialect, compile_kwargs={"literal_binds": True})
    return "\n".join(connection.exec_driver_sql(f"EXPLAIN {sql}").scalars()) + "\n"


class _ImportFailedError(Exception):
    """What an import meets while the title trigger is dropped."""


def _fail_without_the_trigger(connection: sqlite3.Connection, *, rolled_back: bool) -> None:
    with _trigger_suspended(connection.cursor(), "record_titles_insert"):
        if rolled_back:
            connection.execute("ROLLBACK")
        raise _ImportFailedError


@pytest.mark.parametrize("rolled_back", [False, True], ids=["open", "rolled back"])
def test_the_title_trigger_outlives_a_failed_import(tmp_path: Path, rolled_back: bool) -> None:
    # The SQLite import drops the trigger inside its transaction (_trigger_suspended); a failure
    # there gives back the error it met, and the trigger is as it was after the rollback.
    path = tmp_path / "titles.db"
    Store(f"sqlite:///{path}").upgrade()
    connection = sqlite3.connect(path, isolation_level=None)
    trigger = "SELECT sql FROM sqlite_master WHERE name = 'record_titles_insert'"
    before = connection.execute(trigger).fetchall()
    assert before
    connection.execute("BEGIN IMMEDIATE")
    with pytest.raises(_ImportFailedError):
        _fail_without_the_trigger(connection, rolled_back=rolled_back)
    if not rolled_back:
        connection.execute("ROLLBACK")
    assert connection.execute(trigger).fetchall() == before
    connection.close()


def test_db_check_finds_a_title_index_out_of_step_and_rebuilds_it(
    services: Services, database_url: str
) -> None:
    # `urnkit db check`: the indexes against the records' titles; --rebuild-title-index builds
    # them again. On SQLite a title changed with the update trigger dropped leaves the old one
    # in both tables: found neither by a part (trigrams) nor by its words. PostgreSQL keeps its
    # indexes itself, and REINDEX builds them again.
    who = set_up(services)
    for n, title in enumerate(["Old tale", "Other"], 1):
        services.records.put(who.demo, f"urn:nbn:fi:demo-{n}", HERE, {"title": title})
    assert urnkit_here("db", "check", "--database-url", database_url).stdout == ""
    sqlite = services.store.engine.dialect.name == "sqlite"
    if sqlite:
        raw_sql(services.store, "DROP TRIGGER record_titles_update")
    services.records.patch(who.demo, "urn:nbn:fi:demo-1", {"metadata": {"title": "New words"}})
    found = urnkit_here("db", "check", "--database-url", database_url, check=False)
    if sqlite:
        assert found.returncode == 1
        assert found.stdout.startswith("the title index does not agree with the records' titles")
        assert _found(services, "new w") == []
        assert _found(services, "New words") == []
    else:
        assert (found.returncode, found.stdout) == (0, "")
    rebuilt = urnkit_here("db", "check", "--rebuild-title-index", "--database-url", database_url)
    assert rebuilt.stdout == ""
    assert _found(services, "new w") == ["urn:nbn:fi:demo-1"]
    assert _found(services, "New words") == ["urn:nbn:fi:demo-1"]
    assert _found(services, "old") == []


@pytest.mark.parametrize("table", SQLITE_TITLE_TABLES)
def test_db_check_finds_either_sqlite_title_table_out_of_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str
) -> None:
    # Either FTS5 table missing a title is reported, and --rebuild-title-index builds both:
    # the trigram table serves parts without whole words, the word table those with (past the
    # first record, read by trigrams).
    monkeypatch.setattr(records_queries, "TITLE_PROBE", 1)
    store = Store(f"sqlite:///{tmp_path / 'titles.db'}")
    store.upgrade()
    services = Services(store)
    who = set_up(services)
    services.records.put(who.demo, "urn:nbn:fi:demo-0", HERE, {"title": "First"})
    services.records.put(who.demo, "urn:nbn:fi:demo-1", HERE, {"title": "An old tale"})
    record_id = _record_id(store, "urn:nbn:fi:demo-1")
    # FTS5's delete command: the title removed from this table only.
    removed = f"INSERT INTO {table} ({table}, rowid, title) VALUES ('delete', {record_id}, "
    raw_sql(store, removed + "'An old tale')")
    url = store.url
    found = urnkit_here("db", "check", "--database-url", url, check=False)
    assert found.returncode == 1
    assert found.stdout.startswith("the title index does not agree with the records' titles")
    missed = "old" if table == "record_titles" else "An old tale"
    assert _found(services, missed) == []
    assert urnkit_here("db", "check", "--rebuild-title-index", "--database-url", url).stdout == ""
    assert _found(services, "old") == _found(services, "An old tale") == ["urn:nbn:fi:demo-1"]
    assert title_index_matches(store)
    store.close()


def _record_id(store: Store, key: str) -> int:
    with store.snapshot() as tx:
        record_id = tx.records.id(key)
    assert record_id is not None
    return record_id
