"""The resolver's records over OAI-PMH 2.0 (``GET`` or ``POST /oai``), in ``oai_dc`` and in
``epicur`` (xepicur: each record's URN and all its location URLs, ``url_update_general``).

* The OAI identifier of a record is its URN as registered (a URI, as OAI-PMH 2.0 §2.4 asks);
  ``GetRecord`` finds it by any equivalent spelling (RFC 8141 §3).
* The datestamp is ``records.updated``, in seconds (granularity ``YYYY-MM-DDThh:mm:ssZ``);
  ``from`` and ``until`` are inclusive and may also be days (``YYYY-MM-DD``).
* One set per delegated prefix, its setSpec the prefix itself: ``:`` separates the levels of
  OAI-PMH's set hierarchy as it separates sub-namespaces (RFC 8458 §4.3), so ``set=fi`` holds
  every ``fi:…`` record.
* Nothing is ever deleted (RFC 8458 §4.1): ``deletedRecord`` is ``no``; a deactivated record is
  served with its successors as ``dc:relation``.
* A list is cut into pages of :data:`PAGE_SIZE`; the resumption token holds the list's
  arguments, the position reached (datestamp and row id) and the moment of the first response,
  after which no record is listed: records written meanwhile change no page's content and come in
  the next incremental harvest (``from`` = the first response's ``responseDate``). Tokens hold
  no server state, so they do not expire. A record is listed by the time its write began: a
  write committed more than a second after it began (a batch of thousands) can be missed by a
  harvester whose ``from`` fell in between; harvesters should overlap ``from`` a little.

>>> parse_datestamp("2026-01-02")
(datetime.datetime(2026, 1, 2, 0, 0, tzinfo=datetime.timezone.utc), True)
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree as ET

from urnkit.resolver.domain import InvalidURNError, Record, covers, parse_urn
from urnkit.resolver.domain.xml_text import first_unfit
from urnkit.resolver.representations.dublin_core import (
    OAI_DC,
    OAI_DC_SCHEMA,
    OAI_PMH,
    OAI_PMH_SCHEMA,
    XSI,
    oai_dc_element,
)
from urnkit.resolver.representations.epicur import EPICUR, EPICUR_SCHEMA, epicur_element
from urnkit.resolver.store import Store, now

PAGE_SIZE = 100
# The formats served, by metadataPrefix: schema, namespace, and a record's element.
FORMATS: dict[str, tuple[str, str, Callable[[Record], ET.Element]]] = {
    "oai_dc": (OAI_DC_SCHEMA, OAI_DC, oai_dc_element),
    "epicur": (EPICUR_SCHEMA, EPICUR, epicur_element),
}
ET.register_namespace("", OAI_PMH)  # the responses' default namespace, as the spec's examples
GRANULARITY = "YYYY-MM-DDThh:mm:ssZ"
VERBS = {
    # verb: (required, optional, exclusive) arguments (OAI-PMH 2.0 §4)
    "Identify": (set(), set(), None),
    "ListMetadataFormats": (set(), {"identifier"}, None),
    "ListSets": (set(), set(), "resumptionToken"),
    "GetRecord": ({"identifier", "metadataPrefix"}, set(), None),
    "ListIdentifiers": ({"metadataPrefix"}, {"from", "until", "set"}, "resumptionToken"),
    "ListRecords": ({"metadataPrefix"}, {"from", "until", "set"}, "resumptionToken"),
}


class OAIError(Exception):
    """An OAI-PMH error condition (§3.6): its code and what is wrong."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def parse_datestamp(text: str) -> tuple[datetime, bool]:
    """A ``from``/``until`` argument as a UTC moment, and whether it names a whole day.

    >>> parse_datestamp("2026-01-02T03:04:05Z")[0].isoformat()
    '2026-01-02T03:04:05+00:00'
    >>> parse_datestamp("2026-01-02T03:04Z")
    Traceback (most recent call last):
    ...
    urnkit.resolver.services.oai_repository.OAIError: ...
    """
    for layout, day in (("%Y-%m-%d", True), ("%Y-%m-%dT%H:%M:%SZ", False)):
        if len(text) == (10 if day else 20):
            try:
                return datetime.strptime(text, layout).replace(tzinfo=UTC), day
            except ValueError:
                break
    raise OAIError(
        "badArgument",
        f"{text!r} is not a datestamp: YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ (OAI-PMH 2.0 §3.3.1)",
    )


