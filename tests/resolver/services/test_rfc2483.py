"""RFC 2483's resolution services against a real server, on SQLite and PostgreSQL.

Each service is asked for by RFC 2169's convention, ``GET /uri-res/{service}?{urn}`` (the query
is the URN, RFC 2169 §2), under its RFC 2483 name and its RFC 2169 alias, and on ``/{urn}`` by
the ``s=`` directive (draft-ietf-urnbis-rfc2141bis-urn-03 §2.3.1), in the query or in the
r-component (RFC 8141 §2.3.1). The answers are read back as a client would: text/uri-list lines,
Link headers (RFC 8288, read by :func:`parse_links`), Dublin Core XML.
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

import httpx
import pytest
from resolver_support import (
    BROWSER,
    JSON,
    Resolver,
    assert_problem,
    deactivate,
    mark_links,
    register,
)
from rfc2483_support import locations, rel, urls

from urnkit.resolver.representations.dublin_core import DC, OAI_DC
from urnkit.resolver.representations.rfc2483 import ALIASES, REQUESTS
from urnkit.resolver.store import Store

URI_LIST = "text/uri-list"


# --- helpers -------------------------------------------------------------------------------------


def uris(response: httpx.Response) -> list[str]:
    """The URIs of a text/uri-list answer (RFC 2483 §5: '#' lines are comments)."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(URI_LIST)
    assert response.text.endswith("\r\n")  # RFC 2483 §5: lines end in CRLF
    return [line for line in response.text.split("\r\n") if line and not line.startswith("#")]


def comments(response: httpx.Response) -> list[str]:
    return [line for line in response.text.split("\r\n") if line.startswith("#")]


def service(
    client: httpx.Client, name: str, query: str, accept: str | None = None
) -> httpx.Response:
    """``GET /uri-res/{name}?{query}``, the query sent as it is (RFC 2169 §2)."""
    headers = {"Accept": accept} if accept is not None else {}
    return client.get(f"/uri-res/{name}?{query}", headers=headers)


@pytest.fixture
def urn(api: httpx.Client, unique: str) -> str:
    """An active URN with :func:`locations` and some metadata."""
    text = f"urn:nbn:fi:test-{unique}"
    register(api, text, locations(unique), {"title": f"Services {unique}", "creators": ["Ann"]})
    return text


# --- names and errors ----------------------------------------------------------------------------


def test_every_service_answers_under_its_name_and_its_rfc_2169_alias(
    anonymous: httpx.Client, urn: str
) -> None:
    # RFC 2483 §4.1-4.9 name the services; RFC 2169 §3 spells them N2L, N2Ls, ….
    assert set(REQUESTS) == {"I2L", "I2Ls", "I2R", "I2Rs", "I2C", "I2Cs", "I2N", "I2Ns", "I=I"}
    assert set(ALIASES.values()) == set(REQUESTS)
    for alias, name in ALIASES.items():
        query = f"{urn}&{urn}" if name == "I=I" else urn
        by_name, by_alias = service(anonymous, name, query), service(anonymous, alias, query)
        assert by_name.status_code in (200, 302), (name, by_name.text)
        assert by_name.status_code == by_alias.status_code, (name, alias)
        assert by_name.headers.get("location") == by_alias.headers.get("location")
        assert by_name.text == by_alias.text


def test_an_unknown_service_is_not_found_and_the_problem_lists_the_services(
    anonymous: httpx.Client, urn: str
) -> None:
    for name in ("I2X", "i2l", "L2R"):  # names are case-sensitive (rfc2141bis §2.3)
        problem = assert_problem(service(anonymous, name, urn), 404)
        assert problem["services"] == list(REQUESTS)
        assert problem["aliases"]["N2L"] == "I2L"
        assert repr(name) in problem["detail"]
        assert "I2L, I2Ls, I2R" in problem["detail"]


