"""Why the database cannot be used, and what to do about it: the one place that words each
failure, for the command line's message, the server's log and ``/readyz``.

>>> from sqlalchemy.exc import NoSuchModuleError
>>> found = database_failure(
...     NoSuchModuleError("Can't load plugin: sqlalchemy.dialects:postgres"), "postgres://u@h/db"
... )
>>> found.reason, found.fix
("no dialect 'postgres'", 'use postgresql+psycopg://u@h/db')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy.engine import URL

_SUPPORTED = "use sqlite:///FILE or postgresql+psycopg://ROLE@HOST:PORT/NAME"


@dataclass(frozen=True, slots=True)
class DatabaseFailure:
    """A failure of the database: ``reason``, short and naming no host, role or file (what
    clients and ``/readyz`` are told), ``detail`` (what failed, with those names), ``fix``
    (the likely next step for an operator), and whether it stops only writes (a lock)."""

    reason: str
    detail: str
    fix: str
    writes_only: bool = False  # a lock: reads go on, only writes fail

    def __str__(self) -> str:
        return f"{self.detail}: {self.fix}"


class _Rule(NamedTuple):
    """A failure recognised by ``pattern`` over the driver's SQLSTATE and message: its reason,
    detail and fix (with {host}, {port}, {role} and {name} of the URL), whether a lock."""

    pattern: str
    reason: str
    detail: str
    fix: str
    writes_only: bool = False


# PostgreSQL's failures that waiting or an operator's action may end, by SQLSTATE (when the
# server sent one) or by the words of libpq's message (when the connection failed before it
# could). In order: the first that matches is the one.
_POSTGRESQL = (
    _Rule(
        r'^3D000|database "[^"]*" does not exist',
        "the database does not exist",
        "the database {name} does not exist on {host}:{port}",
        "create it: createdb -h {host} -p {port} -U {role} {name}",
    ),
    _Rule(
        r'role "[^"]*" does not exist',
        "the role does not exist",
        "the role {role} does not exist on {host}:{port}",
        "create the role: createuser -h {host} -p {port} --pwprompt {role}",
    ),
    _Rule(
        r"^28P01|password authentication failed|no password supplied",
        "authentication failed",
        "PostgreSQL on {host}:{port} refused the password of {role}",
        "check the password in the URL (postgresql+psycopg://{role}:PASSWORD@{host}:{port}/{name})",
    ),
    _Rule(
        r"no pg_hba.conf entry",
        "this host may not connect",
        "PostgreSQL on {host}:{port} does not let {role} connect from here",
        "add this host to the server's pg_hba.conf, or connect from an allowed one",
    ),
    _Rule(
        r"is not currently accepting connections",
        "the database does not accept connections",
        "the database {name} on {host}:{port} does not accept connections",
        "allow them: ALTER DATABASE {name} WITH ALLOW_CONNECTIONS true",
    ),
    _Rule(
        r"^53300|too many clients|remaining connection slots",
        "too many connections",
        "PostgreSQL on {host}:{port} has too many connections",
        "raise its max_connections, or run fewer server workers",
    ),
    _Rule(
        r"^55P03|lock timeout",
        "a lock was not granted in time",
        "a lock in {name} on {host}:{port} was not granted in time",
        "find the session holding it (pg_locks) or wait for it to end",
        writes_only=True,
    ),
    _Rule(
        r"^57P03|the database system is (starting up|shutting down|in recovery)",
        "the database server is starting or stopping",
        "PostgreSQL on {host}:{port} is starting or stopping",
        "wait for it to be up",
    ),
    _Rule(
        r"^57P0[12]|terminating connection|server closed the connection|connection is (lost|"
        r"closed)|consuming input failed|sending query failed",
        "the connection was lost",
        "the connection to PostgreSQL on {host}:{port} was lost",
        "is PostgreSQL running on {host}:{port}? start it or check host and port",
    ),
    _Rule(
        r"^08|^\S+ (connection failed|failed to resolve host|could not translate host)",
        "cannot connect",
        "cannot connect to PostgreSQL on {host}:{port}",
        "is PostgreSQL running on {host}:{port}? start it or check host and port",
    ),
)
_SQLITE = (
    _Rule(
        r"database is locked",
        "the database is locked",
        "the SQLite file {name} stayed locked by another writer past the busy timeout",
        "wait for that writer, or lengthen the wait (?timeout=SECONDS in the URL)",
        writes_only=True,
    ),
    _Rule(
        r"unable to open database file",
        "the database file cannot be opened",
        "cannot open the SQLite file {name}",
        "check that its directory exists and that this user may write there",
    ),
    _Rule(
        r"disk I/O error|readonly database",
        "the database file cannot be written",
        "cannot write the SQLite file {name}",
        "check the disk and the permissions of the file and its directory",
    ),
)


def database_failure(error: BaseException, url: str | URL) -> DatabaseFailure | None:
    """What ``error``, raised using the database at ``url``, says of the database, or None
    when it is no failure of the database's (a refused value, a bug).

    >>> import sqlite3
    >>> print(database_failure(sqlite3.OperationalError("database is locked"), "sqlite:///u.db"))
    the SQLite file u.db stayed locked by another writer past the busy timeout: wait for that \
