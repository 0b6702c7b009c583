"""The database: its connections, the transactions over them, and resolution's lookups."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Final, Literal, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.pool import StaticPool

from urnkit.resolver.domain import ConflictError
from urnkit.resolver.store import locks, schema
from urnkit.resolver.store.databases import DEFAULT_MAX_LAG, Database, Databases
from urnkit.resolver.store.engine import DEFAULT_DATABASE_URL, create_engine
from urnkit.resolver.store.fast_lookup import (
    RESOLUTION_QUERY,
    BatchedLookups,
    ResolutionRow,
    SQLiteReaders,
    Then,
    autocommit_connection,
)
from urnkit.resolver.store.transaction import Transaction

T = TypeVar("T")
log = logging.getLogger(__name__)

RETRIES: Final = 3  # attempts of a write that PostgreSQL ends for a deadlock (Store.retried)
# PostgreSQL's serialization_failure and deadlock_detected: a rolled-back transaction that
# succeeds when tried again.
RETRIED_STATES: Final = frozenset({"40001", "40P01"})


class Store:
    """The database: a pool of connections and the transactions over it. While the database
    cannot be used, each of them raises :class:`~urnkit.resolver.domain.UnavailableError`
    (:mod:`~urnkit.resolver.store.outages`, logged when ``log_outages``).

    Writes, and the reads that must see them, go to the primary (``url``); resolution's reads,
    and those that ask for it (``snapshot(standby=True)``), to the streaming standbys at
    ``replica_urls`` no further than ``replica_max_lag`` seconds behind, else to the primary
    (:mod:`~urnkit.resolver.store.databases`). Every read goes on from the standbys while no
    primary answers.

    >>> store = Store("sqlite://")
    >>> store.upgrade()
    >>> with store.transaction() as tx:
    ...     tx.organisations.create("Demo Library") is not None
    True
    """

    MOST_CHANGED = 1_000  # keys of moves of the change counter asked for at once

    def __init__(
        self,
        url: str = DEFAULT_DATABASE_URL,
        *,
        log_outages: bool = False,
        replica_urls: Sequence[str] = (),
        replica_max_lag: float = DEFAULT_MAX_LAG,
    ) -> None:
        self.url = url
        self.engine = create_engine(url)
        if replica_urls and self.engine.dialect.name != "postgresql":
            raise ValueError("replica_urls name PostgreSQL's standbys: the database must be too")
        standbys = [
            Database(f"standby {n}", create_engine(replica), log_outages)
            for n, replica in enumerate(replica_urls, 1)
        ]
        primary = Database("primary", self.engine, log_outages)
        self.databases = Databases(primary, standbys, replica_max_lag)
        self.databases.watch()
        self.outages = primary.outages
        dialect = self.engine.dialect
        # The fast paths of resolution_row_async (see there), by database; None where it
        # falls back.
        self._lookups: dict[Database, BatchedLookups] | None = None
        self._readers: SQLiteReaders | None = None
        if dialect.name == "postgresql" and dialect.driver == "psycopg":
            self._lookups = {
                database: BatchedLookups(partial(autocommit_connection, database.engine))
                for database in self.databases.every
            }
        elif dialect.name == "sqlite" and not isinstance(self.engine.pool, StaticPool):
            self._readers = SQLiteReaders(self.engine)

    def close(self) -> None:
        """Close every pooled connection."""
        for lookups in (self._lookups or {}).values():
            lookups.close()
        if self._readers is not None:
            self._readers.close()
        self.databases.close()

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A write transaction: committed when the block ends, rolled back if it raises."""
        with self.outages.guarding(writes=True), self.engine.begin() as connection:
            yield Transaction(connection)

    def retried(self, work: Callable[[Transaction], T], attempts: int = RETRIES) -> T:
        """What ``work`` returns, run in a write transaction; run again in a new one, up to
        ``attempts`` times in all, when PostgreSQL ends the transaction for a deadlock or a
        serialization failure (SQLSTATE class 40: the transaction, not the work, failed).
        Then a :class:`~urnkit.resolver.domain.ConflictError` says to send the request again.

        >>> store = Store("sqlite://")
        >>> store.upgrade()
        >>> store.retried(lambda tx: tx.organisations.create("Demo Library") is not None)
        True
        """
        for attempt in range(1, attempts + 1):
            try:
                with self.transaction() as tx:
                    return work(tx)
            except sa.exc.OperationalError as error:
                state = getattr(error.orig, "sqlstate", None)
                if state not in RETRIED_STATES:
                    raise
                log.info("a write was rolled back (SQLSTATE %s), attempt %d", state, attempt)
        raise ConflictError(
            f"the database ended this write {attempts} times for conflicting with concurrent "
            "writes (a deadlock or a serialization failure); nothing was written: send it again"
        )

    @contextmanager
    def rehearsal(self) -> Iterator[Transaction]:
        """A write transaction always rolled back: what writes would do, without doing it.

        >>> store = Store("sqlite://")
        >>> store.upgrade()
        >>> with store.rehearsal() as tx:
        ...     tx.organisations.create("Demo Library") is not None
        True
        >>> with store.snapshot() as tx:
        ...     tx.organisations.id("Demo Library") is None
        True
        """
        with self.outages.guarding(), self.engine.connect() as connection:
            transaction = connection.begin()
            try:
                yield Transaction(connection)
            finally:
                transaction.rollback()

    @contextmanager
    def snapshot(self, *, standby: bool = False) -> Iterator[Transaction]:
        """A read-only transaction (on SQLite a plain ``BEGIN``, which never blocks writers),
        from a ``standby`` if one is near enough, else from the primary; or, if it must see
        the writes made so far, from the primary (or a standby while no primary answers)."""
        with self._reading(standby=standby) as connection, connection.begin():
            yield Transaction(connection)

    @property
    def read_only(self) -> bool:
        """Whether the store serves only reads for now: its primary does not answer and its
        standbys do (see :attr:`~.databases.Databases.read_only`)."""
        return self.databases.read_only

    @contextmanager
    def _reading(self, *, standby: bool) -> Iterator[Connection]:
        """A connection for a read, from the first of :meth:`~.databases.Databases.order`
        that answers; its failures are its database's outages."""
        databases = self.databases.order(standby=standby)
        for database in databases:
            try:
                connection = database.engine.connect()
            except Exception as error:
                Databases.skip(database, error, databases)
                continue
            with database.outages.guarding(), connection:
                yield connection.execution_options(urnkit_read_only=True)
            return

    def resolution_row(self, key: str) -> ResolutionRow | None:
        """One indexed query for a record's status and targets (see :data:`ResolutionRow`),
        or None: resolution's read, for synchronous callers."""
        with self._reading(standby=True) as connection:
            if connection.dialect.name == "postgresql":
                # One statement needs no transaction: autocommit saves the BEGIN and ROLLBACK
                # round trips. (On SQLite a read BEGIN costs less than switching modes.)
                connection = connection.execution_options(isolation_level="AUTOCOMMIT")
            row = connection.execute(RESOLUTION_QUERY, {"key": key}).first()
        return None if row is None else (row[0], row[1], row[2], row[3], row[4])

    async def resolution_row_async(self, key: str) -> ResolutionRow | None:
        """:meth:`resolution_row` for the event loop: the hot path of ``GET /{urn}``.

        SQLite runs the query on the event loop (:class:`~.fast_lookup.SQLiteReaders`).
        PostgreSQL batches the lookups of concurrent requests
        (:class:`~.fast_lookup.BatchedLookups`): a worker process uses one connection for
        resolution on each database it reads. Other databases and drivers, and in-memory
        SQLite, run :meth:`resolution_row` (in a worker thread unless in-memory).
        """
        if self._lookups is not None:
            return await self._batched(key, self._lookups)
        if self._readers is None and self.engine.dialect.name != "sqlite":
            return await asyncio.to_thread(self.resolution_row, key)
        return self.resolution_row_now(key)

    def resolution_row_now(self, key: str) -> ResolutionRow | None:
        """:meth:`resolution_row` on the caller's thread, SQLite's fast path where it has one
        (:class:`~.fast_lookup.SQLiteReaders`, a file's): outages seen here, without a context
        manager's cost. In memory, the one shared connection."""
        if self._readers is None:
            return self.resolution_row(key)
        row = self._read_fast(self._readers.row, key)
        if self.outages.since is not None:  # the first answer after an outage
            self.outages.answered()
        return row

    def resolution_changes(self) -> int | None:
        """The change counter of resolution on SQLite (migration ``resolution_changes``): a
        value that moves whenever :meth:`resolution_row` may give another row for some key
        (a record inserted aside: it had none). None where there is no counter to read
        (PostgreSQL, in-memory SQLite): a caller then keeps no answer."""
        if self._readers is None:
            return None
        return self._read_fast(self._readers.changes)

    def resolution_changed(self, since: int, until: int) -> list[str] | None:
        """The equivalence keys whose redirects may have changed after
        :meth:`resolution_changes` read ``since`` up to its reading ``until`` (migration
        ``resolution_changed_keys``); None when that is not known: more than
        :attr:`MOST_CHANGED` moves (the rest of the database's moves are asked about no
        further), a move whose keys are no longer held or had none (a restore from backup),
        no counter at all (PostgreSQL, in-memory SQLite).

        >>> Store("sqlite://").resolution_changed(1, 2) is None
        True
        """
        if self._readers is None or not 0 <= until - since <= self.MOST_CHANGED:
            return None
        return self._read_fast(self._readers.changed, since, until)

    def _read_fast(self, read: Callable[..., T], *arguments: object) -> T:
        """``read(*arguments)``, a read of SQLite's fast path
        (:class:`~.fast_lookup.SQLiteReaders`), its failure raised as an
        :class:`~urnkit.resolver.domain.UnavailableError` where it is an outage (counted),
        without a context manager's cost."""
        try:
            return read(*arguments)
        except Exception as error:
            unavailable = self.outages.unavailable(error)
            if unavailable is None:
                raise
            raise unavailable from error

    @property
    def batched(self) -> bool:
        """Whether resolution's lookups are batched (PostgreSQL with psycopg):
        :meth:`resolution_row_then` takes them.

        >>> Store("sqlite://").batched
        False
        """
        return self._lookups is not None

    def resolution_row_then(self, key: str, then: Then) -> bool:
        """:meth:`resolution_row_async` for a caller with no task to await in (a server's
        protocol, below the application): ``then`` is called on the running event loop with
        the row of ``key``, or with the error its lookup failed with (counted as the outage
        of its database). Asked of the first database of
        :meth:`~.databases.Databases.order` only, when it is in no outage; False, and nothing
        asked, otherwise and where lookups are not batched (all but PostgreSQL with psycopg):
        :meth:`resolution_row_async` then tries them in turn.

        >>> Store("sqlite://").resolution_row_then("urn:nbn:fi-1", print)
        False
        """
        lookups = self._lookups
        if lookups is None:
            return False
        database = self.databases.order(standby=True)[0]
        if database.outages.since is not None:
            return False

        def answered(row: ResolutionRow | None, error: Exception | None) -> None:
            if error is not None:
                database.outages.unavailable(error)
            then(row, error)

        lookups[database].row_then(key, answered)
        return True

    async def _batched(
        self, key: str, lookups: dict[Database, BatchedLookups]
    ) -> ResolutionRow | None:
        """The lookup of ``key`` on the first database of
        :meth:`~.databases.Databases.order` that answers, its failures its outages."""
        databases = self.databases.order(standby=True)
        for database in databases:
            try:
                row = await lookups[database].row(key)
            except Exception as error:
                Databases.skip(database, error, databases)
                continue
            if database.outages.since is not None:  # the first answer after an outage
                database.outages.answered()
            return row
        raise AssertionError("a store has a primary")

    def schema_state(self) -> Literal["empty", "current", "outdated"]:
        """Whether the database has no schema, the newest one, or one to upgrade."""
        with self._reading(standby=False) as connection:
            return schema.schema_state(connection)

    def upgrade(self, revision: str = "head") -> None:
        """Apply the Alembic migrations up to ``revision``."""
        with self.outages.guarding(writes=True):
            schema.upgrade(self.engine, revision)

    @contextmanager
    def lock(self, name: str, *, wait: bool) -> Iterator[bool]:
        """Hold the lock ``name`` of this database, shared by every process on any machine
        using it, while the block runs (:func:`~.locks.lock`).

        >>> with Store("sqlite://").lock("demo", wait=False) as held:
        ...     held
        True
        """
        with self.outages.guarding(), locks.lock(self.engine, name, wait=wait) as held:
            yield held
