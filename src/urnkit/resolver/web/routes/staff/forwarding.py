"""``/staff/admin/forwarding``: an admin's view of the forwarding table (RFC 8458 §4.4, each
country's national resolver and its last health check); a row added, changed or removed, as
``urnkit admin forwarding`` and ``/api/v1/forwarding`` do."""

from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import Account, ResolverError
from urnkit.resolver.services import Services
from urnkit.resolver.web.deps import ServiceDep, StaffAdmin, StaffForm, StaffSessions, csrf_checked
from urnkit.resolver.web.sessions import Sessions, see_other, staff_page

FORWARDING = "/staff/admin/forwarding"
FIELDS = ("country", "url_template", "note")
router = APIRouter(
    include_in_schema=False,
    default_response_class=HTMLResponse,
    dependencies=[Depends(csrf_checked)],
)


def _page(
    request: Request, services: Services, sessions: Sessions, account: Account, **context: Any
) -> HTMLResponse:
    return staff_page(
        request,
        sessions,
        "staff/forwarding.html",
        account=account,
        entries=services.forwarding.forwardings(),
        **context,
    )


@router.get(FORWARDING)
def forwarding(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
    country: str = "",
) -> HTMLResponse:
    """The table; with ``?country=``, the form filled in with that row, to change it."""
    chosen = [entry for entry in services.forwarding.forwardings() if entry.country == country]
    values = {}
    if chosen:
        values = {
            "country": chosen[0].country,
            "url_template": chosen[0].url_template,
            "note": chosen[0].note or "",
        }
    return _page(request, services, sessions, account, values=values)


@router.post(FORWARDING)
def set_forwarding(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
    form: StaffForm,
) -> Response:
    """Add a country's row, or change it."""
    values = {name: form.get(name, "") for name in FIELDS}
    try:
        services.forwarding.set_forwarding(
            values["country"], values["url_template"], values["note"] or None
        )
    except ResolverError as error:
        return _page(request, services, sessions, account, error=error, values=values)
    return see_other(request, FORWARDING)


@router.post(FORWARDING + "/remove")
def remove_forwarding(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
    form: StaffForm,
) -> Response:
    """Remove a country's row: its URN:NBNs are no longer forwarded."""
    try:
        services.forwarding.remove_forwarding(form.get("country", ""))
    except ResolverError as error:
        return _page(request, services, sessions, account, error=error)
    return see_other(request, FORWARDING)
