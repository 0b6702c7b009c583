"""``/staff/tokens``: the API tokens of the account's organisation (an admin's: every
organisation's), created (shown once) and revoked through the admin service, as the API and
``urnkit admin`` do."""

from typing import Annotated, Any

from fastapi import Path, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import ResolverError
from urnkit.resolver.web.deps import StaffForm
from urnkit.resolver.web.staff_pages import SignedIn, Staff, staff_router

TOKENS = "/staff/tokens"
router = staff_router()


def _page(staff: Staff, **context: Any) -> HTMLResponse:
    account, admin = staff.account, staff.services.admin
    organisations = admin.organisations() if account.role == "admin" else [account.organisation]
    tokens = admin.tokens(account.principal())
    return staff.page("staff/tokens.html", tokens=tokens, organisations=organisations, **context)


@router.get(TOKENS)
def tokens(staff: SignedIn) -> HTMLResponse:
    return _page(staff)


@router.post(TOKENS)
def create_token(staff: SignedIn, form: StaffForm) -> HTMLResponse:
    """Create a token; the page shows it this once."""
    organisation = form.get("organisation", staff.account.organisation)
    role, label = form.get("role", "registrant"), form.get("label", "")
    try:
        principal = staff.account.principal()
        token = staff.services.admin.create_token_as(principal, organisation, role, label)
    except ResolverError as error:
        return _page(staff, error=error, values={"label": label})
    return _page(staff, status=201, created=token)


@router.post(TOKENS + "/{token_id}/revoke")
def revoke_token(staff: SignedIn, token_id: Annotated[int, Path(ge=1, le=2**31 - 1)]) -> Response:
    """Revoke a token of the account's organisation (an admin's: any)."""
    staff.services.admin.revoke_token(token_id, staff.account.principal())
    return staff.see_other(TOKENS)
