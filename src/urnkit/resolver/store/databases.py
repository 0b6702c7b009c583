"""The databases a store uses: its primary, which takes the writes, and PostgreSQL's streaming
standbys (``replica_urls``), which may serve reads no further behind than ``replica_max_lag``.

A watcher thread asks each database every :data:`PROBE_INTERVAL` seconds whether it answers
and, a standby, how far its replay is behind what it has received from the primary
(:data:`LAG_QUERY`); a database a read failed on counts as unreachable until it answers a
probe. :meth:`Databases.order` lists the databases a read tries, best first: one that may come
from a standby tries the standbys within the lag, then the primary; one that must see the
writes tries the primary, then the standbys (while no primary answers, reads go on from them).
Those that did not answer, or lag, come last: better an old answer than none.

>>> from urnkit.resolver.store.engine import create_engine
>>> databases = Databases(Database("primary", create_engine("sqlite://")))
>>> [database.name for database in databases.order(standby=True)]
['primary']
>>> databases.read_only
False
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from urnkit.resolver.store.outages import Outages

log = logging.getLogger("urnkit.resolver.database")

PROBE_INTERVAL: Final = 1.0  # seconds between two probes of each database
DEFAULT_MAX_LAG: Final = 10.0  # seconds a standby's replay may be behind (replica_max_lag)

# How far a standby's replay is behind, in seconds: none when it has replayed everything it
# received (an idle primary sends nothing, and its standby is not behind); else the age of the
# last transaction it replayed (PostgreSQL's own functions: "Recovery Information Functions").
# A promoted standby, out of recovery, is behind nothing.
LAG_QUERY: Final = sa.text(
    "SELECT CASE WHEN NOT pg_is_in_recovery() THEN 0"
    " WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0"
    " ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END"
)

State = Literal["ok", "lagging", "unreachable"]


@dataclass(eq=False)
class Database:
    """One database: its ``name`` (``primary``, ``standby 1`` …: no host), its ``engine``,
    its ``outages`` (logged when ``logged``) and, a standby's, its replay ``lag`` in seconds
    as last measured (None until then)."""

    name: str
    engine: Engine
    logged: bool = False
    lag: float | None = None
    max_lag: float = DEFAULT_MAX_LAG
    outages: Outages = field(init=False)

    def __post_init__(self) -> None:
        self.outages = Outages(self.engine.url, logged=self.logged)

    @property
    def state(self) -> State:
        """``unreachable`` during an outage (not a lock's), ``lagging`` when its replay was
        last seen more than ``max_lag`` behind, else ``ok``."""
        if self.outages.down:
            return "unreachable"
        return "lagging" if self.lag is not None and self.lag > self.max_lag else "ok"


class Databases:
    """The ``primary`` and the ``standbys``, and which of them a read tries first (see the
    module), standbys no further behind than ``max_lag`` seconds first."""

    def __init__(
        self,
        primary: Database,
        standbys: Sequence[Database] = (),
        max_lag: float = DEFAULT_MAX_LAG,
    ) -> None:
        self.primary = primary
        self.standbys = tuple(standbys)
        self.every = (primary, *self.standbys)
        self._alone = [primary]
        for database in self.standbys:
            database.max_lag = max_lag
        if self.standbys:  # the log says which database an outage is of
            for database in self.every:
                database.outages.name = database.name
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def watch(self) -> None:
        """Probe the databases every :data:`PROBE_INTERVAL` seconds in a thread of their own,
        until :meth:`close`, if there are standbys (else the primary is all there is)."""
        if self.standbys and self._watcher is None:
            self._watcher = threading.Thread(target=self._watch, name="urnkit-probes", daemon=True)
            self._watcher.start()

    def order(self, *, standby: bool) -> list[Database]:
        """The databases a read tries, in turn: first those that answer within the lag (the
        standbys first if the read may come from one), then those that lag, then those that
        did not answer."""
        if not self.standbys:
            return self._alone
        preferred = [*self.standbys, self.primary] if standby else list(self.every)
        rank = {"ok": 0, "lagging": 1, "unreachable": 2}
        return sorted(preferred, key=lambda database: rank[database.state])

    @property
    def read_only(self) -> bool:
        """Whether only reads can be served: there are standbys, and the primary does not
        answer."""
        return bool(self.standbys) and self.primary.state == "unreachable"

    @staticmethod
    def skip(database: Database, error: Exception, tried: list[Database]) -> None:
        """Go on to the next of the databases ``tried`` after ``error`` on ``database``:
        ``error`` raised again if it is no failure of the database; else counted as its
        outage, and, if it was the last to try, its refusal raised
        (:class:`~urnkit.resolver.domain.UnavailableError`)."""
        unavailable = database.outages.unavailable(error)
        if unavailable is None:
            raise error
        if database is tried[-1]:
            raise unavailable from error

    def probe(self) -> None:
        """Ask each database once whether it answers and, a standby, how far behind it is."""
        for database in self.every:
            try:
                with database.engine.connect() as connection:
                    standby = database is not self.primary
                    lag = connection.execute(LAG_QUERY).scalar() if standby else None
            except Exception as error:
                if database.outages.unavailable(error) is None:
                    log.exception("probing the %s failed", database.name)
                continue
            database.outages.answered()
            was = database.state
            database.lag = None if lag is None else float(lag)
            if database.state != was and database.lag is not None:
                log.warning("%s: %s, %.1f s behind", database.name, database.state, database.lag)

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.probe()
            self._stop.wait(PROBE_INTERVAL)

    def close(self) -> None:
        """Stop probing, and close every database's connections."""
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
        for database in self.every:
            database.engine.dispose()
