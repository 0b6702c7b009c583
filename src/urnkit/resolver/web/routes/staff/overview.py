"""``/staff/admin/``: an admin's overview: records by status and by delegated prefix, the
broken links (their count, and their list at ``/staff/admin/broken-links``), and, charted
and tabled, the resolutions per prefix per day and the records by status of the last weeks."""

from fastapi.responses import HTMLResponse

from urnkit.resolver.web.staff_pages import AdminStaff, staff_router

OVERVIEW = "/staff/admin/"
BROKEN_LINKS = "/staff/admin/broken-links"
DAYS = 31  # the days of resolutions shown
router = staff_router()


@router.get(OVERVIEW)
def overview(staff: AdminStaff) -> HTMLResponse:
    services = staff.services
    return staff.page(
        "staff/overview.html",
        statuses=services.overview.record_counts(),
        register=services.overview.register(),
        broken=len(services.links.broken_links()),
        counts=services.overview.statistics(DAYS),
        statuses_by_day=services.overview.record_statuses(DAYS),
        since=services.overview.statistics_since(DAYS),
        days=DAYS,
    )


@router.get(BROKEN_LINKS)
def broken_links(staff: AdminStaff) -> HTMLResponse:
    """Every location whose link is broken, by owner and URN."""
    return staff.page("staff/broken_links.html", links=staff.services.links.broken_links())
