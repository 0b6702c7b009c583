"""Time travel (RFC 7089 Memento): a record's versions at ``/memento/{14 digits}/{urn}``, its
TimeMaps at ``/timemap/link/{urn}`` and ``/timemap/json/{urn}``, and datetime negotiation on
``/{urn}`` (:func:`timegate`, which resolution's route writes from the versions its one call
of the services gives). Formats:
:mod:`~urnkit.resolver.representations.memento`; versions:
:mod:`~urnkit.resolver.services.time_travel`.
"""

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse

from urnkit.resolver.domain import NotFoundError
from urnkit.resolver.domain.descriptions import (
    Description,
    LocationState,
    current_locations,
    presented,
)
from urnkit.resolver.domain.versions import (
    InvalidDatetimeError,
    Versions,
    location_then,
    record_then,
)
from urnkit.resolver.representations.dublin_core import oai_dc_xml
from urnkit.resolver.representations.memento import (
    LINK_FORMAT,
    VARY,
    accept_datetime,
    http_date,
    memento_links,
    memento_url,
    pages,
    stamped,
    timemap_json,
    timemap_link_format,
)
from urnkit.resolver.representations.rfc2483 import location_comment, uri_list
from urnkit.resolver.representations.signposting import (
    LINKSET,
    LINKSET_TEXT,
    LINKSET_TYPES,
    link_header,
    linkset,
    linkset_text,
    record_links,
)
from urnkit.resolver.services import Services
from urnkit.resolver.web import citing
from urnkit.resolver.web.caching import NO_STORE
from urnkit.resolver.web.deps import client_of, raw_urn
from urnkit.resolver.web.front import NOT_ACCEPTABLE, XML_TYPES, base_url, preferred_json
from urnkit.resolver.web.problems import problem_responses
from urnkit.resolver.web.templating import html_page

router = APIRouter(tags=["time travel"])


def _versions(request: Request, text: str) -> Versions:
    """The versions of the record of ``text`` as the client may see them: one call of the
    services."""
    services: Services = request.app.state.services
    return services.resolution.versions(text, client_of(request.scope))


def _cache_control(request: Request, versions: Versions) -> str:
    """A record's: ``no-store`` when what it shows depends on the client's address."""
    if versions.restricted:
        return NO_STORE.decode()
    return str(request.app.state.cache.header(200).decode())


def requested_moment(request: Request) -> datetime | None:
    """The moment a request's ``Accept-Datetime`` names (RFC 7089 §2.1.1), None without the
    header; :class:`InvalidDatetimeError` (400) for a malformed value (§4.5.3), before the
    services are asked anything."""
    value = request.headers.get("accept-datetime")
    if value is None:
        return None
    try:
        return accept_datetime(value)
    except ValueError as error:
        raise InvalidDatetimeError(str(error), header="Accept-Datetime") from None


def timegate(request: Request, versions: Versions, moment: datetime) -> Response:
    """The TimeGate's answer (RFC 7089 §4.1.1, 302-style) to a request for ``/{urn}`` naming
    ``moment`` (:func:`requested_moment`), written from the record's ``versions``: a redirect
    to the version in force then (the first, for a moment before the record existed). A URN
    no record here has is resolved as ever (forwarding): the services' one call decides."""
    index = versions.in_force(moment)
    chosen = versions.entries[index]
    base = base_url(request.scope)
    headers = {
        "Link": link_header(memento_links(base, versions, index)),
        "Vary": f"Accept, {VARY}",
        "Cache-Control": NO_STORE.decode() if versions.restricted else "no-cache",
    }
    return RedirectResponse(memento_url(base, versions.urn, chosen.at), 302, headers)


