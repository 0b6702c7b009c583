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
from urnkit.resolver.web.deps import decoded_if_whole
from urnkit.resolver.web.problems import problem_body, refusal, wants_html
from urnkit.resolver.web.templating import html_page

_NOT_RESOLUTION = ("/api/", "/staff", "/oai", "/static/", "/docs")


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
    (:class:`PastedURNError`); to a reader who asked for a URN found nowhere, the page that
    helps, in the reader's language, with the registered URNs nearest it (``nearest``, which
    the services give when asked for a reader's page); else the problem (:func:`refusal`).
    Written from the error alone: the services were called once, by the route."""
    if isinstance(error, PastedURNError):
        return _moved(request, error.urn)
    sought = urn_sought(request)
    if sought is None or error.nearest is None or not wants_html(request):
        return refusal(request, error)
    problem = problem_body(404, error.title, error.detail, error.problem_type, **error.extensions)
    return html_page(
        request,
        "not_found.html",
        404,
        {"Vary": "Accept"},
        strict=False,
        problem=problem,
        q=sought,
        by="auto",
        nearest=error.nearest,
    )
