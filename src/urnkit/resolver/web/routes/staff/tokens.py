"""``/staff/tokens``: the API tokens of the account's organisation (an admin's: every
organisation's), created (shown once) and revoked through the admin service, as the API and
``urnkit admin`` do."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, Response
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

TOKENS = "/staff/tokens"
router = APIRouter(
    include_in_schema=False,
    default_response_class=HTMLResponse,
    dependencies=[Depends(csrf_checked)],
)


def _page(
    request: Request, services: Services, sessions: Sessions, account: Account, **context: Any
) -> HTMLResponse:
    principal = account.principal()
    organisations = (
        services.admin.organisations() if account.role == "admin" else [account.organisation]
    )
    tokens = services.admin.tokens(principal)
    return staff_page(
        request,
        sessions,
        "staff/tokens.html",
        account=account,
        tokens=tokens,
        organisations=organisations,
        **context,
    )


@router.get(TOKENS)
def tokens(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAccount
) -> HTMLResponse:
    return _page(request, services, sessions, account)


@router.post(TOKENS)
def create_token(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAccount,
    form: StaffForm,
) -> HTMLResponse:
    """Create a token; the page shows it this once."""
    organisation = form.get("organisation", account.organisation)
    role, label = form.get("role", "registrant"), form.get("label", "")
    try:
        token = services.admin.create_token_as(account.principal(), organisation, role, label)
    except ResolverError as error:
        values = {"label": label}
        return _page(request, services, sessions, account, error=error, values=values)
    return _page(request, services, sessions, account, status=201, created=token)


@router.post(TOKENS + "/{token_id}/revoke")
def revoke_token(
    request: Request,
    token_id: Annotated[int, Path(ge=1, le=2**31 - 1)],
    services: ServiceDep,
    account: StaffAccount,
) -> Response:
    """Revoke a token of the account's organisation (an admin's: any)."""
    services.admin.revoke_token(token_id, account.principal())
    return see_other(request, TOKENS)
