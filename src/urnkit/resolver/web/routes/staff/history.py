"""``/staff/records/{urn}/history``: each change of a record's history with what it changed,
field by field, for a record of the account's organisation or one it holds a grant on (an
admin's: any); any other is not found, as though absent."""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from urnkit.resolver.web.deps import (
    ServiceDep,
    StaffAccount,
    StaffRecordRoute,
    StaffSessions,
    csrf_checked,
    raw_urn,
)
from urnkit.resolver.web.sessions import staff_page

RECORDS = "/staff/records/"
HISTORY = "/history"
router = APIRouter(
    route_class=StaffRecordRoute,
    include_in_schema=False,
    default_response_class=HTMLResponse,
    dependencies=[Depends(csrf_checked)],
)


@router.get(RECORDS + "{urn:path}" + HISTORY)
def history(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAccount
) -> HTMLResponse:
    """The record's history, newest change first, each with its differences."""
    urn = raw_urn(request.scope, RECORDS, HISTORY)
    record, entries = services.records.changes(account.principal(), urn)
    return staff_page(
        request,
        sessions,
        "staff/history.html",
        account=account,
        record=record,
        entries=entries[::-1],
    )
