"""The ASGI application: resolution at ``/{urn}``, the registration API under ``/api/v1``.

A thin adapter: it reads HTTP, calls :class:`~urnkit.resolver.services.Services`, and writes HTTP.
Errors are RFC 9457 problem details (``application/problem+json``), or a readable page when the
client asks for HTML. The URN is taken from the raw request path, so percent-encoded octets
reach the URN parser as they were sent (``%2F`` and ``/`` are different URNs, RFC 8141 §3).

Run it with ``urnkit serve``; servers import :func:`app_from_environment` as a factory.

>>> app = create_app(Services(Store("sqlite://")))
>>> app.title
'urnkit resolver'
"""

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from datetime import date
from http import HTTPStatus
from importlib.metadata import version
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal, NoReturn
from urllib.parse import parse_qsl, unquote

from fastapi import Body, Depends, FastAPI, Header, Path, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from urnkit.resolver.domain import (
    HarvestSource,
    InvalidURNError,
    Location,
    NotAcceptableError,
    NotFoundError,
    Principal,
    Record,
    ResolverError,
    UnacceptableError,
    parse_urn,
    with_q_component,
)
from urnkit.resolver.domain.dublin_core import oai_dc_xml
from urnkit.resolver.metrics import Metrics
from urnkit.resolver.pages import STATISTICS_DAYS, SearchBy, add_pages
from urnkit.resolver.services import Services
from urnkit.resolver.services.discovery import Discovery
from urnkit.resolver.services.harvest import Harvester
from urnkit.resolver.services.link_checker import with_periodic_checks
from urnkit.resolver.services.oai_repository import Repository
from urnkit.resolver.services.overview import MAX_STATISTICS_DAYS
from urnkit.resolver.services.records import MAX_BATCH, MAX_GENERATE
from urnkit.resolver.services.rfc2483 import (
    ALIASES,
    REQUESTS,
    Description,
    Rfc2483Requests,
    accept_header,
    link_header,
    negotiate,
    request_name,
    requested,
    uri_list,
    uri_reference,
)
from urnkit.resolver.services.shapes import (
    broken_link_json,
    forwarding_json,
    history_json,
    record_json,
)
from urnkit.resolver.settings import Settings
from urnkit.resolver.store import Store

