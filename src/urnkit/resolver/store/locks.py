"""Locks across processes: one per name and database, shared by every process on any machine
using it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from sqlalchemy.engine import Engine


@contextmanager
def lock(engine: Engine, name: str, *, wait: bool) -> Iterator[bool]:
    """Hold the lock ``name`` of ``engine``'s database while the block runs; yields whether it
    is held (without ``wait``: False at once when another process holds it). PostgreSQL: a
    session advisory lock; SQLite: an ``flock`` on a file beside the database (in memory: one
    process, nothing to share). A process that dies lets go of it."""
    if engine.dialect.name == "postgresql":
        key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
        with engine.connect() as connection:
            connection = connection.execution_options(isolation_level="AUTOCOMMIT")
            if wait:
                connection.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": key})
            take = sa.text("SELECT pg_try_advisory_lock(:key)")
            held = wait or bool(connection.scalar(take, {"key": key}))
            try:
                yield held
            finally:
                if held:
                    unlock = sa.text("SELECT pg_advisory_unlock(:key)")
                    connection.execute(unlock, {"key": key})
        return
    database = engine.url.database
    if not database or database == ":memory:":
        yield True
        return
    import fcntl

    with open(f"{database}.{name}.lock", "a") as file:
        try:
            fcntl.flock(file, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            held = True
        except BlockingIOError:
            held = False
        try:
            yield held
        finally:
            if held:
                fcntl.flock(file, fcntl.LOCK_UN)
