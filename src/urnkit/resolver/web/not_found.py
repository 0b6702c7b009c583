"""The page of a URN not found (404) for a reader: the problem, the search box filled in with
the text, up to five registered URNs close to it, and what a URN:NBN looks like
(docs/resolution.md, "Pasted URNs").

>>> from starlette.requests import Request
>>> sought = lambda path, query=b"": urn_sought(
...     Request({"type": "http", "path": path, "raw_path": path.encode(), "query_string": query})
... )
>>> sought("/urn:nbn:fi-1%20x"), sought("/uri-res/I2L", b"urn:nbn:fi-1")
('urn:nbn:fi-1 x', 'urn:nbn:fi-1')
>>> sought("/api/v1/urns/urn:nbn:fi-1"), sought("/nothing")
(None, None)
"""

from urllib.parse import unquote

from fastapi import Request, Response

from urnkit.pasted import cleaned
from urnkit.resolver.domain import NotFoundError, PastedURNError
from urnkit.resolver.services import Services
from urnkit.resolver.web.deps import decoded_if_whole
from urnkit.resolver.web.problems import problem_body, refusal, wants_html
from urnkit.resolver.web.templating import html_page

_NOT_RESOLUTION = ("/api/", "/staff", "/oai", "/static/", "/docs")


def _as_sent(request: Request) -> str:
    """The URN text of a resolution request, as sent: the query of ``/uri-res/``, else the
    path's."""
    raw: bytes = request.scope.get("raw_path") or request.scope["path"].encode()
    if raw.startswith(b"/uri-res/"):
        return decoded_if_whole(request.scope.get("query_string", b"").decode("latin-1"))
    return decoded_if_whole(raw.decode("latin-1")[1:])


def _moved(request: Request, urn: str) -> Response:
    """``301`` to ``urn`` where the request named a pasted text: ``/{urn}`` with the request's
    query (its components, a service), or ``/uri-res/{service}?{urn}``; kept as long as a
    resolution's redirect, as registering the text as given would change it."""
    raw: bytes = request.scope.get("raw_path") or request.scope["path"].encode()
    path, query = raw.decode("latin-1"), request.scope.get("query_string", b"").decode("latin-1")
    if path.startswith("/uri-res/"):
        location = f"{path}?{urn}"
    else:
        location = f"/{urn}?{query}" if query else f"/{urn}"
    cache_control = request.app.state.cache.header(302).decode()
    return Response(status_code=301, headers={"Location": location, "Cache-Control": cache_control})


def urn_sought(request: Request) -> str | None:
    """The text a request asked to resolve, percent-decoded for showing (``/{urn}``,
    ``/uri-res/{service}?{urn}``), if it is a URN, perhaps as pasted; None for other paths."""
    raw: bytes = request.scope.get("raw_path") or request.scope["path"].encode()
    path = raw.decode("latin-1")
    if path.startswith("/uri-res/"):
        text = request.scope.get("query_string", b"").decode("latin-1")
    elif path.startswith(_NOT_RESOLUTION):
        return None
    else:
        text = path[1:]
    shown = unquote(decoded_if_whole(text), errors="replace")
    return shown if cleaned(shown)[:4].lower() == "urn:" else None


def not_found(request: Request, error: NotFoundError) -> Response:
    """The answer to :class:`NotFoundError`: ``301`` to the URN a pasted text names
    (:class:`PastedURNError`, or an RFC 2483 service's text as
    :meth:`~urnkit.resolver.services.resolution.ResolutionService.pasted` finds it); to a
    reader who asked for a URN, the page that helps, in the reader's language; else the
    problem (:func:`refusal`)."""
    services: Services = request.app.state.services
    if isinstance(error, PastedURNError):
        return _moved(request, error.urn)
    sought = urn_sought(request)
    if sought is not None:
        pasted = services.resolution.pasted(_as_sent(request))
        if pasted is not None:
            return _moved(request, pasted)
    text = sought if wants_html(request) else None
    if text is None:
        return refusal(request, error)
    problem = problem_body(404, error.title, error.detail, error.problem_type, **error.extensions)
    return html_page(
        request,
        "not_found.html",
        404,
        {"Vary": "Accept"},
        strict=False,
        problem=problem,
        q=text,
        by="auto",
        nearest=services.overview.nearest(text),
    )
