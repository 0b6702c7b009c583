"""FAIR Signposting (https://signposting.org/FAIR/) against a real server on SQLite and
PostgreSQL: the ``Link`` headers of resolution's answers and of the landing page, the linkset
(RFC 9264) at ``/{urn}?s=linkset`` and by ``Accept``, and the landing page's schema.org JSON-LD;
and properties of the pieces, in process.

* The redirect names what its one indexed row allows: ``cite-as``, ``describedby`` (JSON and
  ``oai_dc``), ``linkset`` and an ``item`` per location with its media type (the row holds
  them); the landing page and the linkset add the ``type``. The media types never reach a
  ``Location`` header or a ``text/uri-list``.
* Every ``describedby`` target answers, with the media type its link says.
* The linkset is checked against RFC 9264 §4.2's JSON structure by :func:`check_linkset`,
  written from the RFC's text.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any
from xml.etree import ElementTree as ET

import httpx
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
)
from rfc2483_support import locations, parse_links, rel, urls
from signposting import find_signposting_linkset

from urnkit.resolver.domain import Location, media_type_of
from urnkit.resolver.representations.dublin_core import OAI_DC
from urnkit.resolver.representations.signposting import (
    Link,
    linkset,
    schema_org_type,
    script_json,
)
from urnkit.resolver.store import Store
from urnkit.resolver.web.front import preferred_json

LINKSET = "application/linkset+json"
LINKSET_TEXT = "application/linkset"
SCHEMA = "https://schema.org/"

# --- RFC 9264 §4.2, the JSON linkset, as the RFC's text says it ---------------------------------

# RFC 8288 §2.1.1: a registered relation type is LOALPHA *( LOALPHA / DIGIT / "." / "-" ), an
# extension relation type a URI (RFC 3986 §3: scheme ":" …).
_REGISTERED = re.compile(r"[a-z][a-z0-9.-]*")
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]*")
# RFC 9264 §4.2.4.1: the target attributes RFC 8288 defines, and how each is represented.
_STRING_ATTRIBUTES = ("type", "title", "media")


def check_linkset(document: Any) -> list[dict[str, Any]]:
    """The link context objects of ``document``; AssertionError, naming the section, where it
    breaks RFC 9264 §4.2's JSON structure (or its §4.1 advice, taken as a rule here: every
    anchor and href an absolute URI)."""
    # §4.2.1: a JSON object whose sole member is "linkset", an array of link context objects
    # (one per link context; even a single one wrapped in an array).
    assert isinstance(document, dict), "§4.2.1: a linkset is a JSON object"
    assert list(document) == ["linkset"], "§4.2.1: 'linkset' is the sole member"
    contexts = document["linkset"]
    assert isinstance(contexts, list), "§4.2.1: 'linkset' is an array"
    anchors = []
    for context in contexts:
        assert isinstance(context, dict), "§4.2.1: a link context object is an object"
        # §4.2.2: the link context is the "anchor" member, a URI (absolute: §4.1's advice).
        assert isinstance(context.get("anchor"), str), "§4.2.2: 'anchor' is a string"
        assert _URI.fullmatch(context["anchor"]), "§4.1, §4.2.2: an absolute URI"
        anchors.append(context["anchor"])
        for relation, targets in context.items():
            if relation != "anchor":
                _check_relation(relation, targets)
    assert len(set(anchors)) == len(anchors), "§4.2.1: one link context object per context"
    return contexts


def _check_relation(relation: str, targets: Any) -> None:
    # §4.2.3: each link relation type a member of the context object, its value an array of
    # target objects, even of one.
    assert _REGISTERED.fullmatch(relation) or _URI.fullmatch(relation), (
        f"§4.2.3, RFC 8288 §2.1: {relation!r} is no relation type"
    )
    assert isinstance(targets, list), f"§4.2.3: {relation} is an array"
    assert targets, f"§4.2.3: {relation} names a target"
    for target in targets:
        # §4.2.4: a target object has "href", a URI reference (absolute: §4.1's advice).
        assert isinstance(target, dict), "§4.2.4: a target object is an object"
        assert isinstance(target.get("href"), str), "§4.2.4: 'href' is a string"
        assert _URI.fullmatch(target["href"]), f"§4.1, §4.2.4: {target['href']!r}"
        for name, value in target.items():
            if name != "href":
                _check_attribute(name, value)


def _check_attribute(name: str, value: Any) -> None:
    assert name not in ("rel", "anchor", "rev"), f"§4.2.4.1: {name} is no target attribute"
    if name in _STRING_ATTRIBUTES:  # §4.2.4.1: type, title, media are strings
        assert isinstance(value, str), f"§4.2.4.1: {name} is a string"
    elif name == "hreflang":  # §4.2.4.1: an array of language tags
        assert isinstance(value, list), f"§4.2.4.1: {name} is an array"
        assert all(isinstance(v, str) for v in value), f"§4.2.4.1: {name}'s tags"
    elif name.endswith("*"):  # §4.2.4.2: internationalised, objects of "value" and "language"
        assert isinstance(value, list), f"§4.2.4.2: {name} is an array"
        assert value, f"§4.2.4.2: {name} has a value"
        for item in value:
            assert isinstance(item, dict), f"§4.2.4.2: {name}'s values are objects"
            assert isinstance(item.get("value"), str), f"§4.2.4.2: {name}'s 'value'"
            assert set(item) <= {"value", "language"}, f"§4.2.4.2: {name}'s members"
    else:  # §4.2.4.3: an extension target attribute is an array of strings
        assert isinstance(value, list), f"§4.2.4.3: {name} is an array"
        assert value, f"§4.2.4.3: {name} has a value"
        assert all(isinstance(v, str) for v in value), f"§4.2.4.3: {name}'s values are strings"


def test_the_checker_refuses_what_rfc_9264_does_not_allow() -> None:
    # RFC 9264 §4.2.1-§4.2.4.3, each rule broken once: the checker can fail.
    good = {"anchor": "https://r.example/u", "item": [{"href": "https://r.example/x"}]}
    check_linkset({"linkset": [good]})
    broken: list[Any] = [
        [good],  # §4.2.1: not an object
        {"linkset": good},  # §4.2.1: not an array
        {"linkset": [good], "other": 1},  # §4.2.1: not the sole member
        {"linkset": [{"item": good["item"]}]},  # §4.2.2: no anchor
        {"linkset": [{**good, "item": {"href": "https://r.example/x"}}]},  # §4.2.3
        {"linkset": [{**good, "Item": good["item"]}]},  # §4.2.3: no relation type
        {"linkset": [{**good, "item": [{"type": "text/html"}]}]},  # §4.2.4: no href
        {"linkset": [{**good, "item": [{"href": "https://r.example/x", "type": ["a/b"]}]}]},
        {"linkset": [{**good, "item": [{"href": "https://r.example/x", "profile": "u:x"}]}]},
        {"linkset": [good, good]},  # §4.2.1: a context object per context
    ]
    for document in broken:
        with pytest.raises(AssertionError):
            check_linkset(document)


# --- the Link headers, black-box -----------------------------------------------------------------


@pytest.fixture
def urn(api: httpx.Client, unique: str) -> str:
    text = f"urn:nbn:fi:test-{unique}"
    metadata = {
        "title": f"Signposted {unique}",
        "type": "info:eu-repo/semantics/article",
        "creators": [
            "Ann Author",
            "https://orcid.org/0000-0002-1825-0097",
            {"family": "Lee", "given": "Bo"},
            {"name": "Demo University", "kind": "organisation", "id": "https://ror.org/05k73zm37"},
        ],
        "rights": "https://creativecommons.org/licenses/by/4.0/",
    }
    register(api, text, locations(unique), metadata)
    return text


def _links(response: httpx.Response) -> list[tuple[str, dict[str, str]]]:
    return parse_links(", ".join(response.headers.get_list("link")))


def _targets(response: httpx.Response, relation: str) -> list[tuple[str, str | None]]:
    """(URI, type) of each link of ``relation``."""
    return [(uri, p.get("type")) for uri, p in _links(response) if p["rel"] == relation]


def _typed(unique: str) -> list[tuple[str, str | None]]:
    """(URL, media type) of each of the test's locations."""
    return [(loc["url"], loc.get("media_type")) for loc in locations(unique)]


