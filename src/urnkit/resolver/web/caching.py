"""HTTP caching (RFC 9111) of the resolver's answers, and conditional requests (RFC 9110 §13).

Resolution's answers (``/{urn}``, ``/uri-res/…``) may be cached by any cache for as long as
:class:`CachePolicy` says for their status: a redirect and a record's page for minutes (a
location may change at any time), a 404 for less (a URN may be registered at any time), a 400
and a 410 for a day (a URN that is not one stays so; a deactivated URN is never active again:
RFC 8458 §4.1). They vary by ``Accept`` (a client preferring JSON gets the record), pages also
by ``Accept-Language`` unless their ``?lang=`` chose the language. An answer
to a request with ``Authorization``, to any method but ``GET`` and ``HEAD``, and every answer
under ``/staff`` (the staff pages, signed in by cookie) is ``no-store``. Representations of
records, their history, RFC 2483's answers and OAI-PMH's get an ``ETag`` (of the body: exact,
whatever the representation shows) and ``Last-Modified``, and :func:`validated` answers
``304`` to a request whose validators still match.

>>> CachePolicy().header(302), CachePolicy().header(500)
(b'max-age=300', b'no-store')
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from fastapi import Request, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from werkzeug.http import generate_etag, http_date
from werkzeug.sansio.http import is_resource_modified

from urnkit.resolver.settings import Settings

NO_STORE = b"no-store"
REVALIDATE = "no-cache"  # the API's and OAI-PMH's: stored, but asked again each time (ETag)
_CACHE_CONTROL = b"cache-control"
_VARY = b"vary"
# The staff pages: no-store, as is every request carrying their session cookie, which the
# browser sends to them alone (Path=/staff: web/sessions.py).
STAFF_PATHS = "/staff"
_VARY_ACCEPT = (_VARY, b"Accept")  # every resolution answer, errors too, is negotiated
# What a 304 carries of the 200 it stands for (RFC 9110 §15.4.5).
_NOT_MODIFIED_FIELDS = ("cache-control", "content-location", "etag", "expires", "vary")


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """How many seconds a cache may keep each resolution answer (``max-age``)."""

    redirect: int = 300  # 302 to a location or another resolver; RFC 2483's I2L and I2R
    # 200: a record's page or JSON, RFC 2483's other answers; their 304s; 300: the records
    # carrying another identifier
    record: int = 300
    not_found: int = 60  # 404 (and 406, which depends on the locations there are)
    # 400 (not a URN, or not one this resolver takes) and 301 (a legacy URL to /{urn}):
    # answers that depend on the URL alone
    invalid: int = 86_400
    gone: int = 86_400  # 410: deactivated, for good

    @classmethod
    def from_settings(cls, settings: Settings) -> CachePolicy:
        """The policy of ``URNKIT_CACHE_*`` (or ``urnkit.toml``'s ``cache_*``).

        >>> CachePolicy.from_settings(Settings(cache_gone=60)).gone
        60
        """
        return cls(
            settings.cache_redirect,
            settings.cache_record,
            settings.cache_not_found,
            settings.cache_invalid,
            settings.cache_gone,
        )

    def header(self, status: int) -> bytes:
        """The ``Cache-Control`` value of a resolution answer with ``status``; ``no-store``
        for those not named (server errors, among them).

        >>> CachePolicy(not_found=5).header(404)
        b'max-age=5'
        """
        seconds = {
            200: self.record,
            300: self.record,
            301: self.invalid,
            302: self.redirect,
            304: self.record,
            400: self.invalid,
            404: self.not_found,
            406: self.not_found,
            410: self.gone,
        }.get(status)
        return NO_STORE if seconds is None else b"max-age=%d" % seconds


def is_resolution(path: str) -> bool:
    """Whether ``path`` is resolution's: ``/{urn}`` or RFC 2169's ``/uri-res/…``.

    >>> is_resolution("/URN:NBN:fi-1"), is_resolution("/uri-res/I2L"), is_resolution("/api/")
    (True, True, False)
    """
    return path[1:5].lower() == "urn:" or path.startswith("/uri-res/")


def cache_controlled(app: ASGIApp, policy: CachePolicy) -> ASGIApp:
    """``app`` with ``Cache-Control`` on its answers: ``no-store`` for a request with
    ``Authorization``, a method other than GET and HEAD or a staff page (whatever the route
    said), else, on resolution's paths, the policy's value for the status unless the route
    set one, and ``Vary: Accept`` unless the route's ``Vary`` names it (a page's may name only
    ``Accept-Language``: :mod:`urnkit.resolver.web.templating`)."""
    headers = {status: policy.header(status) for status in range(100, 600)}

    async def controlled(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        private = (
            scope["method"] not in ("GET", "HEAD")
            or scope["path"].startswith(STAFF_PATHS)
            or any(name == b"authorization" for name, _ in scope["headers"])
        )
        if not private and not is_resolution(scope["path"]):
            await app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                fields = message["headers"]
                if private:
                    kept = [field for field in fields if field[0].lower() != _CACHE_CONTROL]
                    message["headers"] = [*kept, (_CACHE_CONTROL, NO_STORE)]
                else:
                    names = {name.lower() for name, _ in fields}
                    added = [] if _varies_by_accept(fields) else [_VARY_ACCEPT]
                    if _CACHE_CONTROL not in names:
                        added.append((_CACHE_CONTROL, headers[message["status"]]))
                    message["headers"] = [*fields, *added]
            await send(message)

        await app(scope, receive, sending)

    return controlled


def _varies_by_accept(fields: list[tuple[bytes, bytes]]) -> bool:
    """Whether a ``Vary`` field of ``fields`` names ``Accept`` (RFC 9110 §12.5.5).

    >>> _varies_by_accept([(b"vary", b"Accept-Language")])
    False
    >>> _varies_by_accept([(b"Vary", b"Accept-Language, accept")])
    True
    """
    return any(
        token.strip().lower() == b"accept"
        for name, value in fields
        if name.lower() == _VARY
        for token in value.split(b",")
    )


def validated(
    request: Request,
    response: Response,
    last_modified: datetime | None,
    cache_control: str | None = None,
    tagged: bytes | None = None,
) -> Response:
    """``response`` with an ``ETag`` (of ``tagged``, by default its body) and ``Last-Modified``
    (and ``Cache-Control``, if given), or a ``304 Not Modified`` with the same validators when
    the request's ``If-None-Match`` (or, without one, ``If-Modified-Since``) still holds
    (RFC 9110 §13.1.2, §13.1.3, §13.2.2).

    >>> from starlette.requests import Request as Plain
    >>> scope = {"type": "http", "headers": [(b"if-none-match", b'W/"x", "abc"')]}
    >>> validated(Plain(scope), Response(b"a"), None).status_code
    200
    """
    etag = f'"{generate_etag(bytes(response.body) if tagged is None else tagged)}"'
    response.headers["etag"] = etag
    if last_modified is not None:
        response.headers["last-modified"] = http_date(last_modified)
    if cache_control is not None:
        response.headers["cache-control"] = cache_control
    asked = request.headers
    if is_resource_modified(
        http_if_modified_since=asked.get("if-modified-since"),
        http_if_none_match=asked.get("if-none-match"),
        etag=etag,
        last_modified=last_modified,
    ):
        return response
    kept = {
        name: response.headers[name] for name in _NOT_MODIFIED_FIELDS if name in response.headers
    }
    if last_modified is not None:
        kept["last-modified"] = response.headers["last-modified"]
    return Response(status_code=304, headers=kept)
