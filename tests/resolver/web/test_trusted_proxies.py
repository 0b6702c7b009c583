"""Trusted proxies: from the addresses ``trusted_proxies`` names, RFC 7239 ``Forwarded`` and
``X-Forwarded-*`` set the scheme, host and client of a request; from anyone else they are
ignored. In process (the scope a route sees), and black-box through ``urnkit serve``."""

from __future__ import annotations

import json
import re
import secrets
import time
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from resolver_support import Server, fresh_database, set_up_resolver
from starlette.types import Scope

from urnkit.resolver.web.proxies import (
    forwarded_elements,
    forwarded_scope,
    node_address,
    trusted_networks,
)

NETWORKS = trusted_networks("10.0.0.0/8, 2001:db8::/32")


def _scope(peer: str, *headers: tuple[str, str]) -> Scope:
    return {
        "type": "http",
        "scheme": "http",
        "client": (peer, 50000),
        "headers": [(b"host", b"upstream:8001")]
        + [(name.lower().encode(), value.encode()) for name, value in headers],
    }


def _seen(scope: Scope) -> tuple[str, str, str]:
    """The scheme, host and client address a route would see."""
    host = dict(scope["headers"])[b"host"].decode()
    return scope["scheme"], host, scope["client"][0]


def test_x_forwarded_headers_from_a_trusted_proxy_are_believed() -> None:
    scope = _scope(
        "10.1.2.3",
        ("X-Forwarded-Proto", "https"),
        ("X-Forwarded-Host", "resolver.example"),
        ("X-Forwarded-For", "203.0.113.7"),
    )
    assert _seen(forwarded_scope(scope, NETWORKS)) == ("https", "resolver.example", "203.0.113.7")


def test_the_same_headers_from_anyone_else_are_ignored() -> None:
    scope = _scope(
        "192.0.2.9",
        ("X-Forwarded-Proto", "https"),
        ("X-Forwarded-Host", "resolver.example"),
        ("X-Forwarded-For", "203.0.113.7"),
        ("Forwarded", "for=203.0.113.7;proto=https;host=resolver.example"),
    )
    assert _seen(forwarded_scope(scope, NETWORKS)) == ("http", "upstream:8001", "192.0.2.9")
    assert _seen(forwarded_scope(scope, ())) == ("http", "upstream:8001", "192.0.2.9")


def test_forwarded_wins_over_x_forwarded() -> None:
    # RFC 7239 §4: the standard header; X-Forwarded-* are what it replaces.
    scope = _scope(
        "10.0.0.1",
        ("Forwarded", 'for="[2001:db8:cafe::17]:4711";proto=https;host="resolver.example:8443"'),
        ("X-Forwarded-For", "198.51.100.1"),
        ("X-Forwarded-Proto", "http"),
    )
    seen = forwarded_scope(scope, ())  # nobody trusted: nothing changes
    assert _seen(seen) == ("http", "upstream:8001", "10.0.0.1")
    seen = forwarded_scope(scope, NETWORKS)
    assert _seen(seen) == ("https", "resolver.example:8443", "2001:db8:cafe::17")
    assert seen["client"] == ("2001:db8:cafe::17", 4711)


def test_a_chain_of_proxies_is_walked_from_the_nearest() -> None:
    # RFC 7239 §5.2: each proxy appends whom it received from; the client is the first address
    # from the right that is not one of ours. A forged entry further left changes nothing.
    scope = _scope("10.0.0.1", ("X-Forwarded-For", "1.1.1.1, 203.0.113.7, 10.9.9.9"))
    assert _seen(forwarded_scope(scope, NETWORKS))[2] == "203.0.113.7"
    scope = _scope(
        "10.0.0.1", ("Forwarded", "for=1.1.1.1, for=203.0.113.7;proto=https, for=10.2.2.2")
    )
    assert _seen(forwarded_scope(scope, NETWORKS))[::2] == ("https", "203.0.113.7")


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("Forwarded", "for=unknown;proto=https"),  # RFC 7239 §6.2
        ("Forwarded", "for=_hidden;proto=https"),  # §6.3: obfuscated
        ("X-Forwarded-For", "not-an-address"),
    ],
)
def test_a_client_that_is_no_address_leaves_the_peer(header: str, value: str) -> None:
    scope = forwarded_scope(_scope("10.0.0.1", (header, value)), NETWORKS)
    assert scope["client"] == ("10.0.0.1", 50000)


