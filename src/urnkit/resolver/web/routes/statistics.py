"""``/api/v1/statistics``: resolutions per prefix per day (UTC); ``/api/v1/statistics/statuses``:
records by status at the end of each day."""

from typing import Annotated, Any

from fastapi import APIRouter, Query

from urnkit.resolver.services.overview import MAX_STATISTICS_DAYS
from urnkit.resolver.web.deps import ServiceDep
from urnkit.resolver.web.problems import problem_responses
from urnkit.resolver.web.schemas import StatisticsOut, StatusStatisticsOut

STATISTICS_DAYS = 31  # the span shown unless another is asked for (here and on /statistics)
router = APIRouter(tags=["statistics"])


@router.get("/api/v1/statistics", response_model=StatisticsOut, responses=problem_responses(422))
def statistics(
    services: ServiceDep,
    days: Annotated[int, Query(ge=1, le=MAX_STATISTICS_DAYS)] = STATISTICS_DAYS,
) -> dict[str, Any]:
    """Resolutions per prefix per day (UTC) over the last ``days`` days, today included.
    Each server process adds its counts every few seconds, so the newest are that late."""
    counts = services.overview.statistics(days)
    return {
        "since": services.overview.statistics_since(days),
        "counts": [
            {"prefix": prefix, "day": day, "resolutions": count} for prefix, day, count in counts
        ],
    }


@router.get(
    "/api/v1/statistics/statuses",
    response_model=StatusStatisticsOut,
    responses=problem_responses(422),
)
def statuses(
    services: ServiceDep,
    days: Annotated[int, Query(ge=1, le=MAX_STATISTICS_DAYS)] = STATISTICS_DAYS,
) -> dict[str, Any]:
    """How many records were reserved, active and deactivated at the end of each of the last
    ``days`` days (UTC), today's so far, the newest day first."""
    counts = services.overview.record_statuses(days)
    return {
        "since": services.overview.statistics_since(days),
        "counts": [
            {"status": status, "day": day, "records": count} for status, day, count in counts
        ],
    }
