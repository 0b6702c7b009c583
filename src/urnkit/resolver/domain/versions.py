"""A record's versions in time, its mementos (RFC 7089 §1.1: a Memento is "a fixed resource
that encapsulates a prior state of the Original Resource"): its history, one state per second
(the granularity of an HTTP-date, RFC 7089 §2.1.1), each the last state of its second.

>>> from datetime import UTC
>>> def entry(second, status):
...     return HistoryEntry(datetime(2019, 1, 1, 0, 0, second, 500, tzinfo=UTC), "x", "A",
...                         {"status": status})
>>> versions = Versions.of("URN:NBN:fi-1", [entry(0, "reserved"), entry(0, "active"),
...                                         entry(9, "deactivated")])
>>> [(v.at.second, v.record["status"]) for v in versions.entries]
[(0, 'active'), (9, 'deactivated')]
>>> versions.entries[versions.in_force(datetime(2019, 1, 1, 0, 0, 5, tzinfo=UTC))].at.second
0
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from urnkit.resolver.domain.errors import ResolverError
from urnkit.resolver.domain.names import parse_urn, prefix_of
from urnkit.resolver.domain.records import HistoryEntry, Location, Record


class InvalidDatetimeError(ResolverError):
    """A datetime a request names that is none (RFC 7089 §4.5.3: 400)."""

    status = 400
    title = "Bad Request"


STAMP = "%Y%m%d%H%M%S"
"""The 14 digits of a datetime in web archives' addresses (UTC, to the second)."""


@dataclass(frozen=True, slots=True)
class Versions:
    """The versions of the record of ``urn`` (in its canonical form, its equivalence key, as
    the addresses of resolution here name it: ``cite-as``), oldest first, each
    stamped with the second it came into force (``at``, without microseconds); ``restricted``
    when a version had a location restricted to networks (what a reader is shown depends on
    where it is)."""

    urn: str
    entries: tuple[HistoryEntry, ...]
    restricted: bool = False

    @classmethod
    def of(cls, urn: str, history: Sequence[HistoryEntry], restricted: bool = False) -> Versions:
        """The versions a ``history`` (oldest first) gives: of the entries made within one
        second, the last.

        >>> Versions.of("URN:NBN:fi-1", []).entries
        ()
        """
        kept: dict[datetime, HistoryEntry] = {}
        for entry in history:
            second = entry.at.replace(microsecond=0)
            kept[second] = replace(entry, at=second)
        return cls(urn, tuple(kept.values()), restricted)

    def in_force(self, moment: datetime) -> int:
        """The index of the version in force at ``moment``: the last that came into force at
        or before it; the first when ``moment`` is before the record existed (RFC 7089 §4.5.3:
        the Memento closest to it).

        >>> from datetime import UTC
        >>> one = HistoryEntry(datetime(2020, 1, 1, tzinfo=UTC), "created", "A", {})
        >>> Versions.of("URN:NBN:fi-1", [one]).in_force(datetime(1990, 1, 1, tzinfo=UTC))
        0
        """
        if not self.entries:
            raise ValueError(f"{self.urn} has no versions")
        found = bisect_right([entry.at for entry in self.entries], moment)
        return max(found - 1, 0)

    def index_at(self, moment: datetime) -> int | None:
        """The index of the version that came into force at ``moment`` exactly (a Memento's
        own address names it), if one did.

        >>> from datetime import UTC
        >>> one = HistoryEntry(datetime(2020, 1, 1, tzinfo=UTC), "created", "A", {})
        >>> Versions.of("URN:NBN:fi-1", [one]).index_at(datetime(2020, 1, 1, tzinfo=UTC))
        0
        """
        for index, entry in enumerate(self.entries):
            if entry.at == moment:
                return index
        return None


def location_then(record: Mapping[str, Any]) -> str | None:
    """The location resolution chose in a version of a record (as the API showed it then,
    without the locations the reader may not see): the first of its locations, best first,
    while it was active; None otherwise (its page answered: reserved, deactivated, no
    location). Whether a link was broken then is not known: link checking keeps only the
    present.

    >>> location_then({"status": "active", "locations": [{"url": "https://a.example/"}]})
    'https://a.example/'
    >>> location_then({"status": "deactivated", "locations": [{"url": "https://a.example/"}]})
    """
    found = record.get("locations") or []
    if record.get("status") != "active" or not found:
        return None
    return str(found[0]["url"])


