"""xepicur (``epicur``): the XML format in which repositories deliver URN registrations to the
German National Library (DNB), read by the harvester and written by the OAI-PMH repository.

The structure, as DNB's reference description and schema give it (namespace
``urn:nbn:de:1111-2004033116``, https://www.persistent-identifier.de/xepicur/version1.0/xepicur.xsd,
described at https://www.persistent-identifier.de/?link=210)::

    epicur
      administrative_data / delivery / update_status @type     what the delivery does
      record (one or more)
        identifier @scheme="urn:nbn:…"                           the URN
        resource (any number)
          identifier @scheme="url" @type="frontpage" @role="primary"   one URL
          format @scheme="imt"                                    its media type

Each update status is applied as :data:`STATUSES` says (``urn_alternative`` registers another
persistent identifier, which a URN:NBN resolver does not hold: :data:`NOT_APPLIED`). A URL whose
``role`` is ``primary`` comes first; the others follow in document order.

>>> delivery = parse_epicur(ET.fromstring(
...     f'<epicur xmlns="{EPICUR}"><administrative_data><delivery>'
...     '<update_status type="url_insert"/></delivery></administrative_data>'
...     '<record><identifier scheme="urn:nbn:de">urn:nbn:de:0001-1</identifier>'
...     '<resource><identifier scheme="url">https://example.org/1</identifier></resource>'
...     '</record></epicur>'))
>>> delivery.status.name, delivery.records[0].urn, delivery.records[0].locations[0].url
('url_insert', 'urn:nbn:de:0001-1', 'https://example.org/1')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal
from xml.etree import ElementTree as ET

from urnkit.resolver.domain.records import Location, Record
from urnkit.resolver.representations.dublin_core import XSI

EPICUR = "urn:nbn:de:1111-2004033116"
EPICUR_SCHEMA = "http://www.persistent-identifier.de/xepicur/version1.0/xepicur.xsd"
# RFC 6838 §4.2: type "/" subtype, restricted names.
_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_MEDIA_TYPE = re.compile(f"{_NAME}/{_NAME}")

ET.register_namespace("epicur", EPICUR)


@dataclass(frozen=True, slots=True)
class Status:
    """What an ``update_status`` does: whether it may register a URN not yet registered, and
    what the delivered URLs do to the URN's locations (replace them, are added, are removed)."""

    name: str
    registers: bool
    urls: Literal["replace", "add", "remove"]


STATUSES = {
    status.name: status
    for status in (
        Status("urn_new", True, "replace"),  # a URN registered with its URLs
        Status("urn_new_version", True, "replace"),  # the URN of a new version, with its URLs
        Status("url_update_general", True, "replace"),  # the delivered URLs are all the URN's
        Status("url_update", False, "replace"),  # a registered URN's URLs updated
        Status("url_insert", False, "add"),  # URLs added to a registered URN
        Status("url_delete", False, "remove"),  # URLs taken from a registered URN
    )
}
NOT_APPLIED = {
    "urn_alternative": "it registers another persistent identifier for a URN, which this "
    "resolver does not hold",
}


class EpicurError(ValueError):
    """A malformed epicur record, or one whose status is not applied: what is wrong."""


@dataclass(frozen=True, slots=True)
class EpicurRecord:
    """One ``record``: its URN and its URLs as locations, the primary first."""

    urn: str
    locations: tuple[Location, ...] = ()


@dataclass(frozen=True, slots=True)
class Delivery:
    """An ``epicur`` document: its update status and its records."""

    status: Status
    records: tuple[EpicurRecord, ...]


def _tag(name: str) -> str:
    return f"{{{EPICUR}}}{name}"


def parse_epicur(root: ET.Element) -> Delivery:
    """An ``epicur`` element as a :class:`Delivery`; :class:`EpicurError` says what is wrong.

    >>> parse_epicur(ET.fromstring(f'<epicur xmlns="{EPICUR}"/>'))
    Traceback (most recent call last):
    ...
    urnkit.resolver.representations.epicur.EpicurError: epicur has no administrative_data/...
    """
    if root.tag != _tag("epicur"):
        raise EpicurError(f"the metadata is {root.tag}, not an epicur element ({EPICUR})")
    status = root.find(f"{_tag('administrative_data')}/{_tag('delivery')}/{_tag('update_status')}")
    if status is None:
        raise EpicurError("epicur has no administrative_data/delivery/update_status")
    name = status.get("type", "")
    if name in NOT_APPLIED:
        raise EpicurError(f"the update status {name} is not applied: {NOT_APPLIED[name]}")
    if name not in STATUSES:
        raise EpicurError(
            f"the update status {name!r} is unknown (known: {', '.join(STATUSES)}, "
            f"{', '.join(NOT_APPLIED)})"
        )
    records = tuple(_record(n, e) for n, e in enumerate(root.iterfind(_tag("record")), 1))
    if not records:
        raise EpicurError("epicur has no record")
    return Delivery(STATUSES[name], records)


