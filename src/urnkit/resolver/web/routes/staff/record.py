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

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import HTMLResponse

from urnkit.resolver.domain import Account, Principal, Record, ResolverError, UnacceptableError
from urnkit.resolver.services import Services
from urnkit.resolver.services.locations import LocationEdit
from urnkit.resolver.web.deps import (
    ServiceDep,
    StaffAccount,
    StaffForm,
    StaffRecordRoute,
    StaffSessions,
    csrf_checked,
    raw_urn,
)
from urnkit.resolver.web.record_forms import beside, location_of, metadata_fields, metadata_of
from urnkit.resolver.web.routes.staff.records import RECORDS
from urnkit.resolver.web.sessions import Sessions, see_other, staff_page
from urnkit.resolver.web.templating import record_path

RECORD = RECORDS + "/{urn:path}"
router = APIRouter(
    route_class=StaffRecordRoute,
    include_in_schema=False,
    default_response_class=HTMLResponse,
    dependencies=[Depends(csrf_checked)],
)


def _urn(request: Request, suffix: str = "") -> str:
    return raw_urn(request.scope, RECORDS + "/", suffix)


def _page(
    request: Request,
    services: Services,
    sessions: Sessions,
    account: Account,
    urn: str,
    **context: Any,
) -> HTMLResponse:
    """The record's page; a record the account's organisation neither owns nor holds a grant
    on is not found (:meth:`OverviewService.held`)."""
    record = services.overview.held(account.principal(), urn)
    owner = account.role == "admin" or record.owner == account.organisation
    context.setdefault("values", metadata_fields(record.metadata))
    return staff_page(
        request,
        sessions,
        "staff/record.html",
        account=account,
        record=record,
        owner=owner,
        **context,
    )


def _acted(
    request: Request,
    services: Services,
    sessions: Sessions,
    account: Account,
    urn: str,
    act: Callable[[Principal], object],
    field: str,
    form: dict[str, str],
) -> Response:
    """Do ``act`` as the account; back to the record's page (303), or that page with the
    refusal beside ``field`` (unless it names its own) and the form as it was sent."""
    try:
        act(account.principal())
    except ResolverError as error:
        page_values = {**metadata_fields(services.overview.held(account.principal(), urn).metadata)}
        values = page_values | form if field not in ("move", "remove") else page_values
        error = beside(error, field)
        if error.extensions["field"] == "urn":  # the page has no field for its URN
            error.extensions["field"] = "form"
        return _page(request, services, sessions, account, urn, error=error, values=values)
    return see_other(request, record_path(urn))


@router.post(RECORD + "/metadata")
def describe(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAccount,
    form: StaffForm,
) -> Response:
    """Replace the record's metadata with the form's."""
    urn = _urn(request, "/metadata")

    def act(principal: Principal) -> Record:
        return services.records.describe(principal, urn, metadata_of(form))

    return _acted(request, services, sessions, account, urn, act, "other", form)


@router.post(RECORD + "/fill")
def fill(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAccount,
    form: StaffForm,
) -> Response:
    """Fill in a reserved URN: its first location, if given, and metadata; it is active."""
    urn = _urn(request, "/fill")

    def act(principal: Principal) -> object:
        found = [location_of(form)] if form.get("url", "").strip() else []
        return services.records.put(principal, urn, found, metadata_of(form), overwrite=False)

    return _acted(request, services, sessions, account, urn, act, "url", form)


@router.post(RECORD + "/locations/{kind}", name="staff-locations")
def edit_locations(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAccount,
    form: StaffForm,
    kind: str,
) -> Response:
    """Add a location, or remove or move the one at the form's ``url``: one change a post."""
    urn = _urn(request, f"/locations/{kind}")

    def act(principal: Principal) -> Record:
        if kind not in ("add", "remove", "up", "down"):
            raise UnacceptableError(f"no such change of locations: {kind}")
        added = location_of(form) if kind == "add" else None
        edit = LocationEdit(kind, form.get("url", "").strip(), added)  # type: ignore[arg-type]
        return services.grants.edit_locations(principal, urn, edit)

    field = "url" if kind == "add" else "locations"
    return _acted(request, services, sessions, account, urn, act, field, form)


@router.get(RECORD + "/deactivate")
def deactivate_form(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAccount,
    q: Annotated[str, Query(max_length=2000)] = "",
) -> HTMLResponse:
    """The deactivation form; with ``q``, the records whose URN or title it names, to pick
    as successors."""
    return _deactivate_page(request, services, sessions, account, _urn(request, "/deactivate"), q)


def _deactivate_page(
    request: Request,
    services: Services,
    sessions: Sessions,
    account: Account,
    urn: str,
    q: str,
    ticked: Sequence[str] = (),
    **context: Any,
) -> HTMLResponse:
    """The deactivation form of ``urn``: the successors ``ticked`` (kept across searches) and,
    unticked after them, those ``q`` finds."""
    record = services.overview.held(account.principal(), urn)
    found: list[Record] = []
    error = context.pop("error", None)
    if q.strip():
        by: Literal["urn", "title"] = "urn" if q.strip()[:4].lower() == "urn:" else "title"
        try:
            reader = services.access.reader(account.principal())
            found, _ = services.overview.search(by, q.strip(), reader=reader)
        except ResolverError as refused:
            error = error or beside(refused, "q")
    page = "staff/deactivate.html"
    return staff_page(
        request,
        sessions,
        page,
        error=error,
        account=account,
        record=record,
        q=q,
        found=found,
        options=[
            *((successor, "", True) for successor in ticked),
            *(
                (other.urn, _title(other), False)
                for other in found
                if other.key != record.key and other.urn not in ticked
            ),
        ],
        **context,
    )


def _title(record: Record) -> str:
    title = record.metadata.get("title")
    return title if isinstance(title, str) else ""


@router.post(RECORD + "/deactivate")
def deactivate(
    request: Request,
    services: ServiceDep,
    sessions: StaffSessions,
    account: StaffAccount,
    form: StaffForm,
) -> Response:
    """Deactivate the record with the form's note and successors: those ticked among the
    matches (``successor-N``) and those typed in (``successors``, one a line). With ``find``
    (the search's button), the form again with the matches of ``q``, what was ticked and
    typed kept."""
    urn = _urn(request, "/deactivate")
    ticked = list(dict.fromkeys(v for name, v in form.items() if name.startswith("successor-")))
    typed = form.get("successors", "").split()
    values = {"note": form.get("note", ""), "successors": "\n".join(typed)}
    again = partial(_deactivate_page, request, services, sessions, account, urn, form.get("q", ""))
    if form.get("find"):
        return again(ticked, values=values)
    try:
        note = form.get("note", "").strip() or None
        successors = list(dict.fromkeys([*ticked, *typed]))
        services.records.deactivate(account.principal(), urn, note, successors)
    except ResolverError as error:
        return again(ticked, error=beside(error, "successors"), values=values)
    return see_other(request, record_path(urn))


@router.get(RECORD)
def record_page(
    request: Request, services: ServiceDep, sessions: StaffSessions, account: StaffAccount
) -> HTMLResponse:
    return _page(request, services, sessions, account, _urn(request))
