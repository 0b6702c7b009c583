"""Networks' pure rules (``urnkit.resolver.domain.networks``), as properties over every range
and address: CIDR notation (RFC 4632 §3.1 for IPv4, RFC 4291 §2.3 for IPv6), membership at the
edges of a range, IPv4-mapped IPv6 addresses (RFC 4291 §2.5.5.2), network names, and who may
read a restricted location. The standard library's ``ipaddress`` is the reference."""

from __future__ import annotations

import ipaddress
import re
from datetime import UTC, datetime

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from urnkit.resolver.domain import (
    NETWORK_NAME_PATTERN,
    PUBLIC,
    Location,
    Reader,
    Record,
    UnacceptableError,
    check_network_name,
    client_address,
    inside,
    media_type_of,
    parse_ranges,
    read_targets,
    shown,
    shown_document,
    withheld,
)
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.store.queries.links import resolution_targets, restricted_targets

Range = ipaddress.IPv4Network | ipaddress.IPv6Network


@st.composite
def ranges(draw: st.DrawFn, version: int | None = None) -> Range:
    """A CIDR range, host bits clear: any prefix length of either version."""
    chosen = version or draw(st.sampled_from((4, 6)))
    bits = 32 if chosen == 4 else 128
    length = draw(st.integers(0, bits))
    value = draw(st.integers(0, 2**bits - 1)) >> (bits - length) << (bits - length)
    kind = ipaddress.IPv4Network if chosen == 4 else ipaddress.IPv6Network
    return kind((value, length))


# --- CIDR notation --------------------------------------------------------------------------------


@given(ranges())
def test_a_range_reads_back_as_written(found: Range) -> None:
    # RFC 4632 §3.1, RFC 4291 §2.3: address/prefix-length.
    assert parse_ranges([str(found)]) == (found,)
    assert parse_ranges([f"  {found}  "]) == (found,)


@given(ranges(), st.data())
def test_host_bits_set_are_refused_naming_the_range(found: Range, data: st.DataObject) -> None:
    # A range whose address has bits beyond its prefix is a mistake: 192.0.2.1/24 means neither
    # 192.0.2.0/24 nor 192.0.2.1 surely. (A full-length prefix has no host bits.)
    if found.num_addresses == 1:
        return
    offset = data.draw(st.integers(1, found.num_addresses - 1))
    text = f"{found.network_address + offset}/{found.prefixlen}"
    with pytest.raises(UnacceptableError, match=rf"range 2: '{re.escape(text)}' has host bits"):
        parse_ranges(["192.0.2.0/24", text])


@given(st.integers(4, 6).filter(lambda n: n != 5), st.integers(0, 300))
@example(4, 33)
@example(6, 129)
def test_a_prefix_longer_than_the_address_is_refused(version: int, length: int) -> None:
    text = f"{'10.0.0.0' if version == 4 else '2001:db8::'}/{length}"
    if length <= (32 if version == 4 else 128):
        return
    with pytest.raises(UnacceptableError, match="is not a CIDR range"):
        parse_ranges([text])


@given(st.text(max_size=40))
@example("example.org")
@example("10.0.0.0/8/8")
@example("10.0.0.0/-1")
@example("")
def test_anything_else_is_refused_or_read_as_ipaddress_reads_it(text: str) -> None:
    try:
        expected = ipaddress.ip_network(text.strip(), strict=True)
    except ValueError:
        with pytest.raises(UnacceptableError, match="range 1: "):
            parse_ranges([text])
    else:
        assert parse_ranges([text]) == (expected,)


def test_a_network_has_ranges_and_not_too_many() -> None:
    with pytest.raises(UnacceptableError, match="at least one"):
        parse_ranges([])
    many = [f"10.{n // 256}.{n % 256}.0/24" for n in range(1001)]
    with pytest.raises(UnacceptableError, match="at most 1000"):
        parse_ranges(many)
    assert parse_ranges(["10.0.0.0/8", "10.0.0.0/8"]) == (ipaddress.ip_network("10.0.0.0/8"),)


# --- membership at the edges ----------------------------------------------------------------------


@given(ranges())
def test_the_first_and_last_addresses_are_inside_their_neighbours_not(found: Range) -> None:
    first, last = found.network_address, found.broadcast_address
    assert inside(first, [found])
    assert inside(last, [found])
    if int(first) > 0:
        assert not inside(first - 1, [found])
    if int(last) < (2**found.max_prefixlen - 1):
        assert not inside(last + 1, [found])


@given(ranges(), st.sampled_from((4, 6)), st.integers(0, 2**128 - 1))
def test_membership_is_ipaddress_membership(found: Range, version: int, value: int) -> None:
    raw = ipaddress.IPv4Address(value % 2**32) if version == 4 else ipaddress.IPv6Address(value)
    if isinstance(raw, ipaddress.IPv6Address) and raw.ipv4_mapped is not None:
        raw = raw.ipv4_mapped  # judged as IPv4: the next test
    expected = raw.version == found.version and raw in found
    assert inside(client_address(str(raw)), [found]) is expected