def _record(number: int, element: ET.Element) -> EpicurRecord:
    urns = [
        (e.get("scheme", ""), (e.text or "").strip()) for e in element.iterfind(_tag("identifier"))
    ]
    if len(urns) != 1 or not urns[0][0].lower().startswith("urn:nbn") or not urns[0][1]:
        raise EpicurError(
            f"record {number} must have one identifier with a urn:nbn scheme and a URN "
            f"(it has {[scheme for scheme, _ in urns] or 'none'})"
        )
    primary: list[Location] = []
    others: list[Location] = []
    for resource in element.iterfind(_tag("resource")):
        url = resource.find(_tag("identifier"))
        text = "" if url is None else (url.text or "").strip()
        if url is None or url.get("scheme") != "url" or not text:
            raise EpicurError(f"record {number}: a resource has no identifier with scheme url")
        media_type = resource.findtext(_tag("format"), "").strip() or None
        if media_type is not None and not _MEDIA_TYPE.fullmatch(media_type):
            raise EpicurError(f"record {number}: {media_type!r} is not a media type (RFC 6838)")
        (primary if url.get("role") == "primary" else others).append(
            Location(text, media_type=media_type)
        )
    # A URL given twice is one location, where it first comes.
    found: dict[str, Location] = {}
    for location in primary + others:
        found.setdefault(location.url, location)
    located = (replace(location, priority=n) for n, location in enumerate(found.values(), 1))
    return EpicurRecord(urns[0][1], tuple(located))


def apply_status(
    status: Status, current: Sequence[Location], delivered: Sequence[Location]
) -> tuple[Location, ...]:
    """A URN's locations after a delivery: replaced by the delivered ones, with those not yet
    held added after the others, or without the delivered URLs.

    >>> a, b = Location("https://a.example/", 1), Location("https://b.example/", 1)
    >>> [loc.url for loc in apply_status(STATUSES["url_insert"], [a], [b, a])]
    ['https://a.example/', 'https://b.example/']
    >>> apply_status(STATUSES["url_delete"], [a, b], [a]) == (b,)
    True
    """
    if status.urls == "replace":
        return tuple(delivered)
    held = {location.url for location in current}
    if status.urls == "remove":
        gone = {location.url for location in delivered}
        return tuple(location for location in current if location.url not in gone)
    last = max((location.priority for location in current), default=0)
    added = [location for location in delivered if location.url not in held]
    return (*current, *(replace(loc, priority=last + n) for n, loc in enumerate(added, 1)))


def epicur_element(record: Record, status: str = "url_update_general") -> ET.Element:
    """A record as an ``epicur`` element: every location, as ``url_update_general`` delivers
    them (all the URN's URLs), the first ``primary``.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> r = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
    ...            locations=(Location("https://example.org/1", media_type="text/html"),))
    >>> [loc.url for loc in parse_epicur(epicur_element(r)).records[0].locations]
    ['https://example.org/1']
    """
    root = ET.Element(_tag("epicur"), {f"{{{XSI}}}schemaLocation": f"{EPICUR} {EPICUR_SCHEMA}"})
    delivery = ET.SubElement(ET.SubElement(root, _tag("administrative_data")), _tag("delivery"))
    ET.SubElement(delivery, _tag("update_status"), {"type": status})
    element = ET.SubElement(root, _tag("record"))
    scheme = "urn:nbn:" + record.prefix.partition(":")[0].partition("-")[0]
    ET.SubElement(element, _tag("identifier"), {"scheme": scheme}).text = record.urn
    for n, location in enumerate(record.locations):
        resource = ET.SubElement(element, _tag("resource"))
        attributes = {"scheme": "url", "type": "frontpage"} | ({} if n else {"role": "primary"})
        url = ET.SubElement(resource, _tag("identifier"), attributes)
        url.text = location.url
        if location.media_type is not None:
            ET.SubElement(resource, _tag("format"), {"scheme": "imt"}).text = location.media_type
    return root
