"""Trusted proxies: from the addresses ``trusted_proxies`` names, RFC 7239 ``Forwarded`` and
``X-Forwarded-*`` set the scheme, host and client of a request; from anyone else they are
ignored. In process (the scope a route sees), and black-box through ``urnkit serve``."""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from resolver_support import DATABASES, Server, fresh_database, set_up_resolver, wait_for
from starlette.types import Scope

from urnkit.resolver.web.limits import MAX_HEADER_BYTES
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


@pytest.mark.parametrize("form", ["x-forwarded", "forwarded"])
def test_only_the_form_the_operator_names_is_read(form: str) -> None:
    # A proxy that overwrites one form passes the other as the client sent it: that one must
    # change nothing, whichever it is.
    scope = _scope(
        "10.0.0.1",
        ("Forwarded", 'for="[2001:db8:cafe::17]:4711";proto=https;host="resolver.example:8443"'),
        ("X-Forwarded-For", "198.51.100.1"),
        ("X-Forwarded-Proto", "http"),
        ("X-Forwarded-Host", "other.example"),
    )
    assert _seen(forwarded_scope(scope, (), form)) == ("http", "upstream:8001", "10.0.0.1")
    seen = forwarded_scope(scope, NETWORKS, form)
    if form == "forwarded":
        assert _seen(seen) == ("https", "resolver.example:8443", "2001:db8:cafe::17")
        assert seen["client"] == ("2001:db8:cafe::17", 4711)
    else:
        assert _seen(seen) == ("http", "other.example", "198.51.100.1")


@pytest.mark.parametrize(
    ("form", "spoofed"),
    [
        ("x-forwarded", ("Forwarded", "for=203.0.113.7;proto=https;host=evil.example")),
        ("forwarded", ("X-Forwarded-For", "203.0.113.7")),
        ("forwarded", ("X-Forwarded-Host", "evil.example")),
        ("forwarded", ("X-Forwarded-Proto", "https")),
    ],
)
def test_the_other_form_alone_changes_nothing(form: str, spoofed: tuple[str, str]) -> None:
    scope = _scope("10.0.0.1", spoofed)
    assert forwarded_scope(scope, NETWORKS, form) is scope


def test_a_chain_of_proxies_is_walked_from_the_nearest() -> None:
    # RFC 7239 §5.2: each proxy appends whom it received from; the client is the first address
    # from the right that is not one of ours. A forged entry further left changes nothing.
    scope = _scope("10.0.0.1", ("X-Forwarded-For", "1.1.1.1, 203.0.113.7, 10.9.9.9"))
    assert _seen(forwarded_scope(scope, NETWORKS))[2] == "203.0.113.7"
    scope = _scope(
        "10.0.0.1", ("Forwarded", "for=1.1.1.1, for=203.0.113.7;proto=https, for=10.2.2.2")
    )
    assert _seen(forwarded_scope(scope, NETWORKS, "forwarded"))[::2] == ("https", "203.0.113.7")


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("Forwarded", "for=unknown;proto=https"),  # RFC 7239 §6.2
        ("Forwarded", "for=_hidden;proto=https"),  # §6.3: obfuscated
        ("Forwarded", "for=[2001:db8::1]"),  # §6: an IPv6 node must be quoted
        ("Forwarded", "for=192.0.2.1;for=192.0.2.2"),  # §4: a parameter at most once
        ("Forwarded", 'for="192.0.2.1'),  # §4: an unterminated quoted-string
        ("X-Forwarded-For", "not-an-address"),
    ],
)
def test_a_client_that_is_no_address_leaves_the_peer(header: str, value: str) -> None:
    form = "forwarded" if header == "Forwarded" else "x-forwarded"
    scope = forwarded_scope(_scope("10.0.0.1", (header, value)), NETWORKS, form)
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


def test_the_examples_of_rfc_7239_are_read_as_it_says() -> None:
    # RFC 7239 §4 and §7.1, verbatim.
    assert forwarded_elements('for="_gazonk"') == [{"for": "_gazonk"}]
    assert forwarded_elements('For="[2001:db8:cafe::17]:4711"') == [
        {"for": "[2001:db8:cafe::17]:4711"}
    ]
    assert forwarded_elements("for=192.0.2.60;proto=http;by=203.0.113.43") == [
        {"for": "192.0.2.60", "proto": "http", "by": "203.0.113.43"}
    ]
    assert forwarded_elements("for=192.0.2.43, for=198.51.100.17") == [
        {"for": "192.0.2.43"},
        {"for": "198.51.100.17"},
    ]
    assert node_address("[2001:db8:cafe::17]:4711") == ("2001:db8:cafe::17", 4711)