def datestamp(moment: datetime) -> str:
    """A UTC moment as an OAI-PMH datestamp, in seconds.

    >>> datestamp(datetime(2026, 1, 2, 3, 4, 5, 999, tzinfo=UTC))
    '2026-01-02T03:04:05Z'
    """
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class _Listing:
    """What a resumption token carries: the list's arguments, the bound of the first response,
    the position reached and the counts (a token without its format, from before there were
    two, continues ``oai_dc``)."""

    verb: str
    set_spec: str | None
    start: datetime | None
    end: datetime
    after: tuple[datetime, int] | None
    cursor: int
    total: int
    metadata_prefix: str = "oai_dc"

    def token(self) -> str:
        fields = [
            self.verb,
            self.set_spec,
            None if self.start is None else self.start.isoformat(),
            self.end.isoformat(),
            None if self.after is None else [self.after[0].isoformat(), self.after[1]],
            self.cursor,
            self.total,
            self.metadata_prefix,
        ]
        return base64.urlsafe_b64encode(json.dumps(fields).encode()).decode().rstrip("=")

    @classmethod
    def from_token(cls, verb: str, token: str) -> _Listing:
        try:
            fields = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
            name, set_spec, start, end, after, cursor, total, *prefix = fields
            if prefix not in ([], *([name] for name in FORMATS)):
                raise ValueError("a format not served")
            listing = cls(
                name,
                set_spec,
                None if start is None else datetime.fromisoformat(start),
                datetime.fromisoformat(end),
                None if after is None else (datetime.fromisoformat(after[0]), int(after[1])),
                int(cursor),
                int(total),
                prefix[0] if prefix else "oai_dc",
            )
            moments = (listing.start, listing.end, listing.after and listing.after[0])
            if any(m is not None and m.tzinfo is None for m in moments):
                raise ValueError("a moment without its time zone")
        except (binascii.Error, ValueError, TypeError, LookupError):
            raise OAIError("badResumptionToken", f"{token!r} is not a resumption token") from None
        if listing.verb != verb:
            raise OAIError(
                "badResumptionToken", f"this resumption token continues {listing.verb}, not {verb}"
            )
        return listing


