"""Memento (RFC 7089, https://www.rfc-editor.org/rfc/rfc7089): the headers of a TimeGate and of
a Memento (§2), TimeMaps as ``application/link-format`` (§5) and as JSON, and Robust Links'
archived copies. A record's ``/{urn}`` is its own TimeGate (§4.1.1, URI-R = URI-G); a version
of the record is a Memento at ``memento/{14 digits}/{urn}``, the address form of web archives
(the datetime a path segment before the URN: a URN may hold ``?`` and ``#`` components);
its TimeMaps are at ``timemap/link/{urn}`` and ``timemap/json/{urn}``.

>>> from datetime import UTC
>>> moment = datetime(2019, 1, 1, 12, 30, tzinfo=UTC)
>>> http_date(moment)
'Tue, 01 Jan 2019 12:30:00 GMT'
>>> accept_datetime("Tue, 01 Jan 2019 12:30:00 GMT") == moment
True
>>> memento_url("https://urn.example/", "URN:NBN:fi-1", moment)
'https://urn.example/memento/20190101123000/URN:NBN:fi-1'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any, Literal

from urnkit.resolver.domain.versions import STAMP, ArchivedCopy, Versions, stamp
from urnkit.resolver.representations.rfc2483 import uri_reference
from urnkit.resolver.representations.signposting import Link

LINK_FORMAT = "application/link-format"
"""A TimeMap's media type (RFC 7089 §5.1.1; RFC 6690)."""
TIMEMAP_PAGE = 500
"""Versions a page of a TimeMap lists; the other pages are linked as ``rel="timemap"``."""
VARY = "accept-datetime"
Form = Literal["link", "json"]
_STAMP_TEXT = re.compile(r"[0-9]{14}")


def accept_datetime(value: str) -> datetime:
    """The moment an ``Accept-Datetime`` value names (RFC 7089 §2.1.1: an RFC 1123 date, as
    ``email.utils`` reads it), in UTC; a :class:`ValueError` for anything else (§4.5.3: 400).

    >>> accept_datetime("Thu, 31 May 2007 20:35:00 GMT").isoformat()
    '2007-05-31T20:35:00+00:00'
    >>> accept_datetime("yesterday")
    Traceback (most recent call last):
    ...
    ValueError: Accept-Datetime is not an RFC 1123 date such as 'Thu, 31 May 2007 20:35:00 GMT'
    """
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        moment = None
    if moment is None or moment.tzinfo is None:  # "-0000": no zone, RFC 5322 §3.3
        raise ValueError(
            "Accept-Datetime is not an RFC 1123 date such as 'Thu, 31 May 2007 20:35:00 GMT'"
        )
    return moment.astimezone(UTC)


def http_date(moment: datetime) -> str:
    """``moment`` as an HTTP-date, the form of ``Memento-Datetime`` (RFC 7089 §2.1.1).

    >>> http_date(datetime(2007, 5, 31, 20, 35, tzinfo=UTC))
    'Thu, 31 May 2007 20:35:00 GMT'
    """
    return format_datetime(moment.astimezone(UTC), usegmt=True)


def stamped(text: str) -> datetime | None:
    """The moment 14 digits of a Memento's address name; None when they name none.

    >>> stamped("20070531203501")
    datetime.datetime(2007, 5, 31, 20, 35, 1, tzinfo=datetime.timezone.utc)
    >>> stamped("20071331203501"), stamped("2007")
    (None, None)
    """
    if not _STAMP_TEXT.fullmatch(text):
        return None
    try:
        return datetime.strptime(text, STAMP).replace(tzinfo=UTC)
    except ValueError:
        return None


def memento_url(base: str, urn: str, moment: datetime) -> str:
    """The address of the version of the record of ``urn`` in force at ``moment`` (``base``:
    the resolver's URL, ending in ``/``)."""
    return f"{base}memento/{stamp(moment)}/{urn}"


