"""``/staff/records/{urn}/history``: each change of a record's history with what it changed,
field by field, for a record of the account's organisation or one it holds a grant on (an
admin's: any); any other is not found, as though absent."""

from fastapi.responses import HTMLResponse

from urnkit.resolver.web.deps import StaffRecordRoute, raw_urn
from urnkit.resolver.web.staff_pages import SignedIn, staff_router

RECORDS = "/staff/records/"
HISTORY = "/history"
router = staff_router(StaffRecordRoute)


@router.get(RECORDS + "{urn:path}" + HISTORY)
def history(staff: SignedIn) -> HTMLResponse:
    """The record's history, newest change first, each with its differences."""
    urn = raw_urn(staff.request.scope, RECORDS, HISTORY)
    record, entries = staff.services.records.changes(staff.account.principal(), urn)
    return staff.page("staff/history.html", record=record, entries=entries[::-1])
