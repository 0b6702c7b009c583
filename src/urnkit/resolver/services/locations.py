"""The rules of a record's locations (no I/O): which URLs are fit to store, best first, and
which organisation holds each: the owner writes the whole list, an organisation it granted
locations on the record (``location_grants``) writes only its own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import urlsplit

from urnkit.resolver.domain import ForbiddenError, Location, UnacceptableError

LOCATION_SCHEMES = frozenset({"http", "https", "ftp"})
MAX_LOCATIONS = 100
MAX_PRIORITY = 1_000_000
# The longest of a location's texts: the API's schema (web/schemas.py) publishes the same.
LONGEST = {"url": 4000, "label": 1000, "media_type": 255}


def check_locations(
    found: Sequence[Location], stored: Sequence[Location] = ()
) -> tuple[Location, ...]:
    """Locations fit to store, best first: absolute http(s) or ftp URLs without spaces
    (:func:`url_problem`), priorities 0 to :data:`MAX_PRIORITY` (the lowest number is the
    best), texts no longer than :data:`LONGEST` says, at most ``MAX_LOCATIONS``. A refusal
    names the location's member it concerns (``field``). A URL of the record's ``stored``
    locations is not checked again: what was stored before a rule stays writable.

    >>> check_locations([Location("ftp:/x")])
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: location 1: 'ftp:/x' is not an absolute ...
    >>> old = Location("https://user:password@example.org/")
    >>> check_locations([old], stored=[old]) == (old,)
    True
    """
    stored_urls = {location.url for location in stored}
    for number, location in enumerate(found, 1):
        for member, longest in LONGEST.items():
            if len(getattr(location, member) or "") > longest:
                raise UnacceptableError(
                    f"location {number}: the {member} is longer than {longest} characters",
                    field=member,
                )
        problem = None if location.url in stored_urls else url_problem(location.url)
        if problem is not None:
            raise UnacceptableError(f"location {number}: {problem}", field="url")
        if not 0 <= location.priority <= MAX_PRIORITY:
            raise UnacceptableError(
                f"location {number}: the priority must be 0 to {MAX_PRIORITY}", field="priority"
            )
    if len(found) > MAX_LOCATIONS:
        raise UnacceptableError(f"a record has at most {MAX_LOCATIONS} locations")
    return tuple(sorted(found, key=lambda location: location.priority))  # stable: ties keep order


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a location, or None: it must be an absolute http, https or ftp
    URL with a host, printable, without spaces; without user information (``user:password@``,
    which resolution would publish to everyone), and with a port, if any, of 1 to 65535 (RFC
    3986 §3.2.3 lets the port be any digits; no server listens past 65535, nor on 0).

    >>> url_problem("https://example.org:8443/a") is None
    True
    >>> url_problem("https://alice:secret@example.org/")
    "'https://alice:secret@example.org/' holds user information (user:password@), which ..."
    >>> url_problem("https://example.org:99999/")
    "'https://example.org:99999/' has the port '99999': a port is 1 to 65535"
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed IPv6 bracket
        parts = None
    if (
        parts is None
        or parts.scheme.lower() not in LOCATION_SCHEMES
        or not parts.hostname
        or not url.isprintable()
        or " " in url
    ):
        return f"{url!r} is not an absolute http, https or ftp URL with a host"
    if "@" in parts.netloc:
        return (
            f"{url!r} holds user information (user:password@), which resolution would "
            "publish: leave it out of the URL"
        )
    try:
        port = parts.port
    except ValueError:  # not digits, or past 65535
        port = 0
    if port is not None and not 1 <= port <= 65535:
        return f"{url!r} has the port {parts.netloc.rpartition(':')[2]!r}: a port is 1 to 65535"
    return None


def held_as_stored(
    current: Sequence[Location], found: Sequence[Location], owner: str
) -> tuple[Location, ...]:
    """The owner's whole list of a record's locations (``found``, checked), each held by the
    organisation holding its URL in ``current``, a new URL by ``owner``: the owner orders and
    removes any organisation's locations, and adds its own. A location naming another holder
    than that is refused; only URLs not in ``current`` are checked by :func:`url_problem`.

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
    return check_locations(held, current)


def with_own_locations(
    current: Sequence[Location], organisation: str, found: Sequence[Location]
) -> tuple[Location, ...]:
    """A record's locations after ``organisation`` replaced its own with ``found`` (checked):
    the other organisations' locations stay as they are, unchecked by :func:`url_problem` (as
    are the URLs of ``organisation``'s own stored ones). A URL another organisation holds, or
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
    check_locations(own, current)  # refusals numbered as the caller numbered its locations
    return check_locations([*others, *own], current)


@dataclass(frozen=True, slots=True)
class LocationEdit:
    """One change of a list of locations, as the staff pages make them: ``add`` a location,
    ``remove`` the one at ``url``, or move it ``up`` or ``down`` one place (its priority
    traded with its neighbour's, so that resolution's order follows)."""

    kind: Literal["add", "remove", "up", "down"]
    url: str
    added: Location | None = None

    def applied(self, found: Sequence[Location]) -> list[Location]:
        """``found`` (best first) after this change; :class:`UnacceptableError` naming the
        ``url`` field when no location is at ``url`` (or one is, to add).

        >>> a, b = Location("https://a.example/", 1), Location("https://b.example/", 5)
        >>> [(x.url[8], x.priority) for x in LocationEdit("up", b.url).applied([a, b])]
        [('b', 1), ('a', 5)]
        >>> LocationEdit("remove", a.url).applied([a, b]) == [b]
        True
        """
        urls = [location.url for location in found]
        if self.kind == "add":
            assert self.added is not None
            if self.added.url in urls:
                raise UnacceptableError(f"{self.added.url} is a location already", field="url")
            return [*found, self.added]
        if self.url not in urls:
            raise UnacceptableError(f"no location is at {self.url}", field="url")
        at = urls.index(self.url)
        if self.kind == "remove":
            return [*found[:at], *found[at + 1 :]]
        other = at - 1 if self.kind == "up" else at + 1
        if not 0 <= other < len(found):
            return list(found)
        moved = list(found)
        mine, theirs = found[at], found[other]
        moved[at] = replace(theirs, priority=mine.priority)
        moved[other] = replace(mine, priority=theirs.priority)
        return moved