def timemap_url(base: str, urn: str, form: Form = "link", page: int = 1) -> str:
    """The address of a page of the TimeMap of ``urn``, as link-format or JSON.

    >>> timemap_url("/", "URN:NBN:fi-1", "json", 2)
    '/timemap/json/URN:NBN:fi-1?page=2'
    """
    return f"{base}timemap/{form}/{urn}" + ("" if page == 1 else f"?page={page}")


def timegate_links(base: str, urn: str) -> list[Link]:
    """What every answer of ``/{urn}`` links to (RFC 7089 §2.2, §4.1.1): itself, the Original
    Resource and its TimeGate, and its TimeMaps.

    >>> print(timegate_links("/", "URN:NBN:fi-1")[1].header())
    </URN:NBN:fi-1>; rel="timegate"
    """
    return [
        Link(base + urn, "original"),  # apart, as a linkset's relations are (RFC 9264 §4.2)
        Link(base + urn, "timegate"),
        Link(timemap_url(base, urn), "timemap", (("type", LINK_FORMAT),)),
        Link(timemap_url(base, urn, "json"), "timemap", (("type", "application/json"),)),
    ]


def timegate_header(base: str, urn: str) -> str:
    """:func:`timegate_links` as a ``Link`` value, written out as one string: the hot path's
    (a redirect's), where :class:`Link` objects cost more than the rest.

    >>> from urnkit.resolver.representations.signposting import link_header
    >>> for base, urn in (("https://r.example/", "urn:nbn:fi-ä"), ("/", "urn:x:a%2F b")):
    ...     assert timegate_header(base, urn) == link_header(timegate_links(base, urn))
    """
    base, urn = uri_reference(base), uri_reference(urn)  # as quote() goes: by character
    here = base + urn
    return (
        f'<{here}>; rel="original", <{here}>; rel="timegate", '
        f'<{base}timemap/link/{urn}>; rel="timemap"; type="{LINK_FORMAT}", '
        f'<{base}timemap/json/{urn}>; rel="timemap"; type="application/json"'
    )


def memento_links(base: str, versions: Versions, index: int) -> list[Link]:
    """The links of the Memento of version ``index`` (RFC 7089 §2.2): the Original Resource,
    its TimeGate and TimeMaps, and the first, last, previous and next Mementos, each with its
    datetime; the Memento itself among them as ``memento``.

    >>> from urnkit.resolver.domain import HistoryEntry
    >>> one = HistoryEntry(datetime(2019, 1, 1, tzinfo=UTC), "created", "A", {})
    >>> [link.rel for link in memento_links("/", Versions.of("URN:NBN:fi-1", [one]), 0)][4:]
    ['first last memento']
    """
    entries, urn = versions.entries, versions.urn
    relations: dict[int, list[str]] = {}
    for rel, at in (("first", 0), ("prev", index - 1), ("next", index + 1)):
        if 0 <= at < len(entries):
            relations.setdefault(at, []).append(rel)
    relations.setdefault(len(entries) - 1, []).append("last")
    relations.setdefault(index, [])
    links = timegate_links(base, urn)
    for at in sorted(relations):
        links.append(_memento(base, urn, versions, at, " ".join(relations[at])))
    return links


def _memento(base: str, urn: str, versions: Versions, index: int, rels: str) -> Link:
    moment = versions.entries[index].at
    rel = f"{rels} memento".lstrip()
    return Link(memento_url(base, urn, moment), rel, (("datetime", http_date(moment)),))


