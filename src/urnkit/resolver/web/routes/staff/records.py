"""``/staff/records``: the records of the account's organisation (those it owns, and those it
holds a grant on; an admin's: every record), filtered and a page at a time; registering one
(``/staff/records/new``: a typed-in URN, or the next one generated in a prefix), reserving
URNs, and the export as NDJSON or CSV. Each through the record services, as the API."""

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Query, Response
from fastapi.responses import HTMLResponse, StreamingResponse

from urnkit.resolver.domain import ResolverError, UnacceptableError
from urnkit.resolver.services.transfer import export_lines
from urnkit.resolver.web.deps import (
    StaffForm,
)
from urnkit.resolver.web.record_forms import beside, location_of, metadata_of
from urnkit.resolver.web.staff_pages import SignedIn, Staff, staff_router
from urnkit.resolver.web.templating import record_path

RECORDS = "/staff/records"
NEW = RECORDS + "/new"
PAGE = 50  # records a page
router = staff_router()
Filter = Annotated[str | None, Query(max_length=2000)]


@router.get(RECORDS)
def records(
    staff: SignedIn,
    status: Filter = None,
    prefix: Filter = None,
    q: Filter = None,
    cursor: Annotated[int, Query(ge=0, le=2**63 - 1)] = 0,
) -> HTMLResponse:
    """A page of the records, filtered by status, prefix and a URN or part of a title."""
    values = {"status": status or "", "prefix": prefix or "", "q": q or ""}
    found: list[Any] = []
    after = None
    error = None
    try:
        found, after = staff.services.overview.held_records(
            staff.account.principal(),
            cursor,
            PAGE,
            status=status or None,
            prefix=prefix or None,
            text=(q or "").strip() or None,
        )
    except ResolverError as refused:
        error = beside(refused, "q")
    page = "staff/records.html"
    return staff.page(page, error=error, records=found, after=after, values=values)


def _new_page(staff: Staff, **context: Any) -> HTMLResponse:
    prefixes = staff.services.overview.prefixes(staff.account.principal())
    return staff.page("staff/record_new.html", prefixes=prefixes, **context)


@router.get(NEW)
def new_record_form(staff: SignedIn) -> HTMLResponse:
    return _new_page(staff, values={"how": "typed"})


@router.post(NEW)
def register(staff: SignedIn, form: StaffForm) -> Response:
    """Register a record: the typed-in URN (refused if registered, filled in if reserved), or
    the next one of the chosen prefix; with its first location, if one is given, and its
    metadata. A generated URN stays reserved if the rest is refused: the form then names it."""
    principal, services = staff.account.principal(), staff.services
    values = dict(form)
    try:
        metadata = metadata_of(form)
        found = [location_of(form)] if form.get("url", "").strip() else []
        urn = form.get("urn", "").strip()
        if form.get("how") == "generated":
            try:
                urn = services.records.generate(principal, form.get("prefix", ""))[0].urn
            except ResolverError as error:
                raise beside(error, "prefix") from None
            values |= {"how": "typed", "urn": urn}  # reserved now: kept if the rest fails
        record, _ = services.records.put(principal, urn, found, metadata, overwrite=False)
    except ResolverError as error:
        return _new_page(staff, error=beside(error, "urn"), values=values)
    return staff.see_other(record_path(record.urn))


@router.post(RECORDS + "/reserve")
def reserve(staff: SignedIn, form: StaffForm) -> Response:
    """Reserve a number of new URNs in a prefix; on to the list of reserved ones there."""
    prefix = form.get("reserve_prefix", "")
    written = form.get("count", "").strip()
    try:
        if not written.isascii() or not written.isdigit() or len(written) > 9:
            raise UnacceptableError("the count is a whole number, 1 or more", field="count")
        staff.services.records.generate(staff.account.principal(), prefix, int(written))
    except ResolverError as error:
        values = {"how": "typed", "reserve_prefix": prefix, "count": written}
        return _new_page(staff, error=beside(error, "reserve_prefix"), values=values)
    query = urlencode({"status": "reserved", "prefix": prefix})
    return staff.see_other(f"{RECORDS}?{query}")


@router.get(RECORDS + "/export")
def export(staff: SignedIn, format: Annotated[str, Query(max_length=10)] = "ndjson") -> Response:
    """The records of the account's organisation, as ``urnkit export`` writes them, to
    download; a CSV cell that a spreadsheet would run as a formula is neutralised."""
    held = staff.services.overview.held_export(staff.account.principal())
    lines = export_lines(held, format, for_spreadsheets=True)
    media = "text/csv" if format == "csv" else "application/x-ndjson"
    return StreamingResponse(
        lines,
        media_type=f"{media}; charset=utf-8",
        headers={
            "Content-Disposition": f'attachment; filename="records.{format}"',
            "Cache-Control": "no-store",
        },
    )
