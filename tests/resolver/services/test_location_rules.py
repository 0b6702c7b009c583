"""The rules of locations (``services.locations``), as properties: who holds which location
over any lists of locations and holders (a grantee's write never changes another
organisation's location, and the owner's write keeps every stored URL's holder), and what a
location's URL may be (a port of 1 to 65535, no user information)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain import ForbiddenError, Location, UnacceptableError
from urnkit.resolver.services.locations import (
    check_locations,
    held_as_stored,
    with_own_locations,
)

ORGANISATIONS = ("Owner", "A", "B")
URLS = st.sampled_from([f"https://copies.example.org/{n}" for n in range(8)])


def locations(holders: st.SearchStrategy[str | None]) -> st.SearchStrategy[list[Location]]:
    return st.lists(
        st.builds(
            Location,
            url=URLS,
            priority=st.integers(0, 5),
            label=st.none() | st.just("copy"),
            organisation=holders,
        ),
        max_size=6,
    )


def stored() -> st.SearchStrategy[list[Location]]:
    """A record's locations as stored: one holder a URL."""
    return locations(st.sampled_from(ORGANISATIONS)).map(
        lambda found: list({loc.url: loc for loc in found}.values())
    )


@given(current=stored(), organisation=st.sampled_from(ORGANISATIONS), found=locations(st.none()))
def test_a_write_of_ones_own_locations_leaves_the_others(
    current: list[Location], organisation: str, found: list[Location]
) -> None:
    others = [loc for loc in current if loc.organisation != organisation]
    taken = {loc.url for loc in others}
    if any(loc.url in taken for loc in found):
        with pytest.raises(ForbiddenError, match="is held by"):
            with_own_locations(current, organisation, found)
        return
    result = with_own_locations(current, organisation, found)
    assert Counter(loc for loc in result if loc.organisation != organisation) == Counter(others)
    own = [loc for loc in result if loc.organisation == organisation]
    assert sorted(loc.url for loc in own) == sorted(loc.url for loc in found)
    priorities = [loc.priority for loc in result]
    assert priorities == sorted(priorities)  # best first


@given(current=stored(), found=locations(st.none()))
def test_the_owners_write_keeps_each_urls_holder(
    current: list[Location], found: list[Location]
) -> None:
    holder = {loc.url: loc.organisation for loc in current}
    result = held_as_stored(current, found, "Owner")
    assert Counter(loc.url for loc in result) == Counter(loc.url for loc in found)
    for loc in result:
        assert loc.organisation == holder.get(loc.url, "Owner")
    # What was read can be written back as it is.
    assert held_as_stored(current, current, "Owner") == tuple(
        sorted(current, key=lambda loc: loc.priority)
    )


@given(current=stored().filter(bool), other=st.sampled_from(ORGANISATIONS))
def test_the_owners_write_cannot_name_another_holder(current: list[Location], other: str) -> None:
    location = current[0]
    renamed = Location(location.url, organisation=other)
    if other == location.organisation:
        assert held_as_stored(current, [renamed], "Owner")[0].organisation == other
    else:
        with pytest.raises(UnacceptableError, match=f"held by {location.organisation!r}"):
            held_as_stored(current, [renamed], "Owner")


# --- what a location's URL may be -----------------------------------------------------------


@given(port=st.integers(0, 200_000), host=st.sampled_from(["example.org", "[2001:db8::1]"]))
def test_a_port_is_1_to_65535(port: int, host: str) -> None:
    # RFC 3986 §3.2.3 lets a port be any digits; no server listens on 0 or past 65535.
    url = f"https://{host}:{port}/a"
    if 1 <= port <= 65535:
        assert check_locations([Location(url)])[0].url == url
        return
    with pytest.raises(UnacceptableError) as refused:
        check_locations([Location("https://example.org/"), Location(url)])
    assert (
        refused.value.detail == f"location 2: {url!r} has the port '{port}': a port is 1 to 65535"
    )
    assert refused.value.extensions["field"] == "url"


@pytest.mark.parametrize("port", ["8a", "+80", "-1", "٨٠", "0080000"])
def test_a_port_that_is_not_a_number_in_range_is_refused(port: str) -> None:
    with pytest.raises(UnacceptableError, match="a port is 1 to 65535"):
        check_locations([Location(f"http://example.org:{port}/")])


_USERINFO = st.sampled_from(["", "user", "user:", ":password", "user:password", "a%40b:p%3Aw"])


@given(userinfo=_USERINFO, scheme=st.sampled_from(["http", "https", "ftp", "HTTPS"]))
def test_user_information_is_refused_as_it_would_be_published(userinfo: str, scheme: str) -> None:
    # RFC 3986 §3.2.1: "user:password" in a URI is deprecated; a location's URL is public.
    url = f"{scheme}://{userinfo}@example.org:8080/a"
    with pytest.raises(UnacceptableError) as refused:
        check_locations([Location(url)])
    assert refused.value.detail.startswith(f"location 1: {url!r} holds user information")
    assert refused.value.extensions["field"] == "url"


def test_an_at_sign_after_the_host_is_no_user_information() -> None:
    url = "https://example.org/people/@alice?from=a@b"
    assert check_locations([Location(url)])[0].url == url


@given(
    userinfo=_USERINFO,
    holder=st.sampled_from(ORGANISATIONS),
    grantee=st.sampled_from(ORGANISATIONS[1:]),
)
def test_a_url_stored_before_the_rules_stays_writable_a_new_one_is_checked(
    userinfo: str, holder: str, grantee: str
) -> None:
    # Stored before the rule of user information (or of ports): written back, kept, moved.
    old = Location(f"https://{userinfo}@example.org/old", 1, organisation=holder)
    new = Location(f"https://{userinfo}@example.org/new", 2)
    assert held_as_stored([old], [replace(old, priority=0)], "Owner") == (replace(old, priority=0),)
    mine = Location("https://example.org/mine", 0)
    if holder == grantee:  # its own location, sent back unchanged
        assert with_own_locations([old], grantee, [mine, old])[1] == old
    else:  # another organisation's, left as it is
        assert with_own_locations([old], grantee, [mine])[1] == old
    with pytest.raises(UnacceptableError, match=r"location 2: .* holds user information"):
        held_as_stored([old], [old, new], "Owner")
    with pytest.raises(UnacceptableError, match=r"location 2: .* holds user information"):
        with_own_locations([old], grantee, [mine, new])
