"""``/staff/links``: the broken links of the account's organisation's locations (an
admin's: every organisation's), each rechecked now on request, the new result shown."""

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import Account, ResolverError
from urnkit.resolver.services import Services
from urnkit.resolver.web.deps import (
    ServiceDep,
    StaffAccount,
    StaffForm,
    StaffSessions,
    csrf_checked,
)
from urnkit.resolver.web.sessions import Sessions, see_other, staff_page

LINKS = "/staff/links"
router = APIRouter(
    include_in_schema=False,
    default_response_class=HTMLResponse,
    dependencies=[Depends(csrf_checked)],
)


def _page(
    request: Request, services: Services, sessions: Sessions, account: Account, **context: Any
) -> HTMLResponse:
    _, broken = services.links.broken_links_for(account.principal(), None)
    page = "staff/links.html"
    return staff_page(request, sessions, page, account=account, broken=broken, **context)


@router.get(LINKS)
def links(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAccount,
    checked: str | None = None,
) -> HTMLResponse:
    """The broken links; with ``checked``, the state of that URL after its recheck."""
    if checked is None:
        return _page(request, services, sessions, account)
    try:
        state = services.links.state_for(account.principal(), checked)
    except ResolverError as error:
        return _page(request, services, sessions, account, error=error)
    return _page(request, services, sessions, account, checked=checked, state=state)


@router.post(LINKS + "/recheck")
def recheck(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAccount,
    form: StaffForm,
) -> Response:
    """Check one URL now; back to the list, showing the new result."""
    url = form.get("url", "")
    try:
        services.links.recheck(account.principal(), url)
    except ResolverError as error:
        return _page(request, services, sessions, account, error=error)
    return see_other(request, f"{LINKS}?{urlencode({'checked': url})}")
