"""Whether this process can serve requests (readiness): its database answers and holds the newest
schema. Liveness asks nothing of the database, so it is no service of this module.

>>> from urnkit.resolver.store import Store
>>> health = HealthService(Store("sqlite://"))
>>> found = health.readiness()
>>> found.ready, found.database, found.schema
(False, 'ok', 'empty')
>>> found.reason
"the database has no schema: run 'urnkit db upgrade' first"
>>> health.store.upgrade()
>>> health.readiness().ready
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import sqlalchemy as sa

from urnkit.resolver.domain import UnavailableError
from urnkit.resolver.store import Store
from urnkit.resolver.store.databases import State
from urnkit.resolver.store.failures import schema_problem


@dataclass(frozen=True, slots=True)
class DatabaseState:
    """One of the databases a server with standbys uses, as last seen: its ``name``
    (``primary``, ``standby 1`` …), ``state`` (``ok``, ``lagging``: further behind than
    ``replica_max_lag``, or ``unreachable``) and, a standby's, its replay ``lag`` in seconds."""

    name: str
    state: State
    lag: float | None


@dataclass(frozen=True, slots=True)
class Readiness:
    """What readiness found: ``database`` "ok" or "unreachable"; ``schema`` "current",
    "outdated" (``urnkit db upgrade`` first), "empty", or "unknown" when the database did not
    answer; and, when not ready, the ``reason`` (naming no host, role or file). With
    standbys, each database's state (:class:`DatabaseState`), and whether the service is
    ``read_only`` for now (no primary answers: writes get 503)."""

    ready: bool
    database: Literal["ok", "unreachable"]
    schema: Literal["current", "outdated", "empty", "unknown"]
    reason: str | None = None
    databases: tuple[DatabaseState, ...] = ()
    read_only: bool = False


class HealthService:
    """Readiness of the store the application serves."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def readiness(self) -> Readiness:
        """Ready when a database answers (the primary, else a standby: reads go on) and its
        schema is at the latest migration."""
        try:
            schema = self.store.schema_state()
        except UnavailableError as error:  # down, absent, locked, or refusing this user
            return self._found(False, "unreachable", "unknown", error.reason)
        except sa.exc.SQLAlchemyError as error:  # something else: the driver's words
            return self._found(False, "unreachable", "unknown", type(error).__name__)
        if schema != "current":
            problem = f"the database has {schema_problem(schema)}"
            return self._found(False, "ok", schema, problem)
        return self._found(True, "ok", schema)

    def _found(
        self,
        ready: bool,
        database: Literal["ok", "unreachable"],
        schema: Literal["current", "outdated", "empty", "unknown"],
        reason: str | None = None,
    ) -> Readiness:
        return Readiness(ready, database, schema, reason, self.databases(), self.store.read_only)

    def read_only(self) -> bool:
        """Whether the service takes no writes for now: its primary does not answer, its
        standbys do (what the staff pages say).

        >>> from urnkit.resolver.store import Store
        >>> HealthService(Store("sqlite://")).read_only()
        False
        """
        return self.store.read_only

    def databases(self) -> tuple[DatabaseState, ...]:
        """Each database's state, if there are standbys; else none (the primary's is
        :meth:`readiness`'s ``database``).

        >>> from urnkit.resolver.store import Store
        >>> HealthService(Store("sqlite://")).databases()
        ()
        """
        databases = self.store.databases
        if not databases.standbys:
            return ()
        return tuple(DatabaseState(d.name, d.state, d.lag) for d in databases.every)
