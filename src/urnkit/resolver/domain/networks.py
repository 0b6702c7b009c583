"""Access by network: an organisation's named networks (CIDR ranges, RFC 4632 and RFC 4291
§2.3) and the locations restricted to one of them, readable only from inside it (a legal-deposit
copy read in the library's reading rooms).

A network's name is a short token (``reading-rooms``); its ranges are written as
``ipaddress`` writes them, host bits clear (``192.0.2.0/24``, ``2001:db8::/32``). A client's
IPv4 address seen as IPv6 (``::ffff:192.0.2.1``, RFC 4291 §2.5.5.2) is judged as IPv4.

>>> ranges = parse_ranges(["192.0.2.0/24", "2001:db8::/32"])
>>> inside(client_address("192.0.2.255"), ranges), inside(client_address("192.0.3.0"), ranges)
(True, False)
>>> inside(client_address("::ffff:192.0.2.1"), ranges)
True
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from urnkit.resolver.domain.errors import UnacceptableError
from urnkit.resolver.domain.records import Record

Range = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

NETWORK_NAME_PATTERN = r"[a-z0-9](?:[a-z0-9._-]{0,62})"
"""A network's name: lower-case letters, digits, ``.``, ``_`` and ``-``, 1 to 63 characters,
starting with a letter or digit."""
_NAME = re.compile(NETWORK_NAME_PATTERN)
MAX_RANGES = 1000


@dataclass(frozen=True, slots=True)
class Network:
    """An organisation's named network: the address ranges a restricted location is read
    from."""

    organisation: str
    name: str
    ranges: tuple[Range, ...]


def check_network_name(name: str) -> str:
    """``name`` if it is a network's name, else :class:`UnacceptableError` saying why.

    >>> check_network_name("reading-rooms")
    'reading-rooms'
    >>> check_network_name("Reading rooms")
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: 'Reading rooms' is not a network name ...
    """
    if not _NAME.fullmatch(name):
        raise UnacceptableError(
            f"{name!r} is not a network name (1-63 lower-case letters, digits, '.', '_' or "
            "'-', starting with a letter or digit)"
        )
    return name


def parse_ranges(texts: Iterable[str]) -> tuple[Range, ...]:
    """The address ranges ``texts`` write (CIDR notation; a bare address is a range of one),
    in order, duplicates left out; :class:`UnacceptableError` naming the first that is not
    one, or has host bits set (``192.0.2.1/24``: ``192.0.2.0/24`` was meant, or the address).

    >>> parse_ranges(["10.0.0.0/8", "192.0.2.7"])
    (IPv4Network('10.0.0.0/8'), IPv4Network('192.0.2.7/32'))
    >>> parse_ranges(["10.0.0.1/8"])
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: range 1: '10.0.0.1/8' has host bits set ...
    """
    found: dict[Range, None] = {}
    for number, text in enumerate(texts, 1):
        try:
            found[ipaddress.ip_network(text.strip(), strict=True)] = None
        except ValueError as error:
            reason = "has host bits set" if "host bits" in str(error) else "is not a CIDR range"
            raise UnacceptableError(
                f"range {number}: {text!r} {reason} (write an address, or a network as "
                "192.0.2.0/24 or 2001:db8::/32)"
            ) from None
    if not found:
        raise UnacceptableError("a network needs at least one address range")
    if len(found) > MAX_RANGES:
        raise UnacceptableError(f"a network has at most {MAX_RANGES} address ranges")
    return tuple(found)


def client_address(text: str | None) -> Address | None:
    """The address of a client as the server sees it (after trusted proxies), an IPv4 address
    mapped into IPv6 taken as IPv4; None when it is no address (a Unix socket, a test client).

    >>> client_address("::ffff:10.1.2.3"), client_address("testclient")
    (IPv4Address('10.1.2.3'), None)
    """
    if not text:
        return None
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def inside(address: Address | None, ranges: Sequence[Range]) -> bool:
    """Whether ``address`` is in one of ``ranges`` (None, an unknown client, is in none)."""
    if address is None:
        return False
    return any(address.version == found.version and address in found for found in ranges)


@dataclass(frozen=True, slots=True)
class Reader:
    """Who reads a record, as far as restricted locations go: a token's ``organisation`` (which
    reads the locations it holds), an ``admin`` (reads all), and the ``networks`` the client's
    address is inside, as (organisation, network name).

    >>> Reader(networks=frozenset({("Library", "rooms")})).may_read("Library", "rooms")
    True
    >>> PUBLIC.may_read("Library", "rooms"), PUBLIC.may_read("Library", None)
    (False, True)
    """

    organisation: str | None = None
    admin: bool = False
    networks: frozenset[tuple[str, str]] = frozenset()

    def may_read(self, holder: str, restricted_to: str | None) -> bool:
        """Whether this reader may see a location held by ``holder`` restricted to its network
        ``restricted_to`` (None: unrestricted)."""
        return (
            restricted_to is None
            or self.admin
            or holder == self.organisation
            or (holder, restricted_to) in self.networks
        )


PUBLIC = Reader()
"""A reader outside every network, without a token."""


def shown(record: Record, reader: Reader) -> Record:
    """``record`` without the locations ``reader`` may not see (each held by its
    ``organisation``, or by the record's owner when it names none).

    >>> from datetime import datetime, UTC
    >>> from urnkit.resolver.domain import Location
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> kept = Location("https://example.org/open")
    >>> shut = Location("https://library.example/copy", restricted_to="rooms")
    >>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Library", t, t)
    >>> record = replace(record, locations=(shut, kept))
    >>> [loc.url for loc in shown(record, PUBLIC).locations]
    ['https://example.org/open']
    """
    visible = tuple(
        loc
        for loc in record.locations
        if reader.may_read(loc.organisation or record.owner, loc.restricted_to)
    )
    return record if len(visible) == len(record.locations) else replace(record, locations=visible)


def withheld(record: Record, reader: Reader) -> tuple[str, ...]:
    """The organisations holding locations of ``record`` that ``reader`` may not see: where a
    restricted copy can be read (what a landing page says instead of the URL)."""
    hidden = {
        loc.organisation or record.owner
        for loc in record.locations
        if not reader.may_read(loc.organisation or record.owner, loc.restricted_to)
    }
    return tuple(sorted(hidden))


def shown_document(document: Mapping[str, Any], reader: Reader) -> dict[str, Any]:
    """A record as the API shows it (``representations.shapes.record_json``, a history entry's
    record) without the locations ``reader`` may not see (each held by its ``organisation``,
    or by the record's ``owner`` when it names none).

    >>> shown_document({"owner": "L", "locations": [{"url": "u", "restricted_to": "r"}]}, PUBLIC)
    {'owner': 'L', 'locations': []}
    """
    found = document.get("locations")
    if not isinstance(found, list):
        return dict(document)
    owner = str(document.get("owner", ""))
    visible = [
        loc
        for loc in found
        if not isinstance(loc, Mapping)
        or reader.may_read(str(loc.get("organisation") or owner), loc.get("restricted_to"))
    ]
    return {**document, "locations": visible}


# The request headers each form of the forwarded_headers setting reads (web/proxies.py).
HEADER_FORMS: Final = {
    "x-forwarded": (b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host"),
    "forwarded": (b"forwarded",),
}


def listed_networks(setting: str, text: str) -> tuple[Range, ...]:
    """The addresses and networks a setting lists, comma-separated (a bare address is a
    network of one); a :class:`ValueError` naming the setting and an entry that is neither.

    >>> listed_networks("fetch_allowed_networks", "10.20.0.0/16, ::1")
    (IPv4Network('10.20.0.0/16'), IPv6Network('::1/128'))
    >>> listed_networks("trusted_proxies", "localhost")
    Traceback (most recent call last):
    ...
    ValueError: trusted_proxies: 'localhost' is not an IP address or network
    """
    networks = []
    for entry in filter(None, (part.strip() for part in text.split(","))):
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{setting}: {entry!r} is not an IP address or network") from None
    return tuple(networks)


_RFC_1918 = tuple(map(ipaddress.IPv4Network, ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")))
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")  # RFC 6598: carrier-grade NAT
_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")  # RFC 4193
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052: an IPv4 address in its last 32 bits


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries to an IPv4 host: IPv4-mapped (RFC 4291
    §2.5.5.2), 6to4 (RFC 3056) or NAT64's well-known prefix (RFC 6052); None otherwise.

    >>> embedded_ipv4(ipaddress.ip_address("::ffff:127.0.0.1"))
    IPv4Address('127.0.0.1')
    >>> embedded_ipv4(ipaddress.ip_address("2001:db8::1")) is None
    True
    """
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.ipv4_mapped or address.sixtofour


def address_class(address: Address) -> str | None:
    """Why the server fetches nothing from ``address`` unless an operator allows it: the kind
    of address it is, or None for a global address (the public internet). An IPv6 address
    carrying an IPv4 one is judged by the IPv4 address.

    >>> [address_class(ipaddress.ip_address(a)) for a in ("10.0.0.5", "::ffff:169.254.169.254")]
    ['private', 'link-local']
    >>> address_class(ipaddress.ip_address("93.184.215.14")) is None
    True
    """
    inner = embedded_ipv4(address)
    if inner is not None:
        return address_class(inner)
    kinds = (
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local"),
        (address.is_unspecified, "unspecified"),
        (address.is_multicast, "multicast"),
        (any(address in network for network in _RFC_1918), "private"),
        (address in _UNIQUE_LOCAL, "unique-local"),
        (address in _SHARED, "shared (carrier-grade NAT)"),
        (address.is_reserved, "reserved"),
        (not address.is_global, "special-purpose"),
    )
    return next((kind for found, kind in kinds if found), None)


def fetch_refusal(address: Address, allowed: Sequence[Range]) -> str | None:
    """Why the server refuses to fetch from ``address``, in words (None: it may): an address
    that is not global, unless it is inside one of the ``allowed`` networks
    (``fetch_allowed_networks``, a reading-room intranet).

    >>> fetch_refusal(ipaddress.ip_address("10.0.0.5"), ())
    'address 10.0.0.5 is private; allow it with fetch_allowed_networks'
    >>> fetch_refusal(ipaddress.ip_address("10.0.0.5"), parse_ranges(["10.0.0.0/8"])) is None
    True
    """
    if inside(client_address(str(address)), allowed):
        return None
    kind = address_class(address)
    return None if kind is None else refused_as(address, kind)


def refused_as(address: Address, kind: str) -> str:
    """A refusal of ``address`` as an address of ``kind``, with what would allow it."""
    return f"address {address} is {kind}; allow it with fetch_allowed_networks"
