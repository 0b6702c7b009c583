"""The rules of a record's locations (no I/O): which URLs are fit to store, best first, and
which organisation holds each: the owner writes the whole list, an organisation it granted
locations on the record (``location_grants``) writes only its own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from urllib.parse import urlsplit

from urnkit.resolver.domain import ForbiddenError, Location, UnacceptableError

LOCATION_SCHEMES = frozenset({"http", "https", "ftp"})
MAX_LOCATIONS = 100


def check_locations(found: Sequence[Location]) -> tuple[Location, ...]:
    """Locations fit to store, best first: absolute http(s) or ftp URLs without spaces,
    priorities >= 0 (the lowest number is the best), at most ``MAX_LOCATIONS``.

    >>> check_locations([Location("ftp:/x")])
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: location 1: 'ftp:/x' is not an absolute ...
    """
    for number, location in enumerate(found, 1):
        try:
            parts = urlsplit(location.url)
            fit = (
                parts.scheme.lower() in LOCATION_SCHEMES
                and bool(parts.hostname)
                and location.url.isprintable()
                and " " not in location.url
            )
        except ValueError:
            fit = False
        if not fit:
            raise UnacceptableError(
                f"location {number}: {location.url!r} is not an absolute http, https or ftp URL "
                "with a host"
            )
        if location.priority < 0:
            raise UnacceptableError(f"location {number}: the priority must be 0 or more")
    if len(found) > MAX_LOCATIONS:
        raise UnacceptableError(f"a record has at most {MAX_LOCATIONS} locations")
    return tuple(sorted(found, key=lambda location: location.priority))  # stable: ties keep order


def held_as_stored(
    current: Sequence[Location], found: Sequence[Location], owner: str
) -> tuple[Location, ...]:
    """The owner's whole list of a record's locations (``found``, checked), each held by the
    organisation holding its URL in ``current``, a new URL by ``owner``: the owner orders and
    removes any organisation's locations, and adds its own. A location naming another holder
    than that is refused.

    >>> stored = [Location("https://a.example/1", 1, organisation="A")]
    >>> [loc.organisation for loc in held_as_stored(stored, [
    ...     Location("https://o.example/1", 1), Location("https://a.example/1", 0)], "O")]
    ['A', 'O']
    """
    holders: dict[str, str | None] = {}
    for loc in current:
        holders.setdefault(loc.url, loc.organisation)
    held = []
    for number, loc in enumerate(found, 1):
        holder = holders.get(loc.url) or owner
        if loc.organisation not in (None, holder):
            raise UnacceptableError(
                f"location {number}: {loc.url} is held by {holder!r}, not {loc.organisation!r}"
            )
        held.append(replace(loc, organisation=holder))
    return check_locations(held)


def with_own_locations(
    current: Sequence[Location], organisation: str, found: Sequence[Location]
) -> tuple[Location, ...]:
    """A record's locations after ``organisation`` replaced its own with ``found`` (checked):
    the other organisations' locations stay as they are. A URL another organisation holds, or
    a location naming another organisation, is refused (:class:`ForbiddenError`).

    >>> stored = [Location("https://a.example/1", 1, organisation="A")]
    >>> [(loc.url, loc.organisation) for loc in with_own_locations(
    ...     stored, "B", [Location("https://b.example/1", 0)])]
    [('https://b.example/1', 'B'), ('https://a.example/1', 'A')]
    >>> with_own_locations(stored, "B", [Location("https://a.example/1", 0)])
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.ForbiddenError: location 1: https://a.example/1 is held by ...
    """
    others = [loc for loc in current if loc.organisation != organisation]
    taken = {loc.url: loc.organisation for loc in others}
    own = []
    for number, loc in enumerate(found, 1):
        if loc.url in taken:
            raise ForbiddenError(
                f"location {number}: {loc.url} is held by {taken[loc.url]!r}; "
                f"{organisation!r} adds and changes only its own locations"
            )
        if loc.organisation not in (None, organisation):
            raise ForbiddenError(
                f"location {number} names {loc.organisation!r}; "
                f"{organisation!r} adds and changes only its own locations"
            )
        own.append(replace(loc, organisation=organisation))
    check_locations(own)  # refusals numbered as the caller numbered its locations
    return check_locations([*others, *own])
