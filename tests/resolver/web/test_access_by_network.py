"""Access by network, black-box through ``urnkit serve`` on SQLite and PostgreSQL: a location
restricted to a network of its holder's is where resolution sends clients inside it (their
address as the trusted proxy says: RFC 7239 §5.2, X-Forwarded-For), and is never shown to
anyone else — not in the redirect, the Link header, RFC 2483's answers, the landing page, the
API's reads, OAI-PMH or the link report — but to its holder's tokens and admins."""

from __future__ import annotations

import ipaddress
import secrets
import xml.etree.ElementTree as ET

import httpx
import pytest
from resolver_support import (
    BROWSER,
    Resolver,
    assert_problem,
    mark_links,
    register,
    urnkit_here,
    wait_for,
)
from rfc2483_support import parse_links

from urnkit.resolver.store import Store

HOLDER = "Test Library"  # the organisation of the ``api`` fixture's token, prefix fi:test


@pytest.fixture
def network(admin: httpx.Client, unique: str) -> tuple[str, str, str]:
    """A network of Test Library's of its own (name, an IPv4 range, an IPv6 range), made by an
    admin through the API; ranges no other test uses."""
    octets = bytes.fromhex(unique[:4])
    v4 = f"10.{octets[0]}.{octets[1]}.0/24"
    v6 = str(ipaddress.ip_network(f"2001:db8:{unique[:4]}::/48"))  # as written back
    name = f"rooms-{unique}"
    response = admin.put(
        f"/api/v1/organisations/{HOLDER}/networks/{name}", json={"ranges": [v4, v6]}
    )
    assert response.status_code == 201, response.text
    assert response.json() == {"organisation": HOLDER, "name": name, "ranges": [v4, v6]}
    return name, v4, v6


def _inside(network: tuple[str, str, str]) -> str:
    """An address inside ``network``'s IPv4 range."""
    return network[1].replace(".0/24", ".77")


OUTSIDE = "203.0.113.9"  # RFC 5737 TEST-NET-3: in no test's network


def _from(address: str) -> dict[str, str]:
    """The headers a trusted proxy (127.0.0.1, the tests) sends for a client at ``address``."""
    return {"X-Forwarded-For": address}


def _restricted_record(api: httpx.Client, unique: str, network: str) -> tuple[str, str, str]:
    """A record of Test Library's: first a copy restricted to ``network``, then an open one;
    its URN and the two URLs."""
    urn = f"urn:nbn:fi:test-{unique}"
    shut, open_ = f"https://library.example/deposit/{unique}", f"https://example.org/{unique}"
    locations = [
        {"url": shut, "priority": 1, "restricted_to": network},
        {"url": open_, "priority": 2},
    ]
    register(api, urn, locations, {"title": f"Deposit {unique}"})
    return urn, shut, open_


# --- resolution --------------------------------------------------------------------------------


def test_a_client_inside_is_sent_to_the_restricted_copy_others_to_the_next(
    api: httpx.Client, anonymous: httpx.Client, unique: str, network: tuple[str, str, str]
) -> None:
    urn, shut, open_ = _restricted_record(api, unique, network[0])
    inside = anonymous.get(f"/{urn}", headers=_from(_inside(network)))
    assert inside.status_code == 302
    assert inside.headers["location"] == shut
    assert shut in inside.headers["link"]
    assert open_ in inside.headers["link"]
    # The answer depends on the address: no shared cache may give it to another (RFC 9111 §5.2).
    assert inside.headers["cache-control"] == "no-store"
    for address in (OUTSIDE, "172.16.0.1"):
        outside = anonymous.get(f"/{urn}", headers=_from(address))
        assert outside.status_code == 302
        assert outside.headers["location"] == open_
        assert shut not in outside.headers["link"]
        assert outside.headers["cache-control"] == "no-store"
    # Without a proxy's word, the client is the peer itself (127.0.0.1): outside.
    assert anonymous.get(f"/{urn}").headers["location"] == open_


def _items(response: httpx.Response) -> list[tuple[str, str | None]]:
    """(URL, media type) of each ``item`` link of ``response``."""
    links = parse_links(response.headers["link"])
    return [(uri, found.get("type")) for uri, found in links if found["rel"] == "item"]