def timemap_link_format(base: str, versions: Versions, page: int = 1) -> str:
    """A page of the TimeMap of a record's versions as ``application/link-format`` (RFC 7089
    §5.1.1): the Original Resource, the TimeGate, the TimeMap's pages, then each version.

    >>> from urnkit.resolver.domain import HistoryEntry
    >>> one = HistoryEntry(datetime(2019, 1, 1, tzinfo=UTC), "created", "A", {})
    >>> print(timemap_link_format("/", Versions.of("URN:NBN:fi-1", [one])))
    </URN:NBN:fi-1>; rel="original timegate",
    </timemap/link/URN:NBN:fi-1>; rel="self"; type="application/link-format"; \
from="Tue, 01 Jan 2019 00:00:00 GMT"; until="Tue, 01 Jan 2019 00:00:00 GMT",
    </memento/20190101000000/URN:NBN:fi-1>; rel="first last memento"; \
datetime="Tue, 01 Jan 2019 00:00:00 GMT"
    """
    links = [Link(base + versions.urn, "original timegate")]
    for number, (first, last) in enumerate(pages(versions), 1):
        rel = "self" if number == page else "timemap"
        span = (("from", http_date(first)), ("until", http_date(last)))
        links.append(
            Link(
                timemap_url(base, versions.urn, "link", number), rel, (("type", LINK_FORMAT), *span)
            )
        )
    links += [
        _memento(base, versions.urn, versions, i, _rels(versions, i)) for i in _on(versions, page)
    ]
    return ",\n".join(link.header() for link in links)


def timemap_json(base: str, versions: Versions, page: int = 1) -> dict[str, Any]:
    """A page of the TimeMap as JSON: the URN, its TimeGate and TimeMaps, the pages and the
    versions, each with its datetime (ISO 8601) and the action that made it.

    >>> from urnkit.resolver.domain import HistoryEntry
    >>> one = HistoryEntry(datetime(2019, 1, 1, tzinfo=UTC), "created", "A", {})
    >>> timemap_json("/", Versions.of("URN:NBN:fi-1", [one]))["mementos"]
    [{'datetime': '2019-01-01T00:00:00+00:00', 'uri': '/memento/20190101000000/URN:NBN:fi-1', \
'action': 'created'}]
    """
    urn, numbered = versions.urn, list(enumerate(pages(versions), 1))
    return {
        "original": base + urn,
        "timegate": base + urn,
        "timemap": {"link_format": timemap_url(base, urn), "json": timemap_url(base, urn, "json")},
        "page": page,
        "pages": [
            {
                "uri": timemap_url(base, urn, "json", n),
                "from": a.isoformat(),
                "until": b.isoformat(),
            }
            for n, (a, b) in numbered
        ],
        "mementos": [
            {
                "datetime": versions.entries[i].at.isoformat(),
                "uri": memento_url(base, urn, versions.entries[i].at),
                "action": versions.entries[i].action,
            }
            for i in _on(versions, page)
        ],
    }


def pages(versions: Versions) -> list[tuple[datetime, datetime]]:
    """The first and last datetime of each page of a TimeMap (:data:`TIMEMAP_PAGE` versions
    a page)."""
    entries = versions.entries
    return [
        (entries[start].at, entries[min(start + TIMEMAP_PAGE, len(entries)) - 1].at)
        for start in range(0, len(entries), TIMEMAP_PAGE)
    ]


def _on(versions: Versions, page: int) -> range:
    """The indexes of the versions on ``page`` of a TimeMap."""
    return range((page - 1) * TIMEMAP_PAGE, min(page * TIMEMAP_PAGE, len(versions.entries)))


def _rels(versions: Versions, index: int) -> str:
    last = len(versions.entries) - 1
    return " ".join(rel for rel, at in (("first", 0), ("last", last)) if at == index)


def archive_links(copies: Sequence[ArchivedCopy]) -> list[Link]:
    """Archived copies as Robust Links give them: ``rel="memento"`` with their datetime."""
    return [Link(copy.url, "memento", (("datetime", http_date(copy.at)),)) for copy in copies]


def archived_json(copies: Sequence[ArchivedCopy]) -> dict[str, Any]:
    """Archived copies as a record's JSON shows them (``archived``), none: nothing.

    >>> archived_json([ArchivedCopy("https://archive.example/x", "https://a.example/x",
    ...                             datetime(2019, 1, 1, tzinfo=UTC))])
    {'archived': [{'url': 'https://archive.example/x', 'location': 'https://a.example/x', \
'datetime': '2019-01-01T00:00:00+00:00'}]}
    """
    if not copies:
        return {}
    found = [{"url": c.url, "location": c.location, "datetime": c.at.isoformat()} for c in copies]
    return {"archived": found}
