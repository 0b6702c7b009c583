"""``/staff/sign-in``, ``/staff/sign-out``, ``/staff/password``: signing in and out, and the
change of password (forced after a one-time password). Every change of credentials issues a
new session cookie: the old one names the old epoch and no longer works."""

from fastapi import Request, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import ResolverError
from urnkit.resolver.web.deps import (
    ServiceDep,
    StaffForm,
    StaffSession,
    StaffSessions,
    client_of,
)
from urnkit.resolver.web.sessions import (
    PASSWORD,
    SIGN_IN,
    end_session,
    local_path,
    see_other,
    staff_page,
    staff_policy,
    start_session,
)
from urnkit.resolver.web.staff_pages import staff_router

router = staff_router()


@router.get(SIGN_IN)
def sign_in_form(request: Request, sessions: StaffSessions, next: str = "") -> HTMLResponse:
    return staff_page(request, sessions, "staff/sign_in.html", next=local_path(next))


@router.post(SIGN_IN)
def sign_in(
    request: Request, services: ServiceDep, sessions: StaffSessions, form: StaffForm
) -> Response:
    """Sign in; on to the page asked for (a local one only), or first to the password
    change after a one-time password."""
    target = local_path(form.get("next"))
    try:
        account = services.accounts.authenticate(
            form.get("username", ""),
            form.get("password", ""),
            client_of(request.scope),
            staff_policy(request).limits,
        )
    except ResolverError as error:
        values = {"username": form.get("username", "")}
        page = "staff/sign_in.html"
        return staff_page(request, sessions, page, error=error, next=target, values=values)
    answer = see_other(request, PASSWORD if account.must_change_password else target)
    start_session(request, answer, sessions, account.id, account.epoch)
    return answer


@router.post("/staff/sign-out")
def sign_out(request: Request, account: StaffSession) -> Response:
    answer = see_other(request, SIGN_IN)
    end_session(answer)
    return answer


@router.get(PASSWORD)
def password_form(request: Request, sessions: StaffSessions, account: StaffSession) -> Response:
    return staff_page(request, sessions, "staff/password.html", account=account)


@router.post(PASSWORD)
def change_password(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    form: StaffForm,
    account: StaffSession,
) -> Response:
    """Change the password; this session goes on under the new epoch, others end."""
    try:
        changed = services.accounts.change_password(
            account, form.get("current", ""), form.get("new", "")
        )
    except ResolverError as error:
        return staff_page(request, sessions, "staff/password.html", error=error, account=account)
    answer = see_other(request, "/staff/")
    start_session(request, answer, sessions, changed.id, changed.epoch)
    return answer
