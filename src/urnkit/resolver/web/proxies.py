"""Trusted proxies: behind a reverse proxy that terminates TLS, the scheme, host and client
address a request came with are what the proxy says, in RFC 7239 ``Forwarded`` or the
``X-Forwarded-Proto``, ``-Host`` and ``-For`` headers — believed only from the proxies named by
``trusted_proxies`` (addresses and networks), and ignored from anyone else.

With a chain of proxies, the client is the first address, from the right of the list, that is
not a trusted proxy (RFC 7239 §5.2, §7.5: each proxy appends the address it received from).
``Forwarded`` wins over ``X-Forwarded-*`` when both are sent. Values that are not an address
(``unknown``, obfuscated identifiers, RFC 7239 §6.2-6.3), a scheme other than ``http`` or
``https``, or a host that is no host leave that part of the request as it was.

Server-independent on purpose: uvicorn's own proxy-header handling knows neither ``Forwarded``
nor ``X-Forwarded-Host``, and granian has none; both are told to leave the headers alone.

>>> hops = forwarded_elements('for="[2001:db8::1]:4711";proto=https, for=192.0.2.60')
>>> [node_address(hop["for"]) for hop in hops], hops[0]["proto"]
([('2001:db8::1', 4711), ('192.0.2.60', 0)], 'https')
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

from urnkit.resolver.domain.networks import listed_networks

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# RFC 7230 §3.2.6 token and quoted-string, the pieces of a Forwarded pair (RFC 7239 §4).
_PAIR = re.compile(r'\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)=("(?:[^"\\]|\\.)*"|[^;,\s]*)\s*')
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))(?::[0-9]{1,5})?")
_NAMES = (b"forwarded", b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host")


def trusted_networks(text: str) -> tuple[Network, ...]:
    """The addresses and networks of a ``trusted_proxies`` setting, comma-separated; a
    :class:`ValueError` naming an entry that is neither.

    >>> trusted_networks("127.0.0.1, 10.0.0.0/8, ::1")[1]
    IPv4Network('10.0.0.0/8')
    >>> trusted_networks("localhost")
    Traceback (most recent call last):
    ...
    ValueError: trusted_proxies: 'localhost' is not an IP address or network
    """
    return listed_networks("trusted_proxies", text)


def forwarded_elements(value: str) -> list[dict[str, str]]:
    """The elements of a ``Forwarded`` value (RFC 7239 §4), left to right, each a dict of its
    parameters (names in lower case, quoted strings unquoted); a malformed element is empty.

    >>> forwarded_elements('For="a";PROTO=https, by=b')
    [{'for': 'a', 'proto': 'https'}, {'by': 'b'}]
    """
    elements = []
    for element in _split(value, ","):
        pairs: dict[str, str] = {}
        for pair in _split(element, ";"):
            found = _PAIR.fullmatch(pair)
            if found is None:
                pairs = {}
                break
            text = found.group(2)
            if text.startswith('"'):
                text = re.sub(r"\\(.)", r"\1", text[1:-1])
            pairs[found.group(1).lower()] = text
        elements.append(pairs)
    return elements


def _split(value: str, separator: str) -> list[str]:
    """``value`` split at ``separator`` outside quoted strings."""
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in value:
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == separator and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [part for part in parts if part.strip()]


def node_address(node: str) -> tuple[str, int] | None:
    """The (address, port) of an RFC 7239 §6 node (``192.0.2.1``, ``[2001:db8::1]:80``; an
    X-Forwarded-For entry alike), port 0 when none is given; None for ``unknown``, an obfuscated
    identifier or anything else.

    >>> node_address("192.0.2.43:8080"), node_address("unknown"), node_address("_hidden")
    (('192.0.2.43', 8080), None, None)
    """
    node = node.strip()
    if node.startswith("["):
        address, _, rest = node[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif node.count(":") == 1:
        address, _, port = node.partition(":")
    else:
        address, port = node, ""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return None
    number = int(port) if port.isdigit() and int(port) < 2**16 else 0
    return str(parsed), number


def _trusted(address: str, networks: Sequence[Network]) -> bool:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(parsed in network for network in networks)


def _hops(headers: dict[bytes, str]) -> list[dict[str, str]]:
    """What each proxy said, left (the farthest) to right (the nearest): from ``Forwarded``
    if sent, else from ``X-Forwarded-*`` (whose proto and host, the nearest proxy's last
    word, go with every hop)."""
    if b"forwarded" in headers:
        return forwarded_elements(headers[b"forwarded"]) or [{}]
    hops = [{"for": node} for node in headers.get(b"x-forwarded-for", "").split(",") if node]
    hops = hops or [{}]
    for name, key in ((b"x-forwarded-proto", "proto"), (b"x-forwarded-host", "host")):
        values = [value.strip() for value in headers.get(name, "").split(",") if value.strip()]
        for hop in hops if values else ():
            hop[key] = values[-1]
    return hops


def forwarded_scope(scope: Scope, networks: Sequence[Network]) -> Scope:
    """``scope`` with the scheme, ``Host`` and client the trusted proxies say, when its peer
    is one of them (and the headers say something); else ``scope`` itself."""
    client = scope.get("client")
    if not client or not _trusted(client[0], networks):
        return scope
    headers: dict[bytes, str] = {}
    for name, value in scope["headers"]:
        if name in _NAMES:
            text = value.decode("latin-1")
            headers[name] = f"{headers[name]},{text}" if name in headers else text
    if not headers:
        return scope
    hops = _hops(headers)
    chosen = hops[0]
    for hop in reversed(hops):  # from the nearest proxy outwards
        chosen = hop
        node = node_address(hop.get("for", ""))
        if node is None or not _trusted(node[0], networks):
            break
    changed = dict(scope)
    node = node_address(chosen.get("for", ""))
    if node is not None:
        changed["client"] = node
    scheme = chosen.get("proto", "").lower()
    if scheme in ("http", "https"):
        changed["scheme"] = scheme
    host = chosen.get("host", "")
    if _HOST.fullmatch(host):
        kept = [(name, value) for name, value in scope["headers"] if name != b"host"]
        changed["headers"] = [(b"host", host.encode("ascii")), *kept]
    return changed


def trusting(app: ASGIApp, networks: Sequence[Network]) -> ASGIApp:
    """``app``, seeing each request as the trusted proxies in ``networks`` say it came."""

    async def proxied(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = forwarded_scope(scope, networks)
        await app(scope, receive, send)

    return proxied
