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
from urnkit.resolver.store.failures import schema_problem


@dataclass(frozen=True, slots=True)
class Readiness:
    """What readiness found: ``database`` "ok" or "unreachable"; ``schema`` "current",
    "outdated" (``urnkit db upgrade`` first), "empty", or "unknown" when the database did not
    answer; and, when not ready, the ``reason`` (naming no host, role or file)."""

    ready: bool
    database: Literal["ok", "unreachable"]
    schema: Literal["current", "outdated", "empty", "unknown"]
    reason: str | None = None


class HealthService:
    """Readiness of the store the application serves."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def readiness(self) -> Readiness:
        """Ready when the database answers and its schema is at the latest migration."""
        try:
            schema = self.store.schema_state()
        except UnavailableError as error:  # down, absent, locked, or refusing this user
            return Readiness(False, "unreachable", "unknown", error.reason)
        except sa.exc.SQLAlchemyError as error:  # something else: the driver's words
            return Readiness(False, "unreachable", "unknown", type(error).__name__)
        if schema != "current":
            return Readiness(False, "ok", schema, f"the database has {schema_problem(schema)}")
        return Readiness(True, "ok", schema)
