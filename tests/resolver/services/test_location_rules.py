"""The rules of who holds which location (``services.locations``), as properties over any
lists of locations and holders: a grantee's write never changes another organisation's
location, and the owner's write keeps every stored URL's holder."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain import ForbiddenError, Location, UnacceptableError
from urnkit.resolver.services.locations import held_as_stored, with_own_locations

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
