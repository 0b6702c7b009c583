"""``/staff/``: the staff pages' home, a short list of what the account's role may do."""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from urnkit.resolver.web.deps import StaffAccount, StaffSessions, csrf_checked
from urnkit.resolver.web.sessions import HOME, staff_page

router = APIRouter(
    include_in_schema=False,
    default_response_class=HTMLResponse,
    dependencies=[Depends(csrf_checked)],
)


@router.get(HOME)
def home(request: Request, sessions: StaffSessions, account: StaffAccount) -> HTMLResponse:
    return staff_page(request, sessions, "staff/home.html", account=account)
