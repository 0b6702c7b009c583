"""What a failure of the database is called and what to do about it (store/failures.py), for
the driver errors a running server meets; the commands' lines are tried against real databases
in test_operator_errors.py, outages under a running server in test_database_outages.py."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
import sqlalchemy as sa
from psycopg import errors

from urnkit.resolver.store.failures import database_failure

PG = "postgresql+psycopg://urnkit@db.example:5433/register"
SQLITE = "sqlite:////srv/urnkit/urnkit.db"


def _lookup_failure(cause: Exception) -> RuntimeError:
    """As resolution's batched lookup reports a lost connection: its own error, the driver's
    as the cause."""
    failure = RuntimeError(f"the resolution lookup failed: {cause!r}")
    failure.__cause__ = cause
    return failure


@pytest.mark.parametrize(
    ("error", "url", "reason", "fix"),
    [
        (
            errors.AdminShutdown("terminating connection due to administrator command"),
            PG,
            "the connection was lost",
            "is PostgreSQL running on db.example:5433? start it or check host and port",
        ),
        (
            errors.CrashShutdown("terminating connection because of crash of another process"),
            PG,
            "the connection was lost",
            "is PostgreSQL running on db.example:5433? start it or check host and port",
        ),
        (
            _lookup_failure(psycopg.OperationalError("consuming input failed: EOF")),
            PG,
            "the connection was lost",
            "is PostgreSQL running on db.example:5433? start it or check host and port",
        ),
        (
            errors.ConnectionFailure("connection to the server failed"),
            PG,
            "cannot connect",
            "is PostgreSQL running on db.example:5433? start it or check host and port",
        ),
        (
            errors.TooManyConnections("sorry, too many clients already"),
            PG,
            "too many connections",
            "raise its max_connections, or run fewer server workers",
        ),
        (
            errors.CannotConnectNow("the database system is starting up"),
            PG,
            "the database server is starting or stopping",
            "wait for it to be up",
        ),
        (
            errors.LockNotAvailable("canceling statement due to lock timeout"),
            PG,
            "a lock was not granted in time",
            "find the session holding it (pg_locks) or wait for it to end",
        ),
        (
            sa.exc.OperationalError(
                "SELECT 1",
                {},
                psycopg.OperationalError(
                    'connection failed: connection to server at "10.0.0.5", port 5433 failed: '
                    'FATAL:  database "register" is not currently accepting connections'
                ),
            ),
            PG,
            "the database does not accept connections",
            "allow them: ALTER DATABASE register WITH ALLOW_CONNECTIONS true",
        ),
        (
            sqlite3.OperationalError("database is locked"),
            SQLITE,
            "the database is locked",
            "wait for that writer, or lengthen the wait (?timeout=SECONDS in the URL)",
        ),
        (
            sqlite3.OperationalError("disk I/O error"),
            SQLITE,
            "the database file cannot be written",
            "check the disk and the permissions of the file and its directory",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and " " not in value else None,
)
def test_each_failure_has_its_reason_and_fix(
    error: Exception, url: str, reason: str, fix: str
) -> None:
    failure = database_failure(error, url)
    assert failure is not None
    assert (failure.reason, failure.fix) == (reason, fix)
    # What clients and /readyz are told names no host, role or file.
    for name in ("db.example", "5433", "urnkit", "register", "/srv"):
        assert name not in failure.reason


@pytest.mark.parametrize(
    "error",
    [
        errors.UniqueViolation("duplicate key value violates unique constraint"),
        errors.QueryCanceled("canceling statement due to statement timeout"),
        sqlite3.OperationalError("no such table: records"),
        sqlite3.IntegrityError("UNIQUE constraint failed: records.equivalence_key"),
        ValueError("database is locked"),  # the words, but no driver's error
    ],
    ids=lambda error: type(error).__name__,
)
def test_what_is_no_failure_of_the_database_is_left_alone(error: Exception) -> None:
    assert database_failure(error, PG if "psycopg" in type(error).__module__ else SQLITE) is None


def test_only_a_lock_stops_writes_alone() -> None:
    locked = database_failure(sqlite3.OperationalError("database is locked"), SQLITE)
    lost = database_failure(errors.AdminShutdown("terminating connection"), PG)
    assert locked is not None
    assert locked.writes_only
    assert lost is not None
    assert not lost.writes_only
