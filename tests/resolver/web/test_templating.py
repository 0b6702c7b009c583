"""The pages' frame (web/templating.py): the header names the service and the organisation
running it, as the settings say; the metadata's names and controlled values are in the
reader's language."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from starlette.requests import Request

from urnkit.resolver.web.templating import SITE, Site, html_page


def _page(site: Site | None, template: str, query: bytes = b"", **context: Any) -> str:
    scope: dict[str, Any] = {"type": "http", "query_string": query, "headers": []}
    if site is not None:
        scope["app"] = SimpleNamespace(state=SimpleNamespace(site=site))
    return bytes(html_page(Request(scope), template, **context).body).decode()


def test_the_header_names_the_service_and_its_operator() -> None:
    site = Site("Finnish URN resolver", "National Library", "https://library.example/", None)
    page = _page(site, "home.html")
    assert '<a class="service" href="/">Finnish URN resolver</a>' in page
    assert '<a href="https://library.example/">National Library</a>' in page
    assert "<title>Finnish URN resolver</title>" in page
    assert "<img" not in page  # no logo set
    logo = _page(Site("R", "", "", (b"<svg/>", "image/svg+xml")), "home.html")
    assert '<img src="/logo" alt=""' in logo  # decorative: the name beside it says it


def test_without_settings_the_header_says_urnkit_resolver() -> None:
    assert SITE.name in _page(None, "home.html")
    assert 'class="operator"' not in _page(None, "home.html")


def _record(metadata: dict[str, object]) -> dict[str, object]:
    now = datetime.now(UTC).isoformat()
    return {
        "urn": "urn:nbn:fi:test-1",
        "status": "active",
        "metadata": metadata,
        "successors": [],
        "owner": "Test Library",
        "created": now,
        "updated": now,
    }


def test_metadata_names_and_controlled_values_are_in_the_readers_language() -> None:
    metadata = {
        "title": "Kieli",
        "creators": [{"family": "Lee", "given": "Bo", "role": "supervisor"}],
        "type": "info:eu-repo/semantics/doctoralThesis",
        "language": "swe",
        "pages": 12,
    }
    page = _page(
        None,
        "record.html",
        b"lang=de",
        record=_record(metadata),
        locations=[],
        predecessors=[],
        history=[],
        withheld=[],
        json_ld="{}",
    )
    assert "<dt>Urheber</dt><dd>Lee, Bo (Betreuer(in))</dd>" in page
    assert "<dt>Ressourcentyp</dt><dd>Dissertation</dd>" in page
    assert "<dt>Sprache</dt><dd>Schwedisch</dd>" in page
    assert "<dt>pages</dt><dd>12</dd>" in page  # a name the service does not know, as stored
    assert "<h1>Kieli</h1>" in page