@pytest.mark.parametrize(
    ("proto", "host"),
    [
        ("javascript", "a b"),
        ("https;", "evil.example/path"),
        ("ftp", "x@y"),
        ("", "[::1"),
    ],
)
def test_schemes_and_hosts_that_are_none_are_ignored(proto: str, host: str) -> None:
    scope = _scope("10.0.0.1", ("X-Forwarded-Proto", proto), ("X-Forwarded-Host", host))
    assert _seen(forwarded_scope(scope, NETWORKS))[:2] == ("http", "upstream:8001")


def test_forwarded_pairs_and_quoting() -> None:
    # RFC 7239 §4: quoted-string values may hold ";" and ","; names are case-insensitive.
    assert forwarded_elements('For="a;b,c";Proto=https, for=d') == [
        {"for": "a;b,c", "proto": "https"},
        {"for": "d"},
    ]
    assert forwarded_elements("for") == [{}]
    assert node_address("[2001:db8::1]") == ("2001:db8::1", 0)
    assert node_address("192.0.2.1:99999") == ("192.0.2.1", 0)


def test_trusted_proxies_that_are_not_addresses_are_refused() -> None:
    with pytest.raises(
        ValueError, match=re.escape("'10.0.0.0/33' is not an IP address or network")
    ):
        trusted_networks("127.0.0.1, 10.0.0.0/33")


_HEADER = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=80)


@given(
    forwarded=_HEADER,
    xff=_HEADER,
    proto=_HEADER,
    host=_HEADER,
    peer=st.sampled_from(["10.0.0.1", "192.0.2.1", "2001:db8::5"]),
)
def test_any_headers_give_an_http_scheme_a_sane_host_and_an_address(
    forwarded: str, xff: str, proto: str, host: str, peer: str
) -> None:
    # An input boundary: whatever a client or proxy sends, no error, and nothing a route could
    # be misled by: a scheme of http or https, a host of host characters, a client address.
    scope = _scope(
        peer,
        ("Forwarded", forwarded),
        ("X-Forwarded-For", xff),
        ("X-Forwarded-Proto", proto),
        ("X-Forwarded-Host", host),
    )
    scheme, seen_host, client = _seen(forwarded_scope(scope, NETWORKS))
    assert scheme in ("http", "https")
    assert " " not in seen_host
    assert "/" not in seen_host
    assert "@" not in seen_host
    assert node_address(client) is not None or client.count(":") > 1


def _gone_link(base_url: str, headers: dict[str, str], token: str) -> tuple[str, str]:
    """Deactivate a new URN naming a successor; the Link header of resolving it, and the
    successor."""
    old, new = (f"urn:nbn:fi:test-{secrets.token_hex(4)}" for _ in range(2))
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base_url, headers=auth) as client:
        client.put(f"/api/v1/urns/{old}", json={"locations": [{"url": "https://example.org/"}]})
        client.post(f"/api/v1/urns/{old}/deactivate", json={"successors": [new]})
    return httpx.get(f"{base_url}/{old}", headers=headers).headers["link"], new


@pytest.mark.parametrize("trusted", [True, False])
def test_a_server_believes_its_trusted_proxies_only(tmp_path: Path, trusted: bool) -> None:
    forwarded = {
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "resolver.example",
        "X-Forwarded-For": "203.0.113.7",
    }
    env = {"URNKIT_TRUSTED_PROXIES": "127.0.0.1/32" if trusted else "10.0.0.0/8"}
    with fresh_database("sqlite", tmp_path) as url:
        token = set_up_resolver(url)["registrant_token"]
        with Server(url, env=env) as server:
            link, successor = _gone_link(server.base_url, forwarded, token)
            oai = httpx.get(f"{server.base_url}/oai?verb=Identify", headers=forwarded).text
            time.sleep(0.3)  # the access log is written in batches (50 ms)
            log = [
                json.loads(line) for line in server.output().splitlines() if line.startswith("{")
            ]
    base = "https://resolver.example" if trusted else server.base_url
    assert f'<{base}/{successor}>; rel="successor-version"' in link
    assert f"<baseURL>{base}/oai</baseURL>" in oai
    clients = {line["client"] for line in log if line["path"] == "/oai"}
    assert clients == {"203.0.113.7" if trusted else "127.0.0.1"}