@dataclass(frozen=True, slots=True)
class ArchivedCopy:
    """A copy of a broken location in a web archive (Robust Links' ``rel="memento"``): its
    ``url`` in the archive, the ``location`` it copies, and the moment it is asked for
    (``at``: when link checking last found the location working, else when it found it
    broken; the archive answers its copy closest to it)."""

    url: str
    location: str
    at: datetime


def web_archives(text: str) -> tuple[str, ...]:
    """The web archives a setting names: URL templates separated by spaces, each an http(s)
    URL holding ``{url}`` (the location's URL) and perhaps ``{datetime}`` (14 digits); a
    :class:`ValueError` naming the first that is not.

    >>> web_archives("https://web.archive.org/web/{datetime}/{url}")
    ('https://web.archive.org/web/{datetime}/{url}',)
    >>> web_archives("https://archive.example/")
    Traceback (most recent call last):
    ...
    ValueError: web_archives: 'https://archive.example/' is no http(s) template with {url}
    """
    templates = tuple(text.split())
    for template in templates:
        if not template.startswith(("http://", "https://")) or "{url}" not in template:
            raise ValueError(f"web_archives: {template!r} is no http(s) template with {{url}}")
    return templates


def stamp(moment: datetime) -> str:
    """``moment`` as the 14 digits of a Memento's address (UTC, to the second).

    >>> stamp(datetime(2007, 5, 31, 20, 35, 1, 999, tzinfo=UTC))
    '20070531203501'
    """
    return moment.astimezone(UTC).strftime(STAMP)


def archived_copy(template: str, url: str, moment: datetime) -> str:
    """A location's copy in a web archive whose addresses ``template`` makes: ``{url}`` the
    location's URL, ``{datetime}`` the 14 digits of ``moment`` (when it was last seen working;
    the archive answers its copy closest to it).

    >>> archived_copy("https://web.archive.org/web/{datetime}/{url}", "https://a.example/x",
    ...               datetime(2019, 1, 1, tzinfo=UTC))
    'https://web.archive.org/web/20190101000000/https://a.example/x'
    """
    return template.replace("{datetime}", stamp(moment)).replace("{url}", url)


def record_then(entry: HistoryEntry) -> Record:
    """A version of a record (a history entry: its document, the record as the API showed it
    then) as a :class:`~urnkit.resolver.domain.Record`, for the representations of the
    present to show; a time the document lacks (written before it held it) is the entry's.

    >>> document = {"urn": "URN:NBN:fi:demo-1", "status": "active", "owner": "L",
    ...     "locations": [{"url": "https://a.example/", "priority": 1}], "metadata": {}}
    >>> then = record_then(HistoryEntry(datetime(2019, 1, 1, tzinfo=UTC), "created", "L", document))
    >>> then.key, then.prefix, then.locations[0].url
    ('urn:nbn:fi:demo-1', 'fi:demo', 'https://a.example/')
    """
    document = entry.record
    urn = parse_urn(str(document["urn"]))
    return Record(
        urn=str(urn),
        key=urn.equivalence_key(),
        prefix=prefix_of(urn),
        status=document["status"],
        owner=str(document.get("owner", "")),
        created=_moment(document.get("created"), entry.at),
        updated=_moment(document.get("updated"), entry.at),
        locations=tuple(
            Location(
                loc["url"],
                loc.get("priority", 1),
                loc.get("label"),
                loc.get("media_type"),
                loc.get("organisation"),
                loc.get("restricted_to"),
            )
            for loc in document.get("locations") or ()
        ),
        metadata=dict(document.get("metadata") or {}),
        successors=tuple(document.get("successors") or ()),
        note=document.get("note"),
        grants=tuple(document.get("grants") or ()),
    )


def _moment(text: Any, otherwise: datetime) -> datetime:
    return datetime.fromisoformat(text) if isinstance(text, str) else otherwise
