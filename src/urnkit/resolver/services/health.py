"""Whether this process can serve requests (readiness): its database answers and holds the newest
schema. Liveness asks nothing of the database, so it is no service of this module.

>>> from urnkit.resolver.store import Store
>>> health = HealthService(Store("sqlite://"))
>>> health.readiness()
Readiness(ready=False, database='ok', schema='empty')
>>> health.store.upgrade()
>>> health.readiness().ready
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import sqlalchemy as sa

from urnkit.resolver.store import Store


@dataclass(frozen=True, slots=True)
class Readiness:
    """What readiness found: ``database`` "ok" or "unreachable"; ``schema`` "current",
    "outdated" (``urnkit db upgrade`` first), "empty", or "unknown" when the database did not
    answer."""

    ready: bool
    database: Literal["ok", "unreachable"]
    schema: Literal["current", "outdated", "empty", "unknown"]


class HealthService:
    """Readiness of the store the application serves."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def readiness(self) -> Readiness:
        """Ready when the database answers and its schema is at the latest migration."""
        try:
            schema = self.store.schema_state()
        except sa.exc.SQLAlchemyError:  # down, absent, or refusing this user
            return Readiness(False, "unreachable", "unknown")
        return Readiness(schema == "current", "ok", schema)