def test_a_service_without_a_urn_is_a_bad_request(anonymous: httpx.Client) -> None:
    problem = assert_problem(anonymous.get("/uri-res/I2L"), 400)
    assert "/uri-res/I2L?urn:nbn:" in problem["detail"]
    problem = assert_problem(service(anonymous, "I2Ls", "not-a-urn"), 400)
    assert (problem["position"], problem["rule"]) == (0, "assigned-name")


def test_an_unknown_urn_is_not_found_by_every_service(anonymous: httpx.Client, unique: str) -> None:
    for name in REQUESTS[:-1]:
        assert_problem(service(anonymous, name, f"urn:nbn:fi:test-{unique}"), 404)


# --- I2L and I2Ls --------------------------------------------------------------------------------


def test_i2l_redirects_to_the_best_location(anonymous: httpx.Client, urn: str, unique: str) -> None:
    # RFC 2483 §4.1, RFC 2169 §3.1: one URL, as a redirect; any case of URN:NBN: (RFC 8141 §3).
    for method in ("GET", "HEAD"):
        found = anonymous.request(method, f"/uri-res/I2L?URN:NBN:FI:TEST-{unique}")
        assert found.status_code == 302, found.text
        assert found.headers["location"] == urls(unique)[0]
        assert rel(found, "alternate") == urls(unique)
    found = service(anonymous, "I2L", f"{urn}?=lang=fi")  # RFC 8141 §2.3.2: q travels
    assert found.headers["location"] == urls(unique)[0] + "?lang=fi"
    assert rel(found, "alternate")[1] == urls(unique)[1] + "?lang=fi"
    encoded = service(anonymous, "I2L", urn.replace(":", "%3A"))  # a URN encoded whole
    assert encoded.headers["location"] == urls(unique)[0]


def test_i2l_without_a_location_is_not_found_and_says_why(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [], {"title": "No copy online"})
    problem = assert_problem(service(anonymous, "I2L", urn), 404)
    assert "no location" in problem["detail"]
    assert problem["record_status"] == "active"
    listed = service(anonymous, "I2Ls", urn)  # the list is empty, not missing
    assert uris(listed) == []
    assert comments(listed) == [f"# {urn}"]


def test_i2ls_lists_every_location_in_priority_order(
    anonymous: httpx.Client, urn: str, unique: str, server_database: Store
) -> None:
    # RFC 2483 §4.2 and §5: text/uri-list; '#' lines are comments, here the URN and each
    # location's priority, media type and label.
    listed = service(anonymous, "I2Ls", urn)
    assert uris(listed) == urls(unique)
    assert comments(listed)[:2] == [f"# {urn}", "# priority 1, text/html, Page"]
    assert rel(listed, "alternate") == urls(unique)
    # A link known broken is no locator to use now: it is left to a comment.
    mark_links(server_database, "broken", urls(unique)[0])
    listed = service(anonymous, "I2Ls", urn)
    assert uris(listed) == urls(unique)[1:]
    assert any(c.startswith("# broken since ") and urls(unique)[0] in c for c in comments(listed))
    assert rel(listed, "alternate") == urls(unique)[1:]
    assert anonymous.get(f"/{urn}").headers["location"] == urls(unique)[1]


def test_a_deactivated_urn_has_no_locations_to_give(
    api: httpx.Client, anonymous: httpx.Client, resolver: Resolver, urn: str, unique: str
) -> None:
    successor = f"urn:nbn:fi:test-{unique}next"
    deactivate(api, urn, [successor])
    for name in ("I2L", "I2Ls", "I2R", "I2Rs"):
        gone = service(anonymous, name, urn)
        problem = assert_problem(gone, 410)
        assert problem["record"]["successors"] == [successor]
        assert rel(gone, "successor-version") == [f"{resolver.base_url}/{successor}"]
        assert rel(gone, "alternate") == []


# --- I2R and I2Rs: negotiation among the locations -----------------------------------------------


