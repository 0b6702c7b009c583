"""``/staff/sign-in``, ``/staff/sign-out``, ``/staff/password``: signing in and out, and the
change of password (forced after a one-time password). Signing out ends the session in the
database; a change of password ends every session of the account and starts a new one here."""

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
    session_of,
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
    session = services.accounts.start_session(account, sessions.lifetime)
    start_session(request, answer, sessions, session)
    return answer


@router.post("/staff/sign-out")
def sign_out(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffSession
) -> Response:
    """Sign out: the session ends on the server, its cookie is dropped."""
    session = session_of(request, sessions)
    assert session is not None  # StaffSession read it
    services.accounts.end_session(session)
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
    """Change the password; every session of the account ends, this browser's goes on in a
    new one."""
    try:
        changed = services.accounts.change_password(
            account, form.get("current", ""), form.get("new", "")
        )
    except ResolverError as error:
        return staff_page(request, sessions, "staff/password.html", error=error, account=account)
    answer = see_other(request, "/staff/")
    start_session(
        request, answer, sessions, services.accounts.start_session(changed, sessions.lifetime)
    )
    return answer
