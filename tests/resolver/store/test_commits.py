"""The change counter of resolution read only when something was committed since it was last
read (store/commits.py: SQLite's wal-index header, https://www.sqlite.org/walformat.html):
whoever commits, in this process or another, the next read gives the counter as the database
holds it; with nothing committed, no query runs; where the header cannot be read, every read
is a query."""

from __future__ import annotations

import errno
import mmap
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from resolver_support import fresh_database
from store_support import add_organisation, sample_record

from urnkit.resolver.store import Store
from urnkit.resolver.store.commits import CommitHeader
from urnkit.resolver.store.fast_lookup import SQLiteReaders


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    """A store on a new SQLite file with the current schema."""
    with fresh_database("sqlite", tmp_path) as url:
        store = Store(url)
        store.upgrade()
        yield store
        store.close()


def _counter(path: str) -> int:
    """The counter as a new connection reads it."""
    with sqlite3.connect(path) as connection:
        (value,) = connection.execute("SELECT counter FROM resolution_changes").fetchone()
    connection.close()
    return int(value)


def _queries(readers: SQLiteReaders, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The SQL of each query the readers run from now on."""
    ran: list[str] = []
    fetch = readers._fetch

    def counted(sql: str, parameters: object) -> object:
        ran.append(sql)
        return fetch(sql, parameters)

    monkeypatch.setattr(readers, "_fetch", counted)
    return ran


def _commit(path: str, statement: str) -> None:
    """``statement`` committed by a connection of another process."""
    script = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()"
    )
    subprocess.run([sys.executable, "-c", script, path, statement], check=True, timeout=60)


_STEPS = st.lists(st.sampled_from(["move", "other", "read", "move here"]), max_size=12)
_MOVE = "UPDATE resolution_changes SET counter = counter + 1"
_OTHER = "CREATE TABLE IF NOT EXISTS unrelated (x); INSERT INTO unrelated VALUES (1)"


@settings(max_examples=25, deadline=None)
@given(steps=_STEPS)
def test_every_commit_is_seen_by_the_next_read(
    tmp_path_factory: pytest.TempPathFactory, steps: list[str]
) -> None:
    with fresh_database("sqlite", tmp_path_factory.mktemp("commits")) as url:
        store = Store(url)
        store.upgrade()
        path = store.engine.url.database
        assert path is not None
        try:
            assert store.resolution_changes() == _counter(path)
            here = sqlite3.connect(path, isolation_level=None)
            for step in steps:
                if step == "move":
                    _commit(path, _MOVE)
                elif step == "move here":
                    here.execute(_MOVE)
                elif step == "other":
                    here.executescript(_OTHER)
                assert store.resolution_changes() == _counter(path), steps
            here.close()
        finally:
            store.close()


def test_with_nothing_committed_the_counter_is_not_read_again(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    readers = sqlite_store._readers
    assert readers is not None
    first = readers.changes()
    ran = _queries(readers, monkeypatch)
    assert [readers.changes() for _ in range(5)] == [first] * 5
    assert ran == []
    path = sqlite_store.engine.url.database
    assert path is not None
    _commit(path, _MOVE)
    assert readers.changes() == first + 1
    assert len(ran) == 1


def test_a_database_not_in_wal_mode_has_no_header_to_read(tmp_path: Path) -> None:
    path = str(tmp_path / "rollback.db")
    setup = sqlite3.connect(path, isolation_level=None)
    assert setup.execute("PRAGMA journal_mode = delete").fetchone() == ("delete",)
    header = CommitHeader(lambda: sqlite3.connect(path, isolation_level=None))
    assert header.read() is None
    setup.execute("CREATE TABLE t (x)")
    assert header.read() is None
    header.close()
    setup.close()


def test_the_header_moves_with_each_commit_and_only_then(tmp_path: Path) -> None:
    path = str(tmp_path / "wal.db")
    setup = sqlite3.connect(path, isolation_level=None)
    assert setup.execute("PRAGMA journal_mode = wal").fetchone() == ("wal",)
    setup.execute("CREATE TABLE t (x)")
    header = CommitHeader(lambda: sqlite3.connect(path))
    seen = [header.read()]
    setup.execute("SELECT * FROM t").fetchall()  # a read commits nothing
    assert header.read() == seen[-1]
    for n in range(3):
        setup.execute("INSERT INTO t VALUES (?)", (n,))
        seen.append(header.read())
    setup.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()  # the log starts over
    setup.execute("INSERT INTO t VALUES (9)")
    seen.append(header.read())
    assert None not in seen
    assert len(set(seen)) == len(seen)
    header.close()
    setup.close()


def test_idle_readers_hold_no_snapshot_that_a_checkpoint_must_wait_for(sqlite_store: Store) -> None:
    path = sqlite_store.engine.url.database
    assert path is not None
    sqlite_store.resolution_row_now("urn:nbn:fi:none-1")
    with sqlite_store.transaction() as tx:
        organisation_id = add_organisation(tx)
        tx.records.insert(sample_record("urn:nbn:fi:lib-1"), organisation_id)
    assert sqlite_store.resolution_row_now("urn:nbn:fi:lib-1") is not None
    sqlite_store.resolution_changes()
    _commit(path, _MOVE)
    with sqlite3.connect(path, isolation_level=None) as checkpointer:
        busy, _, _ = checkpointer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    checkpointer.close()
    assert busy == 0


_ALONE = """
import sqlite3, subprocess, sys
from urnkit.resolver.store.commits import CommitHeader
path = sys.argv[1]
setup = sqlite3.connect(path, isolation_level=None)
setup.execute("PRAGMA journal_mode = wal")
setup.execute("CREATE TABLE t (x)")
header = CommitHeader(lambda: sqlite3.connect(path))
before = header.read()
setup.close()  # the header's own connection is the process's last
commit = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()"
subprocess.run([sys.executable, "-c", commit, path, "INSERT INTO t VALUES (1)"], check=True)
after = header.read()
print(before is not None and after is not None and after != before)
"""


def test_the_header_follows_commits_when_its_connection_is_the_last_one_open(
    tmp_path: Path,
) -> None:
    # The last connection to close deletes the -shm file, and SQLite cuts it to 3 bytes when
    # a process opens the database and no connection anywhere holds its lock on that file
    # (os_unix.c, unixLockSharedMemory): the header's own connection, kept open, keeps the
    # file mapped the one every writer writes, and whole (a map read past the end of a file
    # cut short would end the process with SIGBUS).
    done = subprocess.run(
        [sys.executable, "-c", _ALONE, str(tmp_path / "alone.db")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr


def test_a_header_that_cannot_be_mapped_leaves_every_read_to_a_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file system that maps no file (mmap's ENODEV): the counter is read by a query each time.
    def unmappable(*args: object, **kwargs: object) -> object:
        raise OSError(errno.ENODEV, "no memory map here")

    monkeypatch.setattr(mmap, "mmap", unmappable)
    with fresh_database("sqlite", tmp_path) as url:
        store = Store(url)
        store.upgrade()
        path = store.engine.url.database
        assert path is not None
        try:
            header = CommitHeader(lambda: sqlite3.connect(path))
            assert header.read() is None
            header.close()
            assert store.resolution_changes() == _counter(path)
            _commit(path, _MOVE)
            assert store.resolution_changes() == _counter(path)
        finally:
            store.close()