def _described_by(base: str, urn: str) -> list[tuple[str, str | None]]:
    return [(f"{base}/api/v1/urns/{urn}", JSON), (f"{base}/{urn}?s=I2Cs", "application/xml")]


def test_the_redirect_signposts_what_its_row_allows(
    anonymous: httpx.Client, resolver: Resolver, urn: str, unique: str
) -> None:
    # FAIR Signposting level 1 on the answer of GET /{urn}, merged with the alternates.
    base = resolver.base_url
    for method in ("GET", "HEAD"):
        found = anonymous.request(method, f"/URN:NBN:FI:TEST-{unique}")  # cites the canonical
        assert found.status_code == 302
        assert rel(found, "cite-as") == [f"{base}/{urn}"]  # RFC 8574 §3: exactly one
        assert _targets(found, "describedby") == _described_by(base, urn)
        assert _targets(found, "linkset") == [(f"{base}/{urn}?s=linkset", LINKSET)]
        # RFC 6573, each with its media type (RFC 8288 §3.4.1), untyped where none is recorded
        assert _targets(found, "item") == _typed(unique)
        assert found.headers["location"] == urls(unique)[0]
        assert rel(found, "alternate") == urls(unique)  # kept beside them
        assert rel(found, "type") == []  # the metadata is the linkset's to give