@pytest.mark.parametrize(
    ("accept", "best"),
    [
        (None, 0),  # no Accept: everything is acceptable, the best priority wins
        ("*/*", 0),
        ("application/pdf", 1),
        ("text/html;q=0.5, application/pdf", 1),
        ("application/*", 1),
        ("text/*, application/pdf;q=0.9", 0),
        ("image/png, */*;q=0.1", 0),
        ("application/pdf;q=0, */*", 0),
    ],
)
def test_i2r_redirects_to_the_representation_accept_prefers(
    anonymous: httpx.Client, urn: str, unique: str, accept: str | None, best: int
) -> None:
    # RFC 2483 §4.3: the resource; RFC 9110 §12.5.1: q-values, and the more specific range
    # decides. Among locations of the same type the priority decides.
    found = service(anonymous, "I2R", urn, accept)
    assert found.status_code == 302, found.text
    assert found.headers["location"] == urls(unique)[best]
    assert "accept" in found.headers["vary"].lower()


def test_i2r_is_not_acceptable_when_accept_takes_no_location(
    anonymous: httpx.Client, urn: str
) -> None:
    # RFC 9110 §15.5.7; the problem names the media types there are.
    problem = assert_problem(service(anonymous, "I2R", urn, "image/png"), 406)
    assert problem["available"] == ["(not recorded)", "application/pdf", "text/html"]
    assert_problem(service(anonymous, "I2Rs", urn, "image/png, text/plain;q=0.5"), 406)


def test_i2rs_lists_the_acceptable_locations_preferred_first(
    anonymous: httpx.Client, urn: str, unique: str
) -> None:
    # RFC 2483 §4.4: every representation; here those Accept takes, by its preference.
    everything = service(anonymous, "I2Rs", urn)
    assert uris(everything) == urls(unique)
    assert "accept" in everything.headers["vary"].lower()
    pdf_first = service(anonymous, "I2Rs", urn, "application/pdf, text/html;q=0.5, */*;q=0.1")
    assert uris(pdf_first) == [urls(unique)[i] for i in (1, 2, 0, 3)]
    assert "# priority 2, application/pdf" in comments(pdf_first)
    assert uris(service(anonymous, "I2Rs", urn, "application/pdf")) == urls(unique)[1:3]


# --- I2C and I2Cs: descriptions ------------------------------------------------------------------


def test_i2c_gives_the_record_as_json_by_default(anonymous: httpx.Client, urn: str) -> None:
    # RFC 2483 §4.5: a description (URC) of the resource.
    for accept in (None, "*/*", JSON):
        described = service(anonymous, "I2C", urn, accept)
        assert described.status_code == 200, described.text
        assert described.headers["content-type"].startswith(JSON)
        body = described.json()
        assert (body["urn"], body["status"], body["predecessors"]) == (urn, "active", [])
        assert body["metadata"]["creators"] == ["Ann"]
        assert "accept" in described.headers["vary"].lower()


@pytest.mark.parametrize("accept", ["application/xml", "text/xml", "application/xml, */*;q=0.1"])
def test_i2c_gives_dublin_core_xml_when_asked(
    anonymous: httpx.Client, urn: str, unique: str, accept: str
) -> None:
    described = service(anonymous, "I2C", urn, accept)
    assert described.status_code == 200, described.text
    assert described.headers["content-type"].startswith(accept.partition(",")[0])
    root = ET.fromstring(described.content)
    assert root.tag == f"{{{OAI_DC}}}dc"
    assert [e.text for e in root.iter(f"{{{DC}}}identifier")][:2] == [urn, urls(unique)[0]]
    assert [e.text for e in root.iter(f"{{{DC}}}title")] == [f"Services {unique}"]


def test_i2c_is_a_page_for_browsers_and_not_acceptable_to_others(
    anonymous: httpx.Client, urn: str
) -> None:
    page = service(anonymous, "I2C", urn, BROWSER)
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert urn in page.text
    problem = assert_problem(service(anonymous, "I2C", urn, "image/png"), 406)
    assert "application/json" in problem["available"]


