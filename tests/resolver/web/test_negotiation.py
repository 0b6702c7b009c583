"""Negotiation on ``/{urn}``, Link headers on every resolution answer, and the landing page,
against a real server on SQLite and PostgreSQL; and properties of the negotiation and Link
helpers, in process.

* A client preferring JSON to HTML gets the record (200) even for an active URN; browsers,
  ``*/*`` and no Accept get the redirect; the answers say ``Vary: Accept``.
* Every answer names the locations (``rel="alternate"``, RFC 8288 §3, RFC 4287's relation), the
  successors and the predecessors (``successor-version``, ``predecessor-version``: RFC 5829).
* ``/{urn}?s=I2C`` for a browser is the landing page: status, locations with their link state,
  metadata, history oldest first, successors and predecessors; one h1, captioned tables, th
  with scope.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import lxml.html
import pytest
from hypothesis import given
from hypothesis import strategies as st
from resolver_support import (
    BROWSER,
    JSON,
    PROBLEM,
    Resolver,
    deactivate,
    mark_links,
    register,
    urnkit,
)
from rfc2483_support import links, locations, parse_links, rel, urls

from urnkit.resolver.representations.rfc2483 import accept_header, link_header, negotiate, quality
from urnkit.resolver.store import Store

# --- negotiation on /{urn} -------------------------------------------------------------------


@pytest.fixture
def urn(api: httpx.Client, unique: str) -> str:
    text = f"urn:nbn:fi:test-{unique}"
    register(api, text, locations(unique), {"title": f"Negotiated {unique}"})
    return text


@pytest.mark.parametrize(
    "accept",
    [
        JSON,
        "text/html;q=0.5, application/json",
        "application/json, */*;q=0.1",
        "*/*;q=0.1, application/json;q=0.2",
    ],
)
def test_a_client_preferring_json_gets_the_record_of_an_active_urn(
    anonymous: httpx.Client, urn: str, unique: str, accept: str
) -> None:
    found = anonymous.get(f"/{urn}", headers={"Accept": accept})
    assert found.status_code == 200, found.text
    assert found.headers["content-type"].startswith(JSON)
    assert (
        found.headers["vary"] == "Accept, accept-datetime"
    )  # RFC 7089 §4.1: /{urn} is its TimeGate
    body = found.json()
    assert (body["urn"], body["status"], body["predecessors"]) == (urn, "active", [])
    assert [loc["url"] for loc in body["locations"]] == urls(unique)
    assert rel(found, "alternate") == urls(unique)


@pytest.mark.parametrize(
    "accept",
    [
        None,
        "*/*",
        BROWSER,
        "application/json;q=0.5, text/html",
        "application/json, text/html",  # a tie: the default answer
        "application/json;q=0, */*",
        "text/plain",
        "*/*;q=0.1, application/*",  # no JSON type named: Accept is not even parsed
    ],
)
def test_browsers_and_everyone_else_get_the_redirect(
    anonymous: httpx.Client, urn: str, unique: str, accept: str | None
) -> None:
    headers = {"Accept": accept} if accept is not None else {}
    for method in ("GET", "HEAD"):
        found = anonymous.request(method, f"/{urn}", headers=headers)
        assert found.status_code == 302, found.text
        assert found.headers["location"] == urls(unique)[0]
        assert (
            found.headers["vary"] == "Accept, accept-datetime"
        )  # RFC 7089 §4.1: /{urn} is its TimeGate
        assert rel(found, "alternate") == urls(unique)


def test_the_redirect_names_the_locations_not_known_broken_best_first(
    anonymous: httpx.Client, urn: str, unique: str, server_database: Store
) -> None:
    # RFC 8288 §3: <URI>; rel="alternate" per location, in the order resolution tries them.
    mark_links(server_database, "broken", urls(unique)[0], urls(unique)[2])
    found = anonymous.get(f"/{urn}?=page=3")
    assert found.headers["location"] == urls(unique)[1] + "?page=3"
    assert rel(found, "alternate") == [urls(unique)[i] + "?page=3" for i in (1, 3)]


def test_successor_and_predecessor_links_on_every_answer(
    api: httpx.Client, anonymous: httpx.Client, resolver: Resolver, unique: str
) -> None:
    # RFC 5829 §3: successor-version and predecessor-version, at their resolution URLs.
    old, new, unlocated = (f"urn:nbn:fi:test-{unique}{s}" for s in ("old", "new", "bare"))
    register(api, old, [{"url": f"https://example.org/{unique}/old"}])
    register(api, new, [{"url": f"https://example.org/{unique}/new"}])
    register(api, unlocated, [])
    deactivate(api, old, [new, unlocated])
    base = resolver.base_url
    redirect = anonymous.get(f"/{new}")
    assert redirect.status_code == 302
    assert _versions(redirect) == [
        (f"https://example.org/{unique}/new", "alternate"),
        (f"{base}/{old}", "predecessor-version"),
    ]
    surrogate = anonymous.get(f"/{unlocated}", headers={"Accept": JSON})
    assert surrogate.status_code == 200
    assert surrogate.json()["predecessors"] == [old]
    assert _versions(surrogate) == [(f"{base}/{old}", "predecessor-version")]
    for accept in (JSON, BROWSER):
        gone = anonymous.get(f"/{old}", headers={"Accept": accept})
        assert gone.status_code == 410
        # A page is in the language Accept-Language chooses (docs/languages.md); /{urn} is
        # its own TimeGate (RFC 7089 §4.1).
        varies = "Accept, accept-datetime" + ("" if accept == JSON else ", Accept-Language")
        assert gone.headers["vary"] == varies
        assert _versions(gone) == [(f"{base}/{new}", "successor-version"),
                               (f"{base}/{unlocated}", "successor-version")]  # fmt: skip
    assert anonymous.get(f"/{old}").headers["content-type"].startswith(PROBLEM)
    for name in ("I2C", "I2Cs", "I2N", "I2Ns"):
        answer = anonymous.get(f"/uri-res/{name}?{new}")
        assert answer.status_code == 200
        assert rel(answer, "predecessor-version") == [f"{base}/{old}"]


def _versions(response: httpx.Response) -> list[tuple[str, str]]:
    """The links of ``response`` but its signposts (test_signposting.py checks those)."""
    kept = ("alternate", "successor-version", "predecessor-version")
    return [(uri, relation) for uri, relation in links(response) if relation in kept]


def test_predecessors_named_before_the_successor_was_registered(
    api: httpx.Client, anonymous: httpx.Client, resolver: Resolver, unique: str
) -> None:
    # The successor is registered after its predecessor was deactivated naming it.
    old, new = f"urn:nbn:fi:test-{unique}old", f"URN:NBN:FI:TEST-{unique}new"
    register(api, old, [])
    deactivate(api, old, [new])
    register(api, f"urn:nbn:fi:test-{unique}new", [{"url": "https://example.org/"}])
    assert rel(anonymous.get(f"/{new}"), "predecessor-version") == [f"{resolver.base_url}/{old}"]


# --- the landing page ----------------------------------------------------------------------------


class _Page(HTMLParser):
    """What an accessibility check reads of a page: headings, tables and their captions, header
    cells and their scopes, links, the text of each table row."""

    def __init__(self) -> None:
        super().__init__()
        self.lang: str | None = None
        self.tags: list[str] = []
        self.scopes: list[str | None] = []
        self.captions = 0
        self.tables = 0
        self.hrefs: list[str] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append(tag)
        if tag == "html":
            self.lang = found.get("lang")
        elif tag == "th":
            self.scopes.append(found.get("scope"))
        elif tag == "table":
            self.tables += 1
        elif tag == "caption":
            self.captions += 1
        elif tag == "a" and found.get("href"):
            self.hrefs.append(str(found["href"]))
        elif tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _page(response: httpx.Response) -> _Page:
    assert response.headers["content-type"].startswith("text/html")
    page = _Page()
    page.feed(response.text)
    assert page.lang == "en"
    assert page.tags.count("h1") == 1
    assert page.tables == page.captions  # every table labelled
    assert page.scopes
    assert all(scope in ("col", "row") for scope in page.scopes)
    return page


def test_the_landing_page_shows_everything_known_of_a_urn(
    api: httpx.Client, anonymous: httpx.Client, urn: str, unique: str, server_database: Store
) -> None:
    older = f"urn:nbn:fi:test-{unique}older"
    register(api, older, [])
    deactivate(api, older, [urn])
    patched = api.patch(
        f"/api/v1/urns/{urn}",
        json={"metadata": {"creators": ["Ann Author"]}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    mark_links(server_database, "broken", urls(unique)[1])
    mark_links(server_database, "ok", urls(unique)[0])
    response = anonymous.get(f"/{urn}?s=I2C", headers={"Accept": BROWSER})
    assert response.status_code == 200
    page = _page(response)
    tree = lxml.html.fromstring(response.text)
    items = {
        item.xpath("string(a/@href)"): " ".join(item.xpath("string(.)").split())
        for item in tree.xpath("//ul[@class='locations']/li")
    }
    assert list(items) == urls(unique)  # every location, best first
    first = items[urls(unique)[0]]
    assert first.startswith("Page ")
    assert "text/html" in first
    # The day in CLDR's medium English format (Nov 25, 2026); ISO 8601 in <time datetime>.
    assert re.search(r"ok since [A-Z][a-z]{2} \d{1,2}, 20\d\d", first)
    assert re.search(r"broken since [A-Z][a-z]{2} \d{1,2}, 20\d\d", items[urls(unique)[1]])
    assert "not checked" in items[urls(unique)[3]]
    # The answer first (issue 32): the one "open" action leads to the location resolution takes.
    assert (
        tree.xpath("string(//section[contains(@class, 'answer')]//a[@class='button']/@href)")
        == (urls(unique)[0])
    )
    metadata = {
        " ".join(term.xpath("string(.)").split()): " ".join(
            term.xpath("string(following-sibling::dd[1])").split()
        )
        for term in tree.xpath("//dl[@class='metadata']/dt")
    }
    assert metadata["Title"] == f"Negotiated {unique}"
    assert "Ann Author" in metadata.values()
    changes = [row[1] for row in page.rows if len(row) == 4 and row[0] != "When (UTC)"]
    assert changes == ["created", "patched"]  # history, oldest first
    assert f"/{older}?s=I2C" in page.hrefs  # its predecessor's own landing page
    assert "active" in response.text
    assert rel(response, "predecessor-version")[0].endswith(f"/{older}")


def test_the_surrogate_and_gone_pages_are_the_landing_page(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 8458 §4.5: the surrogate (200) of a URN without location; 410 once deactivated.
    urn, successor = f"urn:nbn:fi:test-{unique}", f"urn:nbn:fi:test-{unique}next"
    register(api, urn, [], {"title": "Surrogate"})
    surrogate = anonymous.get(f"/{urn}", headers={"Accept": BROWSER})
    assert surrogate.status_code == 200
    assert [row[1] for row in _page(surrogate).rows if len(row) == 4][1:] == ["created"]
    deactivate(api, urn, [successor], note="Withdrawn")
    gone = anonymous.get(f"/{urn}", headers={"Accept": BROWSER})
    assert gone.status_code == 410
    page = _page(gone)
    assert f"/{successor}?s=I2C" in page.hrefs
    assert [row[1] for row in page.rows if len(row) == 4][1:] == ["created", "deactivated"]


# --- properties of the helpers -------------------------------------------------------------------

TYPES = ["text/html", "application/json", "application/pdf", "application/xml", "image/png"]
RANGES = [*TYPES, "text/*", "application/*", "image/*", "*/*"]
qualities = st.sampled_from(["1", "0.9", "0.5", "0.1", "0.001", "0"])


@given(
    st.lists(st.tuples(st.sampled_from(RANGES), qualities), min_size=1, max_size=6),
    st.lists(st.sampled_from(TYPES), min_size=1, max_size=4, unique=True),
)
def test_negotiation_picks_an_offered_type_of_the_highest_quality(
    ranges: list[tuple[str, str]], offered: list[str]
) -> None:
    # RFC 9110 §12.5.1: "q=0" means not acceptable; the most specific range gives a type its
    # quality.
    header = ", ".join(f"{value};q={q}" for value, q in ranges)
    accept = accept_header(header)
    chosen = negotiate(accept, offered)
    best = max(quality(accept, media_type) for media_type in offered)
    if best == 0:
        assert chosen is None
    else:
        assert chosen in offered
        assert quality(accept, chosen) == best


@given(st.lists(st.sampled_from(TYPES), min_size=1, max_size=4, unique=True))
def test_no_accept_header_accepts_the_first_offered(offered: list[str]) -> None:
    assert negotiate(accept_header(None), offered) == offered[0]
    assert quality(accept_header(None), None) == 1


@given(st.text(max_size=60), st.lists(st.sampled_from(TYPES), min_size=1, max_size=4))
def test_any_accept_header_is_read_without_failing(header: str, offered: list[str]) -> None:
    accept = accept_header(header)
    assert negotiate(accept, offered) in (*offered, None)
    assert 0 <= quality(accept, None) <= 1


_URI = r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*"
urls_without_percent = st.text(st.characters(exclude_characters="%", codec="utf-8"), max_size=40)


@given(
    st.lists(
        st.tuples(
            urls_without_percent.map(lambda path: "https://example.org/" + path),
            st.sampled_from(["alternate", "successor-version", "predecessor-version"]),
        ),
        max_size=5,
    )
)
def test_link_headers_read_back_as_written(entries: list[tuple[str, str]]) -> None:
    # RFC 8288 §3: each target a URI-Reference in <>, parameters after ';', values after ','.
    value = link_header(entries)
    assert value.isascii()
    parsed: list[Any] = parse_links(value) if value else []
    assert [(unquote(uri), parameters["rel"]) for uri, parameters in parsed] == entries
    for uri, _ in parsed:
        assert re.fullmatch(_URI, uri), uri


def test_imported_successions_give_predecessor_links(
    anonymous: httpx.Client, resolver: Resolver, unique: str, tmp_path: Path
) -> None:
    # What `urnkit import` brings in deactivated, naming successors, is their predecessor.
    old, new = f"urn:nbn:fi:test-{unique}old", f"urn:nbn:fi:test-{unique}new"
    rows = [
        {"urn": new, "locations": [{"url": f"https://example.org/{unique}"}]},
        {"urn": old, "status": "deactivated", "locations": [], "successors": [new]},
    ]
    source = tmp_path / "records.ndjson"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    urnkit("import", str(source), "--database-url", resolver.database_url)
    found = anonymous.get(f"/{new}")
    assert found.status_code == 302
    assert rel(found, "predecessor-version") == [f"{resolver.base_url}/{old}"]
    urnkit("import", str(source), "--database-url", resolver.database_url)  # rerun: no change
    assert rel(anonymous.get(f"/{new}"), "predecessor-version") == [f"{resolver.base_url}/{old}"]


def test_deactivating_again_names_other_successors(
    api: httpx.Client, anonymous: httpx.Client, resolver: Resolver, unique: str
) -> None:
    old, first, second = (f"urn:nbn:fi:test-{unique}{s}" for s in ("old", "a", "b"))
    for urn in (old, first, second):
        register(api, urn, [{"url": f"https://example.org/{unique}/{urn[-1]}"}])
    deactivate(api, old, [first])
    deactivate(api, old, [second])
    assert rel(anonymous.get(f"/{first}"), "predecessor-version") == []
    assert rel(anonymous.get(f"/{second}"), "predecessor-version") == [f"{resolver.base_url}/{old}"]
    deactivate(api, old, [])
    assert rel(anonymous.get(f"/{second}"), "predecessor-version") == []
