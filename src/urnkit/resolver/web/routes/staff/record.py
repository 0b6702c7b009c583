"""``/staff/records/{urn}``: one record's staff page, offering what the account may do with
it. The owner (or an admin) edits its metadata, adds and removes locations and moves them up
and down (each a small form: no dragging, no script); an organisation holding a grant adds and
removes only its own locations. A reserved URN is filled in (its locations and metadata, and it
is active); a record is deactivated naming its successors, found by URN or title on
``…/deactivate``. Each through the record and grant services, as the API.

The routes match the raw path and read the URN from it, as sent
(:class:`~urnkit.resolver.web.deps.StaffRecordRoute`), so that ``%2F`` stays what it is; the
pages link a URN holding ``/`` percent-encoded whole, so that one ending ``/deactivate`` has its
own page (:func:`~urnkit.resolver.web.templating.record_path`).
"""

from collections.abc import Callable, Sequence
from functools import partial
from typing import Annotated, Any, Literal

from fastapi import Query, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import Principal, Record, ResolverError, UnacceptableError
from urnkit.resolver.services.locations import LocationEdit
from urnkit.resolver.web.deps import StaffForm, StaffRecordRoute, raw_urn
from urnkit.resolver.web.record_forms import beside, location_of, metadata_fields, metadata_of
from urnkit.resolver.web.routes.staff.records import RECORDS
from urnkit.resolver.web.staff_pages import SignedIn, Staff, staff_router
from urnkit.resolver.web.templating import record_path

RECORD = RECORDS + "/{urn:path}"
router = staff_router(StaffRecordRoute)


def _urn(staff: Staff, suffix: str = "") -> str:
    return raw_urn(staff.request.scope, RECORDS + "/", suffix)


def _page(staff: Staff, urn: str, **context: Any) -> HTMLResponse:
    """The record's page; a record the account's organisation neither owns nor holds a grant
    on is not found (:meth:`OverviewService.held`)."""
    account = staff.account
    record = staff.services.overview.held(account.principal(), urn)
    owner = account.role == "admin" or record.owner == account.organisation
    context.setdefault("values", metadata_fields(record.metadata))
    return staff.page("staff/record.html", record=record, owner=owner, **context)


def _acted(
    staff: Staff,
    urn: str,
    act: Callable[[Principal], object],
    field: str,
    form: dict[str, str],
) -> Response:
    """Do ``act`` as the account; back to the record's page (303), or that page with the
    refusal beside ``field`` (unless it names its own) and the form as it was sent."""

    def refused(error: ResolverError) -> HTMLResponse:
        held = staff.services.overview.held(staff.account.principal(), urn)
        page_values = {**metadata_fields(held.metadata)}
        values = page_values | form if field not in ("move", "remove") else page_values
        error = beside(error, field)
        if error.extensions["field"] == "urn":  # the page has no field for its URN
            error.extensions["field"] = "form"
        return _page(staff, urn, error=error, values=values)

    return staff.act(lambda: act(staff.account.principal()), refused, record_path(urn))


@router.post(RECORD + "/metadata")
def describe(staff: SignedIn, form: StaffForm) -> Response:
    """Replace the record's metadata with the form's."""
    urn = _urn(staff, "/metadata")

    def act(principal: Principal) -> Record:
        return staff.services.records.describe(principal, urn, metadata_of(form))

    return _acted(staff, urn, act, "other", form)


@router.post(RECORD + "/fill")
def fill(staff: SignedIn, form: StaffForm) -> Response:
    """Fill in a reserved URN: its first location, if given, and metadata; it is active."""
    urn = _urn(staff, "/fill")

    def act(principal: Principal) -> object:
        found = [location_of(form)] if form.get("url", "").strip() else []
        records = staff.services.records
        return records.put(principal, urn, found, metadata_of(form), overwrite=False)

    return _acted(staff, urn, act, "url", form)


@router.post(RECORD + "/locations/{kind}", name="staff-locations")
def edit_locations(staff: SignedIn, form: StaffForm, kind: str) -> Response:
    """Add a location, or remove or move the one at the form's ``url``: one change a post."""
    urn = _urn(staff, f"/locations/{kind}")

    def act(principal: Principal) -> Record:
        if kind not in ("add", "remove", "up", "down"):
            raise UnacceptableError(f"no such change of locations: {kind}")
        added = location_of(form) if kind == "add" else None
        edit = LocationEdit(kind, form.get("url", "").strip(), added)  # type: ignore[arg-type]
        return staff.services.grants.edit_locations(principal, urn, edit)

    field = "url" if kind == "add" else "locations"
    return _acted(staff, urn, act, field, form)


@router.get(RECORD + "/deactivate")
def deactivate_form(
    staff: SignedIn, q: Annotated[str, Query(max_length=2000)] = ""
) -> HTMLResponse:
    """The deactivation form; with ``q``, the records whose URN or title it names, to pick
    as successors."""
    return _deactivate_page(staff, _urn(staff, "/deactivate"), q)


def _deactivate_page(
    staff: Staff, urn: str, q: str, ticked: Sequence[str] = (), **context: Any
) -> HTMLResponse:
    """The deactivation form of ``urn``: the successors ``ticked`` (kept across searches) and,
    unticked after them, those ``q`` finds."""
    principal = staff.account.principal()
    record = staff.services.overview.held(principal, urn)
    found: list[Record] = []
    error = context.pop("error", None)
    if q.strip():
        by: Literal["urn", "title"] = "urn" if q.strip()[:4].lower() == "urn:" else "title"
        try:
            reader = staff.services.access.reader(principal)
            found, _ = staff.services.overview.search(by, q.strip(), reader=reader)
        except ResolverError as refused:
            error = error or beside(refused, "q")
    others = [other for other in found if other.key != record.key]  # never its own successor
    return staff.page(
        "staff/deactivate.html",
        error=error,
        record=record,
        q=q,
        others=others,
        options=[
            *((successor, "", True) for successor in ticked),
            *((other.urn, _title(other), False) for other in others if other.urn not in ticked),
        ],
        **context,
    )


def _title(record: Record) -> str:
    title = record.metadata.get("title")
    return title if isinstance(title, str) else ""


@router.post(RECORD + "/deactivate")
def deactivate(staff: SignedIn, form: StaffForm) -> Response:
    """Deactivate the record with the form's note and successors: those ticked among the
    matches (``successor-N``) and those typed in (``successors``, one a line). With ``find``
    (the search's button), the form again with the matches of ``q``, what was ticked and
    typed kept."""
    urn = _urn(staff, "/deactivate")
    ticked = list(dict.fromkeys(v for name, v in form.items() if name.startswith("successor-")))
    typed = form.get("successors", "").split()
    values = {"note": form.get("note", ""), "successors": "\n".join(typed)}
    again = partial(_deactivate_page, staff, urn, form.get("q", ""), ticked, values=values)
    if form.get("find"):
        return again()
    note = form.get("note", "").strip() or None
    successors = list(dict.fromkeys([*ticked, *typed]))
    return staff.act(
        lambda: staff.services.records.deactivate(staff.account.principal(), urn, note, successors),
        lambda error: again(error=beside(error, "successors")),
        record_path(urn),
    )


@router.get(RECORD)
def record_page(staff: SignedIn) -> HTMLResponse:
    return _page(staff, _urn(staff))
