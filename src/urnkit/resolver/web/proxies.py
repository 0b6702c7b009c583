"""Trusted proxies: behind a reverse proxy that terminates TLS, the scheme, host and client
address a request came with are what the proxy says — in the one header form the operator
names (``forwarded_headers``): ``X-Forwarded-For``, ``-Proto`` and ``-Host`` (``x-forwarded``,
the default), or RFC 7239 ``Forwarded`` (``forwarded``). The other form is ignored entirely,
and both are ignored from anyone but the proxies ``trusted_proxies`` names (addresses and
networks): a client cannot slip a header past a proxy that only overwrites the form it sends.

With a chain of proxies, the client is the first address, from the right of the list, that is
not a trusted proxy (RFC 7239 §5.2, §7.5: each proxy appends the address it received from).
Values that are not an address (``unknown``, obfuscated identifiers, RFC 7239 §6.2-6.3), a
scheme other than ``http`` or ``https``, a host that is no host, or a ``Forwarded`` element
that breaks RFC 7239 §4's grammar leave that part of the request as it was; headers longer
than the request header limit (``web/limits.py``, which refuses such a request) are not read.

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

from urnkit.resolver.domain.networks import HEADER_FORMS, listed_networks
from urnkit.resolver.web.limits import MAX_HEADER_BYTES

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# RFC 7239 §4: forwarded-pair = token "=" value; value = token / quoted-string (RFC 7230
# §3.2.6, whose qdtext and quoted-pair allow HTAB, SP, visible characters and obs-text).
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QUOTED = r'"(?:[\t !#-\[\]-~\x80-\xff]|\\[\t -~\x80-\xff])*"'
_PAIR = re.compile(rf"[ \t]*({_TOKEN})=({_TOKEN}|{_QUOTED})[ \t]*")
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))(?::[0-9]{1,5})?")


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
    parameters (names in lower case, quoted strings unquoted); an element that breaks the
    grammar, or names a parameter twice, is empty.

    >>> forwarded_elements('For="a";PROTO=https, by=b, for=[::1], for=c;For=d')
    [{'for': 'a', 'proto': 'https'}, {'by': 'b'}, {}, {}]
    """
    elements = []
    for element in _split(value, ","):
        pairs: dict[str, str] = {}
        for pair in _split(element, ";"):
            found = _PAIR.fullmatch(pair)
            name = found.group(1).lower() if found else ""
            if found is None or name in pairs:
                pairs = {}
                break
            text = found.group(2)
            if text.startswith('"'):
                text = re.sub(r"\\(.)", r"\1", text[1:-1])
            pairs[name] = text
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
    """What each proxy said, left (the farthest) to right (the nearest), in the form of
    ``headers`` (those of one form only): ``Forwarded``'s elements, or ``X-Forwarded-For``'s
    entries, with the last ``X-Forwarded-Proto`` and ``-Host`` (the nearest proxy's word)
    going with every hop."""
    if b"forwarded" in headers:
        return forwarded_elements(headers[b"forwarded"]) or [{}]
    hops = [{"for": node} for node in headers.get(b"x-forwarded-for", "").split(",") if node]
    hops = hops or [{}]
    for name, key in ((b"x-forwarded-proto", "proto"), (b"x-forwarded-host", "host")):
        values = [value.strip() for value in headers.get(name, "").split(",") if value.strip()]
        for hop in hops if values else ():
            hop[key] = values[-1]
    return hops


def _client_hop(hops: list[dict[str, str]], networks: Sequence[Network]) -> dict[str, str]:
    """The hop that names the client: the nearest whose ``for`` is no trusted proxy's address
    (RFC 7239 §7.5), or the farthest when all are."""
    for hop in reversed(hops):
        node = node_address(hop.get("for", ""))
        if node is None or not _trusted(node[0], networks):
            return hop
    return hops[0]


def forwarded_scope(scope: Scope, networks: Sequence[Network], form: str = "x-forwarded") -> Scope:
    """``scope`` with the scheme, ``Host`` and client the trusted proxies say in the headers
    of ``form`` (a key of :data:`HEADER_FORMS`), when its peer is one of them (and those
    headers say something); else ``scope`` itself.

    >>> scope = {"client": ("10.0.0.1", 5), "scheme": "http", "headers": [
    ...     (b"forwarded", b"for=192.0.2.7"), (b"x-forwarded-for", b"192.0.2.8")]}
    >>> [forwarded_scope(scope, trusted_networks("10.0.0.0/8"), form)["client"][0]
    ...  for form in ("x-forwarded", "forwarded")]
    ['192.0.2.8', '192.0.2.7']
    """
    client = scope.get("client")
    if not client or not _trusted(client[0], networks):
        return scope
    names = HEADER_FORMS[form]
    headers: dict[bytes, str] = {}
    for name, value in scope["headers"]:
        if name in names:
            text = value.decode("latin-1")
            headers[name] = f"{headers[name]},{text}" if name in headers else text
    if not headers or sum(map(len, headers.values())) > MAX_HEADER_BYTES:
        return scope  # none, or so many that header_limits refuses the request: not read
    chosen = _client_hop(_hops(headers), networks)
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


def trusting(app: ASGIApp, networks: Sequence[Network], form: str = "x-forwarded") -> ASGIApp:
    """``app``, seeing each request as the trusted proxies in ``networks`` say it came, in
    the headers of ``form`` (see :func:`forwarded_scope`)."""

    async def proxied(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = forwarded_scope(scope, networks, form)
        await app(scope, receive, send)

    return proxied
