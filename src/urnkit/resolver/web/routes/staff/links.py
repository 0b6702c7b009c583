"""``/staff/links``: the broken links of the account's organisation's locations (an
admin's: every organisation's), each rechecked now on request, the new result shown."""

from functools import partial
from typing import Any
from urllib.parse import urlencode

from fastapi import Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import ResolverError
from urnkit.resolver.web.deps import StaffForm
from urnkit.resolver.web.staff_pages import SignedIn, Staff, staff_router

LINKS = "/staff/links"
router = staff_router()


def _page(staff: Staff, **context: Any) -> HTMLResponse:
    _, broken = staff.services.links.broken_links_for(staff.account.principal(), None)
    return staff.page("staff/links.html", broken=broken, **context)


@router.get(LINKS)
def links(staff: SignedIn, checked: str | None = None) -> HTMLResponse:
    """The broken links; with ``checked``, the state of that URL after its recheck."""
    if checked is None:
        return _page(staff)
    try:
        state = staff.services.links.state_for(staff.account.principal(), checked)
    except ResolverError as error:
        return _page(staff, error=error)
    return _page(staff, checked=checked, state=state)


@router.post(LINKS + "/recheck")
def recheck(staff: SignedIn, form: StaffForm) -> Response:
    """Check one URL now; back to the list, showing the new result."""
    url = form.get("url", "")
    return staff.act(
        lambda: staff.services.links.recheck(staff.account.principal(), url),
        partial(_page, staff),
        f"{LINKS}?{urlencode({'checked': url})}",
    )