class Repository:
    """OAI-PMH over a store's records: :meth:`respond` turns a request's arguments into the
    response document."""

    def __init__(self, store: Store, admin_email: str, page_size: int = PAGE_SIZE) -> None:
        self.store = store
        self.admin_email = admin_email
        self.page_size = page_size

    def latest_change(self) -> datetime | None:
        """When the records or sets last changed (None for an empty repository)."""
        with self.store.snapshot() as tx:
            return tx.oai.latest_change()

    def respond(self, arguments: Sequence[tuple[str, str]], base_url: str) -> bytes:
        """The response to a request with ``arguments`` (in the order sent, repeats kept) at
        ``base_url``: a document valid against OAI-PMH.xsd, errors included (§3.6)."""
        moment = now()
        root = ET.Element(
            f"{{{OAI_PMH}}}OAI-PMH", {f"{{{XSI}}}schemaLocation": f"{OAI_PMH} {OAI_PMH_SCHEMA}"}
        )
        ET.SubElement(root, f"{{{OAI_PMH}}}responseDate").text = datestamp(moment)
        request = ET.SubElement(root, f"{{{OAI_PMH}}}request")
        request.text = base_url
        try:
            verb, given = self._check(arguments)
            # §3.2: the request element echoes the arguments only when they were legal.
            request.attrib.update({"verb": verb, **given})
            answer = {
                "Identify": self._identify,
                "ListMetadataFormats": self._list_metadata_formats,
                "ListSets": self._list_sets,
                "GetRecord": self._get_record,
                "ListIdentifiers": self._list_identifiers,
                "ListRecords": self._list_records,
            }[verb](given, moment, base_url)
            root.append(answer)
        except OAIError as error:
            if error.code in ("badVerb", "badArgument"):
                request.attrib.clear()
            ET.SubElement(root, f"{{{OAI_PMH}}}error", {"code": error.code}).text = error.message
        document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
        return document

    # --- arguments -----------------------------------------------------------------------------

    @staticmethod
    def _check(arguments: Sequence[tuple[str, str]]) -> tuple[str, dict[str, str]]:
        verbs = [value for name, value in arguments if name == "verb"]
        if len(verbs) != 1:
            raise OAIError(
                "badVerb",
                "the verb argument is missing" if not verbs else "the verb argument is repeated",
            )
        verb = verbs[0]
        if verb not in VERBS:
            raise OAIError("badVerb", f"{verb!r} is not an OAI-PMH verb ({', '.join(VERBS)})")
        required, optional, exclusive = VERBS[verb]
        given: dict[str, str] = {}
        for name, value in arguments:
            if name == "verb":
                continue
            if name in given:
                raise OAIError("badArgument", f"the argument {name} is repeated")
            if name not in required | optional | {exclusive}:
                raise OAIError("badArgument", f"{verb} takes no argument {name!r}")
            unfit = first_unfit(value)
            if unfit is not None:  # §3.2 echoes legal arguments; XML cannot hold this one
                raise OAIError("badArgument", f"the argument {name} holds U+{ord(unfit):04X}")
            given[name] = value
        if exclusive in given:
            if len(given) > 1:
                raise OAIError("badArgument", f"{exclusive} is an exclusive argument")
            return verb, given
        missing = sorted(required - set(given))
        if missing:
            raise OAIError("badArgument", f"{verb} needs the argument {', '.join(missing)}")
        return verb, given

    @staticmethod
    def _check_format(given: dict[str, str]) -> str:
        if given["metadataPrefix"] not in FORMATS:
            raise OAIError(
                "cannotDisseminateFormat",
                f"{given['metadataPrefix']!r} is not served here; the formats are "
                f"{', '.join(FORMATS)}",
            )
        return given["metadataPrefix"]

    def _record(self, identifier: str) -> Record:
        try:
            key = parse_urn(identifier).equivalence_key()
        except InvalidURNError as error:
            raise OAIError(
                "idDoesNotExist", f"{identifier!r} is not a URN: {error.detail}"
            ) from None
        with self.store.snapshot() as tx:
            record = tx.records.get(key)
        if record is None:
            raise OAIError("idDoesNotExist", f"no URN equivalent to {identifier} is registered")
        return record

    # --- the verbs (§4) ------------------------------------------------------------------------

    def _identify(self, given: dict[str, str], moment: datetime, base_url: str) -> ET.Element:
        with self.store.snapshot() as tx:
            earliest = tx.oai.earliest_datestamp() or moment
        element = ET.Element(f"{{{OAI_PMH}}}Identify")
        for name, text in (
            ("repositoryName", "URN:NBN resolver (urnkit)"),
            ("baseURL", base_url),
            ("protocolVersion", "2.0"),
            ("adminEmail", self.admin_email),
            ("earliestDatestamp", datestamp(earliest)),
            ("deletedRecord", "no"),
            ("granularity", GRANULARITY),
        ):
            ET.SubElement(element, f"{{{OAI_PMH}}}{name}").text = text
        return element

    def _list_metadata_formats(
        self, given: dict[str, str], moment: datetime, base_url: str
    ) -> ET.Element:
        if "identifier" in given:
            self._record(given["identifier"])
        element = ET.Element(f"{{{OAI_PMH}}}ListMetadataFormats")
        for prefix, (schema, namespace, _) in FORMATS.items():
            entry = ET.SubElement(element, f"{{{OAI_PMH}}}metadataFormat")
            for name, text in (
                ("metadataPrefix", prefix),
                ("schema", schema),
                ("metadataNamespace", namespace),
            ):
                ET.SubElement(entry, f"{{{OAI_PMH}}}{name}").text = text
        return element

    def _prefixes(self) -> list[tuple[str, str, str]]:
        """The delegated prefixes, the sets (prefix, organisation, generator)."""
        with self.store.snapshot() as tx:
            return tx.organisations.prefixes()

    def _list_sets(self, given: dict[str, str], moment: datetime, base_url: str) -> ET.Element:
        if "resumptionToken" in given:
            raise OAIError("badResumptionToken", "ListSets is answered whole: it has no tokens")
        prefixes = self._prefixes()
        if not prefixes:
            raise OAIError("noSetHierarchy", "no prefix is delegated yet, so there are no sets")
        element = ET.Element(f"{{{OAI_PMH}}}ListSets")
        for prefix, organisation, _ in prefixes:
            entry = ET.SubElement(element, f"{{{OAI_PMH}}}set")
            ET.SubElement(entry, f"{{{OAI_PMH}}}setSpec").text = prefix
            name = f"URN:NBN:{prefix.upper()} ({organisation})"
            ET.SubElement(entry, f"{{{OAI_PMH}}}setName").text = name
        return element

    def _get_record(self, given: dict[str, str], moment: datetime, base_url: str) -> ET.Element:
        metadata = FORMATS[self._check_format(given)][2]
        record = self._record(given["identifier"])
        sets = [prefix for prefix, _, _ in self._prefixes()]
        element = ET.Element(f"{{{OAI_PMH}}}GetRecord")
        element.append(_record_element(record, sets, metadata))
        return element

    def _list_identifiers(
        self, given: dict[str, str], moment: datetime, base_url: str
    ) -> ET.Element:
        return self._list("ListIdentifiers", given, moment)

    def _list_records(self, given: dict[str, str], moment: datetime, base_url: str) -> ET.Element:
        return self._list("ListRecords", given, moment)

    def _list(self, verb: str, given: dict[str, str], moment: datetime) -> ET.Element:
        if "resumptionToken" in given:
            listing = _Listing.from_token(verb, given["resumptionToken"])
        else:
            listing = self._first(verb, given, moment, self._check_format(given))
        with self.store.snapshot() as tx:
            if listing.total < 0:  # the first page: count the list
                total = tx.oai.count_records(listing.set_spec, listing.start, listing.end)
                listing = replace(listing, total=total)
            page = tx.oai.records(
                listing.set_spec, listing.start, listing.end, listing.after, self.page_size + 1
            )
        sets = [prefix for prefix, _, _ in self._prefixes()]
        if not page:
            raise OAIError("noRecordsMatch", "no record matches these arguments")
        element = ET.Element(f"{{{OAI_PMH}}}{verb}")
        metadata = FORMATS[listing.metadata_prefix][2] if verb == "ListRecords" else None
        for _, record in page[: self.page_size]:
            item = _record_element(record, sets, metadata)
            element.append(item if verb == "ListRecords" else item[0])
        more = len(page) > self.page_size
        if more or listing.cursor > 0:
            token = ET.SubElement(
                element,
                f"{{{OAI_PMH}}}resumptionToken",
                {"completeListSize": str(listing.total), "cursor": str(listing.cursor)},
            )
            if more:
                last_id, last = page[self.page_size - 1]
                token.text = replace(
                    listing, after=(last.updated, last_id), cursor=listing.cursor + self.page_size
                ).token()
        return element

    @staticmethod
    def _first(verb: str, given: dict[str, str], moment: datetime, prefix: str) -> _Listing:
        """The listing a first request asks for: ``from`` and ``until`` as a half-open interval,
        ending no later than this response's moment; ``total`` -1 until counted."""
        start = end = None
        if "from" in given:
            start, from_day = parse_datestamp(given["from"])
        if "until" in given:
            until, until_day = parse_datestamp(given["until"])
            if "from" in given and from_day != until_day:
                raise OAIError("badArgument", "from and until have different granularities")
            end = until + (timedelta(days=1) if until_day else timedelta(seconds=1))
            if start is not None and start > until:
                raise OAIError("badArgument", "from is later than until")
        end = moment if end is None else min(end, moment)
        return _Listing(verb, given.get("set"), start, end, None, 0, -1, prefix)


def _record_element(
    record: Record, sets: Sequence[str], metadata: Callable[[Record], ET.Element] | None
) -> ET.Element:
    """A ``record`` element: its header (identifier, datestamp, the sets holding it) and, if
    given a format's ``metadata``, the record in it."""
    element = ET.Element(f"{{{OAI_PMH}}}record")
    header = ET.SubElement(element, f"{{{OAI_PMH}}}header")
    ET.SubElement(header, f"{{{OAI_PMH}}}identifier").text = record.urn
    ET.SubElement(header, f"{{{OAI_PMH}}}datestamp").text = datestamp(record.updated)
    for prefix in sets:
        if covers(prefix, record.prefix):
            ET.SubElement(header, f"{{{OAI_PMH}}}setSpec").text = prefix
    if metadata is not None:
        ET.SubElement(element, f"{{{OAI_PMH}}}metadata").append(metadata(record))
    return element
