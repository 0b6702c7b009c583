"""Limits on requests: their header fields, counted before anything else reads them; their
bodies, enforced while the body streams; and the bearer token of a write checked before any of
its body is read.

Every request with more than :data:`MAX_HEADER_FIELDS` header fields, or more than
:data:`MAX_HEADER_BYTES` of them (names and values), is answered ``431 Request Header Fields
Too Large`` (RFC 6585 §5) at once, as a problem (:func:`header_limits`, outside the
application).

A request that may carry a body (any method but ``GET``, ``HEAD`` and ``OPTIONS``) is, in
order:

1. under ``/api/v1/``, every route of which takes a bearer token: authenticated from its
   ``Authorization`` header, and answered 401 at once when the token is missing or wrong; the
   principal is handed to the route in the scope (:data:`PRINCIPAL`), which then does not look
   the token up again;
2. answered 413 (RFC 9110 §15.5.14) at once when its ``Content-Length`` exceeds the limit of
   its endpoint (:func:`body_limit`);
3. handed to the application with its body counted as it is received: 413 as soon as the count
   passes the limit (a chunked body, or one longer than it said).

An answer given before the body is read closes the connection (``Connection: close``): the rest
of the body is then never read. ``GET``, ``HEAD`` and ``OPTIONS`` go straight to the application.

>>> body_limit("/api/v1/urns:batch") == BATCH_BODY, body_limit("/api/v1/urns/urn:nbn:fi-1")
(True, 1048576)
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from urnkit.resolver.domain import ResolverError
from urnkit.resolver.services import Services
from urnkit.resolver.web.problems import PROBLEM, problem, problem_body, refusal

MiB = 1024 * 1024
# Header fields a request may carry, and their bytes (names and values). In front, nginx's
# large_client_header_buffers (4 buffers of 8 KiB) passes at most 32 KiB; granian itself
# refuses more than 100 fields (docs/deploy.md, "Request limits").
MAX_HEADER_FIELDS = 100
MAX_HEADER_BYTES = 16 * 1024
# One record (PUT, PATCH, deactivate): 100 locations at their longest (url 4,000, label 1,000,
# media_type 255 characters) take 532 KB as plain JSON; a deactivation's note (10,000) and 100
# successors (2,000 each) 212 KB. 1 MiB holds either, with room for the metadata.
RECORD_BODY = MiB
# A batch (POST /api/v1/urns:batch) of up to 10,000 records: 1.6 KB a record on average
# (a URN, a few locations, a small metadata object). Handled, the largest takes about 15 times
# its size in memory; on SQLite it holds the write lock ~5 s to create 10,000 records, ~22 s to
# replace them, within the 30 s other writers wait (store/engine.py; docs/api.md, "Limits").
BATCH_BODY = 16 * MiB
# A staff upload (its preview, and its commit carrying the file again in base64): the largest
# file taken (services/uploads.py, MAX_UPLOAD_BYTES: 10 MiB) is 13.4 MiB in base64.
UPLOAD_BODY = 16 * MiB
UPLOAD_PATH = "/staff/upload"
# Everything else: administration, OAI-PMH's POST form, routes that take no body.
SMALL_BODY = 64 * 1024
BATCH_PATH = "/api/v1/urns:batch"
RECORD_PATHS = "/api/v1/urns/"
# The staff pages' record forms carry what the API's record bodies do: metadata of up to 64 KiB
# as JSON, up to three times that percent-encoded.
STAFF_RECORD_PATHS = "/staff/records"
AUTHENTICATED_PATHS = "/api/v1/"
# The scope key under which the principal of a write's bearer token is handed to the route.
PRINCIPAL = "urnkit.principal"
_WITHOUT_BODY = frozenset({"GET", "HEAD", "OPTIONS"})


class _ContentTooLargeError(Exception):
    """Raised to the application by ``receive`` when the body passes its limit."""


def body_limit(raw_path: str) -> int:
    """The most bytes a request body to ``raw_path`` may hold."""
    if raw_path == BATCH_PATH:
        return BATCH_BODY
    if raw_path.startswith((RECORD_PATHS, STAFF_RECORD_PATHS)):
        return RECORD_BODY
    if raw_path.startswith(UPLOAD_PATH):
        return UPLOAD_BODY
    return SMALL_BODY


def bearer_token(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer …`` header (the scheme in any case), or None.

    >>> bearer_token(Request({"type": "http", "headers": [(b"authorization", b"bearer x1")]}))
    'x1'
    """
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _routed(scope: Scope) -> bool:
    """Whether a route of the application takes this method at this path: a method no route
    takes is answered 405 by the router, whoever asks."""
    return any(route.matches(scope)[0] is Match.FULL for route in scope["app"].router.routes)


