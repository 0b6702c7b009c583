"""Records and their locations: a registered URN is never deleted, only deactivated.

RFC 8458 §4.1: a URN:NBN, once assigned, "MUST NOT be reused"; records therefore have a status
(``reserved``, ``active``, ``deactivated``) and are never deleted.

>>> with_q_component("https://example.org/a?x=1#top", "lang=fi")
'https://example.org/a?x=1&lang=fi#top'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Status = Literal["reserved", "active", "deactivated"]
STATUSES: tuple[Status, ...] = ("reserved", "active", "deactivated")
# RFC 6838 §4.2: type-name "/" subtype-name, each a restricted-name (lower case, as compared).
_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}")


@dataclass(frozen=True, slots=True)
class Location:
    """Where a resource can be found: lower ``priority`` numbers are tried first. A stored
    location names the ``organisation`` that holds it (the record's owner, or an organisation
    it granted the right to add its own); None before it is stored: the writer's. A location
    ``restricted_to`` a network of its holder's is read only from inside it
    (:mod:`~urnkit.resolver.domain.networks`).

    >>> Location("https://example.org/x", priority=2, media_type="application/pdf").priority
    2
    """

    url: str
    priority: int = 1
    label: str | None = None
    media_type: str | None = None
    organisation: str | None = None
    restricted_to: str | None = None

    def __reduce__(self) -> tuple[type[Location], tuple[Any, ...]]:
        return _by_fields(self)


def _by_fields(value: Location | Record) -> tuple[Any, tuple[Any, ...]]:
    """How pickle makes ``value`` again: its class called with its fields, in order. Imports
    send batches of records between processes, and a frozen dataclass's own state functions
    cost more than a call of the class (benchmarks/storage_bench.py measures it).

    >>> import pickle
    >>> pickle.loads(pickle.dumps(Location("https://a.example/", 2, media_type="text/html")))
    Location(url='https://a.example/', priority=2, label=None, media_type='text/html', \
organisation=None, restricted_to=None)
    """
    return type(value), tuple(getattr(value, name) for name in value.__slots__)


def media_type_of(location: Location) -> str | None:
    """A location's media type as a ``type`` attribute gives it: ``type/subtype`` of RFC 6838
    §4.2's characters, parameters left out; None when none is recorded or it is no such name.

    >>> media_type_of(Location("https://a.example/", media_type="Text/HTML; charset=utf-8"))
    'text/html'
    >>> media_type_of(Location("https://a.example/", media_type="a PDF"))
    """
    essence = (location.media_type or "").partition(";")[0].strip().lower()
    return essence if _MEDIA_TYPE.fullmatch(essence) else None


def target_line(location: Location) -> str:
    """A location as a line of ``records.targets`` (and of ``records.restricted``): its URL,
    then a tab and its media type (:func:`media_type_of`) when it has one; nothing more when
    not, so that an untyped location costs no byte. A stored URL holds no tab and no line
    break (``check_locations`` takes only URLs that are ``str.isprintable()``), and a media
    type neither: a line reads back as it was written (:func:`read_targets`).

    >>> target_line(Location("https://a.example/x", media_type="application/pdf"))
    'https://a.example/x\\tapplication/pdf'
    >>> target_line(Location("https://a.example/x"))
    'https://a.example/x'
    """
    media_type = media_type_of(location)
    return location.url if media_type is None else f"{location.url}\t{media_type}"


def read_targets(targets: str) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """The URLs of ``targets`` (lines of :func:`target_line`), best first, and the media type
    of each (None where a line gives none); no media types at all (``()``) when no line gives
    one, found without splitting a line (resolution's hot path).

    >>> read_targets("https://a.example/x\\tapplication/pdf\\nhttps://b.example/y")
    (('https://a.example/x', 'https://b.example/y'), ('application/pdf', None))
    >>> read_targets("https://a.example/x")
    (('https://a.example/x',), ())
    """
    lines = targets.split("\n")
    if "\t" not in targets:
        return tuple(lines), ()
    urls, kinds = [], []
    for line in lines:  # a loop: for one line, cheaper than comprehensions
        url, _, kind = line.partition("\t")
        urls.append(url)
        kinds.append(kind or None)
    return tuple(urls), tuple(kinds)


def with_q_component(url: str, q_component: str) -> str:
    """The locator with a URN's q-component appended to its query (RFC 8141 §2.3.2).

    The q-component becomes the query when the locator has none and is appended after ``&``
    when it has one; a fragment stays last.

    >>> with_q_component("https://example.org/a", "lang=fi")
    'https://example.org/a?lang=fi'
    """
    if not q_component:
        return url
    base, hash_mark, fragment = url.partition("#")
    _, question_mark, query = base.partition("?")
    if not question_mark:
        joiner = "?"
    elif not query or query.endswith("&"):  # an empty query, or one ending in its separator
        joiner = ""
    else:
        joiner = "&"
    return f"{base}{joiner}{q_component}{hash_mark}{fragment}"


@dataclass(frozen=True, slots=True)
class Record:
    """A registered URN: never deleted, its ``key`` unique forever (RFC 8458 §4.1)."""

    urn: str
    key: str
    prefix: str
    status: Status
    owner: str
    created: datetime
    updated: datetime
    locations: tuple[Location, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    successors: tuple[str, ...] = ()
    note: str | None = None
    grants: tuple[str, ...] = ()  # organisations that may add and maintain their own locations

    def __reduce__(self) -> tuple[type[Record], tuple[Any, ...]]:
        return _by_fields(self)


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One change to a record, appended and never altered."""

    at: datetime
    action: str
    actor: str
    record: Mapping[str, Any]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON merge patch: ``null`` removes a member, objects merge, the rest replaces.

    >>> merge_patch({"a": 1, "b": {"c": 2}}, {"a": None, "b": {"d": 3}})
    {'b': {'c': 2, 'd': 3}}
    """
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = merge_patch(result.get(name), value)
    return result
