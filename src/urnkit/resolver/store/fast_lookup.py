"""Resolution's lookups, the hot path of ``GET /{urn}``: one indexed query for what resolution
reads of a record (:data:`ResolutionRow`), run with as little per call as each database allows
(:meth:`~urnkit.resolver.store.Store.resolution_row_async` chooses).

* SQLite (a file): :class:`SQLiteReaders`, sqlite3 connections of their own on the event loop.
* PostgreSQL with psycopg: :class:`BatchedLookups`, the lookups of concurrent requests in
  batches, on a connection per event loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
from collections.abc import Callable, Mapping
from contextlib import suppress
from functools import partial
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from urnkit.resolver.store.commits import CommitHeader
from urnkit.resolver.store.tables import records, successions

# The hot path's query, built once: building a statement and its cache key on every resolution
# cost more than running it (benchmarks/resolve_bench.py).
# The predecessors: a correlated subquery, one index probe in ``successions``.
_PREDECESSORS = (
    sa.select(sa.func.aggregate_strings(successions.c.predecessor_urn, "\n"))
    .where(successions.c.successor_key == records.c.equivalence_key)
    .scalar_subquery()
)
RESOLUTION_QUERY = sa.select(
    records.c.status, records.c.targets, _PREDECESSORS, records.c.prefix, records.c.restricted
).where(records.c.equivalence_key == sa.bindparam("key", required=False))
"""What resolution reads of the record whose equivalence key is the parameter ``key``."""

ResolutionRow = tuple[str, str | None, str | None, str, str | None]
"""What resolution reads of a record: its status, its targets (``records.targets``: the
locations to redirect to, best first, one a line, each its URL and, after a tab, its media
type if it has one: :func:`~urnkit.resolver.domain.read_targets`; None if none), its
predecessors (the URNs of the deactivated records naming it as a successor, one a line; None
if none), its prefix (what the statistics count resolutions by) and, only when it has
locations restricted to networks, ``records.restricted`` (every usable location with its
network; None on all other records)."""


_LOGGER = logging.getLogger(__name__)
_DriverSQL = tuple[str, Callable[[Any], Any]]
_CHANGES_SQL = "SELECT counter FROM resolution_changes"  # SQLite's (SQLiteReaders.changes)
# The keys of the counter's moves after one value up to another (SQLiteReaders.changed).
_CHANGED_SQL = (
    "SELECT equivalence_key FROM resolution_changed_keys WHERE counter > ? AND counter <= ?"
)


def _driver_sql(query: sa.Select[Any], dialect: sa.Dialect, name: str) -> _DriverSQL:
    """``query`` as sqlite3 takes it, bypassing SQLAlchemy's per-execution work: the SQL and a
    function from the value of the bind parameter ``name`` to the driver's positional (qmark)
    parameters (the others, like ``LIMIT 1``, are constants)."""
    # Rendered in: literal parameters, like the separator of aggregate_strings.
    compiled = query.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    fixed = dict(compiled.params)
    order = compiled.positiontup
    assert order is not None, "sqlite3's parameters are positional (qmark)"
    template, index = [fixed[n] for n in order], order.index(name)

    def positional(value: Any) -> list[Any]:
        parameters = template.copy()
        parameters[index] = value
        return parameters

    return str(compiled), positional


# Resolution's lookup on PostgreSQL, a batch of keys at a time (see BatchedLookups). The keys
# travel as one text parameter, a key a line (no URN holds a control character, RFC 8141 §2):
# psycopg dumps a list parameter element by element in Python, which costs more per key.
_RESOLUTION_BATCH_SQL = b"""
SELECT r.equivalence_key, r.status, r.targets,
       (SELECT string_agg(s.predecessor_urn, E'\n') FROM successions s
        WHERE s.successor_key = r.equivalence_key),
       r.prefix, r.restricted
