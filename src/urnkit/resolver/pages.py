"""The resolver's pages for people: search, the register of prefixes, statistics; and /metrics.

Server-rendered HTML (Jinja2, autoescaped), usable without JavaScript; their JSON twins are
``/api/v1/search``, ``/api/v1/prefixes`` and ``/api/v1/statistics``. Like the rest of the web
layer these routes only read the request, call the service and render what it returns.

>>> search_kind("URN:NBN:fi-1"), search_kind("https://example.org/"), search_kind("Thesis")
('urn', 'url', 'title')
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import FastAPI, Query
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment
from prometheus_client import CONTENT_TYPE_LATEST

from urnkit.resolver.domain import InvalidURNError, UnacceptableError
from urnkit.resolver.metrics import Metrics
from urnkit.resolver.services import Services
from urnkit.resolver.services.overview import MAX_STATISTICS_DAYS
from urnkit.resolver.services.shapes import record_json

SearchBy = Literal["urn", "url", "title"]
PAGE_SIZE = 20  # search results on one page
STATISTICS_DAYS = 31  # the span the statistics page shows unless asked for another


def search_kind(text: str) -> SearchBy:
    """What a search text is when the searcher did not say: a URN if it begins with ``urn:``
    (in any case, RFC 8141 §2), a URL if with ``http://`` or ``https://``, else a title."""
    start = text.lstrip()[:8].lower()
    if start.startswith("urn:"):
        return "urn"
    if start.startswith(("http://", "https://")):
        return "url"
    return "title"


def add_pages(app: FastAPI, services: Services, templates: Environment, metrics: Metrics) -> None:
    """Add ``/``, ``/search``, ``/prefixes``, ``/statistics`` and ``/metrics`` to ``app``."""

    def page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
        body = templates.get_template(template).render(**context)
        return HTMLResponse(body, status_code=status)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def home() -> HTMLResponse:
        return page("home.html")

    @app.get("/search", response_class=HTMLResponse, include_in_schema=False)
    def search(
        q: Annotated[str, Query(max_length=4000)] = "",
        by: Literal["auto", "urn", "url", "title"] = "auto",
        cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None,
    ) -> HTMLResponse:
        """Records by URN (equivalence), by location URL (reverse lookup) or by title."""
        text = q.strip()
        kind = search_kind(text) if by == "auto" else by
        context: dict[str, Any] = {"q": text, "by": by, "kind": kind, "records": None}
        if not text:
            return page("search.html", **context)
        try:
            found, after = services.overview.search(kind, text, int(cursor or 0), PAGE_SIZE)
        except InvalidURNError as error:
            return page("search.html", 400, error=error, **context)
        except UnacceptableError as error:
            return page("search.html", 422, error=error, **context)
        context["records"] = [record_json(record) for record in found]
        context["next_cursor"] = after
        return page("search.html", **context)

    @app.get("/prefixes", response_class=HTMLResponse, include_in_schema=False)
    def prefixes() -> HTMLResponse:
        """The public register of delegated prefixes (RFC 8458 §4.3)."""
        return page("prefixes.html", register=services.overview.register())

    @app.get("/statistics", response_class=HTMLResponse, include_in_schema=False)
    def statistics(
        days: Annotated[int, Query(ge=1, le=MAX_STATISTICS_DAYS)] = STATISTICS_DAYS,
    ) -> HTMLResponse:
        """Resolutions per prefix per day (UTC)."""
        counts = services.overview.statistics(days)
        return page("statistics.html", counts=counts, days=days)

    @app.get("/metrics", include_in_schema=False)
    def prometheus() -> Response:
        """The Prometheus text exposition format."""
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
