"""Contract tests of resolution: ``GET /{urn}`` and ``HEAD /{urn}`` against a real server.

Each test runs on SQLite and PostgreSQL (the ``resolver`` fixture) and registers URNs of its own
through the API, then resolves them as a browser or an API client would. What they pin down:

* an active URN with locations redirects (302) to its best location: the lowest ``priority``
  number, the first listed among equals (RFC 8458 §4.4);
* the URN is matched by URN:NBN lexical equivalence: any case of ``urn:nbn:`` and of the prefix,
  any case of hex digits in percent-encodings, but the NBN string as written (RFC 8141 §3,
  RFC 8458 §4.2 and §4.3);
* an HTTP query beginning with ``=`` is the q-component, copied into the locator's query
  (RFC 8141 §2.3.2); one beginning with ``+`` is an r-component ending at ``?=`` and ignored
  (RFC 8141 §2.3.1) unless it names a service (``+s=I2Ls``: test_services.py);
* a reserved URN, or one without locations, gives a page of its metadata (RFC 8458 §4.5):
  HTML for browsers, JSON when asked for;
* a deactivated URN gives 410 Gone naming its successors in ``Link`` headers;
* an unknown URN gives 404 and a text that is no URN gives 400 with the core library's
  positioned explanation, as problem details (RFC 9457) or as a page for browsers.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import lxml.html
import pytest
from resolver_support import (
    BROWSER,
    JSON,
    PROBLEM,
    Resolver,
    Server,
    assert_problem,
    deactivate,
    register,
)

from urnkit.syntax import URNSyntaxError, diagnose

LINK = re.compile(r'<([^>]*)>\s*;\s*rel="successor-version"')


# --- helpers -------------------------------------------------------------------------------------


def successor_links(response: httpx.Response) -> list[str]:
    """The targets of the ``rel="successor-version"`` links, in order."""
    return LINK.findall(", ".join(response.headers.get_list("link")))


# --- redirection ---------------------------------------------------------------------------------


def test_redirects_to_the_location_with_the_lowest_priority_number(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 8458 §4.4: resolution to the best location; lower priority numbers are tried first
    # (LocationModel, domain.Location). The best one is neither first nor last in the list.
    urn = f"urn:nbn:fi:test-{unique}"
    register(
        api,
        urn,
        [
            {"url": "https://example.org/third", "priority": 7},
            {"url": "https://example.org/best", "priority": 2},
            {"url": "https://example.org/second", "priority": 5},
        ],
    )
    found = anonymous.get(f"/{urn}")
    assert found.status_code == 302
    assert found.headers["location"] == "https://example.org/best"


def test_equal_priorities_keep_the_order_given(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    locations = [
        {"url": "https://z.example.org/first-listed", "priority": 3},
        {"url": "https://a.example.org/second-listed", "priority": 3},
        {"url": "https://example.org/worse", "priority": 4},
    ]
    register(api, urn, locations)
    assert anonymous.get(f"/{urn}").headers["location"] == "https://z.example.org/first-listed"


def test_redirect_follows_a_replaced_record(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/old", "priority": 1}])
    replaced = api.put(
        f"/api/v1/urns/{urn}",
        json={"locations": [{"url": "https://example.org/new", "priority": 1}]},
    )
    assert replaced.status_code == 200, replaced.text
    assert anonymous.get(f"/{urn}").headers["location"] == "https://example.org/new"


@pytest.mark.parametrize("accept", [BROWSER, "*/*", "image/png, application/pdf;q=0.5"])
def test_an_active_urn_with_a_location_redirects_unless_json_is_preferred(
    api: httpx.Client, anonymous: httpx.Client, unique: str, accept: str
) -> None:
    # Except a client preferring JSON to HTML, which gets the record (test_negotiation.py).
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/x"}], {"title": "Has a page too"})
    found = anonymous.get(f"/{urn}", headers={"Accept": accept})
    assert found.status_code == 302
    assert found.headers["location"] == "https://example.org/x"


def test_head_answers_as_get_without_a_body(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/head"}])
    found = anonymous.head(f"/{urn}")
    assert found.status_code == 302
    assert found.headers["location"] == "https://example.org/head"
    assert found.content == b""


def test_a_location_with_characters_no_uri_may_hold_is_percent_encoded(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 9110 §10.2.2: Location is a URI-reference; RFC 3986 §2.1 (UTF-8, then %XX).
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/Jyväskylä/ö?q=å"}])
    found = anonymous.get(f"/{urn}")
    assert found.status_code == 302
    encoded = "https://example.org/Jyv%C3%A4skyl%C3%A4/%C3%B6?q=%C3%A5"
    assert found.headers["location"] == encoded
    link = found.headers["link"]  # the alternate first, then the signposts' item among them
    assert link.startswith(f'<{encoded}>; rel="alternate", ')
    assert f', <{encoded}>; rel="item", ' in link  # then the TimeGate's links (RFC 7089 §2.2)


def test_the_benchmark_ceiling_is_a_bare_redirect(anonymous: httpx.Client) -> None:
    # benchmarks/resolve_bench.py measures resolution against this: a 302 and nothing more.
    for method in ("GET", "HEAD"):
        found = anonymous.request(method, "/-/redirect")
        assert found.status_code == 302
        assert found.headers["location"] == "https://example.org/"
        assert "link" not in found.headers
        assert found.content == b""


# --- equivalence ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        "urn:nbn:fi:test-{}",
        "URN:NBN:FI:TEST-{}",
        "Urn:nBn:fI:TeSt-{}",
        "URN:nbn:fi:Test-{}",
        "urn%3Anbn%3Afi%3Atest-{}",  # a whole URN percent-encoded by a client: decoded once
    ],
)
def test_any_case_of_urn_nbn_and_of_the_prefix_resolves(
    api: httpx.Client, anonymous: httpx.Client, unique: str, spelling: str
) -> None:
    # RFC 8141 §3 (scheme and NID case-insensitive); RFC 8458 §4.3 (the prefix, too).
    register(api, f"URN:NBN:Fi:TeSt-{unique}", [{"url": "https://example.org/any-case"}])
    for method in ("GET", "HEAD"):
        found = anonymous.request(method, "/" + spelling.format(unique))
        assert found.status_code == 302, (method, found.text)
        assert found.headers["location"] == "https://example.org/any-case"


def test_the_nbn_string_is_case_sensitive(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 8458 §4.2: "parsers therefore MUST treat these [NBN strings] as case sensitive".
    register(api, f"urn:nbn:fi:test-{unique}abc", [{"url": "https://example.org/lower"}])
    assert anonymous.get(f"/urn:nbn:fi:test-{unique}abc").status_code == 302
    assert_problem(anonymous.get(f"/urn:nbn:fi:test-{unique}ABC"), 404)


def test_hex_digits_of_percent_encodings_match_in_any_case(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 8141 §3 and RFC 8458 §4.3 step 3: percent-encodings compare case-insensitively.
    register(api, f"urn:nbn:fi:test-{unique}a%2fb", [{"url": "https://example.org/pct"}])
    found = anonymous.get(f"/urn:nbn:fi:test-{unique}a%2Fb")
    assert found.status_code == 302
    assert found.headers["location"] == "https://example.org/pct"


def test_a_percent_encoded_slash_is_not_a_slash(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 8141 §3: percent-encoded octets are not decoded for equivalence.
    register(api, f"urn:nbn:fi:test-{unique}a%2Fb", [{"url": "https://example.org/pct"}])
    assert_problem(anonymous.get(f"/urn:nbn:fi:test-{unique}a/b"), 404)


# --- components ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("locator", "query", "expected"),
    [
        ("https://example.org/a", "=lang=fi", "https://example.org/a?lang=fi"),
        ("https://example.org/a?x=1", "=lang=fi", "https://example.org/a?x=1&lang=fi"),
        ("https://example.org/a?", "=lang=fi", "https://example.org/a?lang=fi"),
        ("https://example.org/a#top", "=lang=fi", "https://example.org/a?lang=fi#top"),
        ("https://example.org/a?x=1#top", "=p=2", "https://example.org/a?x=1&p=2#top"),
        ("https://example.org/a", "=a=1&b=2/c?d", "https://example.org/a?a=1&b=2/c?d"),
        ("https://example.org/a", "=q%20r", "https://example.org/a?q%20r"),
    ],
)
def test_a_q_component_is_copied_into_the_locator_query(
    api: httpx.Client, anonymous: httpx.Client, unique: str, locator: str, query: str, expected: str
) -> None:
    # RFC 8141 §2.3.2: the q-component ("?=…") is passed to the resource's locator.
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": locator}])
    found = anonymous.get(f"/{urn}?{query}")
    assert found.status_code == 302, found.text
    assert found.headers["location"] == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("+foo", "https://example.org/r"),
        ("+CCResolve:cc=uk", "https://example.org/r"),
        ("+foo?=lang=fi", "https://example.org/r?lang=fi"),
        ("+a/b?c?=x=1", "https://example.org/r?x=1"),
    ],
)
def test_an_r_component_is_ignored_and_ends_at_the_q_component(
    api: httpx.Client, anonymous: httpx.Client, unique: str, query: str, expected: str
) -> None:
    # RFC 8141 §2.3.1: the r-component ("?+…") runs to "?="; RFC 8458 §4.2.1: URN:NBN
    # resolvers do not use it, so it changes nothing; a q-component after it still applies.
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/r"}])
    found = anonymous.get(f"/{urn}?{query}")
    assert found.status_code == 302, found.text
    assert found.headers["location"] == expected


def test_an_ordinary_http_query_is_not_a_q_component(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 8141 §2.3.2: only "?=" introduces a q-component; "?lang=fi" is no part of the URN.
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/plain"}])
    found = anonymous.get(f"/{urn}?lang=fi")
    assert found.status_code == 302
    assert found.headers["location"] == "https://example.org/plain"


# --- surrogate pages -----------------------------------------------------------------------------


def test_a_urn_without_locations_gives_a_page_of_its_metadata(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # RFC 8458 §4.5: without a location the resolver supplies a surrogate.
    urn = f"urn:nbn:fi:test-{unique}"
    metadata = {"title": f"A thesis {unique}", "creators": ["Ann Author", "Bo Writer"]}
    register(api, urn, [], metadata)
    for method in ("GET", "HEAD"):
        page = anonymous.request(method, f"/{urn}", headers={"Accept": BROWSER})
        assert page.status_code == 200, page.text
        assert page.headers["content-type"].startswith("text/html")
    page = anonymous.get(f"/{urn}", headers={"Accept": BROWSER})
    assert urn in page.text
    assert f"A thesis {unique}" in page.text
    creators = lxml.html.fromstring(page.text).xpath("//dl[@class='metadata']//li")
    assert [" ".join(item.text_content().split()) for item in creators] == [
        "Ann Author",
        "Bo Writer",
    ]
    assert "no location" in page.text


def test_the_metadata_page_is_json_when_asked_for(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    metadata = {"title": "JSON please", "year": 2024, "subjects": ["a", "b"]}
    register(api, urn, [], metadata)
    found = anonymous.get(f"/{urn}", headers={"Accept": JSON})
    assert found.status_code == 200
    assert found.headers["content-type"].startswith(JSON)
    body = found.json()
    assert body["urn"] == urn
    assert body["status"] == "active"
    assert body["metadata"] == metadata
    assert body["locations"] == []


def test_the_metadata_page_escapes_html(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [], {"title": "<script>alert(1)</script>"})
    page = anonymous.get(f"/{urn}", headers={"Accept": BROWSER})
    assert page.status_code == 200
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text


def test_a_reserved_urn_gives_a_page_saying_so(resolver: Resolver, anonymous: httpx.Client) -> None:
    # RFC 8458 §4.5: a generated, reserved URN has no resource yet; it is not "not found".
    with resolver.client(resolver.other_token) as other:
        made = other.post("/api/v1/prefixes/fi:other/urns")
    assert made.status_code == 201, made.text
    urn = made.json()["urn"]
    found = anonymous.get(f"/{urn}", headers={"Accept": JSON})
    assert found.status_code == 200, found.text
    assert found.json()["status"] == "reserved"
    page = anonymous.get(f"/{urn}", headers={"Accept": BROWSER})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "reserved" in page.text


# --- deactivated URNs ----------------------------------------------------------------------------


def test_a_deactivated_urn_is_gone_and_names_its_successors(
    api: httpx.Client, anonymous: httpx.Client, resolver: Resolver, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    first, second = f"urn:nbn:fi:test-{unique}n1", f"URN:NBN:fi:test-{unique}n2"
    register(api, urn, [{"url": "https://example.org/withdrawn"}], {"title": "Old"})
    deactivate(api, urn, [first, second], note="Replaced by a corrected edition")
    gone = anonymous.get(f"/{urn}", headers={"Accept": JSON})
    problem = assert_problem(gone, 410)
    assert first in problem["detail"]
    assert second in problem["detail"]
    assert problem["record"]["status"] == "deactivated"
    assert problem["record"]["successors"] == [first, second]
    assert successor_links(gone) == [
        f"{resolver.base_url}/{first}",
        f"{resolver.base_url}/{second}",
    ]


def test_a_deactivated_urn_with_locations_does_not_redirect(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/still-listed"}])
    deactivate(api, urn, [])
    for method in ("GET", "HEAD"):
        gone = anonymous.request(method, f"/URN:NBN:FI:TEST-{unique}")
        assert gone.status_code == 410
        assert "location" not in gone.headers
        assert successor_links(gone) == []


def test_the_gone_page_for_browsers_links_the_successors(
    api: httpx.Client, anonymous: httpx.Client, resolver: Resolver, unique: str
) -> None:
    urn, successor = f"urn:nbn:fi:test-{unique}", f"urn:nbn:fi:test-{unique}next"
    register(api, urn, [], {"title": "Old"})
    deactivate(api, urn, [successor], note="Moved on")
    page = anonymous.get(f"/{urn}", headers={"Accept": BROWSER})
    assert page.status_code == 410
    assert page.headers["content-type"].startswith("text/html")
    assert f'href="/{successor}"' in page.text
    assert "Moved on" in page.text
    assert successor_links(page) == [f"{resolver.base_url}/{successor}"]
    head = anonymous.head(f"/{urn}")
    assert head.status_code == 410
    assert successor_links(head) == [f"{resolver.base_url}/{successor}"]


def test_the_successor_link_resolves(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn, successor = f"urn:nbn:fi:test-{unique}", f"urn:nbn:fi:test-{unique}new"
    register(api, successor, [{"url": "https://example.org/new-edition"}])
    register(api, urn, [{"url": "https://example.org/old-edition"}])
    deactivate(api, urn, [successor])
    [link] = successor_links(anonymous.get(f"/{urn}"))
    found = anonymous.get(link)
    assert found.status_code == 302
    assert found.headers["location"] == "https://example.org/new-edition"


# --- unknown and invalid -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        "urn:nbn:fi:test-{}",
        "urn:nbn:fi:test:{}-1",
        "urn:nbn:fi:test-{}?=lang=fi",
        "urn:isbn:{}",  # a valid URN of another namespace: unknown here, not invalid
    ],
)
def test_an_unknown_urn_is_not_found(anonymous: httpx.Client, unique: str, spelling: str) -> None:
    path = "/" + spelling.format(unique)
    assert_problem(anonymous.get(path), 404)
    assert_problem(anonymous.get(path, headers={"Accept": PROBLEM}), 404)
    head = anonymous.head(path)
    assert head.status_code == 404
    assert head.content == b""


def test_not_found_is_a_page_for_browsers(anonymous: httpx.Client, unique: str) -> None:
    page = anonymous.get(f"/urn:nbn:fi:test-{unique}", headers={"Accept": BROWSER})
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "404" in page.text
    assert f"urn:nbn:fi:test-{unique}" in page.text


# (text sent as path and query, the position, the rule, the section); what the core library
# says of each text is the oracle for the rest.
INVALID = [
    ("notaurn", 0, "assigned-name", "RFC 8141 §2"),
    ("urn:nbn:", 8, "NSS", "RFC 8141 §2.2"),
    ("urn:a:b", 5, "NID", "RFC 8141 §2"),
    ("urn:-nbn:fi-1", 4, "NID", "RFC 8141 §2"),
    ("urn:nbn:fi:test-a%zz", 18, "pct-encoded", "RFC 3986 §2.1"),
    ("urn:nbn:fi:test-a%2", 19, "pct-encoded", "RFC 3986 §2.1"),
    ("urn:nbn:fi:test-x?=", 19, "q-component", "RFC 8141 §2.3.2"),
    ("urn:nbn:fi:test-x?+", 19, "r-component", "RFC 8141 §2.3.1"),
]


@pytest.mark.parametrize(("text", "position", "rule", "section"), INVALID)
def test_a_text_that_is_no_urn_is_a_bad_request_saying_where_and_why(
    anonymous: httpx.Client, text: str, position: int, rule: str, section: str
) -> None:
    diagnosis = diagnose(text)
    assert diagnosis is not None
    expected = URNSyntaxError(text, diagnosis)
    problem = assert_problem(anonymous.get(f"/{text}"), 400)
    assert problem["input"] == text
    assert (problem["position"], problem["rule"], problem["section"]) == (position, rule, section)
    assert (problem["position"], problem["rule"]) == (expected.position, expected.rule)
    assert problem["detail"] == expected.reason
    assert problem["explanation"] == str(expected)


@pytest.mark.parametrize(("text", "position", "rule", "section"), INVALID[:3])
def test_a_bad_request_is_a_readable_page_for_browsers(
    anonymous: httpx.Client, text: str, position: int, rule: str, section: str
) -> None:
    page = anonymous.get(f"/{text}", headers={"Accept": BROWSER})
    assert page.status_code == 400
    assert page.headers["content-type"].startswith("text/html")
    assert f"position {position}" in page.text
    assert rule in page.text
    assert section in page.text


# --- the other ASGI server -----------------------------------------------------------------------


def test_granian_answers_resolution_as_uvicorn_does(
    resolver: Resolver, api: httpx.Client, unique: str
) -> None:
    """``urnkit serve --server granian`` over the same database gives the same answers: status,
    ``Location``, ``Link``, content type and body. (This suite's servers run uvicorn, the
    default; benchmarks/resolve_bench.py measures both.)"""
    active, described = f"urn:nbn:fi:test-{unique}", f"urn:nbn:fi:test-{unique}-meta"
    register(api, active, [{"url": "https://example.org/ä?x=1"}, {"url": "https://b.example/"}])
    register(api, described, metadata={"title": "Kalevala"})
    paths = {  # the status for a client preferring JSON, and for a browser
        f"/{active}": (200, 302),  # the redirect answered ahead of routing; JSON: the record
        f"/URN:NBN:FI:TEST-{unique}?=lang=fi": (200, 302),  # a q-component: through the route
        f"/{described}": (200, 200),  # the surrogate, handed from the front to the route
        f"/urn:nbn:fi:test-{unique}-none": (404, 404),
        "/urn:nbn:": (400, 400),
        "/-/redirect": (302, 302),  # the benchmark's ceiling
    }

    def answer(base: str, method: str, path: str, accept: str) -> tuple[Any, ...]:
        response = httpx.request(method, base + path, headers={"Accept": accept})
        headers = response.headers
        body = response.content.replace(base.encode(), b"BASE")
        return (
            response.status_code,
            headers.get("location"),
            [link.replace(base, "BASE") for link in headers.get_list("link")],  # cite-as …
            headers.get("content-type"),
            body,
        )

    with Server(resolver.database_url, "--server", "granian") as granian:
        for path, statuses in paths.items():
            for method in ("GET", "HEAD"):
                for accept, status in zip((JSON, BROWSER), statuses, strict=True):
                    expected = answer(resolver.base_url, method, path, accept)
                    got = answer(granian.base_url, method, path, accept)
                    assert got == expected, (method, path, accept)
                    assert got[0] == status
        assert "Traceback" not in granian.output()
