"""``/staff/``: the staff pages' home, a short list of what the account's role may do."""

from fastapi.responses import HTMLResponse

from urnkit.resolver.web.sessions import HOME
from urnkit.resolver.web.staff_pages import SignedIn, staff_router

router = staff_router()


@router.get(HOME)
def home(staff: SignedIn) -> HTMLResponse:
    return staff.page("staff/home.html")
