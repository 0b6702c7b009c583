"""Citations by content negotiation on ``/{urn}``, as doi.org answers them, against real
servers on SQLite and PostgreSQL; each answer read by an independent parser (bibtexparser,
rispy, the CSL-JSON schema, PyLD, ElementTree).

* ``text/x-bibliography`` (``style=``, ``locale=``: APA and en-US by default),
  ``application/x-bibtex``, ``application/x-research-info-systems``,
  ``application/vnd.citationstyles.csl+json``, ``application/ld+json``, ``application/xml``
  (Dublin Core) and ``text/uri-list``, each saying ``Vary: Accept``;
* 406 naming what ``/{urn}`` gives, for an ``Accept`` that takes none of it;
* ``?format=`` for links (the landing page's "Cite");
* a deactivated URN is cited at its address here, never at a former location.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree as ET

import httpx
import jsonschema
import pytest
import rispy
from bibtexparser.entrypoint import parse_string
from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors
from pyld import jsonld
from resolver_support import BROWSER, PROBLEM, deactivate, register
from rfc2483_support import locations, urls

from urnkit.resolver.representations.dublin_core import DC

SCHEMA = json.loads(
    (Path(__file__).parent.parent / "data" / "csl" / "csl-data.json").read_text("utf-8")
)
BIBTEX = "application/x-bibtex"
RIS = "application/x-research-info-systems"
CSL = "application/vnd.citationstyles.csl+json"
BIBLIOGRAPHY = "text/x-bibliography"
METADATA = {
    "title": "Война и мир — 東京 — Äänikirjat",
    "creators": ["Virtanen, Anna", {"name": "Kansalliskirjasto", "kind": "organisation"}],
    "date": "2021-05-04",
    "publisher": "Kansalliskirjasto",
    "type": "Dataset",
}


class _CiteLinks(HTMLParser):
    """The typed links (``<a href type>``) of a page: the "Cite" section's."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("type") and found.get("href"):
            self.links.append((found["href"] or "", found["type"] or ""))


DOCS = Path(__file__).resolve().parents[3] / "docs" / "resolution.md"
DOCS_URN = "urn:nbn:fi:lib-2021-1"
DOCS_BASE = "https://resolver.example/"
DOCS_METADATA = {  # the record of docs/resolution.md's examples
    "title": "Äänikirjojen säilyttäminen",
    "creators": ["Virtanen, Anna", {"name": "Kansalliskirjasto", "kind": "organisation"}],
    "date": "2021-05-04",
    "type": "Dataset",
}


def docs_exchanges() -> list[str]:
    """The HTTP exchanges of docs/resolution.md's "Citations": a request, a blank line, the
    response."""
    section = DOCS.read_text("utf-8").split("\n## Citations\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```http\n(.*?)\n```", section, re.S)


@pytest.fixture
def urn(api: httpx.Client, unique: str) -> str:
    text = f"urn:nbn:fi:test-cite{unique}"
    register(api, text, locations(unique), METADATA)
    return text


def here(client: httpx.Client, urn: str) -> str:
    """The URN's address at the resolver: what every citation names as its URL."""
    return f"{str(client.base_url).rstrip('/')}/{urn}"


def cited(
    anonymous: httpx.Client,
    urn: str,
    accept: str,
    media_type: str,
    vary: str = "Accept, accept-datetime",  # RFC 7089 §4.1: /{urn} is its own TimeGate
) -> httpx.Response:
    found = anonymous.get(f"/{urn}", headers={"Accept": accept})
    assert found.status_code == 200, found.text
    assert found.headers["content-type"].split(";")[0] == media_type
    assert found.headers["vary"] == vary
    return found


def test_bibtex_reads_back(anonymous: httpx.Client, urn: str) -> None:
    found = cited(anonymous, urn, BIBTEX, BIBTEX)
    library = parse_string(
        found.text, append_middleware=[LatexDecodingMiddleware(), SeparateCoAuthors()]
    )
    entry = library.entries[0]
    assert entry["title"] == METADATA["title"]
    assert entry["author"] == ["Virtanen, Anna", "Kansalliskirjasto"]
    assert (entry["year"], entry["url"]) == ("2021", here(anonymous, urn))


def test_ris_reads_back(anonymous: httpx.Client, urn: str) -> None:
    (entry,) = rispy.loads(cited(anonymous, urn, RIS, RIS).text)
    assert (entry["type_of_reference"], entry["title"]) == ("DATA", METADATA["title"])
    assert entry["authors"] == ["Virtanen, Anna", "Kansalliskirjasto,"]
    assert (entry["urls"], entry["accession_number"]) == ([here(anonymous, urn)], urn)


