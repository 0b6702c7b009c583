"""Backups of a SQLite database through SQLite's online backup API: a consistent copy taken
while servers read and write, checked by reopening it, and put back the same way.

PostgreSQL has its own tools for this (``pg_dump``, ``pg_restore``: docs/deploy.md).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> store = Store(f"sqlite:///{folder / 'live.db'}")
>>> store.upgrade()
>>> backup(store, folder / "copy.db").records
0
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from urnkit.resolver.store.store import Store


@dataclass(frozen=True, slots=True)
class Copy:
    """A checked copy: where it is, how many records it holds, its size in bytes."""

    path: Path
    records: int
    size: int


def sqlite_file(store: Store, verb: str) -> Path:
    """The file of ``store``'s SQLite database; a :class:`ValueError` saying what to use
    instead for any other database."""
    url = store.engine.url
    if url.get_backend_name() != "sqlite":
        raise ValueError(
            f"urnkit db {verb} is for SQLite databases; for PostgreSQL use pg_dump "
            "--format=custom --file FILE DBNAME and pg_restore (docs/deploy.md)"
        )
    if not url.database or url.database == ":memory:":
        raise ValueError(f"urnkit db {verb}: an in-memory database has no file")
    return Path(url.database)


def check_copy(path: Path) -> Copy:
    """``path`` reopened and checked: SQLite's ``integrity_check`` passes and it holds an urnkit
    schema (of this release or an older one); a :class:`ValueError` saying what is wrong."""
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            verdict = connection.execute("PRAGMA integrity_check").fetchone()[0]
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
            if verdict != "ok":
                raise ValueError(f"{path} fails SQLite's integrity check: {verdict}")
            if not {"alembic_version", "records"} <= tables:
                raise ValueError(f"{path} is a SQLite database, but not an urnkit one")
            records = connection.execute("SELECT count(*) FROM records").fetchone()[0]
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise ValueError(f"{path} is not a usable SQLite database: {error}") from None
    return Copy(path, records, path.stat().st_size)


def backup(store: Store, target: Path, *, force: bool = False) -> Copy:
    """Copy ``store``'s database to ``target`` (replaced only with ``force``) through the
    online backup API, written beside it and renamed into place once checked."""
    state = store.schema_state()  # first: a database that cannot be used says so
    source_file = sqlite_file(store, "backup")
    if state != "current":
        raise ValueError(f"{source_file} has no current urnkit schema: nothing to back up")
    if target.exists() and not force:
        raise ValueError(f"{target} exists: give --force to replace it")
    if not target.parent.is_dir():
        raise ValueError(f"{target.parent} is not a directory")
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    source = sqlite3.connect(f"file:{source_file}?mode=ro", uri=True)
    try:
        destination = sqlite3.connect(partial)
        try:
            source.backup(destination)  # all pages in one step: one consistent snapshot
        finally:
            destination.close()
    finally:
        source.close()
    try:
        checked = check_copy(partial)
    except ValueError:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
    return Copy(target, checked.records, checked.size)


def restore(store: Store, source: Path, *, force: bool = False) -> Copy:
    """Put the checked copy ``source`` in the place of ``store``'s database, through the backup
    API (the target's journal stays consistent); a database that holds records is replaced
    only with ``force``. Servers should be stopped meanwhile."""
    state = store.schema_state()  # first: a database that cannot be used says so
    target_file = sqlite_file(store, "restore")
    checked = check_copy(source)
    if state != "empty" and not force:
        with store.snapshot() as tx:
            held = tx.connection.exec_driver_sql("SELECT count(*) FROM records").scalar()
        if held:
            raise ValueError(
                f"{target_file} holds {held} records: give --force to replace them with {source}"
            )
    store.close()
    copy = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        destination = sqlite3.connect(target_file, timeout=30)
        try:
            before = _changes(destination)
            copy.backup(destination)
            _moved(destination, before)
        finally:
            destination.close()
    finally:
        copy.close()
    return Copy(target_file, checked.records, target_file.stat().st_size)


def _changes(connection: sqlite3.Connection) -> int | None:
    """The resolution change counter (migration ``resolution_changes``), if the database has
    one."""
    held = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'resolution_changes'"
    ).fetchone()
    if held is None:
        return None
    value: int = connection.execute("SELECT counter FROM resolution_changes").fetchone()[0]
    return value


def _moved(connection: sqlite3.Connection, before: int | None) -> None:
    """The restored database's change counter set past both its own and the replaced
    database's (``before``), so that a server process keeps no redirect of the replaced one
    (web/front.py)."""
    restored = _changes(connection)
    if restored is not None:
        with connection:
            connection.execute(
                "UPDATE resolution_changes SET counter = ?", (max(restored, before or 0) + 1,)
            )