def test_the_redirects_items_carry_the_media_types_as_recorded_and_changed(
    api: httpx.Client, anonymous: httpx.Client, server_database: Store, unique: str
) -> None:
    # A recorded media type with parameters and capitals is its type/subtype (RFC 6838 §4.2,
    # case-insensitive); one that is no media type leaves its item untyped.
    urn = f"urn:nbn:fi:test-{unique}"
    first, second, third = (f"https://example.org/{unique}/{n}" for n in (1, 2, 3))
    recorded = [
        {"url": first, "priority": 1, "media_type": "Application/PDF; charset=binary"},
        {"url": second, "priority": 2, "media_type": "a PDF"},
        {"url": third, "priority": 3, "media_type": "text/html"},
    ]
    register(api, urn, recorded, {"title": "Typed"})
    found = anonymous.get(f"/{urn}")
    assert found.status_code == 302
    assert found.headers["location"] == first
    assert _targets(found, "item") == [
        (first, "application/pdf"),
        (second, None),
        (third, "text/html"),
    ]
    # RFC 8141 §2.3.2: a q-component reaches every locator, not the media types.
    with_q = anonymous.get(f"/{urn}?=lang=fi")
    assert with_q.status_code == 302
    assert with_q.headers["location"] == f"{first}?lang=fi"
    assert _targets(with_q, "item")[0] == (f"{first}?lang=fi", "application/pdf")
    # Link checking finds the first broken: the rest keep their types.
    mark_links(server_database, "broken", first)
    rerouted = anonymous.get(f"/{urn}")
    assert rerouted.headers["location"] == second
    assert _targets(rerouted, "item") == [(second, None), (third, "text/html")]
    # The record written anew: the row follows.
    changed = [{"url": third, "priority": 1}, {"url": second, "media_type": "image/png"}]
    assert api.put(f"/api/v1/urns/{urn}", json={"locations": changed}).status_code == 200
    assert _targets(anonymous.get(f"/{urn}"), "item") == [(third, None), (second, "image/png")]