def test_csl_json_passes_the_schema(anonymous: httpx.Client, urn: str) -> None:
    items = cited(anonymous, urn, CSL, CSL).json()
    jsonschema.validate(items, SCHEMA)
    assert items[0]["author"] == [
        {"family": "Virtanen", "given": "Anna"},
        {"literal": "Kansalliskirjasto"},
    ]


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (BIBLIOGRAPHY, "Virtanen, A., & Kansalliskirjasto. (2021). Война и мир — 東京"),
        (f"{BIBLIOGRAPHY}; locale=fi", "Virtanen, A., & Kansalliskirjasto. (2021). Война"),
        (f"{BIBLIOGRAPHY}; style=ieee; locale=de-DE", "[1]A. Virtanen und Kansalliskirjasto"),
        (f"{BIBLIOGRAPHY}; style=chicago-author-date; locale=sv", "Virtanen, A., och Kansall"),
    ],
)
def test_a_formatted_reference_in_the_style_and_locale_asked(
    anonymous: httpx.Client, urn: str, accept: str, expected: str
) -> None:
    found = cited(anonymous, urn, accept, BIBLIOGRAPHY)
    assert found.text.startswith(expected)
    assert here(anonymous, urn) in found.text


def test_json_ld_expands(anonymous: httpx.Client, urn: str) -> None:
    document = cited(anonymous, urn, "application/ld+json", "application/ld+json").json()
    # schema.org's context is not fetched: its two terms used here, as the vocabulary says.
    document["@context"] = {"@vocab": "https://schema.org/"}
    (expanded,) = jsonld.expand(document)
    assert expanded["@id"] == here(anonymous, urn)
    assert expanded["https://schema.org/name"] == [{"@value": METADATA["title"]}]