def test_i2cs_gives_dublin_core_xml(
    api: httpx.Client, anonymous: httpx.Client, urn: str, unique: str
) -> None:
    # RFC 2483 §4.6; oai_dc, the simple Dublin Core of OAI-PMH 2.0.
    successor = f"urn:nbn:fi:test-{unique}new"
    deactivate(api, urn, [successor])
    described = service(anonymous, "I2Cs", urn)  # a deactivated URN is still described
    assert described.status_code == 200
    assert described.headers["content-type"].startswith("application/xml")
    root = ET.fromstring(described.content)
    assert [e.text for e in root.iter(f"{{{DC}}}creator")] == ["Ann"]
    assert [e.text for e in root.iter(f"{{{DC}}}relation")] == [successor]


# --- I2N and I2Ns: names -------------------------------------------------------------------------


def test_i2n_is_the_urn_itself_while_it_is_not_deactivated(
    anonymous: httpx.Client, urn: str, unique: str
) -> None:
    # RFC 2483 §4.7.
    assert uris(service(anonymous, "I2N", f"URN:NBN:FI:TEST-{unique}")) == [urn]


def test_i2n_follows_successors_to_the_current_urn(
    api: httpx.Client, anonymous: httpx.Client, resolver: Resolver, unique: str
) -> None:
    first, second, third, fourth = (f"urn:nbn:fi:test-{unique}v{n}" for n in (1, 2, 3, 4))
    for name in (first, second, third, fourth):
        register(api, name, [{"url": f"https://example.org/{unique}/{name[-2:]}"}])
    deactivate(api, first, [second])
    deactivate(api, second, [third, fourth])  # the first successor is the one followed
    assert uris(service(anonymous, "I2N", first)) == [third]
    assert uris(service(anonymous, "I2N", second)) == [third]
    # RFC 2483 §4.8, I2Ns: itself, its successors (and theirs), its predecessors (and theirs).
    related = service(anonymous, "I2Ns", second)
    assert uris(related) == [second, third, fourth, first]
    assert comments(related) == ["# itself", "# successor", "# successor", "# predecessor"]
    assert uris(service(anonymous, "I2Ns", third)) == [third, second, first]
    assert rel(related, "predecessor-version") == [f"{resolver.base_url}/{first}"]
    assert rel(related, "successor-version") == [
        f"{resolver.base_url}/{u}" for u in (third, fourth)
    ]


def test_i2n_stops_at_a_cycle_and_at_a_successor_registered_elsewhere(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    first, second = f"urn:nbn:fi:test-{unique}a", f"urn:nbn:fi:test-{unique}b"
    elsewhere = f"urn:nbn:se:kb-{unique}"
    register(api, first, [])
    register(api, second, [])
    deactivate(api, first, [second])
    deactivate(api, second, [first])  # a cycle: each names the other
    assert uris(service(anonymous, "I2N", first)) == [second]
    assert uris(service(anonymous, "I2Ns", first)) == [first, second]
    third = f"urn:nbn:fi:test-{unique}c"
    register(api, third, [])
    deactivate(api, third, [elsewhere])
    assert uris(service(anonymous, "I2N", third)) == [elsewhere]


# --- I=I -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("urn:nbn:fi:test-1&urn:nbn:fi:test-1", "true"),
        ("URN:NBN:FI:TEST-1&urn:nbn:fi:test-1", "true"),  # RFC 8141 §3; RFC 8458 §4.3: prefix
        ("urn:nbn:fi:test-a%2fb&urn:nbn:fi:test-a%2Fb", "true"),  # RFC 8141 §3: %-hex case
        ("urn:nbn:fi:test-1?=x=1&urn:nbn:fi:test-1", "true"),  # components take no part
        ("urn:nbn:fi:test-A&urn:nbn:fi:test-a", "false"),  # RFC 8458 §4.2: NBN string case
        ("urn:example:A&urn:example:a", "false"),  # RFC 8141 §3: the NSS compares as written
        ("urn:nbn:fi:test-a%2Fb&urn:nbn:fi:test-a/b", "false"),
        ("urn:nbn:fi:test-1&urn:isbn:1", "false"),
    ],
)
def test_i_equals_i_says_whether_two_urns_are_equivalent(
    anonymous: httpx.Client, query: str, answer: str
) -> None:
    # RFC 2483 §4.9; the URNs need not be registered.
    found = service(anonymous, "I=I", query)
    assert found.status_code == 200, found.text
    assert found.headers["content-type"].startswith("text/plain")
    assert found.text == answer
    assert anonymous.get(f"/uri-res/I%3DI?{query}").text == answer
    assert service(anonymous, "N=N", query).text == answer