def test_no_media_type_reaches_a_location_header_or_a_uri_list(
    anonymous: httpx.Client, urn: str, unique: str
) -> None:
    # RFC 2483 §4.1 I2L: a URL; §4.2 I2Ls and §4.4 I2Rs: a text/uri-list (RFC 2483 §5), a URI
    # a line; the media types stay in the Link header's type attributes.
    for path in (f"/{urn}", f"/uri-res/I2L?{urn}", f"/{urn}?s=I2L", f"/{urn}?+s=I2L"):
        found = anonymous.get(path)
        assert found.status_code in (302, 303), path
        assert found.headers["location"] == urls(unique)[0], path
        assert "\t" not in found.headers["link"]
    for path in (f"/uri-res/I2Ls?{urn}", f"/{urn}?s=I2Ls", f"/uri-res/I2Rs?{urn}"):
        listed = anonymous.get(path)
        assert listed.status_code == 200, listed.text
        assert listed.headers["content-type"].startswith("text/uri-list")
        assert "\t" not in listed.text
        uris = [line for line in listed.text.splitlines() if not line.startswith("#")]
        assert uris == urls(unique), path


def test_the_landing_page_signposts_everything(
    anonymous: httpx.Client, resolver: Resolver, urn: str, unique: str
) -> None:
    base = resolver.base_url
    page = anonymous.get(f"/{urn}?s=I2C", headers={"Accept": BROWSER})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert rel(page, "cite-as") == [f"{base}/{urn}"]
    # RFC 6903 §6: the landing page's own type and the resource's (schema.org's)
    assert sorted(rel(page, "type")) == [SCHEMA + "AboutPage", SCHEMA + "ScholarlyArticle"]
    assert _targets(page, "describedby") == _described_by(base, urn)
    xml = [p for uri, p in _links(page) if p["rel"] == "describedby" and "profile" in p]
    assert [p["profile"] for p in xml] == [OAI_DC]
    assert _targets(page, "item") == _typed(unique)
    assert rel(page, "author") == [  # URIs only
        "https://orcid.org/0000-0002-1825-0097",
        "https://ror.org/05k73zm37",
    ]
    assert rel(page, "license") == ["https://creativecommons.org/licenses/by/4.0/"]
    assert rel(page, "alternate") == urls(unique)


def test_every_describedby_target_answers_with_its_type(
    anonymous: httpx.Client, urn: str, unique: str
) -> None:
    found = anonymous.get(f"/{urn}")
    for uri, media_type in _targets(found, "describedby"):
        answer = anonymous.get(uri)
        assert answer.status_code == 200, uri
        assert answer.headers["content-type"].split(";")[0] == media_type
        if media_type == JSON:
            assert answer.json()["urn"] == urn
        else:  # the oai_dc profile's root element
            assert ET.fromstring(answer.content).tag == f"{{{OAI_DC}}}dc"


def test_the_json_answer_and_the_gone_answer_signpost_too(
    api: httpx.Client, anonymous: httpx.Client, resolver: Resolver, urn: str, unique: str
) -> None:
    base = resolver.base_url
    record = anonymous.get(f"/{urn}", headers={"Accept": JSON})
    assert record.status_code == 200
    assert rel(record, "cite-as") == [f"{base}/{urn}"]
    assert rel(record, "type") == [SCHEMA + "ScholarlyArticle"]  # not a page: no AboutPage
    successor = f"urn:nbn:fi:test-{unique}next"
    register(api, successor, [])
    deactivate(api, urn, [successor])
    for accept in (JSON, BROWSER):
        gone = anonymous.get(f"/{urn}", headers={"Accept": accept})
        assert gone.status_code == 410
        assert rel(gone, "cite-as") == [f"{base}/{urn}"]
        assert rel(gone, "item") == []  # nowhere to go
        assert rel(gone, "successor-version") == [f"{base}/{successor}"]