writer, or lengthen the wait (?timeout=SECONDS in the URL)
    """
    if isinstance(error, sa.exc.NoSuchModuleError | ModuleNotFoundError):
        return _unknown_driver(error, str(url))
    if isinstance(error, sa.exc.ArgumentError):
        return DatabaseFailure(
            "unreadable URL", f"its URL cannot be read ({one_line(error)})", _SUPPORTED
        )
    words, parts = _driver_words(error), _parts(url)
    if words is None or parts is None:
        return None
    table = _SQLITE if parts["dialect"] == "sqlite" else _POSTGRESQL
    for rule in table:
        if re.search(rule.pattern, words):
            detail, fix = rule.detail.format(**parts), rule.fix.format(**parts)
            return DatabaseFailure(rule.reason, detail, fix, rule.writes_only)
    return None


def schema_problem(state: str) -> str:
    """What is wrong with a database whose schema is ``state`` (``empty`` or ``outdated``),
    and the fix.

    >>> schema_problem("outdated")
    "an older schema: run 'urnkit db upgrade' first"
    """
    return ("no schema" if state == "empty" else "an older schema") + (
        ": run 'urnkit db upgrade' first"
    )


def _driver_words(error: BaseException) -> str | None:
    """The SQLSTATE and message of the driver's error behind ``error`` (the error itself, what
    SQLAlchemy wraps, or a cause), if it is one of a database driver's errors."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, sa.exc.DBAPIError) and seen.orig is not None:
            seen = seen.orig
        module = type(seen).__module__
        if module.startswith(("psycopg", "sqlite3")):
            return f"{getattr(seen, 'sqlstate', None)} {one_line(seen)}"
        seen = seen.__cause__
    return None


def _parts(url: str | URL) -> dict[str, str] | None:
    """The names a fix uses, from ``url``: its dialect, host, port, role and database name."""
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        return None
    return {
        "dialect": parsed.get_backend_name(),
        "host": parsed.host or "localhost",
        "port": str(parsed.port or 5432),
        "role": parsed.username or "ROLE",
        "name": parsed.database or "NAME",
    }


def _unknown_driver(error: BaseException, url: str) -> DatabaseFailure:
    """The URL names a dialect or driver not installed here: PostgreSQL's through psycopg."""
    scheme, _, rest = url.partition("://")
    if scheme.split("+")[0] in ("postgres", "postgresql"):
        fix = "use postgresql+psycopg://" + re.sub(r":[^:@/]*@", ":PASSWORD@", rest)
        return DatabaseFailure(f"no dialect {scheme!r}", f"no dialect or driver {scheme!r}", fix)
    detail = f"its driver is not installed here ({one_line(error)})"
    if isinstance(error, sa.exc.NoSuchModuleError):
        detail = f"no such dialect ({one_line(error)})"
    return DatabaseFailure(f"no dialect {scheme!r}", detail, _SUPPORTED)


def one_line(error: BaseException) -> str:
    """What ``error`` says, on one line.

    >>> one_line(OSError("connection refused\\n\\tIs the server running?"))
    'connection refused Is the server running?'
    """
    return " ".join(str(error).split())