def test_typed_locations_route_alike_and_keep_their_media_types(
    api: httpx.Client, anonymous: httpx.Client, unique: str, network: tuple[str, str, str]
) -> None:
    # records.restricted holds each location's media type too: the client inside is sent to
    # the restricted copy (a URL, nothing more), its items typed (RFC 8288 §3.4.1).
    urn = f"urn:nbn:fi:test-{unique}"
    shut, open_ = f"https://library.example/deposit/{unique}", f"https://example.org/{unique}"
    register(
        api,
        urn,
        [
            {"url": shut, "priority": 1, "restricted_to": network[0], "media_type": "text/html"},
            {"url": open_, "priority": 2, "media_type": "Application/PDF"},
        ],
        {"title": f"Typed deposit {unique}"},
    )
    inside = anonymous.get(f"/{urn}", headers=_from(_inside(network)))
    assert inside.status_code == 302
    assert inside.headers["location"] == shut
    assert _items(inside) == [(shut, "text/html"), (open_, "application/pdf")]
    outside = anonymous.get(f"/{urn}", headers=_from(OUTSIDE))
    assert outside.headers["location"] == open_
    assert _items(outside) == [(open_, "application/pdf")]
    assert (
        anonymous.get(f"/uri-res/I2L?{urn}", headers=_from(_inside(network))).headers["location"]
        == shut
    )


def test_the_client_address_is_judged_in_ipv6_and_as_ipv4_mapped(
    api: httpx.Client, anonymous: httpx.Client, unique: str, network: tuple[str, str, str]
) -> None:
    urn, shut, open_ = _restricted_record(api, unique, network[0])
    v6_inside = ipaddress.ip_network(network[2])[0x1_0000_0042]
    # An IPv6 node in brackets, with a port, as RFC 7239 §6 writes one.
    forwarded = _from(f"[{v6_inside}]:4711")
    assert anonymous.get(f"/{urn}", headers=forwarded).headers["location"] == shut
    # RFC 4291 §2.5.5.2: an IPv4 client seen over IPv6.
    mapped = _from(f"::ffff:{_inside(network)}")
    assert anonymous.get(f"/{urn}", headers=mapped).headers["location"] == shut
    outside = _from("2001:db8:ffff::1")
    assert anonymous.get(f"/{urn}", headers=outside).headers["location"] == open_
    # The servers here read X-Forwarded-* (forwarded_headers' default): a client's own
    # RFC 7239 Forwarded, which a proxy might pass on, is no claim.
    claimed = {"Forwarded": f'for="[{v6_inside}]"'}
    assert anonymous.get(f"/{urn}", headers=claimed).headers["location"] == open_


def test_a_forwarded_address_from_an_untrusted_peer_is_not_believed(
    resolver: Resolver, api: httpx.Client, unique: str, network: tuple[str, str, str]
) -> None:
    # The client claims, itself, to be inside: only the trusted proxies' word counts. The test
    # reaches the server from 127.0.0.1 (trusted), so the claim is put first in the chain and
    # the nearest hop named untrusted: the server takes that hop as the client (RFC 7239 §7.5).
    urn, _, open_ = _restricted_record(api, unique, network[0])
    claimed = {"X-Forwarded-For": f"{_inside(network)}, {OUTSIDE}"}
    with resolver.client() as client:
        assert client.get(f"/{urn}", headers=claimed).headers["location"] == open_


