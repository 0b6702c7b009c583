"""Every outward format of a record, walked for an active, a reserved, a surrogate and a
deactivated record on a real server (SQLite and PostgreSQL): a deactivated URN presents no
former location as current anywhere (issue 31), while its owner's API keeps it; epicur types
each URL by what it is; and a third-party FAIR Signposting parser (``signposting``) reads the
same signposts from the ``Link`` header, the landing page's ``<link>`` elements and both
linkset forms (RFC 9264 §4.1, §4.2).
"""

from __future__ import annotations

from collections.abc import Callable
from uuid import uuid4
from xml.etree import ElementTree as ET

import httpx
import pytest
from resolver_support import BROWSER, JSON, Resolver, deactivate, register
from signposting import (
    Signposting,
    find_signposting_html,
    find_signposting_http_link,
    find_signposting_linkset,
)

from urnkit.resolver.representations.epicur import EPICUR

PAGE = "https://site.example/{}/landing"
FILE = "https://site.example/{}/thesis.pdf"


def _locations(unique: str) -> list[dict[str, str]]:
    return [
        {"url": PAGE.format(unique), "media_type": "text/html"},
        {"url": FILE.format(unique), "media_type": "application/pdf"},
    ]


@pytest.fixture(scope="module")
def urns(resolver: Resolver) -> dict[str, str]:
    """The four records, by state; each active or deactivated one's locations are
    :func:`_locations` of its own URN's suffix."""
    unique = uuid4().hex[:10]
    api = resolver.client(resolver.registrant_token)
    found = {state: f"urn:nbn:fi:test-{unique}{state[0]}" for state in ("active", "deactivated")}
    for state, urn in found.items():
        register(api, urn, _locations(urn), {"title": f"A {state} thesis"})
    found["surrogate"] = f"urn:nbn:fi:test-{unique}s"
    register(api, found["surrogate"], (), {"title": "A work with no copy online"})
    reserved = api.post("/api/v1/prefixes/fi:test/urns", params={"count": 1})
    assert reserved.status_code == 201, reserved.text
    found["reserved"] = reserved.json()["urn"]
    deactivate(api, found["deactivated"], [found["active"]], "withdrawn")
    return found


def _formats(resolver: Resolver, urn: str) -> dict[str, str]:
    """Every outward format of ``urn`` as text (a header's value or a body)."""
    web = resolver.client()
    get: Callable[..., httpx.Response] = web.get
    oai = {"verb": "GetRecord", "identifier": urn}
    answers = {
        "JSON": get(f"/{urn}", headers={"Accept": JSON}),
        "HTML": get(f"/{urn}", headers={"Accept": BROWSER}),
        "landing page": get(f"/{urn}?s=I2C", headers={"Accept": "text/html"}),
        "Dublin Core (I2Cs)": get(f"/uri-res/I2Cs?{urn}"),
        "oai_dc": get("/oai", params=oai | {"metadataPrefix": "oai_dc"}),
        "epicur": get("/oai", params=oai | {"metadataPrefix": "epicur"}),
        "linkset JSON": get(f"/{urn}?s=linkset"),
        "linkset": get(f"/{urn}?s=linkset", headers={"Accept": "application/linkset"}),
        "uri-list (I2Ls)": get(f"/uri-res/I2Ls?{urn}"),
    }
    for name, answer in answers.items():
        assert answer.status_code in (200, 302, 410), (name, answer.status_code, answer.text)
    # An answer's text: its body, and what its Location and Link headers name.
    texts = {
        name: "\n".join([answer.text, *answer.headers.get_list("location")])
        + "\n".join(answer.headers.get_list("link"))
        for name, answer in answers.items()
    }
    texts["Link header (resolution)"] = get(f"/{urn}").headers.get("link", "")
    texts["Link header (page)"] = answers["landing page"].headers.get("link", "")
    return texts


def test_a_deactivated_urn_presents_no_former_location_anywhere(
    resolver: Resolver, urns: dict[str, str]
) -> None:
    # issue 31 point 2; RFC 8458 §4.4: a deactivated URN resolves to no resource.
    urn = urns["deactivated"]
    former = [location["url"] for location in _locations(urn)]
    formats = _formats(resolver, urn)
    shown = {name: [url for url in former if url in text] for name, text in formats.items()}
    assert shown == {name: [] for name in formats}
    owner = resolver.client(resolver.registrant_token).get(f"/api/v1/urns/{urn}").json()
    assert [location["url"] for location in owner["locations"]] == former  # the owner's API


