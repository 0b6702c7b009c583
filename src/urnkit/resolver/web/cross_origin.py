"""Scripts of other sites may read what the resolver answers and call its API (the Fetch
standard's CORS protocol, https://fetch.spec.whatwg.org/#http-cors-protocol): a web
application resolving a URN:NBN for its JSON or a citation, or reading a redirect's
``Link`` header (FAIR Signposting), as they do with doi.org.

Every answer outside the staff pages carries ``Access-Control-Allow-Origin: *`` and names
the header fields a script may read (:data:`EXPOSED`), whatever the request's ``Origin``:
the same bytes for every client, so a cache (the shipped nginx site, a browser's) keeps one
answer for all, with no ``Vary: Origin``. A preflight (``OPTIONS`` with
``Access-Control-Request-Method``) is answered ``204`` with the methods and request header
fields the API takes. No credentials: with ``*`` a browser sends no cookie (Fetch §3.2.5), so
a staff session never travels, and the staff pages (``/staff``) answer no preflight and carry
none of this. A bearer token is no ambient credential: a script sends one only if it holds it.
"""

from __future__ import annotations

from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from urnkit.resolver.web.caching import STAFF_PATHS

EXPOSED: Final = (
    b"Link, Location, ETag, Memento-Datetime, Content-Location, Retry-After, Allow, X-Request-ID"
)
"""The response header fields a script may read beyond the CORS-safelisted ones (Fetch
§2.2.6: Cache-Control, Content-Language, Content-Length, Content-Type, Expires,
Last-Modified, Pragma)."""
ANSWERS: Final = (
    (b"access-control-allow-origin", b"*"),
    (b"access-control-expose-headers", EXPOSED),
)
"""What every answer outside the staff pages carries."""
PREFLIGHT: Final = (
    *ANSWERS[:1],
    (b"access-control-allow-methods", b"GET, HEAD, POST, PUT, PATCH"),
    # Authorization is never covered by "*" (Fetch §3.2.3): named, with the others.
    (
        b"access-control-allow-headers",
        b"Authorization, Content-Type, Accept-Datetime, If-None-Match, If-Modified-Since, "
        b"X-Request-ID",
    ),
    (b"access-control-max-age", b"7200"),  # Chromium's longest (Firefox keeps a day)
)
"""A preflight's answer, beside ``204``."""


def cross_origin(app: ASGIApp) -> ASGIApp:
    """``app`` readable by other sites' scripts: :data:`ANSWERS` on its answers, preflights
    answered :data:`PREFLIGHT`; the staff pages left as they are."""

    async def answered(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(STAFF_PATHS):
            await app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and _asks_preflight(scope["headers"]):
            await send({"type": "http.response.start", "status": 204, "headers": [*PREFLIGHT]})
            await send({"type": "http.response.body", "body": b""})
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message["headers"], *ANSWERS]
            await send(message)

        await app(scope, receive, sending)

    return answered


def _asks_preflight(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request with ``headers`` is a CORS preflight (Fetch §3.2.2).

    >>> _asks_preflight([(b"origin", b"https://a.example"),
    ...                  (b"access-control-request-method", b"PUT")])
    True
    >>> _asks_preflight([(b"origin", b"https://a.example")])
    False
    """
    return any(name == b"access-control-request-method" for name, _ in headers)