@router.get(
    "/memento/{datetime}/{urn:path}",
    responses=problem_responses(400, 404, 406)
    | {302: {"description": "The location resolution chose then, or the version then"}},
)
def memento(request: Request, datetime: str, urn: str) -> Response:
    """The version of a URN's record that came into force at ``datetime`` (14 digits, UTC), a
    Memento (RFC 7089 §4.1.2): in what ``Accept`` prefers of what ``/{urn}`` gives (JSON, the
    linkset, the locations then as a ``text/uri-list``, Dublin Core, citations, JSON-LD; 406
    for none), else as resolution answered then (a redirect to the location chosen then, or
    its page; 410 when deactivated). Another moment is redirected to the version in force."""
    moment = stamped(datetime)
    if moment is None:
        raise InvalidDatetimeError(f"{datetime!r} is not a moment as 14 digits (UTC)")
    text = raw_urn(request.scope, f"/memento/{datetime}/")
    versions = _versions(request, text)
    base = base_url(request.scope)
    index = versions.index_at(moment)
    if index is None:
        at = versions.entries[versions.in_force(moment)].at
        headers = {"Cache-Control": _cache_control(request, versions)}
        return RedirectResponse(memento_url(base, versions.urn, at), 302, headers)
    entry = versions.entries[index]
    headers = {
        "Memento-Datetime": http_date(entry.at),
        "Link": link_header(memento_links(base, versions, index)),
        "Vary": "Accept",
        "Cache-Control": _cache_control(request, versions),
    }
    wanted = preferred_json(request.scope)
    if wanted == "application/json":  # as the API showed it then, less former locations
        shown = dict(entry.record)
        if not current_locations(record_then(entry)):
            shown["locations"] = []
        return JSONResponse(shown, headers=headers)
    if wanted is not None:
        return _represented(request, versions, index, wanted, headers)
    target = location_then(entry.record)
    if target is not None:
        return RedirectResponse(target, 302, headers)
    status = 410 if entry.record.get("status") == "deactivated" else 200
    return _memento_page(request, versions, index, status, headers)


def _represented(
    request: Request, versions: Versions, index: int, wanted: str, headers: dict[str, str]
) -> Response:
    """Version ``index`` in the form ``Accept`` prefers (chosen as on ``/{urn}``): a linkset,
    its locations then as a ``text/uri-list``, Dublin Core, a citation or JSON-LD; 406 for
    none. A deactivated version's locations are former ones, none presented as current."""
    if wanted == NOT_ACCEPTABLE:
        citing.not_acceptable("/memento/{datetime}/{urn}")
    entry = versions.entries[index]
    record = presented(record_then(entry))
    base = base_url(request.scope)
    if wanted in LINKSET_TYPES:
        urls = [location.url for location in record.locations]
        links = record_links(base, record, record.locations, (), urls)
        links += memento_links(base, versions, index)
        anchor = memento_url(base, versions.urn, entry.at)
        if wanted == LINKSET_TEXT:
            return Response(linkset_text(anchor, links), 200, headers, LINKSET_TEXT)
        return JSONResponse(linkset(anchor, links), 200, headers, media_type=LINKSET)
    if wanted == "text/uri-list":  # as I2Ls lists them then
        entries = [(None, record.urn)] + [
            (loc.url, location_comment(loc)) for loc in record.locations
        ]
        return Response(uri_list(entries), 200, headers, "text/uri-list; charset=utf-8")
    if wanted in XML_TYPES:
        return Response(oai_dc_xml(record), 200, headers, f"{wanted}; charset=utf-8")
    states = tuple(LocationState(location) for location in record.locations)
    description = Description(record, states, (), (), entry.at)
    cite = citing.accepted(request.headers.get("accept"), wanted)
    return citing.represented(request, description, *cite, headers)


def _memento_page(
    request: Request, versions: Versions, index: int, status: int, headers: dict[str, str]
) -> Response:
    """A version's landing page: the record as it was, marked as a Memento."""
    entry = versions.entries[index]
    record = dict(entry.record)
    base = base_url(request.scope)
    return html_page(
        request,
        "record.html",
        status,
        headers,
        record=record,
        locations=[
            {**location, "state": None, "since": None} for location in record.get("locations", [])
        ],
        predecessors=[],
        history=[],
        withheld=(),
        memento={
            "datetime": entry.at.isoformat(),
            "present": base + versions.urn,
            "timemap": base + f"timemap/link/{versions.urn}",
        },
    )


@router.get(
    "/timemap/{form}/{urn:path}",
    responses=problem_responses(400, 404, 422)
    | {200: {"content": {LINK_FORMAT: {}, "application/json": {}}}},
)
def timemap(
    request: Request,
    form: Literal["link", "json"],
    urn: str,
    page: Annotated[int, Query(ge=1)] = 1,
) -> Response:
    """The TimeMap of a URN's record (RFC 7089 §5): every version with its datetime, as
    ``application/link-format`` (``link``) or JSON (``json``), in pages of 500 versions."""
    text = raw_urn(request.scope, f"/timemap/{form}/")
    versions = _versions(request, text)
    if page > len(pages(versions)):
        raise NotFoundError(f"the TimeMap of {versions.urn} has {len(pages(versions))} pages")
    base = base_url(request.scope)
    headers = {"Cache-Control": _cache_control(request, versions)}
    if form == "json":
        body: dict[str, Any] = timemap_json(base, versions, page)
        return JSONResponse(body, headers=headers)
    return Response(timemap_link_format(base, versions, page), 200, headers, LINK_FORMAT)