def test_outside_with_no_open_copy_gets_the_landing_page_naming_the_holder(
    api: httpx.Client, anonymous: httpx.Client, unique: str, network: tuple[str, str, str]
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    shut = f"https://library.example/only/{unique}"
    register(api, urn, [{"url": shut, "restricted_to": network[0]}], {"title": "Deposit"})
    assert anonymous.get(f"/{urn}", headers=_from(_inside(network))).headers["location"] == shut
    page = anonymous.get(f"/{urn}", headers={"Accept": BROWSER} | _from(OUTSIDE))
    assert page.status_code == 200  # RFC 8458 §4.5: a surrogate page
    assert page.headers["cache-control"] == "no-store"
    assert "Restricted copies" in page.text
    assert HOLDER in page.text
    assert shut not in page.text
    as_json = anonymous.get(f"/{urn}", headers={"Accept": "application/json"} | _from(OUTSIDE))
    assert as_json.status_code == 200
    assert as_json.json()["locations"] == []
    assert shut not in as_json.text


def test_rfc2483_answers_show_outsiders_only_the_open_copies(
    api: httpx.Client, anonymous: httpx.Client, unique: str, network: tuple[str, str, str]
) -> None:
    urn, shut, open_ = _restricted_record(api, unique, network[0])
    outside, inside = _from(OUTSIDE), _from(_inside(network))
    # RFC 2483 §4.1 I2L, §4.2 I2Ls, §4.5 I2C; RFC 2169's /uri-res/ and the ?s= form.
    assert anonymous.get(f"/uri-res/I2L?{urn}", headers=outside).headers["location"] == open_
    assert anonymous.get(f"/uri-res/I2L?{urn}", headers=inside).headers["location"] == shut
    for path in (f"/uri-res/I2Ls?{urn}", f"/{urn}?s=I2Ls", f"/uri-res/I2Rs?{urn}"):
        listed = anonymous.get(path, headers=outside)
        assert listed.status_code == 200, listed.text
        assert open_ in listed.text
        assert shut not in listed.text
        assert shut in anonymous.get(path, headers=inside).text
    for accept in ("application/json", "application/xml", "text/html"):
        described = anonymous.get(f"/uri-res/I2C?{urn}", headers={"Accept": accept} | outside)
        assert described.status_code == 200
        assert open_ in described.text
        assert shut not in described.text
        assert described.headers["cache-control"] == "no-store"
    # Dublin Core is published to anyone: never the restricted copy, even inside.
    assert shut not in anonymous.get(f"/uri-res/I2Cs?{urn}", headers=inside).text


def test_a_network_changed_through_the_api_routes_at_once(
    admin: httpx.Client,
    api: httpx.Client,
    anonymous: httpx.Client,
    unique: str,
    network: tuple[str, str, str],
) -> None:
    urn, shut, open_ = _restricted_record(api, unique, network[0])
    assert anonymous.get(f"/{urn}", headers=_from(OUTSIDE)).headers["location"] == open_
    moved = admin.put(
        f"/api/v1/organisations/{HOLDER}/networks/{network[0]}", json={"ranges": [f"{OUTSIDE}"]}
    )
    assert moved.status_code == 200
    assert moved.json()["ranges"] == [f"{OUTSIDE}/32"]
    assert anonymous.get(f"/{urn}", headers=_from(OUTSIDE)).headers["location"] == shut
    assert anonymous.get(f"/{urn}", headers=_from(_inside(network))).headers["location"] == open_


def test_a_network_changed_by_the_command_routes_within_the_refresh_bound(
    resolver: Resolver, api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # Another process (urnkit admin network set) changes the network: the server reads the
    # networks again within network_refresh (10 s by default).
    name = f"cli-{unique}"
    url = ("--database-url", resolver.database_url)
    created = urnkit_here("admin", "network", "set", HOLDER, name, "198.51.100.0/24", *url).stdout
    assert created.startswith(f"created\t{HOLDER}\t{name}\t198.51.100.0/24")
    urn, shut, open_ = _restricted_record(api, unique, name)
    assert anonymous.get(f"/{urn}", headers=_from(OUTSIDE)).headers["location"] == open_
    urnkit_here("admin", "network", "set", HOLDER, name, "203.0.113.0/24", *url)
    wait_for(
        lambda: anonymous.get(f"/{urn}", headers=_from(OUTSIDE)).headers["location"] == shut,
        "the change to reach the server",
        seconds=15,
    )
    listed = urnkit_here("admin", "network", "list", HOLDER, *url).stdout
    assert f"{HOLDER}\t{name}\t203.0.113.0/24" in listed.splitlines()


# --- the API's reads ---------------------------------------------------------------------------


def _listing_page_holding(client: httpx.Client, urn: str) -> str:
    """The path of the page of ``fi:test``'s listing that holds ``urn`` (the shared server
    holds other tests' records too)."""
    path = "/api/v1/urns?prefix=fi:test&limit=1000"
    while True:
        page = client.get(path).json()
        if any(record["urn"] == urn for record in page["records"]):
            return path
        assert page["next_cursor"] is not None, f"{urn} is in no page"
        path = f"/api/v1/urns?prefix=fi:test&limit=1000&cursor={page['next_cursor']}"


def test_api_reads_show_restricted_urls_only_to_the_holder_and_admins(
    api: httpx.Client,
    admin: httpx.Client,
    other: httpx.Client,
    anonymous: httpx.Client,
    unique: str,
    network: tuple[str, str, str],
) -> None:
    urn, shut, open_ = _restricted_record(api, unique, network[0])
    # A change, so that the history holds an older document with the location too.
    patched = api.patch(
        f"/api/v1/urns/{urn}",
        json={"metadata": {"note": "patched"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    reads = (
        f"/api/v1/urns/{urn}",
        f"/api/v1/urns/{urn}/history",
        _listing_page_holding(api, urn),
        f"/api/v1/search?title=Deposit {unique}",
        f"/api/v1/search?urn={urn}",
    )
    inside = _from(_inside(network))
    for path in reads:
        for client in (anonymous, other):
            for headers in ({}, inside):  # the API judges by token, not by address
                response = client.get(path, headers=headers)
                assert response.status_code == 200, (path, response.text)
                assert shut not in response.text, path
        assert open_ in anonymous.get(path).text, path
        for holder in (api, admin):
            assert shut in holder.get(path).text, path
    shown = api.get(f"/api/v1/urns/{urn}").json()["locations"]
    assert shown[0] == {
        "url": shut,
        "priority": 1,
        "label": None,
        "media_type": None,
        "organisation": "Test Library",
        "restricted_to": network[0],
    }


def test_reverse_lookup_finds_a_restricted_url_only_for_those_shown_it(
    api: httpx.Client, anonymous: httpx.Client, unique: str, network: tuple[str, str, str]
) -> None:
    urn, shut, _ = _restricted_record(api, unique, network[0])
    assert anonymous.get("/api/v1/search", params={"url": shut}).json()["records"] == []
    found = api.get("/api/v1/search", params={"url": shut}).json()["records"]
    assert [record["urn"] for record in found] == [urn]
    page = anonymous.get("/search", params={"q": shut, "by": "url"})
    assert page.status_code == 200
    assert urn not in page.text


def test_oai_pmh_never_shows_a_restricted_url(
    resolver: Resolver, api: httpx.Client, unique: str, network: tuple[str, str, str]
) -> None:
    urn, shut, open_ = _restricted_record(api, unique, network[0])
    arguments = {"verb": "GetRecord", "identifier": urn, "metadataPrefix": "oai_dc"}
    for headers in ({}, _from(_inside(network))):
        response = httpx.get(resolver.base_url + "/oai", params=arguments, headers=headers)
        assert response.status_code == 200
        ET.fromstring(response.content)  # well-formed
        assert open_ in response.text
        assert shut not in response.text


def test_the_link_report_names_a_broken_restricted_url_to_its_holder_only(
    api: httpx.Client,
    other: httpx.Client,
    unique: str,
    network: tuple[str, str, str],
    server_database: Store,
) -> None:
    _, shut, _ = _restricted_record(api, unique, network[0])
    mark_links(server_database, "broken", shut)
    assert shut in api.get("/api/v1/links/broken").text
    assert shut not in other.get("/api/v1/links/broken").text
    assert other.get("/api/v1/links/broken", params={"owner": HOLDER}).status_code == 403


def test_a_broken_restricted_copy_sends_insiders_to_the_next(
    api: httpx.Client,
    anonymous: httpx.Client,
    unique: str,
    network: tuple[str, str, str],
    server_database: Store,
) -> None:
    urn, shut, open_ = _restricted_record(api, unique, network[0])
    mark_links(server_database, "broken", shut)
    assert anonymous.get(f"/{urn}", headers=_from(_inside(network))).headers["location"] == open_
    mark_links(server_database, "ok", shut)
    assert anonymous.get(f"/{urn}", headers=_from(_inside(network))).headers["location"] == shut


# --- writing restrictions and networks ---------------------------------------------------------


def test_a_location_is_restricted_only_to_a_network_of_its_holder(
    api: httpx.Client, other: httpx.Client, admin: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    body = {"locations": [{"url": "https://example.org/x", "restricted_to": "nowhere"}]}
    problem = assert_problem(api.put(f"/api/v1/urns/{urn}", json=body), 422)
    assert "no network called 'nowhere'" in problem["detail"]
    # Another organisation's network is not the holder's.
    name = f"theirs-{unique}"
    made = admin.put(
        f"/api/v1/organisations/Other Library/networks/{name}", json={"ranges": ["192.0.2.0/24"]}
    )
    assert made.status_code == 201
    body = {"locations": [{"url": "https://example.org/x", "restricted_to": name}]}
    assert_problem(api.put(f"/api/v1/urns/{urn}", json=body), 422)
    body = {"locations": [{"url": "https://example.org/x", "restricted_to": "Not A Name"}]}
    assert_problem(api.put(f"/api/v1/urns/{urn}", json=body), 422)


@pytest.mark.parametrize(
    ("ranges", "said"),
    [
        (["10.0.0.1/8"], "has host bits set"),
        (["10.0.0.0/33"], "is not a CIDR range"),
        (["example.org"], "is not a CIDR range"),
        (["2001:db8::/129"], "is not a CIDR range"),
    ],
)
def test_a_network_that_is_no_network_is_refused_saying_which_range(
    admin: httpx.Client, unique: str, ranges: list[str], said: str
) -> None:
    path = f"/api/v1/organisations/{HOLDER}/networks/bad-{unique}"
    problem = assert_problem(admin.put(path, json={"ranges": ["192.0.2.0/24", *ranges]}), 422)
    assert f"range 2: {ranges[0]!r} {said}" in problem["detail"]


def test_networks_are_for_admins_and_kept_while_locations_use_them(
    admin: httpx.Client,
    api: httpx.Client,
    anonymous: httpx.Client,
    unique: str,
    network: tuple[str, str, str],
) -> None:
    path = f"/api/v1/organisations/{HOLDER}/networks"
    assert_problem(api.put(f"{path}/mine-{unique}", json={"ranges": ["192.0.2.0/24"]}), 403)
    assert_problem(anonymous.get(path), 401)
    assert_problem(admin.get("/api/v1/organisations/Nobody/networks"), 404)
    assert network[0] in [n["name"] for n in admin.get(path).json()]
    urn, _, _ = _restricted_record(api, unique, network[0])
    problem = assert_problem(admin.delete(f"{path}/{network[0]}"), 409)
    assert "1 location(s)" in problem["detail"]
    lifted = api.put(f"/api/v1/urns/{urn}", json={"locations": [{"url": "https://example.org/"}]})
    assert lifted.status_code == 200
    assert admin.delete(f"{path}/{network[0]}").status_code == 204
    assert_problem(admin.delete(f"{path}/{network[0]}"), 404)
    assert network[0] not in [n["name"] for n in admin.get(path).json()]


def test_a_batch_keeps_restricted_copies_from_outsiders(
    api: httpx.Client, anonymous: httpx.Client, network: tuple[str, str, str]
) -> None:
    unique = secrets.token_hex(6)
    urn, shut = f"urn:nbn:fi:test-{unique}", f"https://library.example/batch/{unique}"
    item = {"urn": urn, "locations": [{"url": shut, "restricted_to": network[0]}]}
    done = api.post("/api/v1/urns:batch", json={"records": [item]})
    assert done.status_code == 200, done.text
    assert anonymous.get(f"/{urn}", headers=_from(_inside(network))).headers["location"] == shut
    outside = anonymous.get(f"/{urn}", headers=_from(OUTSIDE))
    assert outside.status_code == 200
    assert shut not in outside.text