FROM records r WHERE r.equivalence_key = ANY(string_to_array($1, E'\n'))"""
_RESOLUTION_STATEMENT = b"urnkit_resolution"
_COMMAND_OK, _TUPLES_OK = 1, 2  # libpq's ExecStatusType (psycopg.pq.ExecStatus)

Then = Callable[[ResolutionRow | None, Exception | None], None]
"""What is called with a lookup's row (None if there is none), or with the error it failed
with: at once, on the event loop, from its batch."""
_Waiters = dict[str, list[Then]]


class BatchedLookups:
    """Resolution lookups on PostgreSQL for event loops, answered in batches on the loop.

    Each event loop has a connection of its own (autocommit, the statement prepared), driven
    through psycopg's libpq layer in nonblocking mode, its socket watched by the loop. A request
    queues its key and awaits a future; the loop's batch task sends every key queued as one
    query, and the keys queued while it runs make the next. A round trip and the server's work
    per statement are thus shared by many requests; alone, a request waits for one query. No
    thread: a worker thread with psycopg's cursors cost more CPU per query than the rest of a
    request; the loop sending libpq's calls costs about half of that, mostly the kernel's.
    """

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect  # a psycopg connection, autocommit
        self._loops: dict[asyncio.AbstractEventLoop, _LoopLookups] = {}

    async def row(self, key: str) -> ResolutionRow | None:
        future: asyncio.Future[ResolutionRow | None] = asyncio.get_running_loop().create_future()
        self.row_then(key, partial(_settle, future))
        return await future

    def row_then(self, key: str, then: Then) -> None:
        """Look ``key`` up in the running loop's next batch, and call ``then`` with what it
        gives: for a caller below the application, with no task of its own to await in."""
        loop = asyncio.get_running_loop()
        lookups = self._loops.get(loop)
        if lookups is None:
            for gone in [other for other in self._loops if other.is_closed()]:
                self._loops.pop(gone).close()
            lookups = self._loops[loop] = _LoopLookups(loop, self._connect)
        lookups.row_then(key, then)

    def close(self) -> None:
        """Close every loop's connection (a loop still running elsewhere, in its thread)."""
        loops, self._loops = self._loops, {}
        for loop, lookups in loops.items():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if loop is running or not loop.is_running():
                lookups.close()
            else:
                with suppress(RuntimeError):  # closed meanwhile
                    loop.call_soon_threadsafe(lookups.close)


