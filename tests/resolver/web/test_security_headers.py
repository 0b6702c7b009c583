"""The security headers, black-box against ``urnkit serve`` on SQLite and PostgreSQL: every HTML
page (the pages, ``/docs``, a record's page, problem pages) carries a Content-Security-Policy
that allows no inline script or style and no framing, and a Referrer-Policy, and holds no
inline script, style or event handler; every response carries ``nosniff``."""

from __future__ import annotations

from html.parser import HTMLParser

import httpx
import pytest
from resolver_support import BROWSER, JSON, register

PAGES = [
    "/",
    "/search?q=Thesis",
    "/search?q=urn:nbn:fi:test-%C3%A4%C3%A4&by=urn",  # an error in the page (RFC 8141 §2)
    "/prefixes",
    "/statistics",
    "/docs",
    "/urn:nbn:fi:test-not-registered-anywhere",  # a 404 problem page
    "/api/v1/no-such-route",
]


def directives(policy: str) -> dict[str, list[str]]:
    """A Content-Security-Policy's directives and their source lists (CSP Level 3 §2.2)."""
    parsed: dict[str, list[str]] = {}
    for directive in policy.split(";"):
        name, *sources = directive.split()
        parsed.setdefault(name.lower(), sources)
    return parsed


class _Inline(HTMLParser):
    """What a page holds inline: scripts without ``src`` (but data blocks, HTML §4.12.1.1: the
    JSON-LD of schema.org, which no browser runs), ``<style>``, ``style=`` and ``on*=``."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        data_block = dict(attrs).get("type") == "application/ld+json"
        if (tag == "script" and "src" not in names and not data_block) or tag == "style":
            self.found.append(f"<{tag}>")
        self.found += [f"{tag} {name}=" for name in names if name == "style" or name[:2] == "on"]


def assert_page_headers(response: httpx.Response) -> None:
    assert response.headers["content-type"].startswith("text/html")
    policy = directives(response.headers["content-security-policy"])
    # CSP Level 3 §6.1: script and style only from the server's own files; nothing inline.
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["default-src"] == ["'none'"]
    assert all("'unsafe-" not in " ".join(sources) for sources in policy.values())
    # CSP Level 3 §6.4.2: no page is framed, by anyone (clickjacking).
    assert policy["frame-ancestors"] == ["'none'"]
    assert response.headers["referrer-policy"] == "strict-origin-when-cross-origin"
    assert response.headers["x-content-type-options"] == "nosniff"
    inline = _Inline()
    inline.feed(response.text)
    assert inline.found == []


@pytest.mark.parametrize("path", PAGES)
def test_every_page_carries_the_policy_and_nothing_inline(
    anonymous: httpx.Client, path: str
) -> None:
    response = anonymous.get(path, headers={"Accept": BROWSER})
    assert response.status_code in (200, 400, 404), response.text
    assert_page_headers(response)


def test_a_records_page_carries_the_policy(api: httpx.Client, unique: str) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    # A registrant's text that would run if a page let inline script through.
    title = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    register(api, urn, [{"url": "https://example.org/a"}], {"title": title})
    page = api.get(f"/{urn}?s=I2C", headers={"Accept": BROWSER})
    assert page.status_code == 200
    assert_page_headers(page)
    assert "&lt;script&gt;" in page.text


def test_the_stylesheet_and_scripts_are_files_of_the_server(anonymous: httpx.Client) -> None:
    for path, media_type in (
        ("/static/site.css", "text/css"),
        ("/static/docs.js", "text/javascript"),
        ("/static/swagger-ui/swagger-ui.css", "text/css"),
    ):
        response = anonymous.get(path)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith(media_type)
        assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    ("path", "accept"),
    [
        ("/api/v1/prefixes", JSON),
        ("/openapi.json", JSON),
        ("/healthz", JSON),
        ("/metrics", "text/plain"),
        ("/urn:nbn:fi:test-not-registered-anywhere", JSON),  # a problem as JSON
        ("/uri-res/I2L?urn:nbn:fi:test-not-registered-anywhere", "*/*"),
    ],
)
def test_every_response_is_nosniff(anonymous: httpx.Client, path: str, accept: str) -> None:
    # Fetch §3.5 (X-Content-Type-Options): the body is only what its Content-Type says.
    response = anonymous.get(path, headers={"Accept": accept})
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" not in response.headers  # not a page


def test_the_resolution_redirect_is_nosniff_and_keeps_the_referrer(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/r"}])
    for method in ("GET", "HEAD"):
        # RFC 8458 §4.4: the redirect, answered by the front.
        response = anonymous.request(method, f"/{urn}", headers={"Accept": BROWSER})
        assert response.status_code == 302
        assert response.headers["x-content-type-options"] == "nosniff"
        # The target sees the linking page's referrer, under that page's policy.
        assert "referrer-policy" not in response.headers
