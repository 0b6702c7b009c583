"""How the store connects: one engine per database URL, with the settings each database needs.

SQLite runs in WAL mode; a write transaction begins with ``BEGIN IMMEDIATE`` so that concurrent
writers wait (``busy_timeout``) instead of failing halfway.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

DEFAULT_DATABASE_URL = "sqlite:///urnkit.db"
CONNECT_TIMEOUT = 5  # seconds, for PostgreSQL (see create_engine)


def create_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, foreign keys, a busy timeout (30 s, or the
    URL's ``?timeout=`` in seconds) and ``BEGIN IMMEDIATE`` for transactions that write.

    >>> create_engine("sqlite://").dialect.name
    'sqlite'
    """
    if not url.startswith("sqlite"):
        # The pool serves the API and the CLI; resolution keeps a connection of its own
        # (Store.resolution_row_async). A server process runs at most 40 sync endpoints at once
        # (AnyIO's thread limit), so pool_size + max_overflow = 40: a request never waits for a
        # connection while a thread is free. 10 stay open; the overflow is closed when returned.
        # A worker thus holds at most 41 connections, and W workers W * 41: more than PostgreSQL's
        # default max_connections (100) only from 3 workers on, and only under 40 concurrent API
        # requests per worker; raise max_connections (or put PgBouncer in front) for that.
        # A host that does not answer at all (a machine lost) is given up after CONNECT_TIMEOUT
        # seconds, or the URL's ?connect_timeout=, for the next host or database to be tried.
        query = sa.make_url(url).query
        waits = {} if "connect_timeout" in query else {"connect_timeout": CONNECT_TIMEOUT}
        return sa.create_engine(
            url, pool_size=10, max_overflow=30, pool_pre_ping=True, connect_args=waits
        )
    memory = url in ("sqlite://", "sqlite:///:memory:")
    # How long a writer waits for another's lock before failing (503: store/outages.py):
    # 30 s, or the URL's ?timeout= (seconds, as SQLAlchemy's SQLite dialect reads it).
    timeout = float(str(sa.make_url(url).query.get("timeout", 30)))
    engine = sa.create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": timeout},
        **({"poolclass": StaticPool} if memory else {}),
    )

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # transactions are begun below, explicitly
        cursor = dbapi_connection.cursor()
        if not memory:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={round(timeout * 1000)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        writes = not connection.get_execution_options().get("urnkit_read_only", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")

    return engine