PROBLEM = "application/problem+json"
_templates = Environment(
    loader=FileSystemLoader(FilePath(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
)


# --- the API's models: they make /openapi.json -------------------------------------------------


class LocationModel(BaseModel):
    """A location of the resource: lower priority numbers are tried first."""

    model_config = ConfigDict(extra="forbid")
    url: str = Field(min_length=1, max_length=4000, examples=["https://example.org/thesis.pdf"])
    priority: int = Field(1, ge=0, le=1_000_000)
    label: str | None = Field(None, max_length=1000)
    media_type: str | None = Field(None, max_length=255, examples=["application/pdf"])


class RecordIn(BaseModel):
    """What a registrant sends to create or replace a record."""

    model_config = ConfigDict(extra="forbid")
    locations: list[LocationModel] = Field(default_factory=list, max_length=100)
    metadata: dict[str, Any] = Field(
        default_factory=dict, examples=[{"title": "A thesis", "creators": ["Ann Author"]}]
    )


class BatchItem(RecordIn):
    """One record of a batch: its URN and what :class:`RecordIn` holds."""

    urn: str = Field(min_length=1, max_length=2000, examples=["urn:nbn:fi:demo-1"])


class BatchIn(BaseModel):
    """Up to 10,000 records, written all together or not at all."""

    model_config = ConfigDict(extra="forbid")
    records: list[BatchItem] = Field(min_length=1, max_length=MAX_BATCH)


class RecordOut(BaseModel):
    """A registered URN and what the service knows of it."""

    urn: str
    status: Literal["reserved", "active", "deactivated"]
    locations: list[LocationModel]
    metadata: dict[str, Any]
    successors: list[str]
    note: str | None
    owner: str
    created: str = Field(description="RFC 3339 time")
    updated: str = Field(description="RFC 3339 time")


class RecordPage(BaseModel):
    """A page of records and the cursor of the next page (null on the last)."""

    records: list[RecordOut]
    next_cursor: str | None


class HistoryEntryOut(BaseModel):
    """One change: when, what, by whom, and the record as it was after it."""

    at: str
    action: str
    actor: str
    record: dict[str, Any]


class HistoryOut(BaseModel):
    """Every change to a record, oldest first."""

    urn: str
    entries: list[HistoryEntryOut]


class DeactivateIn(BaseModel):
    """Why a URN is deactivated and which URNs succeed it."""

    model_config = ConfigDict(extra="forbid")
    note: str | None = Field(None, max_length=10_000)
    successors: list[str] = Field(default_factory=list, max_length=100)


class GeneratedOut(BaseModel):
    """The URN:NBNs generated and reserved; ``urn`` is the first of ``urns``."""

    urn: str
    urns: list[str]


class BatchResult(BaseModel):
    """What happened to one record of a batch."""

    urn: str
    result: Literal["created", "replaced"]


class BatchOut(BaseModel):
    """What happened to each record of a batch, in order."""

    count: int
    results: list[BatchResult]


class PrefixOut(BaseModel):
    """A delegated prefix (RFC 8458 §4.3), whom it is delegated to and how URNs are generated."""

    prefix: str
    organisation: str
    generator: Literal["sequential", "random"]


class DelegateIn(BaseModel):
    """Delegate a prefix to an organisation."""

    model_config = ConfigDict(extra="forbid")
    prefix: str = Field(min_length=2, max_length=200, examples=["fi:demo"])
    organisation: str = Field(min_length=1, max_length=200)
    generator: Literal["sequential", "random"] = "sequential"


class OrganisationIn(BaseModel):
    """A new organisation."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)


class OrganisationOut(BaseModel):
    """An organisation."""

    name: str


class TokenIn(BaseModel):
    """A new token's role and a label to recognise it by."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["admin", "registrant"] = "registrant"
    label: str = Field("", max_length=200)


class TokenOut(BaseModel):
    """A new token: shown once, stored only hashed."""

    token: str
    token_id: int = Field(description="What POST /api/v1/tokens/{token_id}/revoke takes")
    organisation: str
    role: str


class BrokenLinkOut(BaseModel):
    """A location whose link is broken: whose it is, its record's URN, and the link's state."""

    owner: str = Field(description="The organisation that registered the location")
    urn: str
    url: str
    status: Literal["ok", "broken"]
    http_status: int | None = Field(description="The last answer's status; null: none came")
    detail: str | None = Field(description="What the last check found, in words")
    failures: int = Field(description="Consecutive failed checks")
    since: str = Field(description="RFC 3339 time the status last changed")
    checked: str | None = Field(description="RFC 3339 time of the last check")


class BrokenLinksOut(BaseModel):
    """The broken links of an organisation (or of all, for an admin who names none)."""

    owner: str | None
    count: int
    links: list[BrokenLinkOut]


class Problem(BaseModel):
    """An RFC 9457 problem: what went wrong, and where when the input was at fault."""

    model_config = ConfigDict(extra="allow")
    type: str = "about:blank"
    title: str
    status: int
    detail: str


class HarvestSourceIn(BaseModel):
    """An OAI-PMH repository to harvest URN:NBN -> URL mappings from."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200, examples=["doria"])
    organisation: str = Field(min_length=1, max_length=200)
    base_url: str = Field(min_length=1, max_length=2000, examples=["https://repo.example.org/oai"])
    url_pattern: str = Field(
        min_length=1,
        max_length=2000,
        description="A regular expression every location URL must fully match",
        examples=[r"https://repo\.example\.org/handle/\d+/\d+"],
    )
    set_spec: str | None = Field(None, max_length=200, description="Harvest only this set")


class HarvestSourceOut(HarvestSourceIn):
    """A harvest source and where its next incremental harvest starts."""

    granularity: str | None
    next_from: str | None = Field(description="The next harvest's from=; null before a success")
    harvested: str | None = Field(description="RFC 3339 time of the last successful harvest")


def _problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI descriptions of the problem responses a route may give: the Problem schema under
    the media type sent, ``application/problem+json`` (a ``model`` would put it under
    ``application/json``, which these responses never are), or a page for browsers."""
    return {
        status: {
            "content": {
                PROBLEM: {"schema": _PROBLEM_SCHEMA},
                "text/html": {"schema": {"type": "string"}},
            },
            "description": "A problem (RFC 9457)",
        }
        for status in statuses
    }


_PROBLEM_SCHEMA = Problem.model_json_schema()


class DayCountOut(BaseModel):
    """How many times URNs under a prefix were resolved on a day (UTC)."""

    prefix: str
    day: date
    resolutions: int


class StatisticsOut(BaseModel):
    """Resolutions per prefix per day from ``since`` (UTC) on, the newest day first."""

    since: date
    counts: list[DayCountOut]


# --- plumbing ----------------------------------------------------------------------------------


def _wants_html(request: Request) -> bool:
    """Whether the client prefers HTML to JSON (browsers send ``text/html`` first)."""
    accept = request.headers.get("accept", "")
    html, json = accept.find("text/html"), accept.find("json")
    return html >= 0 and (json < 0 or html < json)


def _problem(request: Request, status: int, title: str, detail: str, **extra: Any) -> Response:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    if _wants_html(request):
        page = _templates.get_template("problem.html").render(problem=body)
        return HTMLResponse(page, status_code=status, headers=headers)
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def _raw_urn(scope: Scope, prefix: str, suffix: str = "") -> str:
    """The URN in the raw path between ``prefix`` and ``suffix``, as sent. A client that
    percent-encoded the whole URN (``urn%3Anbn%3A…``) is decoded once: no URN begins so."""
    raw_path: bytes | None = scope.get("raw_path")
    if raw_path is None:  # not as a default of get(): encoding the path costs more
        raw_path = scope["path"].encode()
    raw = raw_path.decode("latin-1")
    return _decoded_if_whole(raw[len(prefix) : len(raw) - len(suffix)])


def _decoded_if_whole(text: str) -> str:
    """``text``, percent-decoded once if a client encoded the whole URN: no URN begins so.

    >>> _decoded_if_whole("urn%3Anbn%3Afi-1"), _decoded_if_whole("urn:nbn:fi-a%2Fb")
    ('urn:nbn:fi-1', 'urn:nbn:fi-a%2Fb')
    """
    return unquote(text) if text[:6].lower() == "urn%3a" else text


def _urn_path(suffix: str = "") -> Callable[..., str]:
    # ``urn`` is declared (not used: the raw path is) so that /openapi.json defines the path
    # parameter its path template names; without it the published schema is invalid.
    def dependency(
        request: Request,
        urn: Annotated[str, Path(description="The URN, e.g. urn:nbn:fi:demo-1")],
    ) -> str:
        query = request.url.query
        if query[:1] in ("=", "+"):
            raise UnacceptableError(
                f"?{query} would be a component of the URN; records hold assigned names alone "
                "(RFC 8141 §2.3): resolve with GET /{urn}?=… instead",
                rule="assigned-name",
                section="RFC 8141 §2.3",
            )
        return _raw_urn(request.scope, "/api/v1/urns/", suffix)

    return dependency


class _URNRoute(Route):
    """A route that matches only paths beginning with ``/urn:`` (in any case), which no other
    route takes: resolution can then be tried before the API's routes instead of after all of
    them, and skip FastAPI's parameter handling. In process, a resolution took 70 µs through
    FastAPI's catch-all route and takes 27 µs through this one (benchmarks/resolve_bench.py)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child_scope = super().matches(scope)
        if match is not Match.NONE and child_scope["path_params"]["urn"][:4].lower() != "urn:":
            return Match.NONE, {}
        child_scope["route"] = self  # as FastAPI's routes do: /metrics counts by route
        return match, child_scope


# The scope key under which the front (_redirect_front) hands what it found to the route.
_FOUND = "urnkit.resolution"
CEILING_PATH = "/-/redirect"  # the cheapest redirect the server gives (benchmarks' ceiling)


def _redirect_front(app: ASGIApp, services: Services, metrics: Metrics) -> ASGIApp:
    """``app``, with resolution's commonest answer given before routing and the framework's
    layers run: the redirect of ``GET`` or ``HEAD /{urn}`` without a query, for a client
    that does not prefer JSON. Whatever else the lookup gives (a surrogate, gone, an error)
    is handed to resolution's route in the scope, which answers it as before, through the
    exception handlers. ``GET /-/redirect``, the ceiling of ``benchmarks/resolve_bench.py``,
    is answered here too, so that the ratio of the two measures what resolving costs. In
    process (50,000 URNs) a redirect took 36 µs through the route and takes 18 here, the
    ceiling 14 and 4."""

    async def front(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            path: str = scope["path"]
            if path == CEILING_PATH:
                await _redirect(scope, "https://example.org/")(scope, receive, send)
                return
            if (
                path[1:5].lower() == "urn:"
                and not scope["query_string"]
                and not _prefers_json(scope)
            ):
                try:
                    found = await services.resolution.resolve_async(_raw_urn(scope, "/"))
                except Exception as error:  # the route raises it again, to be answered
                    scope[_FOUND] = error
                else:
                    if found.kind != "redirect":
                        scope[_FOUND] = found
                    else:
                        metrics.resolved("redirect")
                        response = _redirect(
                            scope, found.target or "", found.alternates, found.predecessors
                        )
                        await response(scope, receive, send)
                        return
        await app(scope, receive, send)

    return front


def _redirect(
    scope: Scope,
    target: str,
    alternates: Sequence[str] = (),
    predecessors: Sequence[str] = (),
) -> Response:
    """A 302 to ``target`` (RFC 8458 §4.4: never permanent); with ``alternates`` (a record
    of ours, not one forwarded) a ``Link`` header names them and the ``predecessors``. The
    headers are appended as they are sent: a headers= dict costs 6 µs more (Starlette
    encodes and inspects each entry)."""
    response = Response(status_code=302)
    response.raw_headers.append((b"location", uri_reference(target).encode("ascii")))
    if alternates:
        links = _links(scope, alternates, (), predecessors)
        response.raw_headers += [(b"link", links.encode("ascii")), (b"vary", b"Accept")]
    return response


_bearer = HTTPBearer(auto_error=False, description="An API token from `urnkit admin create-token`")


_log = logging.getLogger("urnkit.resolver")


async def _flush_statistics(services: Services, interval: float) -> None:
    """Add the counted resolutions to the database every ``interval`` seconds, off the loop."""
    while True:
        await asyncio.sleep(interval)
        try:
            await asyncio.to_thread(services.overview.flush_statistics)
        except Exception:  # the database is away: the counts wait for the next flush
            _log.exception("flushing the resolution statistics failed; retrying later")


def create_app(services: Services, statistics_interval: float = 5.0) -> FastAPI:
    """The resolver's ASGI application over ``service``; resolutions counted for the
    statistics are flushed to the database every ``statistics_interval`` seconds and when the
    application shuts down (a process killed outright loses up to one interval of them)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        flushing = asyncio.create_task(_flush_statistics(services, statistics_interval))
        try:
            yield
        finally:
            flushing.cancel()
            with suppress(asyncio.CancelledError):
                await flushing
            await asyncio.to_thread(services.overview.flush_statistics)

    app = FastAPI(
        lifespan=lifespan,
        title="urnkit resolver",
        version=version("urnkit"),
        description=(
            "URN:NBN resolution (RFC 8458 §4.4) and registration. Resolve with `GET /{urn}`; "
            "register under the prefixes delegated to your organisation with a bearer token. "
            "RFC 2483's services (I2L, I2Ls, I2R, I2Rs, I2C, I2Cs, I2N, I2Ns, I=I) answer at "
            "`GET /uri-res/{service}?{urn}` (RFC 2169) and at `GET /{urn}?s={service}`."
        ),
        docs_url="/docs",
        redoc_url=None,
        # FastAPI's native OpenTelemetry asks, on every request, whether a tracer, meter or
        # logger provider is configured (environment lookups): ~4 µs of a 25 µs resolution.
        # Off; /metrics serves the numbers.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    metrics = Metrics(services)
    app.add_middleware(metrics.middleware)

    def principal(
        credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    ) -> Principal:
        return services.access.authenticate(credentials.credentials if credentials else None)

    def admin(who: Annotated[Principal, Depends(principal)]) -> Principal:
        services.access.require_admin(who)
        return who

    @app.exception_handler(ResolverError)
    def _refusal(request: Request, error: ResolverError) -> Response:
        return _problem(request, error.status, error.title, error.detail, **error.extensions)

    @app.exception_handler(RequestValidationError)
    def _invalid(request: Request, error: RequestValidationError) -> Response:
        errors = [
            {"location": list(e.get("loc", ())), "message": e.get("msg", "")}
            for e in error.errors()
        ]
        detail = "; ".join(f"{'.'.join(map(str, e['location']))}: {e['message']}" for e in errors)
        return _problem(request, 422, "Invalid request", detail, errors=errors)

    @app.exception_handler(HTTPException)
    def _http(request: Request, error: HTTPException) -> Response:
        title = HTTPStatus(error.status_code).phrase
        response = _problem(request, error.status_code, title, str(error.detail))
        response.headers.update(error.headers or {})
        return response

    authenticated = _problem_responses(401, 403, 422)
    _forwarding_routes(app, services, admin, authenticated)

    # --- the registration API ------------------------------------------------------------------

    @app.get(
        "/api/v1/urns/{urn:path}/history",
        response_model=HistoryOut,
        responses=_problem_responses(400, 404, 422),
        tags=["records"],
    )
    def history(urn: Annotated[str, Depends(_urn_path("/history"))]) -> dict[str, Any]:
        """Every change to a record, oldest first (append-only)."""
        record = services.records.get(urn)
        entries = [history_json(entry) for entry in services.records.history(urn)]
        return {"urn": record.urn, "entries": entries}

    @app.post(
        "/api/v1/urns/{urn:path}/deactivate",
        response_model=RecordOut,
        responses=_problem_responses(400, 404, 409) | authenticated,
        tags=["records"],
    )
    def deactivate(
        urn: Annotated[str, Depends(_urn_path("/deactivate"))],
        body: DeactivateIn,
        who: Annotated[Principal, Depends(principal)],
    ) -> dict[str, Any]:
        """Deactivate a URN (there is no delete, RFC 8458 §4.1): resolution answers 410 Gone
        and names the successors."""
        return record_json(services.records.deactivate(who, urn, body.note, body.successors))

    @app.get(
        "/api/v1/urns/{urn:path}",
        response_model=RecordOut,
        responses=_problem_responses(400, 404, 422),
        tags=["records"],
    )
    def get_record(urn: Annotated[str, Depends(_urn_path())]) -> dict[str, Any]:
        """The record of a URN, found by namespace equivalence."""
        return record_json(services.records.get(urn))

    @app.put(
        "/api/v1/urns/{urn:path}",
        response_model=RecordOut,
        status_code=200,
        responses={201: {"model": RecordOut, "description": "Created"}}
        | _problem_responses(400, 409)
        | authenticated,
        tags=["records"],
    )
    def put_record(
        urn: Annotated[str, Depends(_urn_path())],
        body: RecordIn,
        who: Annotated[Principal, Depends(principal)],
        response: Response,
    ) -> dict[str, Any]:
        """Create (201) or replace (200) the record of a URN under a delegated prefix."""
        found = [Location(**loc.model_dump()) for loc in body.locations]
        record, created = services.records.put(who, urn, found, body.metadata)
        response.status_code = 201 if created else 200
        return record_json(record)

    @app.delete("/api/v1/urns/{urn:path}", include_in_schema=False)
    def delete_record(request: Request) -> Response:
        """There is no delete: a URN is never deleted or reused (RFC 8458 §4.1)."""
        response = _problem(
            request,
            405,
            "Method Not Allowed",
            "a URN is never deleted or reused (RFC 8458 §4.1): "
            "POST /api/v1/urns/{urn}/deactivate instead",
        )
        response.headers["Allow"] = "GET, PUT, PATCH"
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

    @app.patch(
        "/api/v1/urns/{urn:path}",
        response_model=RecordOut,
        responses=_problem_responses(400, 404, 409, 415) | authenticated,
        dependencies=[Depends(merge_patch_body)],
        tags=["records"],
    )
    def patch_record(
        urn: Annotated[str, Depends(_urn_path())],
        patch: Annotated[dict[str, Any], Body(media_type="application/merge-patch+json")],
        who: Annotated[Principal, Depends(principal)],
    ) -> dict[str, Any]:
        """Change a record's ``metadata`` or ``locations`` with a JSON merge patch (RFC 7396);
        ``"locations": null`` removes every location."""
        if patch.get("locations", ()) is None:  # RFC 7396 §1: null removes the member
            patch = patch | {"locations": []}
        if "locations" in patch:
            if not isinstance(patch["locations"], list):
                raise RequestValidationError([_type_error("locations", "a list")])
            found = []
            for number, loc in enumerate(patch["locations"]):
                try:
                    found.append(Location(**LocationModel.model_validate(loc).model_dump()))
                except ValidationError as error:  # a 422 like PUT's, not a 500
                    where = ("body", "locations", number)
                    raise RequestValidationError(
                        [{**e, "loc": (*where, *e["loc"])} for e in error.errors()]
                    ) from None
            patch = patch | {"locations": found}
        return record_json(services.records.patch(who, urn, patch))

    @app.get(
        "/api/v1/urns",
        response_model=RecordPage,
        responses=_problem_responses(422),
        tags=["records"],
    )
    def list_records(
        prefix: Annotated[str | None, Query(max_length=200, examples=["fi:demo"])] = None,
        cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        """Records in registration order, under ``prefix`` (and its sub-namespaces) if given."""
        return _page_json(*services.records.records(prefix, int(cursor or 0), limit))

    @app.post(
        "/api/v1/urns:batch",
        response_model=BatchOut,
        responses=_problem_responses(400, 404, 409) | authenticated,
        tags=["records"],
    )
    def batch(
        body: BatchIn,
        who: Annotated[Principal, Depends(principal)],
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

    @app.post(
        "/api/v1/prefixes/{prefix}/urns",
        response_model=GeneratedOut,
        status_code=201,
        responses=_problem_responses(404) | authenticated,
        tags=["prefixes"],
    )
    def generate(
        prefix: str,
        who: Annotated[Principal, Depends(principal)],
        count: Annotated[int, Query(ge=1, le=MAX_GENERATE)] = 1,
    ) -> dict[str, Any]:
        """Generate and reserve the next unused URN:NBN(s) of a delegated prefix."""
        urns = [record.urn for record in services.records.generate(who, prefix, count)]
        return {"urn": urns[0], "urns": urns}

    @app.get("/api/v1/prefixes", response_model=list[PrefixOut], tags=["prefixes"])
    def list_prefixes() -> list[dict[str, str]]:
        """The public register of delegated prefixes (RFC 8458 §4.3)."""
        return [
            {"prefix": prefix, "organisation": organisation, "generator": generator}
            for prefix, organisation, generator in services.admin.prefixes()
        ]

    @app.post(
        "/api/v1/prefixes",
        response_model=PrefixOut,
        status_code=201,
        responses=_problem_responses(400, 404, 409) | authenticated,
        tags=["administration"],
    )
    def delegate(body: DelegateIn, _: Annotated[Principal, Depends(admin)]) -> dict[str, str]:
        """Delegate a prefix to an organisation (admin)."""
        prefix = services.admin.delegate(body.organisation, body.prefix, body.generator)
        return {"prefix": prefix, "organisation": body.organisation, "generator": body.generator}

    @app.get(
        "/api/v1/organisations",
        response_model=list[OrganisationOut],
        responses=authenticated,
        tags=["administration"],
    )
    def organisations(_: Annotated[Principal, Depends(admin)]) -> list[dict[str, str]]:
        """Every organisation (admin)."""
        return [{"name": name} for name in services.admin.organisations()]

    @app.post(
        "/api/v1/organisations",
        response_model=OrganisationOut,
        status_code=201,
        responses=_problem_responses(400, 409) | authenticated,
        tags=["administration"],
    )
    def create_organisation(
        body: OrganisationIn, _: Annotated[Principal, Depends(admin)]
    ) -> dict[str, str]:
        """Create an organisation (admin)."""
        return {"name": services.admin.create_organisation(body.name)}

    @app.post(
        "/api/v1/organisations/{name}/tokens",
        response_model=TokenOut,
        status_code=201,
        responses=_problem_responses(400, 404) | authenticated,
        tags=["administration"],
    )
    def create_token(
        name: str, body: TokenIn, _: Annotated[Principal, Depends(admin)]
    ) -> dict[str, str | int]:
        """A new token for an organisation (admin); shown once."""
        token = services.admin.create_token(name, body.role, body.label)
        token_id = services.access.authenticate(token).token_id
        return {"token": token, "token_id": token_id, "organisation": name, "role": body.role}

    @app.post(
        "/api/v1/tokens/{token_id}/revoke",
        status_code=204,
        responses=_problem_responses(404) | authenticated,
        tags=["administration"],
    )
    def revoke_token(
        token_id: Annotated[int, Path(ge=1, le=2**31 - 1)],
        _: Annotated[Principal, Depends(admin)],
    ) -> Response:
        """Revoke a token (admin): it stops working at once, in every server process."""
        services.admin.revoke_token(token_id)
        return Response(status_code=204)

    @app.get(
        "/api/v1/search",
        response_model=RecordPage,
        responses=_problem_responses(400, 422),
        tags=["records"],
    )
    def search(
        urn: Annotated[str | None, Query(max_length=2000, examples=["urn:nbn:fi:demo-1"])] = None,
        url: Annotated[str | None, Query(max_length=4000, examples=["https://example.org/"])] = (
            None
        ),
        title: Annotated[str | None, Query(max_length=1000, examples=["thesis"])] = None,
        cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        """Records by ``urn`` (the record of an equivalent URN, if any), by ``url`` (those with
        a location there) or by ``title`` (a case-insensitive part of ``metadata.title``): give
        exactly one. Pages as ``GET /api/v1/urns`` does."""
        given: dict[SearchBy, str | None] = {"urn": urn, "url": url, "title": title}
        chosen = [(by, text) for by, text in given.items() if text is not None]
        if len(chosen) != 1:
            raise UnacceptableError("give exactly one of urn, url and title to search by")
        by, text = chosen[0]
        return _page_json(*services.overview.search(by, text, int(cursor or 0), limit))

    @app.get(
        "/api/v1/statistics",
        response_model=StatisticsOut,
        responses=_problem_responses(422),
        tags=["statistics"],
    )
    def statistics(
        days: Annotated[int, Query(ge=1, le=MAX_STATISTICS_DAYS)] = STATISTICS_DAYS,
    ) -> dict[str, Any]:
        """Resolutions per prefix per day (UTC) over the last ``days`` days, today included.
        Each server process adds its counts every few seconds, so the newest are that late."""
        counts = services.overview.statistics(days)
        return {
            "since": services.overview.statistics_since(days),
            "counts": [
                {"prefix": prefix, "day": day, "resolutions": count}
                for prefix, day, count in counts
            ],
        }

    @app.get(
        "/api/v1/links/broken",
        response_model=BrokenLinksOut,
        responses=_problem_responses(404) | authenticated,
        tags=["links"],
    )
    def broken_links(
        who: Annotated[Principal, Depends(principal)],
        owner: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    ) -> dict[str, Any]:
        """The locations whose links link checking found broken (left out of resolution), by
        owner and URN: a registrant sees its organisation's; an admin any ``owner``'s, or all."""
        chosen, found = services.links.broken_links_for(who, owner)
        return {
            "owner": chosen,
            "count": len(found),
            "links": [broken_link_json(b) for b in found],
        }

    # --- OAI-PMH ---------------------------------------------------------------------------------

    repository = Repository(services.store, Settings.from_environment().oai_admin_email)
    harvester = Harvester(services.store, services.access)

    def source_json(source: HarvestSource) -> dict[str, Any]:
        return {
            "name": source.name,
            "organisation": source.organisation,
            "base_url": source.base_url,
            "url_pattern": source.url_pattern,
            "set_spec": source.set_spec,
            "granularity": source.granularity,
            "next_from": source.next_from,
            "harvested": source.harvested.isoformat() if source.harvested else None,
        }

    @app.get(
        "/api/v1/oai/sources",
        response_model=list[HarvestSourceOut],
        responses=authenticated,
        tags=["oai-pmh"],
    )
    def harvest_sources(_: Annotated[Principal, Depends(admin)]) -> list[dict[str, Any]]:
        """Every OAI-PMH harvest source (admin); harvests run with ``urnkit oai harvest``."""
        return [source_json(source) for source in harvester.sources()]

    @app.post(
        "/api/v1/oai/sources",
        response_model=HarvestSourceOut,
        status_code=201,
        responses=_problem_responses(404, 409, 422) | authenticated,
        tags=["oai-pmh"],
    )
    def add_harvest_source(
        body: HarvestSourceIn, _: Annotated[Principal, Depends(admin)]
    ) -> dict[str, Any]:
        """Add an OAI-PMH harvest source (admin): its URNs must fall under the organisation's
        delegated prefixes, its location URLs must fully match the pattern."""
        source = harvester.add_source(
            body.name, body.organisation, body.base_url, body.url_pattern, body.set_spec
        )
        return source_json(source)

    async def oai(request: Request) -> Response:
        """OAI-PMH 2.0 (oai_dc; a set per delegated prefix): the arguments in the query, or
        for POST in an ``application/x-www-form-urlencoded`` body. Errors are OAI-PMH's own,
        in a 200 response (OAI-PMH 2.0 §3.6)."""
        raw = await request.body() if request.method == "POST" else request.url.query.encode()
        arguments = parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True)
        base_url = str(request.url.replace(query=""))
        document = await run_in_threadpool(repository.respond, arguments, base_url)
        return Response(document, media_type="text/xml; charset=utf-8")

    for method in ("GET", "POST"):  # an operation each: OpenAPI wants their ids unique
        app.add_api_route(
            "/oai",
            oai,
            methods=[method],
            operation_id=f"oai_pmh_{method.lower()}",
            response_class=Response,
            tags=["oai-pmh"],
            responses={200: {"content": {"text/xml": {}}, "description": "An OAI-PMH response"}},
        )

    # --- pages and resolution ------------------------------------------------------------------

    add_pages(app, services, _templates, metrics)

    resolution_responses: dict[int | str, dict[str, Any]] = {
        **_problem_responses(400, 404),
        200: {"description": "A page of the record's metadata (RFC 8458 §4.5)"},
        302: {"description": "Found: the highest-priority location; Link names them all"},
        410: {"description": "Gone: deactivated; the Link headers name its successors"},
    }

    rfc2483 = Rfc2483Requests(services.records)

    async def resolve_request(request: Request) -> Response:
        text = _raw_urn(request.scope, "/")
        query = request.scope.get("query_string", b"").decode("latin-1")
        if query:
            if query[:1] in ("+", "="):
                text = f"{text}?{query}"
            chosen = requested(query)
            if chosen is not None and chosen != "I=I":  # I=I needs two URNs: the default
                return await asyncio.to_thread(answer_service, request, chosen, text)
        try:
            resolution = request.scope.get(_FOUND)  # by the front (_redirect_front), if it ran
            if isinstance(resolution, Exception):
                raise resolution
            if resolution is None:
                resolution = await services.resolution.resolve_async(text)
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
        if resolution.kind == "redirect" and (
            not resolution.alternates or not _prefers_json(request.scope)
        ):
            return _redirect(
                request.scope,
                resolution.target or "",
                resolution.alternates,
                resolution.predecessors,
            )
        if resolution.kind == "redirect":
            links = _links(request.scope, resolution.alternates, (), resolution.predecessors)
            headers = {"Link": links, "Vary": "Accept"}
            active = await asyncio.to_thread(services.records.get, text)
            return JSONResponse(_record_body(active, resolution.predecessors), headers=headers)
        record = resolution.record
        assert record is not None
        links = _links(request.scope, (), record.successors, resolution.predecessors)
        headers = {"Link": links, "Vary": "Accept"} if links else {"Vary": "Accept"}
        if resolution.kind == "gone":
            if _wants_html(request):
                description = await asyncio.to_thread(rfc2483.describe, text)
                return _record_page(description, 410, headers)
            return _gone_problem(record, resolution.predecessors, headers)
        if _prefers_json(request.scope):
            return JSONResponse(_record_body(record, resolution.predecessors), headers=headers)
        description = await asyncio.to_thread(rfc2483.describe, text)
        return _record_page(description, 200, headers)

    def answer_service(request: Request, name: str, text: str) -> Response:
        """The answer of the RFC 2483 service ``name`` for the URN in ``text`` (not I=I)."""
        urn = parse_urn(text)
        description = rfc2483.describe(text)
        record = description.record
        alternates = [loc.url for loc in description.usable]
        if urn.q_component:  # RFC 8141 §2.3.2: passed to every locator
            alternates = [with_q_component(url, urn.q_component) for url in alternates]
        links = _links(request.scope, alternates, record.successors, description.predecessors)
        headers = {"Link": links} if links else {}
        if name in ("I2L", "I2Ls", "I2R", "I2Rs") and record.status == "deactivated":
            if _wants_html(request):
                return _record_page(description, 410, headers)
            return _gone_problem(record, description.predecessors, headers)
        accept = accept_header(request.headers.get("accept"))
        if name in ("I2R", "I2Rs"):
            headers["Vary"] = "Accept"
        if name in ("I2L", "I2R"):
            choices = list(description.usable)
            if name == "I2R":
                choices = rfc2483.ranked(description, accept)
            if not description.usable:
                raise NotFoundError(
                    f"{record.urn} is registered ({record.status}) but has no location at "
                    "present: GET /{urn} gives what is known of it",
                    record_status=record.status,
                )
            if not choices:
                _not_acceptable(description)
            target = with_q_component(choices[0].url, urn.q_component or "")
            return RedirectResponse(target, status_code=302, headers=headers)
        if name in ("I2Ls", "I2Rs"):
            chosen = description.usable
            if name == "I2Rs":
                chosen = tuple(rfc2483.ranked(description, accept))
                if description.usable and not chosen:
                    _not_acceptable(description)
            entries: list[tuple[str | None, str | None]] = [(None, record.urn)]
            entries += [
                (with_q_component(loc.url, urn.q_component or ""), _location_comment(loc))
                for loc in chosen
            ]
            if name == "I2Ls":  # the rest, as comments: not to be used now
                entries += [
                    (None, f"{entry.state} since {entry.since:%Y-%m-%d}: {entry.location.url}")
                    for entry in description.locations
                    if entry.state == "broken" and record.status == "active"
                ]
            return _uri_list_response(entries, headers)
        if name == "I2C":
            headers["Vary"] = "Accept"
            media_type = negotiate(accept, ("application/json", "text/html", *_XML))
            if media_type is None:
                raise NotAcceptableError(
                    "I2C describes a URN as application/json, text/html or application/xml "
                    "(Dublin Core); the request's Accept takes none of them",
                    available=["application/json", "text/html", *_XML],
                )
            if media_type == "text/html":
                return _record_page(description, 200, headers)
            if media_type == "application/json":
                return JSONResponse(_record_body(record, description.predecessors), headers=headers)
            return _xml_response(record, media_type, headers)
        if name == "I2Cs":
            return _xml_response(record, "application/xml", headers)
        if name == "I2N":
            return _uri_list_response([(rfc2483.current(text), None)], headers)
        assert name == "I2Ns"
        return _uri_list_response(
            [(urn, relation) for urn, relation in rfc2483.related(text)], headers
        )

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
        text = _decoded_if_whole(request.scope.get("query_string", b"").decode("latin-1"))
        if not text:
            raise InvalidURNError(
                f"no URN: the query is the URN, as in /uri-res/{chosen}?urn:nbn:fi-123 "
                "(RFC 2169 §2)",
                input="",
                position=0,
            )
        if chosen == "I=I":
            equal = Rfc2483Requests.equivalent(text)
            return PlainTextResponse("true" if equal else "false")
        return await asyncio.to_thread(answer_service, request, chosen, text)

    # Resolution's route: a plain Starlette route, async, tried first (see _URNRoute), for
    # what the front leaves (queries, JSON, answers other than a redirect). The routes below
    # answer the paths it leaves (not beginning with "urn:") and describe it.
    app.add_middleware(_redirect_front, services=services, metrics=metrics)
    app.router.routes[:0] = [
        _URNRoute("/{urn:path}", resolve_request, methods=["GET", "HEAD"]),
        Route("/uri-res/{name}", uri_res_request, methods=["GET", "HEAD"]),
    ]

    @app.api_route(
        "/{urn:path}", methods=["GET", "HEAD"], response_class=Response, include_in_schema=False
    )
    async def resolve(urn: str, request: Request) -> Response:
        """Resolve a URN (RFC 8458 §4.4). An HTTP query beginning with ``=`` is the URN's
        q-component and is appended to the location's query (RFC 8141 §2.3.2); one beginning
        with ``+`` is an r-component (ending at ``?=``). Its directive ``s=`` (or the query's,
        rfc2141bis §2.3.1) names an RFC 2483 service; the rest is ignored."""
        return await resolve_request(request)

    # /openapi.json shows GET and HEAD as two operations, each with an operationId of its own
    # (one route for both gives them one, which OpenAPI forbids). These routes only describe:
    # the route above, added first, answers every request to the path that _URNRoute leaves,
    # and its 405s say "Allow: GET, HEAD" (as _URNRoute's do).
    for method in ("GET", "HEAD"):
        app.add_api_route(
            "/{urn:path}",
            resolve,
            methods=[method],
            response_class=Response,
            responses=resolution_responses,
            tags=["resolution"],
        )
    return app


class ForwardingIn(BaseModel):
    """A national resolver: its URL template, ``{urn}`` where the URN goes, and a note."""

    model_config = ConfigDict(extra="forbid")
    url_template: str = Field(
        min_length=8, max_length=2000, examples=["https://urn.kb.se/resolve?urn={urn}"]
    )
    note: str | None = Field(None, max_length=1000)


class ForwardingOut(BaseModel):
    """A country's national resolver (RFC 8458 §4.4) and its last health check."""

    country: str = Field(description="ISO 3166-1 alpha-2, lower case", examples=["se"])
    url_template: str
    health: Literal["unknown", "up", "down"]
    checked: str | None = Field(description="RFC 3339 time of the last health check")
    detail: str | None = Field(description="What the last health check saw")
    note: str | None


def _forwarding_routes(
    app: FastAPI,
    services: Services,
    admin: Callable[..., Principal],
    authenticated: dict[int | str, dict[str, Any]],
) -> None:
    """``/api/v1/forwarding``: the public table of national resolvers, edited by admins."""
    country_path = Path(min_length=1, max_length=10, examples=["se"])

    @app.get("/api/v1/forwarding", response_model=list[ForwardingOut], tags=["forwarding"])
    def list_forwarding() -> list[dict[str, Any]]:
        """Where URN:NBNs of other countries are forwarded (RFC 8458 §4.4), by country."""
        return [forwarding_json(entry) for entry in services.forwarding.forwardings()]

    @app.put(
        "/api/v1/forwarding/{country}",
        response_model=ForwardingOut,
        responses={201: {"model": ForwardingOut, "description": "Created"}}
        | _problem_responses(400)
        | authenticated,
        tags=["forwarding"],
    )
    def put_forwarding(
        country: Annotated[str, country_path],
        body: ForwardingIn,
        _: Annotated[Principal, Depends(admin)],
        response: Response,
    ) -> dict[str, Any]:
        """Create (201) or replace (200) a country's resolver (admin): an https URL template
        with one ``{urn}``, in its path or its query."""
        entry, created = services.forwarding.set_forwarding(country, body.url_template, body.note)
        response.status_code = 201 if created else 200
        return forwarding_json(entry)

    @app.delete(
        "/api/v1/forwarding/{country}",
        status_code=204,
        responses=_problem_responses(404) | authenticated,
        tags=["forwarding"],
    )
    def delete_forwarding(
        country: Annotated[str, country_path], _: Annotated[Principal, Depends(admin)]
    ) -> Response:
        """Remove a country's resolver (admin): its URN:NBNs are then not found here."""
        services.forwarding.remove_forwarding(country)
        return Response(status_code=204)


# --- resolution answers: Link headers, negotiation, pages (RFC 2483, RFC 8288) -----------------

_XML = ("application/xml", "text/xml")  # Dublin Core (oai_dc), what I2C and I2Cs give


def _links(
    scope: Scope,
    alternates: Sequence[str],
    successors: Sequence[str],
    predecessors: Sequence[str],
) -> str:
    """The ``Link`` header of a resolution answer (RFC 8288): ``alternate`` per location URL,
    ``successor-version`` and ``predecessor-version`` (RFC 5829) per successor and predecessor,
    at their resolution URLs here."""
    links = [(url, "alternate") for url in alternates]
    if successors or predecessors:
        base = str(Request(scope).base_url)  # made only here: most answers need none
        links += [(base + urn, "successor-version") for urn in successors]
        links += [(base + urn, "predecessor-version") for urn in sorted(predecessors)]
    return link_header(links)


def _prefers_json(scope: Scope) -> bool:
    """Whether the ``Accept`` header prefers the record as JSON to the default answer (a
    redirect, or a page), which stands for ``text/html``. Headers without "json" are not
    parsed: the redirect's path."""
    for name, value in scope["headers"]:
        if name == b"accept":
            if b"json" not in value:
                return False
            accept = accept_header(value.decode("latin-1"))
            return negotiate(accept, ("text/html", "application/json")) == "application/json"
    return False


def _record_body(record: Record, predecessors: Sequence[str]) -> dict[str, Any]:
    """A record as resolution shows it as JSON: as the API does, and its predecessors."""
    return record_json(record) | {"predecessors": sorted(predecessors)}


def _gone_problem(
    record: Record, predecessors: Sequence[str], headers: dict[str, str]
) -> JSONResponse:
    detail = f"{record.urn} is deactivated" + (
        f"; its successors: {', '.join(record.successors)}" if record.successors else ""
    )
    problem = {"type": "about:blank", "title": "Gone", "status": 410, "detail": detail}
    body = problem | {"record": _record_body(record, predecessors)}
    return JSONResponse(body, status_code=410, media_type=PROBLEM, headers=headers)


def _record_page(description: Description, status: int, headers: dict[str, str]) -> HTMLResponse:
    """The page of a URN (RFC 8458 §4.5's surrogate, the 410 page, I2C's landing page)."""
    record = description.record
    page = _templates.get_template("record.html").render(
        record=record_json(record),
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
        ],
        predecessors=sorted(description.predecessors),
        history=[history_json(entry) for entry in description.history],
    )
    return HTMLResponse(page, status_code=status, headers=headers)


def _not_acceptable(description: Description) -> NoReturn:
    types = sorted({loc.media_type or "(not recorded)" for loc in description.usable})
    raise NotAcceptableError(
        f"the locations of {description.record.urn} are of the media types {', '.join(types)}; "
        "the request's Accept takes none of them",
        available=types,
    )


def _location_comment(location: Location) -> str:
    """What a ``text/uri-list`` comment says of a location."""
    parts = [f"priority {location.priority}", location.media_type, location.label]
    return ", ".join(part for part in parts if part)


def _uri_list_response(
    entries: list[tuple[str | None, str | None]], headers: dict[str, str]
) -> Response:
    return Response(uri_list(entries), media_type="text/uri-list; charset=utf-8", headers=headers)


def _xml_response(record: Record, media_type: str, headers: dict[str, str]) -> Response:
    return Response(oai_dc_xml(record), media_type=f"{media_type}; charset=utf-8", headers=headers)


def _page_json(page: Sequence[Record], after: int | None) -> dict[str, Any]:
    """A page of records as :class:`RecordPage` shows it, with the cursor of the next page."""
    return {
        "records": [record_json(record) for record in page],
        "next_cursor": None if after is None else str(after),
    }


def _type_error(field: str, expected: str) -> dict[str, Any]:
    return {"loc": ("body", field), "msg": f"must be {expected}", "type": "type_error"}


def app_from_environment() -> FastAPI:
    """The application for ``URNKIT_DATABASE_URL``: the factory ``urnkit serve`` hands to the
    ASGI server, once per worker process."""
    settings = Settings.from_environment()
    store = Store(settings.database_url)
    discovery = (
        Discovery(settings.dns_nameserver or None, settings.dns_root)
        if settings.dns_discovery
        else None
    )
    app = create_app(Services(store, discovery), settings.statistics_interval)
    if settings.link_check_interval:
        app.router.lifespan_context = with_periodic_checks(
            app.router.lifespan_context, store, settings.link_check_interval
        )
    # What exists now lives as long as the process. Frozen, the garbage collector stops
    # traversing it: a full collection took ~60 ms (the modules, FastAPI's and pydantic's
    # models), every second or so under load, and set the p99 latency; now it takes ~0.2 ms.
    gc.collect()
    gc.freeze()
    return app