def _content_length(request: Request) -> int | None:
    try:
        return int(request.headers["content-length"])
    except (KeyError, ValueError):
        return None


def _too_large(request: Request, limit: int) -> Response:
    return problem(
        request,
        413,
        "Content Too Large",
        f"the body of {request.method} {request.url.path} may hold at most {limit:,} bytes "
        "(RFC 9110 §15.5.14); see the API reference's limits",
        limit=limit,
    )


def _closing(response: Response) -> Response:
    """``response``, closing the connection: the body the client sends is then not read."""
    response.headers["Connection"] = "close"
    return response


def header_limits(app: ASGIApp) -> ASGIApp:
    """``app``, with requests of too many header fields, or too many bytes of them, answered
    431 (RFC 6585 §5) before it sees them; the connection is closed.

    >>> import asyncio
    >>> fields = [(f"x-{n}".encode(), b"1") for n in range(MAX_HEADER_FIELDS + 1)]
    >>> sent = []
    >>> async def send(message): sent.append(message)
    >>> scope = {"type": "http", "method": "GET", "path": "/", "headers": fields}
    >>> asyncio.run(header_limits(JSONResponse("ok"))(scope, None, send))
    >>> sent[0]["status"], dict(sent[0]["headers"])[b"connection"]
    (431, b'close')
    """

    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            size = 0
            for name, value in headers:
                size += len(name) + len(value)
            if len(headers) > MAX_HEADER_FIELDS or size > MAX_HEADER_BYTES:
                detail = (
                    f"a request may carry at most {MAX_HEADER_FIELDS} header fields of "
                    f"{MAX_HEADER_BYTES:,} bytes in all (names and values); this one carried "
                    f"{len(headers)} of {size:,} bytes (RFC 6585 §5)"
                )
                body = problem_body(431, "Request Header Fields Too Large", detail)
                # The answer is the request headers', not the URI's: kept by no cache.
                no_store = {"Cache-Control": "no-store"}
                response = JSONResponse(body, 431, no_store, media_type=PROBLEM)
                await _closing(response)(scope, receive, send)
                return
        await app(scope, receive, send)

    return limited


def body_limits(app: ASGIApp, services: Services) -> ASGIApp:
    """``app``, with the bearer tokens of writes checked and request bodies limited (see the
    module's docstring)."""

    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in _WITHOUT_BODY:
            await app(scope, receive, send)
            return
        request = Request(scope)
        raw_path = scope.get("raw_path", scope["path"].encode()).decode("latin-1")
        if raw_path.startswith(AUTHENTICATED_PATHS) and _routed(scope):
            try:
                token = bearer_token(request)
                scope[PRINCIPAL] = await run_in_threadpool(services.access.authenticate, token)
            except ResolverError as error:  # 401; 503 while the database is unavailable
                await _closing(refusal(request, error))(scope, receive, send)
                return
        limit = body_limit(raw_path)
        length = _content_length(request)
        if length is not None and length > limit:
            await _closing(_too_large(request, limit))(scope, receive, send)
            return
        await _counted(app, request, limit, receive, send)

    return limited


async def _counted(
    app: ASGIApp, request: Request, limit: int, receive: Receive, send: Send
) -> None:
    """Run ``app`` with the body counted as it is received; 413 once it passes ``limit``
    (what the application answered meanwhile, an error reading the body, is not sent)."""
    received = 0
    exceeded = started = False

    async def counting() -> Message:
        nonlocal received, exceeded
        message = await receive()
        received += len(message.get("body", b""))
        if received > limit:
            exceeded = True
            raise _ContentTooLargeError
        return message

    async def sending(message: Message) -> None:
        nonlocal started
        if not exceeded:
            started = True
            await send(message)

    try:
        await app(request.scope, counting, sending)
    except Exception:
        if not exceeded or started:
            raise
    if exceeded and not started:
        await _closing(_too_large(request, limit))(request.scope, receive, send)
