"""``/healthz`` and ``/readyz``: whether the process answers (liveness) and whether it can serve
(readiness: its database answers at the latest schema), as JSON for load balancers and
orchestrators. Never cached."""

from typing import Any

from fastapi import APIRouter, Response

from urnkit.resolver.web.deps import ServiceDep
from urnkit.resolver.web.schemas import HealthOut, ReadinessOut

router = APIRouter(tags=["operations"])
_NO_STORE = {"Cache-Control": "no-store"}


@router.get("/healthz", response_model=HealthOut)
def healthz(response: Response) -> dict[str, str]:
    """Liveness: the process answers. The database is not asked."""
    response.headers.update(_NO_STORE)
    return {"status": "ok"}


@router.get(
    "/readyz",
    response_model=ReadinessOut,
    response_model_exclude_none=True,
    responses={503: {"model": ReadinessOut, "description": "Not ready: the reason says why"}},
)
def readyz(response: Response, services: ServiceDep) -> dict[str, Any]:
    """Readiness: 200 when the database answers and its schema is at the latest migration,
    503 otherwise (``database`` unreachable, or ``schema`` empty or outdated), with the
    ``reason``. With standbys, ready while any database answers (reads go on without the
    primary: ``read_only``), and the state and lag of each (``databases``)."""
    found = services.health.readiness()
    response.status_code = 200 if found.ready else 503
    response.headers.update(_NO_STORE)
    databases = [{"name": d.name, "state": d.state, "lag_seconds": d.lag} for d in found.databases]
    return {
        "status": "ready" if found.ready else "not ready",
        "database": found.database,
        "schema": found.schema,
        "reason": found.reason,
        "read_only": found.read_only if databases else None,
        "databases": databases or None,
    }
