"""Resolution: ``GET /{urn}`` (RFC 8458 §4.4) and RFC 2483's services, at
``/uri-res/{service}?{urn}`` (RFC 2169) and at ``/{urn}?s={service}``.

Resolution's own routes are plain Starlette routes, async, tried before every other route
(:data:`FIRST_ROUTES`); they answer what the front (:mod:`urnkit.resolver.web.front`) leaves:
queries, JSON, answers other than a redirect. The :data:`router`'s routes answer the paths
they leave (not beginning with ``urn:``) and describe resolution in /openapi.json.
"""

import asyncio
from collections.abc import Sequence
from typing import Any, NoReturn

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
from fastapi.routing import APIRoute
from markupsafe import Markup
from starlette.routing import BaseRoute, Match, Route
from starlette.types import Scope
from werkzeug.datastructures import MIMEAccept

from urnkit.resolver.domain import (
    InvalidURNError,
    Location,
    NotAcceptableError,
    NotFoundError,
    Record,
    UnacceptableError,
    parse_urn,
    with_q_component,
)
from urnkit.resolver.domain.descriptions import Description, current_locations
from urnkit.resolver.domain.versions import ArchivedCopy, Versions
from urnkit.resolver.representations.dublin_core import oai_dc_xml
from urnkit.resolver.representations.memento import (
    VARY,
    archive_links,
    archived_json,
    timegate_links,
)
from urnkit.resolver.representations.meta_tags import DC_SCHEMA, meta_tags
from urnkit.resolver.representations.rfc2483 import (
    ALIASES,
    LINKSET_SERVICE,
    REQUESTS,
    accept_header,
    equivalent,
    location_comment,
    negotiate,
    ranked,
    request_name,
    requested,
    uri_list,
)
from urnkit.resolver.representations.shapes import history_json, public_record_json, record_json
from urnkit.resolver.representations.signposting import (
    LINKSET,
    LINKSET_TEXT,
    LINKSET_TYPES,
    json_ld,
    link_elements,
    link_header,
    linkset,
    linkset_text,
    record_links,
    record_signposts,
    script_json,
)
from urnkit.resolver.services import Services
from urnkit.resolver.services.resolution import Resolution
from urnkit.resolver.web import citing
from urnkit.resolver.web.caching import NO_STORE, validated
from urnkit.resolver.web.deps import client_of, decoded_if_whole, raw_urn
from urnkit.resolver.web.front import (
    FOUND,
    NOT_ACCEPTABLE,
    REPRESENTED,
    XML_TYPES,
    base_url,
    preferred_json,
    redirect,
    resolution_links,
)
from urnkit.resolver.web.metrics import Metrics
from urnkit.resolver.web.problems import PROBLEM, problem_body, problem_responses, wants_html
from urnkit.resolver.web.routes.time_travel import requested_moment, timegate
from urnkit.resolver.web.templating import html_page

_VARY = f"Accept, {VARY}"  # a record here: /{urn} is its own TimeGate (RFC 7089 §4.1)


