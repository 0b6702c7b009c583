"""``/staff/admin/``: an admin's overview: records by status and by delegated prefix, the
broken links (their count, and their list at ``/staff/admin/broken-links``), and, charted
and tabled, the resolutions per prefix per day and the records by status of the last weeks."""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from urnkit.resolver.web.deps import ServiceDep, StaffAdmin, StaffSessions, csrf_checked
from urnkit.resolver.web.sessions import staff_page

OVERVIEW = "/staff/admin/"
BROKEN_LINKS = "/staff/admin/broken-links"
DAYS = 31  # the days of resolutions shown
router = APIRouter(
    include_in_schema=False,
    default_response_class=HTMLResponse,
    dependencies=[Depends(csrf_checked)],
)


@router.get(OVERVIEW)
def overview(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAdmin
) -> HTMLResponse:
    return staff_page(
        request,
        sessions,
        "staff/overview.html",
        account=account,
        statuses=services.overview.record_counts(),
        register=services.overview.register(),
        broken=len(services.links.broken_links()),
        counts=services.overview.statistics(DAYS),
        statuses_by_day=services.overview.record_statuses(DAYS),
        since=services.overview.statistics_since(DAYS),
        days=DAYS,
    )


@router.get(BROKEN_LINKS)
def broken_links(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAdmin
) -> HTMLResponse:
    """Every location whose link is broken, by owner and URN."""
    found = services.links.broken_links()
    return staff_page(request, sessions, "staff/broken_links.html", account=account, links=found)
