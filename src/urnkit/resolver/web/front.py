"""The application's front: resolution's commonest answer, a redirect, given before routing and
the framework's layers run, and the pieces of it resolution's route shares (the redirect, the
``Link`` header, the resolver's base URL, whether a client prefers a JSON answer)."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import replace

from fastapi import Request, Response
from starlette.types import ASGIApp, Receive, Scope, Send
from werkzeug.datastructures import MIMEAccept

from urnkit.resolver.representations.citations import CITATION_TYPES
from urnkit.resolver.representations.memento import VARY, timegate_header
from urnkit.resolver.representations.rfc2483 import (
    accept_header,
    link_header,
    negotiate,
    quality,
    uri_reference,
)
from urnkit.resolver.representations.signposting import LINKSET_TYPES, resolution_signposts
from urnkit.resolver.services import Services
from urnkit.resolver.services.resolution import Resolution
from urnkit.resolver.web.caching import NO_STORE
from urnkit.resolver.web.deps import raw_urn
from urnkit.resolver.web.metrics import Metrics
from urnkit.resolver.web.problems import prefers_html

# The scope key under which the front (redirect_front) hands what it found to the route.
FOUND = "urnkit.resolution"
CEILING_PATH = "/-/redirect"  # the cheapest redirect the server gives (benchmarks' ceiling)
# The record as JSON; its signposts as a linkset, JSON or the Link header's form (RFC 9264 §4).
JSON_TYPES = ("application/json", *LINKSET_TYPES)
# fix/cite: what else /{urn} gives by Accept (web/citing.py): JSON-LD, Dublin Core, the
# locations as a text/uri-list, citations; NOT_ACCEPTABLE when it takes nothing /{urn} gives.
XML_TYPES = ("application/xml", "text/xml")  # Dublin Core (oai_dc), what I2C and I2Cs give
REPRESENTED: tuple[str, ...] = ("application/ld+json", *XML_TYPES)
REPRESENTED += ("text/uri-list", *CITATION_TYPES)
NOT_ACCEPTABLE = "406"
# text/html stands for the default answer; the linkset's two forms (RFC 9264 §4)
_NEGOTIATED = ("text/html", *JSON_TYPES, *REPRESENTED)
# An Accept header naming none of these is not parsed: it can only take the default answer.
_MARKERS = re.compile(rb"json|linkset|xml|uri-list|bibtex|research-info|bibliography")
_VARY_DATETIME = f"Accept, {VARY}".encode()  # /{urn} of a record here: its own TimeGate
_BASES: dict[BaseKey, str] = {}  # see base_url
_MOST_BASES = 64  # a server has a few names; a Host header a client makes up is not kept


def redirect_front(
    app: ASGIApp, services: Services, metrics: Metrics, kept: KeptHeaders
) -> ASGIApp:
    """``app``, with resolution's commonest answer given before routing and the framework's
    layers run: the redirect of ``GET`` or ``HEAD /{urn}`` without a query, for a client
    that does not prefer JSON. Whatever else the lookup gives (a surrogate, gone, an error)
    is handed to resolution's route in the scope, which answers it as before, through the
    exception handlers (a URN found nowhere with the registered URNs nearest it when the
    client prefers HTML: the page shows them). ``GET /-/redirect``, the ceiling of
    ``benchmarks/resolve_bench.py``, is answered here too, so that the ratio of the two
    measures what resolving costs (docs/benchmarks.md has the figures). Its redirects carry
    ``kept``'s ``cache_control`` (``no-store`` when the target depends on the client's
    address: a record with locations restricted to networks); a request with credentials
    goes the long way, to be answered ``no-store`` (web/caching.py). The headers of a
    redirect the services keep are kept beside it, in ``kept``."""

    async def front(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            path: str = scope["path"]
            if path == CEILING_PATH:
                ceiling = redirect(scope, "https://example.org/", kept.cache_control)
                await ceiling(scope, receive, send)
                return
            if (
                path[1:5].lower() == "urn:"
                and not scope["query_string"]
                and (reader := _plain(scope)) is not None
            ):
                client = scope.get("client")
                urn = raw_urn(scope, "/")
                try:
                    found = await services.resolution.resolve_async(
                        urn, client[0] if client else None, reader
                    )
                except Exception as error:  # the route raises it again, to be answered
                    scope[FOUND] = error
                else:
                    if found.kind != "redirect":
                        scope[FOUND] = found
                    else:
                        metrics.resolved("redirect")
                        headers = kept.headers(scope, urn, found)
                        await send({"type": "http.response.start", "status": 302,
                                    "headers": headers})  # fmt: skip
                        await send({"type": "http.response.body", "body": b""})
                        return
        await app(scope, receive, send)

    return front


Headers = list[tuple[bytes, bytes]]


class KeptHeaders:
    """The headers of the redirects of records the front gave, by the URN as sent and what
    the resolver's URL depends on (:func:`base_url`), each beside the
    :class:`~urnkit.resolver.services.resolution.Resolution` they answer, one the services
    keep: given again while the services give that same object (they keep it while nothing
    changed), made anew otherwise. Their ``cache_control`` is the redirects' (``no-store``
    where the target depends on the client). Beyond ``MOST`` the oldest go first."""

    MOST = 100_000

    def __init__(self, cache_control: bytes) -> None:
        self.cache_control = cache_control
        # The oldest goes first in constant time (see KeptRedirects).
        self.kept: OrderedDict[tuple[object, ...], _Kept]
        self.kept = OrderedDict()
        self.shapes = RedirectShapes()

    def encoded(
        self, urn: str, found: Resolution, scheme: str, host: bytes, server: object
    ) -> bytes:
        """The headers of the redirect ``found`` for ``urn``, requested of ``server`` (its
        address) by ``scheme`` with ``host`` (the ``Host`` header; empty if none), the root
        path empty, encoded as sent: for a server's answer below the application
        (web/below.py); kept if the services keep ``found``."""
        key = (urn, scheme, host, "", server)
        entry = self.kept.get(key)
        if entry is not None and entry[0] is found:
            return entry[2]
        block = self.shapes.encoded((scheme, host, "", server), self._cache_control(found), found)
        if block is None:
            return encoded_headers(self.headers(_scope(scheme, host, "", server), urn, found))
        if found.kept:
            self._keep(key, (found, None, block))
        return block

    def headers(self, scope: Scope, urn: str, found: Resolution) -> Headers:
        """The headers of the redirect ``found`` for ``urn`` (:func:`redirect`'s), each
        response its own list (the layers around append to it)."""
        key = (urn, *base_key(scope))
        entry = self.kept.get(key)
        if entry is not None and entry[0] is found and entry[1] is not None:
            return list(entry[1])
        cache_control = self._cache_control(found)
        made = self.shapes.filled(scope, cache_control, found)
        if made is None:
            made = redirect_headers(scope, found.target or "", cache_control, found)
        if found.kept:
            self._keep(key, (found, made, encoded_headers(made)))
        return list(made)

    def _cache_control(self, found: Resolution) -> bytes:
        """The redirect's ``Cache-Control``: ``no-store`` where it depends on the client."""
        return NO_STORE if found.routed else self.cache_control

    def _keep(self, key: tuple[object, ...], entry: _Kept) -> None:
        """Keep ``entry`` under ``key``, the oldest dropped beyond ``MOST``."""
        if len(self.kept) >= self.MOST and key not in self.kept:
            self.kept.popitem(last=False)
        self.kept[key] = entry


def encoded_headers(headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    """``headers`` as sent: each ``name: value`` and CRLF.

    >>> encoded_headers([(b"location", b"https://a.example/")])
    b'location: https://a.example/\\r\\n'
    """
    return b"".join(name + b": " + value + b"\r\n" for name, value in headers)


# A redirect, its headers as pairs (None until the application asks for them) and encoded.
_Kept = tuple[Resolution, Headers | None, bytes]


class RedirectShapes:
    """The headers of a record's redirect (:func:`redirect_headers`) made once per shape (the
    resolver's URL, the ``Cache-Control``, how many locations with which media types) with
    :data:`SLOT` names in place of the URN's key, the target and the locations, then filled
    in for each record of that shape: every one of them stands in those headers as
    :func:`~urnkit.resolver.representations.rfc2483.uri_reference` writes it, and the rest is
    the same. A record with predecessors, or a resolver's URL holding a slot's name, is made
    by :func:`redirect_headers` itself (None).

    >>> scope = {"type": "http", "scheme": "http", "server": ("r.example", 80), "path": "/",
    ...          "root_path": "", "query_string": b"", "headers": []}
    >>> from urnkit.resolver.domain import parse_urn
    >>> found = Resolution("redirect", parse_urn("urn:nbn:fi-1"), "https://a.example/ä",
    ...                    "urn:nbn:fi-1", alternates=("https://a.example/ä",), kept=True)
    >>> filled = RedirectShapes().filled(scope, b"max-age=300", found)
    >>> filled == redirect_headers(scope, found.target, b"max-age=300", found)
    True
    """

    MOST = 64  # shapes kept; beyond, the headers are made whole

    def __init__(self) -> None:
        self.templates: dict[tuple[object, ...], _Shape] = {}

    def filled(self, scope: Scope, cache_control: bytes, found: Resolution) -> Headers | None:
        """The headers of the redirect ``found``, or None where they must be made whole."""
        shape = self._shape(base_key(scope), cache_control, found)
        if shape is None:
            return None
        slots = _slots(found)
        return [
            (name, value if isinstance(value, bytes) else (value % slots).encode("ascii"))
            for name, value in shape[0]
        ]

    def encoded(self, base: BaseKey, cache_control: bytes, found: Resolution) -> bytes | None:
        """:meth:`filled` for a request whose :func:`base_key` is ``base``, encoded as sent
        (each ``name: value`` and CRLF)."""
        shape = self._shape(base, cache_control, found)
        return None if shape is None else (shape[1] % _slots(found)).encode("ascii")

    def _shape(self, base: BaseKey, cache_control: bytes, found: Resolution) -> _Shape | None:
        """The template of ``found``'s shape, made now if it is new."""
        if found.predecessors or not found.key or found.target is None:
            return None
        shape = (*base, cache_control, len(found.alternates), found.media_types)
        template = self.templates.get(shape)
        if template is None:
            scope = _scope(*base)
            if len(self.templates) >= self.MOST or SLOT in base_url(scope):
                return None
            template = self.templates[shape] = _template(scope, cache_control, found)
        return template


def _slots(found: Resolution) -> dict[str, str]:
    """What :data:`SLOT` names stand for in ``found``'s headers, as written there."""
    target = found.target
    assert target is not None, "a redirect has its target"
    written = uri_reference(target)
    slots = {"key": uri_reference(found.key), "target": written}
    for n, url in enumerate(found.alternates):  # the first is the target
        slots[f"{n}"] = written if url is target else uri_reference(url)
    return slots


def _scope(scheme: str, host: bytes, root_path: str, server: object) -> Scope:
    """A scope of a ``GET /`` with ``host`` (no header if empty) to ``server`` by ``scheme``
    under ``root_path``: a :func:`base_key`'s parts in its order, what the resolver's URL and
    a redirect's headers are made of."""
    headers = [(b"host", host)] if host else []
    return {"type": "http", "scheme": scheme, "server": server, "root_path": root_path,
            "path": "/", "query_string": b"", "headers": headers}  # fmt: skip


SLOT = "urnkit-slot-"


# Each header's value as sent or a % format of the slots; all of them encoded as one format.
_Shape = tuple[list[tuple[bytes, bytes | str]], str]


def _template(scope: Scope, cache_control: bytes, found: Resolution) -> _Shape:
    """The headers of a redirect of ``found``'s shape, a value with slots as a ``%`` format
    whose names are those of :func:`_slots`."""
    names = ["key", "target", *(f"{n}" for n in range(len(found.alternates)))]
    standing = {name: f"{SLOT}{name}-" for name in names}
    alternates = tuple(standing[f"{n}"] for n in range(len(found.alternates)))
    stand_in = replace(found, key=standing["key"], alternates=alternates)
    made = redirect_headers(scope, standing["target"], cache_control, stand_in)

    def format_of(text: str) -> str:
        text = text.replace("%", "%%")
        for slot, stand in standing.items():
            text = text.replace(stand, f"%({slot})s")
        return text

    pairs: list[tuple[bytes, bytes | str]] = [
        (name, format_of(value.decode("ascii")) if SLOT.encode() in value else value)
        for name, value in made
    ]
    block = b"".join(name + b": " + value + b"\r\n" for name, value in made)
    return pairs, format_of(block.decode("ascii"))


def redirect(
    scope: Scope, target: str, cache_control: bytes, found: Resolution | None = None
) -> Response:
    """A 302 to ``target`` (RFC 8458 §4.4: never permanent) with :func:`redirect_headers`.

    >>> scope = {"type": "http", "scheme": "http", "server": ("r.example", 80), "path": "/",
    ...          "root_path": "", "query_string": b"", "headers": []}
    >>> response = redirect(scope, "https://example.org/ä", b"max-age=300")
    >>> response.status_code, response.headers["location"]
    (302, 'https://example.org/%C3%A4')
    """
    response = Response(status_code=302)
    response.raw_headers = redirect_headers(scope, target, cache_control, found)
    return response


def redirect_headers(
    scope: Scope, target: str, cache_control: bytes, found: Resolution | None = None
) -> Headers:
    """The headers of a 302 to ``target`` that caches may keep as ``cache_control`` says,
    varying by ``Accept`` (a client preferring JSON gets the record); for the redirect
    ``found`` with alternates (a record of ours, its equivalence key ``key``, not one
    forwarded) a ``Link`` header names them and its predecessors, and gives the signposts the
    row allows (:func:`~urnkit.resolver.representations.signposting.resolution_signposts`:
    each item with its media type, if any). In the order sent, as raw header pairs: a headers=
    dict costs more (Starlette encodes and inspects each entry). No body: ``Content-Length: 0``
    first, as Starlette writes it.

    >>> scope = {"type": "http", "scheme": "http", "server": ("r.example", 80), "path": "/",
    ...          "root_path": "", "query_string": b"", "headers": []}
    >>> redirect_headers(scope, "https://example.org/", b"no-store")[:2]
    [(b'content-length', b'0'), (b'location', b'https://example.org/')]
    """
    key = "" if found is None else found.key
    headers = [
        (b"content-length", b"0"),
        (b"location", uri_reference(target).encode("ascii")),
        (b"cache-control", cache_control),
        (b"vary", _VARY_DATETIME if key else b"Accept"),
    ]
    if found is not None and found.alternates:
        alternates = found.alternates
        signposts = (
            resolution_signposts(base_url(scope), key, alternates, found.media_types) if key else ""
        )
        links = resolution_links(scope, alternates, (), found.predecessors, signposts, key)
        headers.append((b"link", links.encode("ascii")))
    return headers


def resolution_links(
    scope: Scope,
    alternates: Sequence[str],
    successors: Sequence[str],
    predecessors: Sequence[str],
    signposts: str = "",
    key: str = "",
) -> str:
    """The ``Link`` header of a resolution answer (RFC 8288): ``alternate`` per location URL,
    ``successor-version`` and ``predecessor-version`` (RFC 5829) per successor and predecessor,
    at their resolution URLs here, then the ``signposts`` (FAIR Signposting, a ``Link``
    value); for a record of ours (its equivalence key ``key``), its TimeGate and TimeMaps
    (RFC 7089 §2.2)."""
    links = [(url, "alternate") for url in alternates]
    if successors or predecessors:
        base = base_url(scope)
        links += [(base + urn, "successor-version") for urn in successors]
        links += [(base + urn, "predecessor-version") for urn in sorted(predecessors)]
    times = timegate_header(base_url(scope), key) if key else ""
    return ", ".join(part for part in (link_header(links), signposts, times) if part)


def base_url(scope: Scope) -> str:
    """The resolver's URL as the request names it, ending in ``/`` (Starlette's ``base_url``:
    the scheme, the ``Host`` header, the root path), remembered for the few names a server
    has: made anew, it cost a large share of a redirect's own work."""
    key = base_key(scope)
    base = _BASES.get(key)
    if base is None:
        base = str(Request(scope).base_url)
        if len(_BASES) < _MOST_BASES:
            _BASES[key] = base
    return base


BaseKey = tuple[str, bytes, str, object]


def base_key(scope: Scope) -> BaseKey:
    """What the resolver's URL depends on (:func:`base_url`): the scheme, the ``Host``
    header, the root path, the server's address."""
    host = b""
    for name, value in scope["headers"]:
        if name == b"host":
            host = value
            break
    return scope["scheme"], host, scope.get("root_path", ""), scope.get("server")


_NOT_PLAIN = (b"authorization", b"accept-datetime")


def _plain(scope: Scope) -> bool | None:
    """None unless the request may have the front's redirect: it sends no credentials, asks
    for no moment of the past (RFC 7089's ``Accept-Datetime``: the route negotiates it) and
    does not prefer a JSON answer (see :func:`preferred_json`); else whether it prefers HTML
    (a reader, whose URN not found is answered with the registered URNs nearest it: see
    :func:`~urnkit.resolver.web.problems.prefers_html`). One pass over the headers."""
    reader = False
    for name, value in scope["headers"]:
        if name in _NOT_PLAIN:
            return None
        if name == b"accept":
            if json_first(value):
                return None
            reader = prefers_html(value.decode("latin-1"))
    return reader


def preferred_json(scope: Scope, media_types: Sequence[str | None] = ()) -> str | None:
    """The answer the ``Accept`` header prefers to the default one (a redirect, or a page,
    which stands for ``text/html`` and the ``media_types`` of the locations): one of
    :data:`JSON_TYPES`, ``application/linkset`` or :data:`REPRESENTED`, :data:`NOT_ACCEPTABLE`
    when it takes none of them nor the default; None for the default."""
    for name, value in scope["headers"]:
        if name == b"accept":
            return json_first(value, media_types)
    return None


def json_first(accept: bytes, media_types: Sequence[str | None] = ()) -> str | None:
    """What an ``Accept`` value prefers to the default answer (see :func:`preferred_json`);
    one naming none of :data:`_MARKERS`, or a browser's (``text/html`` first at full quality:
    the default wins any tie), is not parsed: the redirect's path. Media type parameters
    (``style=`` of ``text/x-bibliography``) do not take part in choosing a type."""
    if accept.startswith(b"text/html,") or not _MARKERS.search(accept):
        return None
    entries = accept_header(accept.decode("latin-1"))
    parsed = MIMEAccept([(value.partition(";")[0].strip(), q) for value, q in entries])
    chosen = negotiate(parsed, _NEGOTIATED)
    located = max((quality(parsed, media_type) for media_type in media_types), default=0)
    default = max(quality(parsed, "text/html"), located)
    if chosen is None or quality(parsed, chosen) <= default:
        return None if default > 0 else NOT_ACCEPTABLE
    return chosen
