"""The rule of a record's locations (no I/O): which URLs are fit to store, best first."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from urnkit.resolver.domain import Location, UnacceptableError

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