class _LoopLookups:
    """The lookups of one event loop (see :class:`BatchedLookups`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, connect: Callable[[], Any]) -> None:
        self._loop = loop
        self._connect = connect
        self._queued: _Waiters = {}
        self._task: asyncio.Task[None] | None = None
        self._connection: Any = None
        self._answer: asyncio.Future[Any] | None = None  # the result of the query in flight
        self._result: Any = None  # its last result so far
        self._socket = -1  # the connection's, watched by the loop

    def row_then(self, key: str, then: Then) -> None:
        self._queued.setdefault(key, []).append(then)
        if self._task is None:
            self._task = self._loop.create_task(self._serve())

    async def _serve(self) -> None:
        """Send what is queued, a batch at a time, until nothing is; each batch's requests get
        its rows or, whatever failed, the error."""
        try:
            while self._queued:
                batch, self._queued = self._queued, {}
                keys = "\n".join(batch).encode()
                try:
                    rows = await self._rows(keys)
                except Exception as error:
                    _answer_batch(batch, {}, error)
                    continue
                _answer_batch(batch, rows, None)
        finally:
            self._task = None

    async def _rows(self, keys: bytes) -> dict[str, ResolutionRow]:
        """The rows of ``keys``: a connection the server closed fails once, and the query is
        sent again on a new one."""
        try:
            return await self._query(keys)
        except Exception:
            self.close()
        try:
            return await self._query(keys)
        except Exception:
            self.close()
            raise

    async def _query(self, keys: bytes) -> dict[str, ResolutionRow]:
        if self._connection is None:
            connection = await asyncio.to_thread(self._open)
            # The loop watches a duplicate of the socket's descriptor, ours to close: libpq
            # closes its own when it finds the connection lost, and that number may then go to
            # another socket (a client's transport, another thread's connection) before the
            # loop forgets it. A duplicate's number is not reused until close() has forgotten it.
            try:
                self._socket = os.dup(connection.pgconn.socket)
            except BaseException:
                connection.close()
                raise
            self._connection = connection
            self._loop.add_reader(self._socket, self._readable)
        pgconn = self._connection.pgconn
        self._answer, self._result = self._loop.create_future(), None
        pgconn.send_query_prepared(_RESOLUTION_STATEMENT, [keys])
        while pgconn.flush():  # the socket's buffer was full: rare, the query is small
            await asyncio.sleep(0)
        result = await self._answer
        if result.status != _TUPLES_OK:  # psycopg's error, with the SQLSTATE (store/failures.py)
            from psycopg.errors import error_from_result

            raise error_from_result(result)
        found: dict[str, ResolutionRow] = {}
        for n in range(result.ntuples):
            key, *rest = (_text(result.get_value(n, column)) for column in range(6))
            found[key] = (rest[0], rest[1], rest[2], rest[3], rest[4])
        return found

    def _open(self) -> Any:
        """A new connection with the statement prepared, nonblocking (in a worker thread)."""
        connection = self._connect()
        try:
            prepared = connection.pgconn.prepare(_RESOLUTION_STATEMENT, _RESOLUTION_BATCH_SQL)
            if prepared.status != _COMMAND_OK:
                raise RuntimeError(prepared.error_message.decode("utf-8", "replace"))
            connection.pgconn.nonblocking = 1
        except BaseException:
            connection.close()
            raise
        return connection

    def _readable(self) -> None:
        """The loop's callback when the connection's socket has something to read: read until
        the query in flight is complete or nothing more is there now. uvloop calls a reader
        only once more when the socket has an error, then stops watching it: a server ending
        the connection mid-query (its FATAL message, then a reset) is read to that end here,
        or the query would wait forever."""
        answer, pgconn = self._answer, self._connection.pgconn
        try:
            pgconn.consume_input()
            while True:
                if pgconn.is_busy():
                    if not _readable_now(self._socket):
                        break  # the rest comes with the next callback
                    pgconn.consume_input()
                    continue
                result = pgconn.get_result()
                if result is not None:
                    self._result = result
                    continue
                # The query is complete: only now does the connection take the next one.
                if answer is not None and not answer.done():
                    answer.set_result(self._result)
                break
        except Exception as error:  # the connection is lost: the next query makes another
            self.close()
            if answer is not None and not answer.done():
                answer.set_exception(error)

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            if not self._loop.is_closed():
                self._loop.remove_reader(self._socket)
            os.close(self._socket)
            self._socket = -1
            with suppress(Exception):  # already gone
                connection.close()


def _readable_now(descriptor: int) -> bool:
    """Whether reading ``descriptor`` now would not wait: something came, its end, or an error.

    >>> import socket
    >>> ours, theirs = socket.socketpair()
    >>> before = _readable_now(ours.fileno())
    >>> theirs.close()
    >>> before, _readable_now(ours.fileno())
    (False, True)
    >>> ours.close()
    """
    watch = select.poll()
    watch.register(descriptor, select.POLLIN)
    return bool(watch.poll(0))


def _text(value: bytes | None) -> Any:
    return None if value is None else value.decode()


def _answer_batch(
    batch: _Waiters, rows: Mapping[str, ResolutionRow], error: Exception | None
) -> None:
    """Call each waiter of ``batch`` with its key's row, or with ``error``. A waiter that
    raises is logged, and the others are called still."""
    for key, waiters in batch.items():
        for then in waiters:
            try:
                if error is None:
                    then(rows.get(key), None)
                else:  # an exception each: raising one in many tasks would pile up its traceback
                    failure = RuntimeError(f"the resolution lookup failed: {error!r}")
                    failure.__cause__ = error
                    then(None, failure)
            except Exception:
                _LOGGER.exception("a resolution lookup's waiter failed")


def _settle(
    future: asyncio.Future[ResolutionRow | None],
    row: ResolutionRow | None,
    error: Exception | None,
) -> None:
    """Settle ``future`` with ``row`` or ``error``, unless it was cancelled (the client went
    away)."""
    if future.done():
        return
    if error is None:
        future.set_result(row)
    else:
        future.set_exception(error)


def detached_connection(engine: Engine) -> Any:
    """A DBAPI connection made as ``engine`` makes them (its connect events ran) that the pool
    no longer counts: a fast path keeps it for itself."""
    pooled = engine.raw_connection()
    connection = pooled.driver_connection
    pooled.detach()
    return connection


def autocommit_connection(engine: Engine) -> Any:
    """:func:`detached_connection` in autocommit mode (psycopg)."""
    connection = detached_connection(engine)
    connection.autocommit = True
    return connection


class SQLiteReaders:
    """Resolution lookups on SQLite for event loops: run on the loop, through sqlite3
    connections of their own (no SQLAlchemy, no transaction, the statement cached by sqlite3):
    reading a few pages of a local file costs less than handing the call to a worker thread
    would. WAL readers wait for no writer; only recovery after a crash could hold them
    (``busy_timeout``)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._sql = _driver_sql(RESOLUTION_QUERY, engine.dialect, "key")
        self._idle: list[Any] = []  # cursors of the event loops' sqlite3 connections, not in use
        self._header = CommitHeader(partial(detached_connection, engine))
        # The wal-index header as it read just before the counter was last read, and the
        # counter then: one pair, replaced whole, so that loops on other threads see either.
        self._seen: tuple[bytes | None, int] = (None, 0)

    def row(self, key: str) -> ResolutionRow | None:
        sql, parameters = self._sql
        row: ResolutionRow | None = self._fetch(sql, parameters(key))
        return row

    def changes(self) -> int:
        """The change counter of resolution (migration ``resolution_changes``): it moves
        whenever what :meth:`row` gives of some key may have changed. Read again only when
        something was committed since it was last read (:class:`~.commits.CommitHeader`)."""
        header = self._header.read()
        seen_header, seen = self._seen
        if header is not None and header == seen_header:
            return seen
        found: tuple[int] = self._fetch(_CHANGES_SQL, ())
        self._seen = (header, found[0])
        return found[0]

    def changed(self, since: int, until: int) -> list[str] | None:
        """The keys of the counter's moves after ``since`` up to ``until`` (migration
        ``resolution_changed_keys``): those whose redirects may have changed meanwhile; None
        when the table no longer holds every move, or a move has no key (a restore)."""
        keys = self._fetch(_CHANGED_SQL, (since, until), all_rows=True)
        return [key for (key,) in keys] if len(keys) == until - since else None

    def _fetch(self, sql: str, parameters: Any, all_rows: bool = False) -> Any:
        """The first row of ``sql`` (or ``all_rows``), on an idle connection of the loop's,
        through its own cursor (``Connection.execute`` makes a cursor each call). sqlite3
        steps ``sql`` to its end and resets it (it gives one row at most, or all are read): a
        statement left with rows to give would hold its snapshot, and no checkpoint could
        pass it."""
        try:
            cursor = self._idle.pop()
        except IndexError:  # the first call in this event loop, or more at once than before
            connection = detached_connection(self._engine)
            connection.execute("PRAGMA query_only = ON")
            # Pages read from a memory map rather than with a read() each, which measured
            # cheaper per lookup at 1,000,000 URNs. (Up to 1 GiB; the rest is read as before.)
            connection.execute(f"PRAGMA mmap_size = {1 << 30}")
            cursor = connection.cursor()
        try:
            executed = cursor.execute(sql, parameters)
            row = executed.fetchall() if all_rows else executed.fetchone()
        except BaseException:
            cursor.connection.close()
            raise
        self._idle.append(cursor)
        return row

    def close(self) -> None:
        """Close every idle connection, and stop reading the wal-index header."""
        while self._idle:
            self._idle.pop().connection.close()
        self._header.close()
        self._seen = (None, 0)
