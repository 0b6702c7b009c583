"""``/api/v1/urns``: the registration API's records (RFC 8458 §4.1: never deleted, only
deactivated)."""

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from urnkit.resolver.domain import PREFIX_PATTERN, Location, Record
from urnkit.resolver.representations.shapes import history_json, record_json
from urnkit.resolver.web.caching import REVALIDATE, validated
from urnkit.resolver.web.deps import (
    OPTIONAL_TOKEN,
    APIReader,
    AuthenticatedPrincipal,
    RawPathRoute,
    ServiceDep,
    URNPath,
)
from urnkit.resolver.web.problems import AUTHENTICATED, allowed_methods, problem, problem_responses
from urnkit.resolver.web.schemas import (
    BatchIn,
    BatchOut,
    DeactivateIn,
    HistoryOut,
    LocationModel,
    RecordIn,
    RecordOut,
    RecordPage,
)

router = APIRouter(tags=["records"], route_class=RawPathRoute)


def page_json(page: Sequence[Record], after: int | None) -> dict[str, Any]:
    """A page of records as :class:`RecordPage` shows it, with the cursor of the next page."""
    return {
        "records": [record_json(record) for record in page],
        "next_cursor": None if after is None else str(after),
    }


@router.get(
    "/api/v1/urns/{urn:path}/history",
    openapi_extra=OPTIONAL_TOKEN,
    response_model=HistoryOut,
    responses=problem_responses(400, 401, 404, 422),
)
def history(urn: URNPath, services: ServiceDep, request: Request, reader: APIReader) -> Response:
    """Every change to a record, oldest first (append-only); ``ETag`` and ``Last-Modified``
    for conditional requests (304). Locations restricted to a network are shown only to
    their holder's tokens and to admins."""
    record = services.records.get(urn)
    entries = services.records.history(urn, reader)
    body = JSONResponse({"urn": record.urn, "entries": [history_json(e) for e in entries]})
    modified = max([record.updated, *(entry.at for entry in entries)])
    return validated(request, body, modified, REVALIDATE)


@router.post(
    "/api/v1/urns/{urn:path}/deactivate",
    response_model=RecordOut,
    responses=problem_responses(400, 404, 409) | AUTHENTICATED,
)
def deactivate(
    urn: URNPath,
    body: DeactivateIn,
    who: AuthenticatedPrincipal,
    services: ServiceDep,
) -> dict[str, Any]:
    """Deactivate a URN (there is no delete, RFC 8458 §4.1): resolution answers 410 Gone
    and names the successors."""
    return record_json(services.records.deactivate(who, urn, body.note, body.successors))


@router.get(
    "/api/v1/urns/{urn:path}",
    openapi_extra=OPTIONAL_TOKEN,
    response_model=RecordOut,
    responses=problem_responses(400, 401, 404, 422),
)
def get_record(urn: URNPath, services: ServiceDep, request: Request, reader: APIReader) -> Response:
    """The record of a URN, found by namespace equivalence; ``ETag`` and ``Last-Modified``
    for conditional requests (304). Locations restricted to a network are shown only to
    their holder's tokens and to admins."""
    record = services.records.get(urn, reader)
    return validated(request, JSONResponse(record_json(record)), record.updated, REVALIDATE)


@router.put(
    "/api/v1/urns/{urn:path}",
    response_model=RecordOut,
    status_code=200,
    responses={201: {"model": RecordOut, "description": "Created"}}
    | problem_responses(400, 409)
    | AUTHENTICATED,
)
def put_record(
    urn: URNPath,
    body: RecordIn,
    who: AuthenticatedPrincipal,
    response: Response,
    services: ServiceDep,
) -> dict[str, Any]:
    """Create (201) or replace (200) the record of a URN under a delegated prefix."""
    found = [Location(**loc.model_dump()) for loc in body.locations]
    record, created = services.records.put(who, urn, found, body.metadata)
    response.status_code = 201 if created else 200
    return record_json(record)


