"""``/staff/accounts``: an admin's list of every staff account; creating one for any
organisation (its one-time password shown once), disabling and enabling."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import Account, ResolverError
from urnkit.resolver.services import Services
from urnkit.resolver.web.deps import ServiceDep, StaffAdmin, StaffForm, StaffSessions, csrf_checked
from urnkit.resolver.web.sessions import Sessions, see_other, staff_page

ACCOUNTS = "/staff/accounts"
router = APIRouter(
    include_in_schema=False,
    default_response_class=HTMLResponse,
    dependencies=[Depends(csrf_checked)],
)
AccountId = Annotated[int, Path(ge=1, le=2**31 - 1)]


def _page(
    request: Request, services: Services, sessions: Sessions, account: Account, **context: Any
) -> HTMLResponse:
    return staff_page(
        request,
        sessions,
        "staff/accounts.html",
        account=account,
        accounts=services.accounts.accounts(account.principal()),
        organisations=services.admin.organisations(),
        **context,
    )


@router.get(ACCOUNTS)
def accounts(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAdmin
) -> HTMLResponse:
    return _page(request, services, sessions, account)


@router.post(ACCOUNTS)
def create_account(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAdmin,
    form: StaffForm,
) -> HTMLResponse:
    """Create an account; the page shows its one-time password this once."""
    name = form.get("username", "")
    try:
        created, password = services.accounts.create(
            account.principal(),
            form.get("organisation", ""),
            name,
            form.get("role", "registrant"),
        )
    except ResolverError as error:
        return _page(request, services, sessions, account, error=error, values={"username": name})
    context = {"created": created, "password": password}
    return _page(request, services, sessions, account, status=201, **context)


@router.post(ACCOUNTS + "/{account_id}/disable")
def disable(
    request: Request, account_id: AccountId, services: ServiceDep, account: StaffAdmin
) -> Response:
    """Disable an account: its sessions stop at once."""
    services.accounts.set_disabled(account.principal(), account_id, disabled=True)
    return see_other(request, ACCOUNTS)


@router.post(ACCOUNTS + "/{account_id}/enable")
def enable(
    request: Request, account_id: AccountId, services: ServiceDep, account: StaffAdmin
) -> Response:
    services.accounts.set_disabled(account.principal(), account_id, disabled=False)
    return see_other(request, ACCOUNTS)