class _Head(HTMLParser):
    """A page's ``<meta name content>`` and ``<link rel href>`` elements, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.meta: list[tuple[str, str]] = []
        self.links: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "meta" and "name" in found:
            self.meta.append((found["name"], found.get("content", "")))
        elif tag == "link" and "rel" in found:
            self.links.append((found["rel"], found.get("href", "")))


def test_the_landing_page_says_its_citation_in_meta_elements(
    anonymous: httpx.Client, api: httpx.Client, urn: str, unique: str
) -> None:
    # Google Scholar's inclusion guidelines (Highwire Press citation_* names: title, each
    # author, the date as 2021/05/04, a PDF's URL), read by Zotero's browser connector too,
    # and DCMI's DC-HTML (DC.title …, <link rel="schema.DC">).
    page = anonymous.get(f"/{urn}?s=I2C", headers={"Accept": BROWSER})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    head = _Head()
    head.feed(page.text.split("</head>", 1)[0])
    named: dict[str, list[str]] = {}
    for name, content in head.meta:
        named.setdefault(name, []).append(content)
    assert named["citation_title"] == named["DC.title"] == [METADATA["title"]]
    assert (
        named["citation_author"] == named["DC.creator"] == ["Virtanen, Anna", "Kansalliskirjasto"]
    )
    assert named["citation_publication_date"] == ["2021/05/04"]
    assert named["citation_publisher"] == ["Kansalliskirjasto"]
    assert named["citation_pdf_url"] == [f"https://example.org/{unique}/a.pdf"]  # the first PDF
    assert named["DC.identifier"][0] == urn
    assert ("schema.DC", "http://purl.org/dc/elements/1.1/") in head.links
    # What a registrant wrote is text in an attribute, never markup of the page.
    odd = f"urn:nbn:fi:test-odd{unique}"
    register(api, odd, locations(unique), {"title": 'A "quoted" <b>bold</b> & more'})
    head = _Head()
    head.feed(anonymous.get(f"/{odd}?s=I2C", headers={"Accept": BROWSER}).text)
    assert ("citation_title", 'A "quoted" <b>bold</b> & more') in head.meta


@pytest.mark.parametrize("accept", ["application/xml", "text/xml"])
def test_dublin_core_on_the_urn_itself(anonymous: httpx.Client, urn: str, accept: str) -> None:
    found = cited(anonymous, urn, accept, accept)
    titles = ET.fromstring(found.content).findall(f"{{{DC}}}title")
    assert [title.text for title in titles] == [METADATA["title"]]


def test_the_locations_as_a_uri_list(anonymous: httpx.Client, urn: str, unique: str) -> None:
    # RFC 2483's I2Ls answers it, the present locations only: by Accept alone.
    found = cited(anonymous, urn, "text/uri-list", "text/uri-list", "Accept")
    listed = [line for line in found.text.split("\r\n") if line and not line.startswith("#")]
    assert listed == urls(unique)


@pytest.mark.parametrize(
    "accept", [None, "*/*", BROWSER, "text/plain", f"{BIBTEX};q=0.5, text/html"]
)
def test_browsers_and_plain_clients_still_get_the_redirect(
    anonymous: httpx.Client, urn: str, unique: str, accept: str | None
) -> None:
    found = anonymous.get(f"/{urn}", headers={"Accept": accept} if accept else {})
    assert found.status_code == 302
    assert found.headers["location"] == urls(unique)[0]


def test_a_location_the_client_prefers_wins_over_a_description(
    anonymous: httpx.Client, urn: str, unique: str
) -> None:
    # RFC 9110 §12.5.1: the PDF location at q=1 before Dublin Core at q=0.5.
    found = anonymous.get(f"/{urn}", headers={"Accept": "application/pdf, application/xml;q=0.5"})
    assert found.status_code == 302


@pytest.mark.parametrize(
    "accept",
    ["application/rdf+xml", "text/turtle, application/json;q=0", f"{BIBLIOGRAPHY}; style=nope"],
)
def test_what_urn_cannot_give_is_406_with_the_list(
    anonymous: httpx.Client, urn: str, accept: str
) -> None:
    # RFC 9110 §15.5.7: 406, and (RFC 9457) a problem naming what is available.
    found = anonymous.get(f"/{urn}", headers={"Accept": accept})
    assert found.status_code == 406, found.text
    assert found.headers["content-type"] == PROBLEM
    assert found.json()["available"]


@pytest.mark.parametrize(
    ("query", "media_type"),
    [
        ("format=bibtex", BIBTEX),
        ("format=ris", RIS),
        ("format=csl-json", CSL),
        ("format=apa&locale=cs", BIBLIOGRAPHY),
    ],
)
def test_format_links_work_without_negotiation(
    anonymous: httpx.Client, urn: str, query: str, media_type: str
) -> None:
    found = anonymous.get(f"/{urn}?{query}", headers={"Accept": BROWSER})
    assert found.status_code == 200, found.text
    assert found.headers["content-type"].split(";")[0] == media_type
    assert here(anonymous, urn) in found.text


def test_a_deactivated_urn_is_cited_at_its_address_here(
    api: httpx.Client, anonymous: httpx.Client, urn: str, unique: str
) -> None:
    deactivate(api, urn, [])
    address = here(anonymous, urn)
    for accept, media_type in [(BIBTEX, BIBTEX), (RIS, RIS), (CSL, CSL)]:
        found = cited(anonymous, urn, accept, media_type)
        assert address in found.text
        for former in urls(unique):
            assert former not in found.text
    reference = cited(anonymous, urn, BIBLIOGRAPHY, BIBLIOGRAPHY).text
    assert reference.rstrip().endswith(address)
    assert anonymous.get(f"/{urn}", headers={"Accept": BROWSER}).status_code == 410


@pytest.mark.parametrize("exchange", docs_exchanges())
def test_the_docs_examples_are_what_the_server_answers(
    api: httpx.Client, anonymous: httpx.Client, unique: str, exchange: str
) -> None:
    urn = f"urn:nbn:fi:test-doc{unique}"
    register(api, urn, locations(unique), DOCS_METADATA)
    here = f"{str(anonymous.base_url).rstrip('/')}/"
    text = exchange.replace(DOCS_URN, urn).replace(DOCS_BASE, here)
    request, _, response = text.partition("\n\nHTTP/1.1 ")
    request_line, *request_headers = request.split("\n")
    method, target, _ = request_line.split(" ")
    headers = dict(line.split(": ", 1) for line in request_headers)
    head, _, body = response.partition("\n\n")
    status_line, *response_headers = head.split("\n")
    found = anonymous.request(method, target, headers=headers)
    assert found.status_code == int(status_line.split(" ")[0]), found.text
    for line in response_headers:
        name, value = line.split(": ", 1)
        assert found.headers[name] == value
    if body.startswith("["):
        assert found.json() == json.loads(body)
    elif body:
        assert found.text.rstrip("\n") == body


@pytest.mark.parametrize(
    ("lang", "heading"), [("en", "Cite"), ("fi", "Viittaa"), ("cs", "Citovat")]
)
def test_the_landing_page_offers_cite_links_that_work_without_scripts(
    anonymous: httpx.Client, urn: str, lang: str, heading: str
) -> None:
    page = anonymous.get(f"/{urn}?s=I2C&lang={lang}", headers={"Accept": BROWSER})
    assert page.status_code == 200
    assert f"<h2>{heading}</h2>" in page.text
    parser = _CiteLinks()
    parser.feed(page.text)
    assert [media_type for _, media_type in parser.links] == [BIBLIOGRAPHY, BIBTEX, RIS, CSL]
    for href, media_type in parser.links:
        found = anonymous.get(href.replace("&amp;", "&"), headers={"Accept": BROWSER})
        assert found.status_code == 200, href
        assert found.headers["content-type"].split(";")[0] == media_type
        assert here(anonymous, urn) in found.text
    assert parser.links[0][0].endswith(f"locale={lang}")  # the page's language, the reference's