def test_a_forwarded_urn_is_not_ours_to_signpost(anonymous: httpx.Client, unique: str) -> None:
    # RFC 8458 §4.4: the seeded table forwards "de" to its national resolver, which cites it.
    urn = f"urn:nbn:de:gbv:089-{unique}"
    for accept in (None, LINKSET):
        found = anonymous.get(f"/{urn}", headers={"Accept": accept} if accept else {})
        assert found.status_code == 302
        assert found.headers["location"] == f"https://nbn-resolving.org/{urn}"
        assert "link" not in found.headers


# --- the linkset ---------------------------------------------------------------------------------


def test_the_linkset_holds_the_landing_pages_links(
    anonymous: httpx.Client, resolver: Resolver, urn: str, unique: str
) -> None:
    # RFC 9264 §4.2 at /{urn}?s=linkset; FAIR Signposting level 2.
    base = resolver.base_url
    found = anonymous.get(f"/{urn}?s=linkset")
    assert found.status_code == 200, found.text
    assert found.headers["content-type"] == LINKSET  # RFC 9264 §7.3
    assert found.headers["etag"]
    (context,) = check_linkset(found.json())
    assert context["anchor"] == f"{base}/{urn}"
    page = anonymous.get(f"/{urn}?s=I2C", headers={"Accept": BROWSER})
    in_header = sorted(
        (p["rel"], uri, p.get("type"))
        for uri, p in _links(page)
        if (p["rel"], uri) != ("type", SCHEMA + "AboutPage")  # the page's, not the URN's
    )
    in_linkset = sorted(
        (relation, target["href"], target.get("type"))
        for relation, targets in context.items()
        if relation != "anchor"
        for target in targets
    )
    assert in_linkset == in_header
    assert context["describedby"][1]["profile"] == [OAI_DC]  # §4.2.4.3: an array
    again = anonymous.get(f"/{urn}?s=linkset", headers={"If-None-Match": found.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.parametrize(
    "accept",
    [LINKSET, f"{LINKSET}, {JSON};q=0.5", f"text/html;q=0.4, {LINKSET};q=0.5"],
)
def test_accept_chooses_the_linkset(
    anonymous: httpx.Client, urn: str, unique: str, accept: str
) -> None:
    # RFC 9110 §12.5.1 on /{urn}: the linkset instead of the redirect, and Vary says so.
    found = anonymous.get(f"/{urn}", headers={"Accept": accept})
    assert found.status_code == 200, found.text
    assert found.headers["content-type"] == LINKSET
    assert (
        found.headers["vary"] == "Accept, accept-datetime"
    )  # RFC 9110 §12.5.5: caches keep them apart
    (context,) = check_linkset(found.json())
    assert [target["href"] for target in context["item"]] == urls(unique)
    redirect = anonymous.get(f"/{urn}", headers={"Accept": BROWSER})
    assert redirect.status_code == 302
    assert (
        redirect.headers["vary"] == "Accept, accept-datetime"
    )  # RFC 7089 §4.1: /{urn} is its TimeGate


def test_accept_chooses_the_linkset_in_the_link_header_form(
    anonymous: httpx.Client, urn: str, unique: str
) -> None:
    # RFC 9264 §4.1 on /{urn}: application/linkset, each link with its anchor.
    found = anonymous.get(f"/{urn}", headers={"Accept": "application/linkset"})
    assert found.status_code == 200, found.text
    assert found.headers["content-type"].startswith("application/linkset")
    assert found.headers["vary"] == "Accept, accept-datetime"
    parsed = parse_links(found.text.replace(",\n", ", "))
    items = [href for href, parameters in parsed if parameters["rel"] == "item"]
    assert items == urls(unique)
    (anchor,) = {parameters["anchor"] for _, parameters in parsed}
    assert [href for href, parameters in parsed if parameters["rel"] == "cite-as"] == [anchor]


@pytest.mark.parametrize(
    "accept", [LINKSET_TEXT, f"{LINKSET_TEXT}, {LINKSET};q=0.5", f"text/html;q=0.4, {LINKSET_TEXT}"]
)
def test_accept_chooses_the_linkset_in_the_link_headers_form(
    anonymous: httpx.Client, resolver: Resolver, urn: str, unique: str, accept: str
) -> None:
    # RFC 9264 §4.1 on bare /{urn}: the same linkset as ?s=linkset gives, not the redirect.
    found = anonymous.get(f"/{urn}", headers={"Accept": accept})
    assert found.status_code == 200, found.text
    assert found.headers["content-type"] == LINKSET_TEXT
    assert found.headers["vary"] == "Accept, accept-datetime"  # RFC 9110 §12.5.5
    asked = anonymous.get(f"/{urn}?s=linkset", headers={"Accept": LINKSET_TEXT})
    assert found.text == asked.text
    assert parse_links(found.text.replace("\n", " "))  # RFC 9264 §4.1: Link header syntax
    # An independent reader (FAIR Signposting's) asking /{urn} itself, as a harvester would.
    by_reader = find_signposting_linkset(f"{resolver.base_url}/{urn}", LINKSET_TEXT)
    items = {str(signpost.target) for signpost in by_reader.items}
    assert items == set(urls(unique))
    browser = anonymous.get(f"/{urn}", headers={"Accept": BROWSER})
    assert browser.status_code == 302


def test_the_linkset_of_a_deactivated_urn_and_of_none(
    api: httpx.Client, anonymous: httpx.Client, resolver: Resolver, urn: str, unique: str
) -> None:
    successor = f"urn:nbn:fi:test-{unique}next"
    register(api, successor, [])
    deactivate(api, urn, [successor])
    found = anonymous.get(f"/{urn}?s=linkset")
    assert found.status_code == 200
    (context,) = check_linkset(found.json())
    assert "item" not in context
    assert context["successor-version"] == [{"href": f"{resolver.base_url}/{successor}"}]
    missing = anonymous.get(f"/urn:nbn:fi:test-{unique}none?s=linkset")
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith(PROBLEM)


# --- the landing page's JSON-LD ------------------------------------------------------------------


class _Scripts(HTMLParser):
    """The text of each ``<script>`` element of a page, by its type."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[str | None, str]] = []
        self._type: str | None = None
        self._open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._type, self._open = dict(attrs).get("type"), True
            self.scripts.append((self._type, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._open = False

    def handle_data(self, data: str) -> None:
        if self._open:
            kind, text = self.scripts[-1]
            self.scripts[-1] = (kind, text + data)


def _json_ld(html: str) -> list[Any]:
    parser = _Scripts()
    parser.feed(html)
    return [json.loads(text) for kind, text in parser.scripts if kind == "application/ld+json"]


def test_the_landing_page_embeds_schema_org_json_ld(
    anonymous: httpx.Client, resolver: Resolver, urn: str, unique: str
) -> None:
    page = anonymous.get(f"/{urn}?s=I2C", headers={"Accept": BROWSER})
    (document,) = _json_ld(page.text)
    assert document["@context"] == SCHEMA
    assert document["@type"] == "ScholarlyArticle"
    assert document["url"] == f"{resolver.base_url}/{urn}"  # what cite-as names
    assert document["identifier"] == {"@type": "PropertyValue", "propertyID": "URN", "value": urn}
    assert document["name"] == f"Signposted {unique}"
    # Each creator as its kind says (domain/creators.py), no type claimed where none is known:
    # an organisation is no Person (issue 31).
    assert document["author"] == [
        {"name": "Ann Author"},
        {"@id": "https://orcid.org/0000-0002-1825-0097"},
        {"@type": "Person", "name": "Lee, Bo", "familyName": "Lee", "givenName": "Bo"},
        {"@type": "Organization", "@id": "https://ror.org/05k73zm37", "name": "Demo University"},
    ]
    assert [item["contentUrl"] for item in document["encoding"]] == urls(unique)


def test_a_title_cannot_break_out_of_the_script_element(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # HTML §4.12.1.3: a script's text ends at "</script"; "<!--" changes how it is read.
    title = f'{unique}</script><script>alert("x")</script><!--<script>&amp;'
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [], {"title": title})
    page = anonymous.get(f"/{urn}")  # the surrogate: the landing page itself
    assert page.status_code == 200
    parser = _Scripts()
    parser.feed(page.text)
    assert [kind for kind, _ in parser.scripts] == ["application/ld+json"]
    (document,) = _json_ld(page.text)
    assert document["name"] == title


# --- properties, in process ----------------------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8"), max_size=40)  # no lone surrogates
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


@given(_JSON)
def test_script_json_reads_back_and_never_closes_the_element(document: Any) -> None:
    # HTML §4.12.1.3 (restrictions for contents of script elements); RFC 8259 §7 escapes.
    text = script_json(document)
    assert not set(text) & set("<>&")
    assert json.loads(text) == document


_HREF = st.builds(
    lambda host, path: f"https://{host}.example/{path}",
    st.from_regex(r"[a-z]{1,10}", fullmatch=True),
    _TEXT,
)
_LINKS = st.lists(
    st.builds(
        Link,
        _HREF,
        st.sampled_from(["item", "describedby", "cite-as", "https://r.example/rel"]),
        st.lists(
            st.tuples(
                st.sampled_from(["type", "profile"]),
                st.from_regex(r'[a-z/+."\\]{1,20}', fullmatch=True),  # quoted-pairs too
            ),
            max_size=2,
            unique_by=lambda pair: pair[0],
        ).map(tuple),
    ),
    max_size=8,
)


@given(_HREF, _LINKS)
def test_every_linkset_is_well_formed_and_keeps_every_link(anchor: str, links: list[Link]) -> None:
    # RFC 9264 §4.2: whatever the links, the document keeps the structure and each link.
    (context,) = check_linkset(linkset(anchor, links))
    kept = [(r, t["href"]) for r, targets in context.items() if r != "anchor" for t in targets]
    assert sorted(kept) == sorted((link.rel, parse_links(link.header())[0][0]) for link in links)


@given(_LINKS)
def test_link_headers_parse_back(links: list[Link]) -> None:
    # RFC 8288 §3: each link a link-value; its rel and attributes as given.
    value = ", ".join(link.header() for link in links)
    parsed = parse_links(value) if value else []
    assert [(p["rel"], {k: v for k, v in p.items() if k != "rel"}) for _, p in parsed] == [
        (link.rel, dict(link.attributes)) for link in links
    ]


@given(_TEXT)
def test_any_recorded_media_type_gives_a_sound_item(text: str) -> None:
    # The API takes any media type text; an item's type attribute is RFC 6838 §4.2's or none.
    media_type = media_type_of(Location("https://a.example/", media_type=text))
    attributes = () if media_type is None else (("type", media_type),)
    value = Link("https://a.example/", "item", attributes).header()
    value.encode("ascii")  # a header field value (RFC 9110 §5.5)
    ((_, parameters),) = parse_links(value)
    assert parameters.get("type") == media_type
    if media_type is not None:
        assert text.lower().startswith(media_type) or text.strip().lower().startswith(media_type)


@given(
    st.sampled_from([0, 0.1, 0.5, 0.9, 1]),
    st.sampled_from([0, 0.1, 0.5, 0.9, 1]),
    st.sampled_from([LINKSET, LINKSET_TEXT]),
)
def test_the_linkset_is_chosen_only_when_preferred(html: float, wanted: float, form: str) -> None:
    # RFC 9110 §12.5.1: q-values decide; a tie goes to the default answer (text/html).
    accept = f"text/html;q={html}, {form};q={wanted}".encode()
    scope = {"headers": [(b"accept", accept)]}
    assert (preferred_json(scope) == form) == (wanted > html)


@given(st.lists(_TEXT, max_size=3))
def test_an_unknown_type_is_a_creative_work(types: list[str]) -> None:
    found = schema_org_type({"types": types})
    assert found.startswith(SCHEMA)
    assert schema_org_type({"type": "Doctoral Thesis"}) == SCHEMA + "Thesis"
