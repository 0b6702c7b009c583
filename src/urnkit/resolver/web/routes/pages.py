"""The resolver's pages for people: home, search, the register of prefixes, statistics.

Server-rendered HTML (Jinja2, autoescaped), usable without JavaScript; their JSON twins are
``/api/v1/search``, ``/api/v1/prefixes``, ``/api/v1/statistics`` and
``/api/v1/statistics/statuses``. Like the rest of the web
layer these routes only read the request, call the service and render what it returns.

>>> search_kind("URN:NBN:fi-1"), search_kind("https://example.org/"), search_kind("Thesis")
('urn', 'url', 'title')
>>> search_kind("urn:isbn:0-8044-2957-X")
'identifier'
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from urnkit.pasted import cleaned
from urnkit.resolver.domain import InvalidURNError, UnacceptableError, is_identifier
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services.overview import MAX_STATISTICS_DAYS
from urnkit.resolver.web.deps import ServiceDep
from urnkit.resolver.web.routes.search import SearchBy
from urnkit.resolver.web.routes.statistics import STATISTICS_DAYS
from urnkit.resolver.web.templating import html_page

PAGE_SIZE = 20  # search results on one page
router = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)


def search_kind(text: str) -> SearchBy:
    """What a search text is when the searcher did not say: a URN if it begins with ``urn:``
    (in any case, RFC 8141 §2), an identifier records carry if that URN is of another namespace
    than NBN, a URL if it begins with ``http://`` or ``https://``, else a title."""
    start = text.lstrip()[:8].lower()
    if start.startswith("urn:"):
        return "identifier" if is_identifier(text.strip()) else "urn"
    if start.startswith(("http://", "https://")):
        return "url"
    return "title"


@router.get("/")
def home(request: Request) -> HTMLResponse:
    return html_page(request, "home.html")


@router.get("/search")
def search(
    request: Request,
    services: ServiceDep,
    q: Annotated[str, Query(max_length=4000)] = "",
    by: Literal["auto", "urn", "url", "title", "identifier"] = "auto",
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None,
) -> Response:
    """Records by URN (equivalence), by location URL (reverse lookup), by title or by an
    identifier they carry; a URN not registered as given but as pasted text cleaned
    (docs/resolution.md, "Pasted URNs") is answered ``301`` to its address."""
    text = q.strip()
    if by in ("auto", "urn", "identifier") and cleaned(text)[:4].lower() == "urn:":
        pasted = services.resolution.pasted(text)
        if pasted is not None:
            return RedirectResponse(f"/{pasted}", 301)
    kind = search_kind(text) if by == "auto" else by
    context: dict[str, Any] = {"q": text, "by": by, "kind": kind, "records": None}
    if not text:
        return html_page(request, "search.html", **context)
    try:
        found, after = services.overview.search(
            kind, text, int(cursor or 0), PAGE_SIZE, services.access.reader(None)
        )
    except InvalidURNError as error:
        return html_page(request, "search.html", 400, error=error, **context)
    except UnacceptableError as error:
        return html_page(request, "search.html", 422, error=error, **context)
    context["records"] = [record_json(record) for record in found]
    context["next_cursor"] = after
    return html_page(request, "search.html", **context)


@router.get("/prefixes")
def prefixes(request: Request, services: ServiceDep) -> HTMLResponse:
    """The public register of delegated prefixes (RFC 8458 §4.3)."""
    return html_page(request, "prefixes.html", register=services.overview.register())


@router.get("/statistics")
def statistics(
    request: Request,
    services: ServiceDep,
    days: Annotated[int, Query(ge=1, le=MAX_STATISTICS_DAYS)] = STATISTICS_DAYS,
) -> HTMLResponse:
    """Resolutions per prefix per day (UTC) and records by status at the end of each day, as
    charts and tables."""
    return html_page(
        request,
        "statistics.html",
        counts=services.overview.statistics(days),
        statuses=services.overview.record_statuses(days),
        since=services.overview.statistics_since(days),
        days=days,
    )
