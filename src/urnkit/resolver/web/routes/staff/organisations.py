"""``/staff/admin/organisations`` and ``/staff/admin/networks``: an admin's list of the
organisations (each with its delegated prefixes, accounts and networks), creating one; and the
organisations' networks (CIDR ranges) set and removed, as ``urnkit admin network`` does."""

from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import Account, ResolverError
from urnkit.resolver.services import Services
from urnkit.resolver.web.deps import ServiceDep, StaffAdmin, StaffForm, StaffSessions, csrf_checked
from urnkit.resolver.web.sessions import Sessions, see_other, staff_page

ORGANISATIONS = "/staff/admin/organisations"
NETWORKS = "/staff/admin/networks"
router = APIRouter(
    include_in_schema=False,
    default_response_class=HTMLResponse,
    dependencies=[Depends(csrf_checked)],
)


def _organisations(
    request: Request, services: Services, sessions: Sessions, account: Account, **context: Any
) -> HTMLResponse:
    return staff_page(
        request,
        sessions,
        "staff/organisations.html",
        account=account,
        organisations=services.admin.organisations(),
        prefixes=services.admin.prefixes(),
        accounts=services.accounts.accounts(account.principal()),
        networks=services.networks.networks(),
        **context,
    )


@router.get(ORGANISATIONS)
def organisations(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAdmin
) -> HTMLResponse:
    return _organisations(request, services, sessions, account)


@router.post(ORGANISATIONS)
def create_organisation(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
    form: StaffForm,
) -> Response:
    name = form.get("name", "")
    try:
        services.admin.create_organisation(name)
    except ResolverError as error:
        values = {"name": name}
        return _organisations(request, services, sessions, account, error=error, values=values)
    return see_other(request, ORGANISATIONS)


def _networks(
    request: Request, services: Services, sessions: Sessions, account: Account, **context: Any
) -> HTMLResponse:
    return staff_page(
        request,
        sessions,
        "staff/networks.html",
        account=account,
        organisations=services.admin.organisations(),
        networks=services.networks.networks(),
        **context,
    )


@router.get(NETWORKS)
def networks(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAdmin
) -> HTMLResponse:
    return _networks(request, services, sessions, account)


@router.post(NETWORKS)
def set_network(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
    form: StaffForm,
) -> Response:
    """Create or replace a network: its ranges, separated by spaces or commas."""
    values = {name: form.get(name, "") for name in ("organisation", "network", "ranges")}
    ranges = values["ranges"].replace(",", " ").split()
    try:
        services.networks.save(values["organisation"], values["network"], ranges)
    except ResolverError as error:
        return _networks(request, services, sessions, account, error=error, values=values)
    return see_other(request, NETWORKS)


@router.post(NETWORKS + "/remove")
def remove_network(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
    form: StaffForm,
) -> Response:
    """Remove a network; refused (at the top of the page) while locations are restricted to
    it."""
    try:
        services.networks.delete(form.get("organisation", ""), form.get("network", ""))
    except ResolverError as error:
        error.extensions.pop("field", None)  # the list's button, not the form's field
        return _networks(request, services, sessions, account, error=error)
    return see_other(request, NETWORKS)
