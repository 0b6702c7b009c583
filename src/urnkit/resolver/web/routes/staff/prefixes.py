"""``/staff/admin/prefixes``: an admin's list of the delegated prefixes (RFC 8458 §4.3), each
with its organisation and generator, and the delegation of a new one, as ``urnkit admin
delegate`` does."""

from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import GENERATORS, Account, ResolverError
from urnkit.resolver.services import Services
from urnkit.resolver.web.deps import ServiceDep, StaffAdmin, StaffForm, StaffSessions, csrf_checked
from urnkit.resolver.web.sessions import Sessions, see_other, staff_page

PREFIXES = "/staff/admin/prefixes"
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
        "staff/prefixes.html",
        account=account,
        register=services.overview.register(),
        organisations=services.admin.organisations(),
        generators=GENERATORS,
        **context,
    )


@router.get(PREFIXES)
def prefixes(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAdmin
) -> HTMLResponse:
    return _page(request, services, sessions, account)


@router.post(PREFIXES)
def delegate(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
    form: StaffForm,
) -> Response:
    """Delegate a prefix to an organisation, with the generator of its new names."""
    values = {name: form.get(name, "") for name in ("organisation", "prefix", "generator")}
    try:
        services.admin.delegate(values["organisation"], values["prefix"], values["generator"])
    except ResolverError as error:
        return _page(request, services, sessions, account, error=error, values=values)
    return see_other(request, PREFIXES)
