"""``/staff/accounts``: an admin's list of every staff account; creating one for any
organisation (its one-time password shown once), disabling and enabling, ending an account's
sessions."""

from typing import Annotated, Any

from fastapi import Path, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import ResolverError
from urnkit.resolver.web.deps import StaffForm
from urnkit.resolver.web.staff_pages import AdminStaff, Staff, staff_router

ACCOUNTS = "/staff/accounts"
router = staff_router()
AccountId = Annotated[int, Path(ge=1, le=2**31 - 1)]


def _page(staff: Staff, **context: Any) -> HTMLResponse:
    return staff.page(
        "staff/accounts.html",
        accounts=staff.services.accounts.accounts(staff.account.principal()),
        organisations=staff.services.admin.organisations(),
        **context,
    )


@router.get(ACCOUNTS)
def accounts(staff: AdminStaff) -> HTMLResponse:
    return _page(staff)


@router.post(ACCOUNTS)
def create_account(staff: AdminStaff, form: StaffForm) -> HTMLResponse:
    """Create an account; the page shows its one-time password this once."""
    name = form.get("username", "")
    try:
        created, password = staff.services.accounts.create(
            staff.account.principal(),
            form.get("organisation", ""),
            name,
            form.get("role", "registrant"),
        )
    except ResolverError as error:
        return _page(staff, error=error, values={"username": name})
    return _page(staff, status=201, created=created, password=password)


@router.post(ACCOUNTS + "/{account_id}/disable")
def disable(staff: AdminStaff, account_id: AccountId) -> Response:
    """Disable an account: its sessions stop at once."""
    staff.services.accounts.set_disabled(staff.account.principal(), account_id, disabled=True)
    return staff.see_other(ACCOUNTS)


@router.post(ACCOUNTS + "/{account_id}/enable")
def enable(staff: AdminStaff, account_id: AccountId) -> Response:
    staff.services.accounts.set_disabled(staff.account.principal(), account_id, disabled=False)
    return staff.see_other(ACCOUNTS)


@router.post(ACCOUNTS + "/{account_id}/end-sessions")
def end_sessions(staff: AdminStaff, account_id: AccountId) -> Response:
    """End every session of an account (signed in on a lost laptop): it signs in again."""
    staff.services.accounts.end_sessions(staff.account.principal(), account_id)
    return staff.see_other(ACCOUNTS)
