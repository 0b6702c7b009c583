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
from urnkit.resolver.domain import NotFoundError
from urnkit.resolver.services import Services
from urnkit.resolver.web.deps import decoded_if_whole
from urnkit.resolver.web.problems import problem_body, refusal, wants_html
from urnkit.resolver.web.templating import html_page

_NOT_RESOLUTION = ("/api/", "/staff", "/oai", "/static/", "/docs")


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
    """The answer to :class:`NotFoundError`: to a reader who asked for a URN, the page that
    helps, in the reader's language; else the problem (:func:`refusal`)."""
    text = urn_sought(request) if wants_html(request) else None
    if text is None:
        return refusal(request, error)
    services: Services = request.app.state.services
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