@pytest.mark.parametrize(
    "query",
    [
        "urn:nbn:fi:test-1",
        "urn:nbn:fi:test-1&urn:x:1&urn:y:2",
        "urn:nbn:&urn:nbn:fi-1",
        "x&urn:a:b",
    ],
)
def test_i_equals_i_refuses_what_is_not_two_urns(anonymous: httpx.Client, query: str) -> None:
    problem = assert_problem(service(anonymous, "I=I", query), 400)
    assert problem["detail"]


# --- the service on /{urn}: s= and the r-component -----------------------------------------------


@pytest.mark.parametrize(
    "query",
    ["s=I2Ls", "s=N2Ls", "s=I2Ls&c=ToC", "+s=I2Ls", "+s=I2Ls?=lang=fi", "s=I%32Ls"],
)
def test_the_service_is_chosen_on_the_urn_path_by_s(
    anonymous: httpx.Client, urn: str, unique: str, query: str
) -> None:
    # rfc2141bis §2.3.1: the directive s=<service>, in the query or (RFC 8141 §2.3.1) in the
    # r-component; a q-component after it still goes to the locators (RFC 8141 §2.3.2).
    listed = anonymous.get(f"/{urn}?{query}")
    suffix = "?lang=fi" if "?=" in query else ""
    assert uris(listed) == [url + suffix for url in urls(unique)]


@pytest.mark.parametrize(
    ("query", "location"),
    [
        ("s=I2X", "{}"),  # an unknown service: "MUST gracefully fall back" (rfc2141bis §2.3.1)
        ("s=i2ls", "{}"),  # values are case-sensitive
        ("s=I2Ls&s=I2C", "{}"),  # a keyword twice: both ignored (rfc2141bis §2.3)
        ("s=I=I", "{}"),  # I=I needs two URNs: the default service
        ("=s=I2Ls", "{}?s=I2Ls"),  # a q-component is the resource's, not a directive
        ("+s=I2L?=p=2", "{}?p=2"),
        ("+s=I2R", "{}"),
    ],
)
def test_no_service_or_a_redirecting_one_redirects(
    anonymous: httpx.Client, urn: str, unique: str, query: str, location: str
) -> None:
    found = anonymous.get(f"/{urn}?{query}")
    assert found.status_code == 302, found.text
    assert found.headers["location"] == location.format(urls(unique)[0])


def test_s_selects_every_service_on_the_urn_path(
    anonymous: httpx.Client, urn: str, unique: str
) -> None:
    assert anonymous.get(f"/{urn}?s=I2C").json()["urn"] == urn
    assert ET.fromstring(anonymous.get(f"/{urn}?+s=I2Cs").content).tag == f"{{{OAI_DC}}}dc"
    assert uris(anonymous.get(f"/{urn}?s=I2N")) == [urn]
    assert uris(anonymous.get(f"/{urn}?s=I2Ns")) == [urn]
    pdf = anonymous.get(f"/{urn}?s=I2R", headers={"Accept": "application/pdf"})
    assert pdf.headers["location"] == urls(unique)[1]
    assert uris(anonymous.get(f"/{urn}?s=I2Rs", headers={"Accept": "text/html"})) == [
        urls(unique)[0]
    ]