@given(ranges(version=4), st.integers(0, 2**32 - 1))
def test_an_ipv4_mapped_address_is_judged_as_ipv4(found: Range, value: int) -> None:
    # RFC 4291 §2.5.5.2: ::ffff:a.b.c.d is the IPv4 client a.b.c.d seen over IPv6.
    v4 = ipaddress.IPv4Address(value)
    mapped = client_address(f"::ffff:{v4}")
    assert mapped == v4
    assert inside(mapped, [found]) is (v4 in found)


@given(ranges(version=6), st.integers(0, 2**32 - 1))
def test_an_ipv4_address_is_in_no_ipv6_range(found: Range, value: int) -> None:
    # Not even ::/0: IPv4 and IPv6 ranges are kept apart, as ipaddress keeps them.
    assert not inside(ipaddress.IPv4Address(value), [found])


@given(st.text(max_size=30))
@example("testclient")
@example("unix:/run/urnkit.sock")
def test_a_client_that_is_no_address_is_inside_nothing(text: str) -> None:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        assert client_address(text) is None
        assert not inside(client_address(text), [ipaddress.ip_network("::/0")])


# --- network names --------------------------------------------------------------------------------


@given(st.text(alphabet="abcXYZ019._- \u00e4/", max_size=70))
@example("reading-rooms")
@example("-rooms")
@example("a" * 63)
@example("a" * 64)
def test_a_network_name_is_a_short_lower_case_token(name: str) -> None:
    if re.fullmatch(NETWORK_NAME_PATTERN, name) and name.isascii():
        assert check_network_name(name) == name
        assert 1 <= len(name) <= 63
        assert name == name.lower()
    else:
        with pytest.raises(UnacceptableError, match="is not a network name"):
            check_network_name(name)


# --- who may read, what resolution reads ----------------------------------------------------------

T = datetime(2026, 1, 1, tzinfo=UTC)
NAMES = st.sampled_from((None, None, "rooms", "campus"))
readers = st.builds(
    Reader,
    organisation=st.sampled_from((None, "Library", "Other")),
    admin=st.booleans(),
    networks=st.frozensets(
        st.tuples(st.sampled_from(("Library", "Other")), st.sampled_from(("rooms", "campus")))
    ),
)


@st.composite
def records(draw: st.DrawFn) -> Record:
    count = draw(st.integers(0, 6))
    found = tuple(
        Location(
            f"https://example.org/{n}",
            n,
            media_type=draw(st.sampled_from((None, "text/html", "Application/PDF; q=1", "PDF"))),
            restricted_to=draw(NAMES),
        )
        for n in range(count)
    )
    return Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Library", T, T, found)


@given(records(), readers)
def test_shown_keeps_exactly_the_locations_the_reader_may_read(
    record: Record, reader: Reader
) -> None:
    kept = shown(record, reader).locations
    assert kept == tuple(
        loc for loc in record.locations if reader.may_read("Library", loc.restricted_to)
    )
    assert all(loc.restricted_to is None for loc in shown(record, PUBLIC).locations)
    assert withheld(record, reader) == (("Library",) if len(kept) < len(record.locations) else ())
    # A history document (the record as the API showed it) is filtered alike.
    document = shown_document(record_json(record), reader)
    assert [loc["url"] for loc in document["locations"]] == [loc.url for loc in kept]


@given(records(), st.sets(st.integers(0, 5)))
def test_targets_hold_the_open_urls_restricted_holds_all_with_their_networks(
    record: Record, broken_numbers: set[int]
) -> None:
    # Each location with its media type, if it has one (read_targets reads them back).
    broken = {f"https://example.org/{n}" for n in broken_numbers}
    usable = [loc for loc in record.locations if loc.url not in broken]
    targets = resolution_targets(record.locations, broken)
    expected = [loc for loc in usable if loc.restricted_to is None]
    if not expected:
        assert targets is None
    else:
        assert targets is not None
        kinds = tuple(media_type_of(loc) for loc in expected)
        assert read_targets(targets) == (
            tuple(loc.url for loc in expected),
            kinds if any(kinds) else (),
        )
    restricted = restricted_targets([(loc, 7) for loc in record.locations], broken)
    if all(loc.restricted_to is None for loc in usable):
        assert restricted is None
    else:
        assert restricted is not None
        lines = [line.partition("\t") for line in restricted.split("\n")]
        assert [network for network, _, _ in lines] == [
            "" if loc.restricted_to is None else f"7/{loc.restricted_to}" for loc in usable
        ]
        for (_, _, target), loc in zip(lines, usable, strict=True):
            assert read_targets(target) == (
                (loc.url,),
                () if media_type_of(loc) is None else (media_type_of(loc),),
            )