@pytest.mark.parametrize("form", ["x-forwarded", "forwarded"])
def test_forwarding_headers_past_the_header_limit_are_not_read(form: str) -> None:
    # Such a request is answered 431 (web/limits.py): its headers are not parsed first.
    name = "Forwarded" if form == "forwarded" else "X-Forwarded-For"
    node = "for=192.0.2.1" if form == "forwarded" else "192.0.2.1"
    fitting = ", ".join([node] * (MAX_HEADER_BYTES // (len(node) + 2)))
    assert forwarded_scope(_scope("10.0.0.1", (name, fitting)), NETWORKS, form)["client"] == (
        "192.0.2.1",
        0,
    )
    scope = _scope("10.0.0.1", (name, f"{fitting}, {node}, {node}"))
    assert forwarded_scope(scope, NETWORKS, form) is scope


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


# RFC 7239 §4 and RFC 7230 §3.2.6: the grammar of a Forwarded value, to write headers from.
_TCHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_TOKENS = st.text(st.sampled_from(_TCHARS), min_size=1, max_size=12)
# qdtext and quoted-pair: HTAB, SP, visible US-ASCII and obs-text (a header read as latin-1).
_QUOTABLE = st.text(
    st.one_of(
        st.sampled_from("\t "),
        st.characters(min_codepoint=0x21, max_codepoint=0x7E),
        st.characters(min_codepoint=0x80, max_codepoint=0xFF),
    ),
    max_size=20,
)


@st.composite
def _written_value(draw: st.DrawFn) -> tuple[str, str]:
    """A parameter's value and how it is written: a token, or a quoted-string whose ``"``
    and ``\\`` (and, at times, any other character) are quoted-pairs."""
    if draw(st.booleans()):
        token = draw(_TOKENS)
        return token, token
    value = draw(_QUOTABLE)
    escape_all = draw(st.booleans())
    written = "".join(f"\\{char}" if escape_all or char in '"\\' else char for char in value)
    return value, f'"{written}"'


@st.composite
def _written_elements(draw: st.DrawFn) -> tuple[list[dict[str, str]], str]:
    """Forwarded elements and a header value that writes them: names in any case, each at
    most once an element, pairs joined by ";", elements by "," with optional whitespace."""
    elements, written = [], []
    for _ in range(draw(st.integers(1, 4))):
        names = draw(st.lists(_TOKENS, min_size=1, max_size=4, unique_by=str.lower))
        element, pairs = {}, []
        for name in names:
            value, text = draw(_written_value())
            element[name.lower()] = value
            pairs.append(f"{name}={text}")
        elements.append(element)
        written.append(";".join(pairs))
    separator = draw(st.sampled_from([",", ", ", " , ", ",\t"]))
    return elements, separator.join(written)


@given(_written_elements())
def test_any_forwarded_value_of_the_grammar_is_read_back(
    case: tuple[list[dict[str, str]], str],
) -> None:
    # RFC 7239 §4: Forwarded = 1#forwarded-element; forwarded-pair = token "=" value.
    elements, written = case
    assert forwarded_elements(written) == elements


_NODES = st.one_of(st.ip_addresses(v=4).map(str), st.ip_addresses(v=6).map(str))


def _written_node(address: str, port: int) -> str:
    """An RFC 7239 §6 node: IPv6 in brackets, a port after ":", quoted unless a token."""
    name = f"[{address}]" if ":" in address else address
    node = f"{name}:{port}" if port else name
    return node if node.replace(".", "").isalnum() else f'"{node}"'


@given(address=_NODES, port=st.integers(0, 65535))
def test_any_node_gives_its_address_and_port(address: str, port: int) -> None:
    # RFC 7239 §6: node = nodename [ ":" node-port ]; nodename = IPv4address / "[" IPv6address "]"
    (element,) = forwarded_elements(f"for={_written_node(address, port)}")
    assert node_address(element["for"]) == (address, port)


_TRUSTED = st.ip_addresses(network="10.0.0.0/8").map(str)
_UNTRUSTED = st.one_of(
    st.ip_addresses(network="192.0.2.0/24").map(str),
    st.ip_addresses(network="2001:db9::/32").map(str),
)


@given(
    chain=st.lists(st.one_of(_TRUSTED, _UNTRUSTED), min_size=1, max_size=6),
    form=st.sampled_from(["x-forwarded", "forwarded"]),
)
def test_the_client_is_the_nearest_address_that_is_no_trusted_proxy(
    chain: list[str], form: str
) -> None:
    # RFC 7239 §5.2 and §7.5: every proxy appends whom it heard from; what lies further left
    # than the nearest untrusted address is that client's own word, and not believed.
    untrusted = [address for address in chain if not address.startswith("10.")]
    expected = untrusted[-1] if untrusted else chain[0]
    if form == "forwarded":
        header = ("Forwarded", ", ".join(f"for={_written_node(a, 0)}" for a in chain))
    else:
        header = ("X-Forwarded-For", ", ".join(chain))
    assert forwarded_scope(_scope("10.0.0.1", header), NETWORKS, form)["client"][0] == expected


@given(
    spoofed=_HEADER,
    form=st.sampled_from(["x-forwarded", "forwarded"]),
    address=_UNTRUSTED,
)
def test_whatever_the_other_form_says_is_ignored(spoofed: str, form: str, address: str) -> None:
    said = (
        ("Forwarded", f"for={_written_node(address, 0)};proto=https;host=resolver.example")
        if form == "forwarded"
        else ("X-Forwarded-For", address)
    )
    others = ["X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host"]
    other = [("Forwarded", spoofed)] if form == "x-forwarded" else [(o, spoofed) for o in others]
    alone = forwarded_scope(_scope("10.0.0.1", said), NETWORKS, form)
    with_other = forwarded_scope(_scope("10.0.0.1", said, *other), NETWORKS, form)
    assert _seen(with_other) == _seen(alone)


def _gone_link(base_url: str, headers: dict[str, str], token: str) -> tuple[str, str]:
    """Deactivate a new URN naming a successor; the Link header of resolving it, and the
    successor."""
    old, new = (f"urn:nbn:fi:test-{secrets.token_hex(4)}" for _ in range(2))
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base_url, headers=auth) as client:
        client.put(f"/api/v1/urns/{old}", json={"locations": [{"url": "https://example.org/"}]})
        client.post(f"/api/v1/urns/{old}/deactivate", json={"successors": [new]})
    return httpx.get(f"{base_url}/{old}", headers=headers).headers["link"], new


def _said(form: str, client: str, proto: str, host: str) -> dict[str, str]:
    """What a proxy says of a request's client, scheme and host, in ``form``."""
    if form == "forwarded":
        return {"Forwarded": f'for="{client}:4711";proto={proto};host={host}'}
    return {"X-Forwarded-For": client, "X-Forwarded-Proto": proto, "X-Forwarded-Host": host}


@pytest.mark.parametrize("kind", DATABASES)
@pytest.mark.parametrize(
    ("form", "trusted"), [("x-forwarded", True), ("forwarded", True), ("x-forwarded", False)]
)
def test_a_server_believes_its_trusted_proxies_only(
    tmp_path: Path, kind: str, form: str, trusted: bool
) -> None:
    # The form named (the default, or --forwarded-headers) is believed from a trusted peer;
    # what the other form says (a client's own header, passed on) is not. Untrusted, the
    # test's 127.0.0.1 is believed by nobody: uvicorn's own proxy handling, which trusts
    # 127.0.0.1 by default (forwarded_allow_ips), is off and must stay so.
    other = "forwarded" if form == "x-forwarded" else "x-forwarded"
    headers = _said(form, "203.0.113.7", "https", "resolver.example")
    headers |= _said(other, "198.51.100.66", "http", "evil.example")
    env = {"URNKIT_TRUSTED_PROXIES": "127.0.0.1/32" if trusted else "10.0.0.0/8"}
    flags = ("--forwarded-headers", "forwarded") if form == "forwarded" else ()
    with fresh_database(kind, tmp_path) as url:
        token = set_up_resolver(url)["registrant_token"]
        with Server(url, *flags, env=env) as server:
            link, successor = _gone_link(server.base_url, headers, token)
            oai = httpx.get(f"{server.base_url}/oai?verb=Identify", headers=headers).text
            wait_for(  # the access log is written in batches
                lambda: '"path":"/oai"' in server.output(), "the access log line for /oai", 5
            )
            log = [
                json.loads(line) for line in server.output().splitlines() if line.startswith("{")
            ]
    base = "https://resolver.example" if trusted else server.base_url
    assert f'<{base}/{successor}>; rel="successor-version"' in link
    assert f"<baseURL>{base}/oai</baseURL>" in oai
    clients = {line["client"] for line in log if line["path"] == "/oai"}
    assert clients == {"203.0.113.7" if trusted else "127.0.0.1"}