@router.delete("/api/v1/urns/{urn:path}", include_in_schema=False)
def delete_record(request: Request) -> Response:
    """There is no delete: a URN is never deleted or reused (RFC 8458 §4.1)."""
    response = problem(
        request,
        405,
        "Method Not Allowed",
        "a URN is never deleted or reused (RFC 8458 §4.1): "
        "POST /api/v1/urns/{urn}/deactivate instead",
    )
    response.headers["Allow"] = ", ".join(allowed_methods(request.scope))
    return response


def merge_patch_body(request: Request) -> None:
    """415 unless the body is JSON (RFC 7396's application/merge-patch+json, or plain JSON)."""
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type not in ("application/merge-patch+json", "application/json"):
        raise HTTPException(
            415,
            "a PATCH body is a JSON merge patch: Content-Type application/merge-patch+json "
            "(RFC 7396)",
        )


@router.patch(
    "/api/v1/urns/{urn:path}",
    response_model=RecordOut,
    responses=problem_responses(400, 404, 409, 415) | AUTHENTICATED,
    dependencies=[Depends(merge_patch_body)],
)
def patch_record(
    urn: URNPath,
    patch: Annotated[dict[str, Any], Body(media_type="application/merge-patch+json")],
    who: AuthenticatedPrincipal,
    services: ServiceDep,
) -> dict[str, Any]:
    """Change a record's ``metadata`` or ``locations`` with a JSON merge patch (RFC 7396);
    ``"locations": null`` removes every location."""
    if patch.get("locations", ()) is None:  # RFC 7396 §1: null removes the member
        patch = patch | {"locations": []}
    if "locations" in patch:
        patch = patch | {"locations": _patched_locations(patch["locations"])}
    return record_json(services.records.patch(who, urn, patch))


def _patched_locations(locations: Any) -> list[Location]:
    """The ``locations`` of a merge patch, validated as PUT's are: a 422 like PUT's, not a 500."""
    if not isinstance(locations, list):
        raise RequestValidationError(
            [{"loc": ("body", "locations"), "msg": "must be a list", "type": "type_error"}]
        )
    found = []
    for number, loc in enumerate(locations):
        try:
            found.append(Location(**LocationModel.model_validate(loc).model_dump()))
        except ValidationError as error:
            where = ("body", "locations", number)
            raise RequestValidationError(
                [{**e, "loc": (*where, *e["loc"])} for e in error.errors()]
            ) from None
    return found


@router.get(
    "/api/v1/urns",
    openapi_extra=OPTIONAL_TOKEN,
    response_model=RecordPage,
    responses=problem_responses(401, 422),
)
def list_records(
    services: ServiceDep,
    reader: APIReader,
    prefix: Annotated[
        str | None,
        Query(max_length=200, examples=["fi:demo"], json_schema_extra={"pattern": PREFIX_PATTERN}),
    ] = None,
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """Records in registration order, under ``prefix`` (and its sub-namespaces) if given;
    locations restricted to a network shown only to their holder's tokens and to admins."""
    return page_json(*services.records.records(prefix, int(cursor or 0), limit, reader=reader))


@router.post(
    "/api/v1/urns:batch",
    response_model=BatchOut,
    responses=problem_responses(400, 404, 409) | AUTHENTICATED,
)
def batch(
    body: BatchIn,
    who: AuthenticatedPrincipal,
    services: ServiceDep,
    idempotency_key: Annotated[str | None, Header(max_length=255)] = None,
) -> Response:
    """Create or replace up to 10,000 records in one transaction: all or nothing. A retry
    with the same ``Idempotency-Key`` returns the first answer without writing again."""
    items = [
        (
            item.urn,
            [Location(**loc.model_dump()) for loc in item.locations],
            item.metadata,
        )
        for item in body.records
    ]
    status, answer = services.records.batch(who, items, idempotency_key)
    return JSONResponse(answer, status_code=status)