class _URNRoute(Route):
    """A route that matches only paths beginning with ``/urn:`` (in any case), which no other
    route takes: resolution can then be tried before the API's routes instead of after all of
    them, and skip FastAPI's parameter handling, which cost more than the resolution itself
    (benchmarks/resolve_bench.py)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child_scope = super().matches(scope)
        if match is not Match.NONE and child_scope["path_params"]["urn"][:4].lower() != "urn:":
            return Match.NONE, {}
        child_scope["route"] = self  # as FastAPI's routes do: /metrics counts by route
        return match, child_scope


async def resolve_request(request: Request) -> Response:
    """The answer to ``GET`` or ``HEAD /{urn}``, or to the RFC 2483 service its query names:
    the request read (the URN, the query, the client's address, what ``Accept`` prefers),
    one call of the services, and what they return written out. What the front found
    (``FOUND``) is answered without resolving again."""
    text = raw_urn(request.scope, "/")
    query = request.scope.get("query_string", b"").decode("latin-1")
    services: Services = request.app.state.services
    client = client_of(request.scope)
    if query:
        if query[:1] in ("+", "="):
            text = f"{text}?{query}"
        chosen = requested(query)
        if chosen is not None and chosen != "I=I":  # I=I needs two URNs: the default
            return await answer_service(request, chosen, text)
        if (cite := citing.requested_format(query)) is not None:  # fix/cite: ?format=
            description = await asyncio.to_thread(
                services.resolution.describe, text, client, "", wants_html(request)
            )
            return await asyncio.to_thread(_described_record, request, description, cite)
    moment = requested_moment(request)  # RFC 7089 §4.1: /{urn} is its own TimeGate
    resolution = await _resolved(request, text, client, moment is not None)
    if isinstance(resolution, Versions):
        assert moment is not None
        return timegate(request, resolution, moment)
    if resolution.kind == "choices":
        return _choices(request, resolution)
    wanted = preferred_json(request.scope, resolution.media_types)
    if wanted == NOT_ACCEPTABLE and resolution.key:  # fix/cite: nothing /{urn} gives
        citing.not_acceptable()
    if resolution.kind == "redirect" and (not resolution.key or wanted is None):
        cache_control = NO_STORE if resolution.routed else request.app.state.cache.header(302)
        return redirect(request.scope, resolution.target or "", cache_control, resolution)
    return await asyncio.to_thread(_written, request, resolution, wanted)


async def _resolved(
    request: Request, text: str, client: str | None, dated: bool
) -> Resolution | Versions:
    """What the front found (``FOUND``) or, if it did not run, the services' one answer
    (:meth:`~urnkit.resolver.services.resolution.ResolutionService.answer_async`), described
    when ``Accept`` may prefer a format of the record to its redirect, a URN found nowhere
    with the registered URNs nearest it for a reader's page; for a request naming a moment
    (``dated``), the record's versions if it is here
    (:meth:`~urnkit.resolver.services.resolution.ResolutionService.timegate_async`).
    Resolutions are counted by kind."""
    metrics: Metrics = request.app.state.metrics
    try:
        resolution = request.scope.get(FOUND)  # by the front (redirect_front), if it ran
        if isinstance(resolution, Exception):
            raise resolution
        if resolution is None:
            services: Services = request.app.state.services
            described = preferred_json(request.scope) is not None
            reader = wants_html(request)
            if dated:
                resolution = await services.resolution.timegate_async(
                    text, client, described, reader
                )
                if isinstance(resolution, Versions):  # the TimeGate's: not a resolution
                    return resolution
            else:
                resolution = await services.resolution.answer_async(text, client, described, reader)
    except NotFoundError:
        metrics.resolved("not_found")
        raise
    except (InvalidURNError, UnacceptableError):
        metrics.resolved("invalid")
        raise
    except Exception:
        metrics.resolved("error")
        raise
    metrics.resolved(resolution.kind)
    assert isinstance(resolution, Resolution)
    return resolution


def _written(request: Request, resolution: Resolution, wanted: str | None) -> Response:
    """A record's answer other than its redirect, written from the ``resolution`` alone: the
    format ``wanted`` (its linkset, its locations, a citation, JSON-LD, Dublin Core), the 410
    problem, or the record as JSON or as its page."""
    description = resolution.description
    assert description is not None  # a record of ours, not redirected: described
    if wanted in LINKSET_TYPES:  # a record of ours: its signposts (RFC 9264 §4.1, §4.2)
        return answer_linkset(request, description, True)
    if wanted == "text/uri-list":  # fix/cite: the locations, as I2Ls lists them
        listed = _service_answer(request, "I2Ls", str(resolution.urn), description)
        listed.headers["Vary"] = "Accept"
        return listed
    if wanted in REPRESENTED:  # fix/cite: citations, JSON-LD, Dublin Core
        cite = citing.accepted(request.headers.get("accept"), wanted)
        return _described_record(request, description, cite)
    if resolution.kind == "gone" and not wants_html(request):
        record = description.record
        signposts = link_header(record_signposts(base_url(request.scope), record, ()))
        links = resolution_links(
            request.scope, (), record.successors, resolution.predecessors, signposts, record.key
        )
        headers = {"Link": links, "Vary": _VARY}
        if resolution.routed:
            headers["Cache-Control"] = NO_STORE.decode()
        return _gone_problem(record, resolution.predecessors, headers)
    return _shown_record(request, resolution, description)


_CHOICES_TYPES = ("text/html", "text/uri-list", "application/json")


def _choices(request: Request, resolution: Resolution) -> Response:
    """The answer for a URN of another namespace that several records here carry: 300
    Multiple Choices (RFC 9110 §15.4.1), their URNs as ``text/uri-list`` (RFC 2483 §5), as JSON
    or, by default, as a page listing them."""
    identifier = resolution.urn.assigned_name
    chosen = negotiate(accept_header(request.headers.get("accept")), _CHOICES_TYPES)
    if chosen is None:
        raise NotAcceptableError(
            f"{identifier} is carried by several records, listed as "
            f"{', '.join(_CHOICES_TYPES)}; the request's Accept takes none of them",
            available=list(_CHOICES_TYPES),
        )
    headers = {"Vary": "Accept"}
    if chosen == "text/uri-list":
        entries: list[tuple[str | None, str | None]] = [(None, f"the URNs carrying {identifier}")]
        entries += [(urn, title) for urn, title in resolution.choices]
        response = Response(uri_list(entries), 300, headers, "text/uri-list; charset=utf-8")
        return validated(request, response, None)
    if chosen == "application/json":
        urns = [{"urn": urn, "title": title} for urn, title in resolution.choices]
        body = {"identifier": identifier, "records": urns}
        return validated(request, JSONResponse(body, 300, headers), None)
    page = html_page(
        request, "choices.html", 300, headers, identifier=identifier, choices=resolution.choices
    )
    return validated(request, page, None)


def _headers(
    request: Request, description: Description, alternates: Sequence[str] = ()
) -> dict[str, str]:
    """The headers of an answer about a record of ours: its ``Link`` header (with the
    ``alternates`` it would redirect to, if any), ``Vary``, and ``no-store`` when what it
    shows depends on the client's address."""
    headers = {"Link": _record_links(request.scope, description, alternates), "Vary": _VARY}
    if description.restricted:
        headers["Cache-Control"] = NO_STORE.decode()
    return headers


def _described_record(
    request: Request, description: Description, represented: tuple[str, dict[str, str]]
) -> Response:
    """A record as one of the ``represented`` formats (a media type and its parameters:
    :mod:`urnkit.resolver.web.citing`), Dublin Core among them."""
    headers = _headers(request, description)
    if represented[0] in XML_TYPES:
        answer = _xml_response(description.record, represented[0], headers)
    else:
        answer = citing.represented(request, description, *represented, headers)
    return validated(request, answer, description.modified)


def _shown_record(request: Request, resolution: Resolution, description: Description) -> Response:
    """A record as resolution shows it when it does not redirect (the ``alternates`` it would
    redirect to, if any): as JSON to a client that prefers it, else as its page (RFC 8458
    §4.5's surrogate; 410 when deactivated); with the archived copies of its locations when
    every one is broken (Robust Links)."""
    alternates, copies = resolution.alternates, resolution.archived
    headers = _headers(request, description, alternates)
    if resolution.kind == "gone":
        return _record_page(request, description, 410, headers, alternates)
    if preferred_json(request.scope):
        if copies:
            headers["Link"] += ", " + link_header(archive_links(copies))
        record = description.record
        body = public_record_json(record, description.predecessors) | archived_json(copies)
        return validated(request, JSONResponse(body, headers=headers), description.modified)
    page = _record_page(request, description, 200, headers, alternates, copies)
    return validated(request, page, description.modified)


def _record_links(scope: Scope, description: Description, alternates: Sequence[str]) -> str:
    """The ``Link`` header of an answer about a record of ours: the ``alternates``, its
    successors and predecessors, and its signposts (FAIR Signposting)."""
    record = description.record
    signposts = link_header(record_signposts(base_url(scope), record, description.usable))
    return resolution_links(
        scope, alternates, record.successors, description.predecessors, signposts, record.key
    )


def answer_linkset(request: Request, description: Description, negotiated: bool) -> Response:
    """The links of a record's answers as a linkset: the locations it leads to, its
    successors and predecessors, and its signposts, their context its ``cite-as`` URL; as
    JSON (RFC 9264 §4.2) or, where ``Accept`` prefers it, in the ``Link`` header's form
    (§4.1). ``negotiated`` (chosen by ``Accept`` on ``/{urn}``) or a choice of forms says
    ``Vary: Accept``."""
    record = description.record
    base = base_url(request.scope)
    usable = description.usable
    alternates = [location.url for location in usable]
    links = record_links(base, record, usable, description.predecessors, alternates)
    links += timegate_links(base, record.key)  # RFC 7089 §2.2, as on /{urn}
    accept = request.headers.get("accept")
    form = negotiate(accept_header(accept), LINKSET_TYPES)
    if form is None:
        raise NotAcceptableError(
            f"a linkset is given as {' or '.join(LINKSET_TYPES)} (RFC 9264 §4); the "
            "request's Accept takes neither",
            available=list(LINKSET_TYPES),
        )
    headers = {"Vary": _VARY} if negotiated or accept else {}
    if description.restricted:  # what it shows depends on the client's address
        headers["Cache-Control"] = NO_STORE.decode()
    anchor = base + record.key
    if form == LINKSET_TEXT:
        text_form = linkset_text(anchor, links)
        body: Response = Response(text_form, media_type=LINKSET_TEXT, headers=headers)
    else:
        body = JSONResponse(linkset(anchor, links), media_type=LINKSET, headers=headers)
    return validated(request, body, description.modified)


async def answer_service(request: Request, name: str, text: str) -> Response:
    """The answer of the RFC 2483 service ``name`` for the URN in ``text`` (not I=I), or of
    :data:`LINKSET_SERVICE`: what the services describe of it, read once in a worker thread
    (:meth:`~urnkit.resolver.services.resolution.ResolutionService.describe`), then written."""
    services: Services = request.app.state.services
    client = client_of(request.scope)
    description = await asyncio.to_thread(
        services.resolution.describe, text, client, name, wants_html(request)
    )
    if name == LINKSET_SERVICE:
        return await asyncio.to_thread(answer_linkset, request, description, False)
    return await asyncio.to_thread(_service_answer, request, name, text, description)


def _service_answer(request: Request, name: str, text: str, description: Description) -> Response:
    """The answer of the RFC 2483 service ``name`` for the URN in ``text``, written from its
    ``description``."""
    urn = parse_urn(text)
    record = description.record
    alternates = [loc.url for loc in description.usable]
    if urn.q_component:  # RFC 8141 §2.3.2: passed to every locator
        alternates = [with_q_component(url, urn.q_component) for url in alternates]
    headers = {"Link": _record_links(request.scope, description, alternates)}
    if description.restricted:  # what it shows depends on the client's address
        headers["Cache-Control"] = NO_STORE.decode()
    if name in ("I2L", "I2Ls", "I2R", "I2Rs") and record.status == "deactivated":
        if wants_html(request):
            return _record_page(request, description, 410, headers)
        return _gone_problem(record, description.predecessors, headers)
    accept = accept_header(request.headers.get("accept"))
    if name in ("I2R", "I2Rs"):
        headers["Vary"] = "Accept"
    if name in ("I2L", "I2R"):
        chosen = _acceptable(description, accept, by_accept=name == "I2R")
        return _located(description, chosen, urn.q_component or "", headers)
    if name in ("I2Ls", "I2Rs"):
        chosen = _acceptable(description, accept, by_accept=name == "I2Rs")
        listed = _listed(description, chosen, urn.q_component or "", headers, name == "I2Ls")
        return validated(request, listed, description.modified)
    if name == "I2C":
        described = _described(request, description, accept, headers, alternates)
        return validated(request, described, description.modified)
    if name == "I2Cs":
        xml = _xml_response(record, "application/xml", headers)
        return validated(request, xml, description.modified)
    # I2N and I2Ns follow other records too: their ETag only says whether the answer changed.
    if name == "I2N":
        return validated(request, _uri_list_response([(description.current, None)], headers), None)
    assert name == "I2Ns"
    related: list[tuple[str | None, str | None]] = list(description.related)
    return validated(request, _uri_list_response(related, headers), None)


def _acceptable(
    description: Description, accept: MIMEAccept, by_accept: bool
) -> Sequence[Location]:
    """The usable locations (I2L, I2Ls), or those ``accept`` takes, preferred first (``by_accept``:
    I2R, I2Rs); :class:`NotAcceptableError` if it takes none of those there are."""
    if not by_accept:
        return description.usable
    chosen = ranked(description, accept)
    if description.usable and not chosen:
        _not_acceptable(description)
    return chosen


def _located(
    description: Description,
    chosen: Sequence[Location],
    q_component: str,
    headers: dict[str, str],
) -> Response:
    """I2L's and I2R's answer: a redirect to the first location ``chosen``."""
    record = description.record
    if not description.usable:
        raise NotFoundError(
            f"{record.urn} is registered ({record.status}) but has no location at "
            "present: GET /{urn} gives what is known of it",
            record_status=record.status,
        )
    target = with_q_component(chosen[0].url, q_component)
    return RedirectResponse(target, status_code=302, headers=headers)


def _listed(
    description: Description,
    chosen: Sequence[Location],
    q_component: str,
    headers: dict[str, str],
    broken_too: bool,
) -> Response:
    """I2Ls's and I2Rs's answer: the URN, then the locations ``chosen``, as a
    ``text/uri-list``; ``broken_too`` (I2Ls) adds the broken ones as comments."""
    record = description.record
    entries: list[tuple[str | None, str | None]] = [(None, record.urn)]
    entries += [(with_q_component(loc.url, q_component), location_comment(loc)) for loc in chosen]
    if broken_too:  # the rest, as comments: not to be used now
        entries += [
            (None, f"{entry.state} since {entry.since:%Y-%m-%d}: {entry.location.url}")
            for entry in description.locations
            if entry.state == "broken" and record.status == "active"
        ]
    return _uri_list_response(entries, headers)


def _described(
    request: Request,
    description: Description,
    accept: MIMEAccept,
    headers: dict[str, str],
    alternates: Sequence[str],
) -> Response:
    """I2C's answer: the record as JSON, as its page or as Dublin Core, as ``accept`` prefers."""
    record = description.record
    headers["Vary"] = "Accept"
    media_type = negotiate(accept, ("application/json", "text/html", *XML_TYPES))
    if media_type is None:
        raise NotAcceptableError(
            "I2C describes a URN as application/json, text/html or application/xml "
            "(Dublin Core); the request's Accept takes none of them",
            available=["application/json", "text/html", *XML_TYPES],
        )
    if media_type == "text/html":
        return _record_page(request, description, 200, headers, alternates)
    if media_type == "application/json":
        return JSONResponse(public_record_json(record, description.predecessors), headers=headers)
    return _xml_response(record, media_type, headers)


async def uri_res_request(request: Request) -> Response:
    """RFC 2169 §2's convention: ``/uri-res/{service}?{urn}``, the query the URN as sent
    (RFC 2483 §4 services; I=I takes ``{urn}&{urn}``)."""
    name = request.path_params["name"]
    chosen = request_name(name)
    if chosen is None:
        raise NotFoundError(
            f"no resolution service is called {name!r} here; the services are "
            f"{', '.join(REQUESTS)} (RFC 2483 §4), also under their RFC 2169 names "
            f"{', '.join(ALIASES)}",
            services=list(REQUESTS),
            aliases=ALIASES,
        )
    text = decoded_if_whole(request.scope.get("query_string", b"").decode("latin-1"))
    if not text:
        raise InvalidURNError(
            f"no URN: the query is the URN, as in /uri-res/{chosen}?urn:nbn:fi-123 (RFC 2169 §2)",
            input="",
            position=0,
        )
    if chosen == "I=I":
        equal = equivalent(text)
        return PlainTextResponse("true" if equal else "false")
    return await answer_service(request, chosen, text)


def _gone_problem(
    record: Record, predecessors: Sequence[str], headers: dict[str, str]
) -> JSONResponse:
    detail = f"{record.urn} is deactivated" + (
        f"; its successors: {', '.join(record.successors)}" if record.successors else ""
    )
    body = problem_body(410, "Gone", detail) | {"record": public_record_json(record, predecessors)}
    return JSONResponse(body, status_code=410, media_type=PROBLEM, headers=headers)


def _record_page(
    request: Request,
    description: Description,
    status: int,
    headers: dict[str, str],
    alternates: Sequence[str] = (),
    copies: Sequence[ArchivedCopy] = (),
) -> HTMLResponse:
    """The page of a URN (RFC 8458 §4.5's surrogate, the 410 page, I2C's landing page): a
    landing page, typed as schema.org's ``AboutPage`` and described by its JSON-LD; its links
    (the ``alternates``, :func:`record_links`, its TimeGate and TimeMaps, the archived
    ``copies`` of its locations) are both its ``Link`` header and its ``<link>`` elements
    (FAIR Signposting, RFC 7089 §2.2, Robust Links)."""
    base, record = base_url(request.scope), description.record
    links = record_links(
        base, record, description.usable, description.predecessors, alternates, page=True
    )
    links += timegate_links(base, record.key) + archive_links(copies)
    headers = {**headers, "Link": link_header(links)}
    metadata = json_ld(base, record, description.usable)
    return html_page(
        request,
        "record.html",
        status,
        headers,
        json_ld=Markup(script_json(metadata)),  # escaped for a <script> element
        signposts=Markup(link_elements(links)),  # escaped by link_elements
        meta=meta_tags(record, base + record.key, description.usable),
        dc_schema=DC_SCHEMA,
        record=record_json(description.record),
        locations=[
            {
                "url": entry.location.url,
                "label": entry.location.label,
                "media_type": entry.location.media_type,
                "priority": entry.location.priority,
                "state": entry.state,
                "since": None if entry.since is None else entry.since.isoformat(),
            }
            for entry in description.locations
            if entry.location in current_locations(description.record)
        ],
        predecessors=sorted(description.predecessors),
        history=[history_json(entry) for entry in description.history],
        withheld=description.withheld,
        archived=archived_json(copies).get("archived", ()),
    )


def _not_acceptable(description: Description) -> NoReturn:
    types = sorted({loc.media_type or "(not recorded)" for loc in description.usable})
    raise NotAcceptableError(
        f"the locations of {description.record.urn} are of the media types {', '.join(types)}; "
        "the request's Accept takes none of them",
        available=types,
    )


def _uri_list_response(
    entries: list[tuple[str | None, str | None]], headers: dict[str, str]
) -> Response:
    return Response(uri_list(entries), media_type="text/uri-list; charset=utf-8", headers=headers)


def _xml_response(record: Record, media_type: str, headers: dict[str, str]) -> Response:
    return Response(oai_dc_xml(record), media_type=f"{media_type}; charset=utf-8", headers=headers)


async def resolve(urn: str, request: Request) -> Response:
    """Resolve a URN (RFC 8458 §4.4). An HTTP query beginning with ``=`` is the URN's
    q-component and is appended to the location's query (RFC 8141 §2.3.2); one beginning
    with ``+`` is an r-component (ending at ``?=``). Its directive ``s=`` (or the query's,
    rfc2141bis §2.3.1) names an RFC 2483 service; the rest is ignored."""
    return await resolve_request(request)


# Tried before every other route, in this order: create_app puts them first.
FIRST_ROUTES: tuple[BaseRoute, ...] = (
    _URNRoute("/{urn:path}", resolve_request, methods=["GET", "HEAD"]),
    Route("/uri-res/{name}", uri_res_request, methods=["GET", "HEAD"]),
)

RESOLUTION_RESPONSES: dict[int | str, dict[str, Any]] = {
    **problem_responses(400, 404, 406),
    200: {
        "description": "A page of the record's metadata (RFC 8458 §4.5); or, as Accept "
        "prefers (or ?format=), the record as JSON, its linkset, JSON-LD, Dublin Core, "
        "text/uri-list, or a citation: text/x-bibliography (style=, locale=), "
        "application/x-bibtex, application/x-research-info-systems, "
        "application/vnd.citationstyles.csl+json (docs/resolution.md)"
    },
    300: {
        "description": "Multiple Choices: a URN of another namespace (urn:isbn:…) that several "
        "records carry in metadata.identifiers; their URN:NBNs as a page, text/uri-list or JSON"
    },
    302: {"description": "Found: the highest-priority location; Link names them all"},
    410: {"description": "Gone: deactivated; the Link headers name its successors"},
}


class _ResolutionRoute(APIRoute):
    """Resolution's catch-all route, which leaves the API's paths alone: a method a route of
    ``/api/`` does not take is answered 405 with the methods it does (RFC 9110 §15.5.6), not
    400 "Not a URN"."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["path"].startswith("/api/"):
            return Match.NONE, {}
        return super().matches(scope)


router = APIRouter(route_class=_ResolutionRoute)
router.add_api_route(
    "/{urn:path}",
    resolve,
    methods=["GET", "HEAD"],
    response_class=Response,
    include_in_schema=False,
)
# /openapi.json shows GET and HEAD as two operations, each with an operationId of its own
# (one route for both gives them one, which OpenAPI forbids). These routes only describe:
# the route above, added first, answers every request to the path that _URNRoute leaves,
# and its 405s say "Allow: GET, HEAD" (as _URNRoute's do).
for _method in ("GET", "HEAD"):
    router.add_api_route(
        "/{urn:path}",
        resolve,
        methods=[_method],
        response_class=Response,
        responses=RESOLUTION_RESPONSES,
        tags=["resolution"],
    )