def test_an_active_urn_presents_its_locations_in_every_format(
    resolver: Resolver, urns: dict[str, str]
) -> None:
    urn = urns["active"]
    formats = _formats(resolver, urn)
    # The resolution's Link header is the front's, from the redirect's one row: all items.
    missing = {
        name: url
        for name, text in formats.items()
        for url in (FILE.format(urn),)
        if url not in text
    }
    assert missing == {}


@pytest.mark.parametrize("state", ["reserved", "surrogate"])
def test_a_record_without_locations_answers_in_every_format(
    resolver: Resolver, urns: dict[str, str], state: str
) -> None:
    formats = _formats(resolver, urns[state])
    assert all("site.example" not in text for text in formats.values())
    assert urns[state] in formats["Dublin Core (I2Cs)"]


def _epicur_urls(resolver: Resolver, urn: str) -> tuple[str, list[dict[str, str]]]:
    """The update status of ``urn``'s epicur record and its URLs' attributes (with the URL)."""
    params = {"verb": "GetRecord", "identifier": urn, "metadataPrefix": "epicur"}
    root = ET.fromstring(resolver.client().get("/oai", params=params).content)
    epicur = root.find(f".//{{{EPICUR}}}epicur")
    assert epicur is not None
    status = epicur.find(f".//{{{EPICUR}}}update_status")
    assert status is not None
    urls = [
        dict(element.attrib) | {"url": element.text or ""}
        for element in epicur.iterfind(f".//{{{EPICUR}}}resource/{{{EPICUR}}}identifier")
    ]
    return status.get("type", ""), urls


def test_epicur_types_each_url_by_what_it_is(resolver: Resolver, urns: dict[str, str]) -> None:
    urn = urns["active"]
    status, urls = _epicur_urls(resolver, urn)
    assert status == "url_update_general"
    page = {"scheme": "url", "type": "frontpage", "role": "primary", "url": PAGE.format(urn)}
    assert urls == [page, {"scheme": "url", "url": FILE.format(urn)}]  # a PDF is no front page


def test_epicur_withdraws_a_deactivated_urns_urls(resolver: Resolver, urns: dict[str, str]) -> None:
    # url_update_general delivers all the URN's URLs: none, so none stays registered.
    assert _epicur_urls(resolver, urns["deactivated"]) == ("url_update_general", [])


# The relations FAIR Signposting (and the signposting package) reads.
_FAIR_RELATIONS = ("cite-as", "describedby", "item", "type", "author", "license", "linkset")


def _fair(found: Signposting) -> set[tuple[str, str, str | None]]:
    """What a FAIR client found: (relation, target, media type) of each signpost."""
    return {
        (str(post.rel), str(post.target), None if post.type is None else str(post.type))
        for post in found.signposts
    }


@pytest.mark.parametrize("state", ["active", "surrogate", "deactivated"])
def test_a_fair_client_reads_the_same_signposts_in_every_form(
    resolver: Resolver, urns: dict[str, str], state: str
) -> None:
    # FAIR Signposting level 1: the HTML <link> elements are the Link header's links.
    urn = urns[state]
    page = f"{resolver.base_url}/{urn}?s=I2C"
    in_html = _fair(find_signposting_html(page))
    answer = httpx.get(
        page, headers={"Accept": "text/html"}
    )  # the page find_signposting_html reads
    in_header = _fair(find_signposting_http_link(answer.headers.get_list("link"), page))
    linkset = f"{resolver.base_url}/{urn}?s=linkset"
    as_text = _fair(find_signposting_linkset(linkset, "application/linkset"))  # RFC 9264 §4.1
    # signposting 0.9.9 takes a JSON linkset's "profile" for a string, where RFC 9264
    # §4.2.4.3 makes every extension attribute an array: the JSON form is read here.
    as_json = {
        (rel, target["href"], target.get("type"))
        for context in httpx.get(linkset).json()["linkset"]
        for rel, targets in context.items()
        if rel in _FAIR_RELATIONS
        for target in targets
    }
    assert in_html == in_header
    assert ("cite-as", f"{resolver.base_url}/{urn}", None) in in_html  # URNs in lower case
    assert as_json == as_text
    # The page adds only its own type (schema.org's AboutPage) to the linkset's signposts.
    assert in_html - as_json == {("type", "https://schema.org/AboutPage", None)}
