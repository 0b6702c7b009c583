"""Harvesting URN:NBN -> URL mappings from repositories' OAI-PMH feeds (OAI-PMH 2.0, ``oai_dc``
or ``epicur``).

A *source* is a repository's base URL, the organisation whose delegated prefixes bound what the
source may register (RFC 8458 §4.3), a regular expression every location URL must fully match,
optionally a setSpec, and the metadata format it is read in. A harvest asks ``Identify`` for
the repository's granularity, then ``ListRecords`` with the source's ``metadataPrefix`` (and
``from=`` the datestamp the last successful harvest stored, unless it is full), following
resumption tokens. Each response page is written in one transaction; the next ``from=`` (the
first response's ``responseDate``, in the repository's granularity, as the OAI-PMH guidelines
for harvesters advise) is stored only when the whole list was read.

In each record, a ``dc:identifier`` is a URN when it is ``urn:nbn:…`` in any case, or an http(s)
URL whose path is one (a resolver's link such as ``http://urn.fi/URN:NBN:fi-…``); it is a
location when it is any other http(s) URL; a URN of another namespace (``urn:isbn:…``,
``urn:issn:…``, acceptable by its namespace's rules) is one of ``metadata.identifiers``, through
which it resolves. Each URN is checked by the rows' rules of every way in
(:class:`~urnkit.resolver.services.rows.Rules`, read leniently as an import's, the source's
organisation the registrant; docs/rows.md): a URN outside the organisation's prefixes, one an
earlier item of the run named (:class:`~urnkit.resolver.services.rows.FirstLines`, by item
number), or a URL that does not match the pattern, is refused and reported, never written.
A record whose header says ``status="deleted"`` takes the source organisation's locations away
from the records it gave (a URN is never deleted, RFC 8458 §4.1): left without any, they
resolve to their metadata page. A source writes locations as its organisation, replacing that
organisation's alone; on a record of another owner that granted it locations
(``location_grants``), only those. Writing what is already stored writes nothing, so harvesting
a feed again changes nothing.

In ``epicur`` (xepicur, :mod:`~urnkit.resolver.representations.epicur`) each record's URN and
URLs are applied as its update status says, under the same bounds; the records' metadata is
not touched. A malformed epicur record, or one with a status that is unknown or not applied,
is refused with the reason.

>>> urn_in("http://urn.fi/URN:NBN:fi-fe2010")
'URN:NBN:fi-fe2010'
>>> urn_in("https://example.org/x") is None
True
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree as ET

from urnkit.resolver.domain import (
    ConflictError,
    ForbiddenError,
    HarvestRun,
    HarvestSource,
    InvalidURNError,
    Location,
    NotFoundError,
    Principal,
    Record,
    UnacceptableError,
    is_identifier,
    parse_urn,
)
from urnkit.resolver.domain.identifiers import IDENTIFIERS
from urnkit.resolver.representations.dublin_core import (
    DC,
    OAI_DC,
    OAI_PMH,
    is_dublin_core_name,
    metadata_from_oai_dc,
)
from urnkit.resolver.representations.epicur import EpicurError, Status, apply_status, parse_epicur
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services.access import AccessService
from urnkit.resolver.services.admin import organisation_id
from urnkit.resolver.services.locations import check_locations, with_own_locations
from urnkit.resolver.services.oai_feed import Bounds, Feed, HarvestError, HarvestStopped
from urnkit.resolver.services.oai_repository import OAIError, parse_datestamp
from urnkit.resolver.services.outbound import FetchGuard
from urnkit.resolver.services.rows import FirstLines, Rules
from urnkit.resolver.store import Store, Transaction, now

# OAI-PMH 2.0 §4.6's setSpec: colon-separated parts of unreserved URI characters.
SET_SPEC = re.compile(r"[A-Za-z0-9\-_.!~*'()]+(:[A-Za-z0-9\-_.!~*'()]+)*")
MAX_IDENTIFIER = 1_000  # an OAI identifier's length in oai_items


def urn_in(identifier: str) -> str | None:
    """The URN:NBN a ``dc:identifier`` holds: the identifier itself, or the path of an http(s)
    URL (a resolver's link) that is one; None otherwise, a URL that cannot be split included
    (its location is refused with the rest of its item's, and the harvest goes on).

    >>> urn_in("URN:NBN:se:uu:diva-1"), urn_in("doi:10.1000/1"), urn_in("http://[x/urn:nbn:fi-1")
    ('URN:NBN:se:uu:diva-1', None, None)
    """
    text = identifier.strip()
    if text[:8].lower() == "urn:nbn:":
        return text
    if text[:7].lower() == "http://" or text[:8].lower() == "https://":
        try:
            path = unquote(urlsplit(text).path).lstrip("/")
        except ValueError:  # RFC 3986 §3.2.2: an IP literal's brackets unmatched
            return None
        if path[:8].lower() == "urn:nbn:":
            return path
    return None


@dataclass(frozen=True, slots=True)
class Item:
    """One OAI record: its identifier, whether deleted, its URNs each with its locations, and
    metadata; ``status`` is an epicur record's update status (None: ``oai_dc``, whose locations
    and Dublin Core replace the stored ones), ``problem`` why a malformed record is refused."""

    identifier: str
    deleted: bool = False
    entries: tuple[tuple[str, tuple[Location, ...]], ...] = ()
    metadata: dict[str, object] = field(default_factory=dict)
    status: Status | None = None
    problem: str | None = None


def _header(record: ET.Element) -> tuple[str, bool]:
    """A record's OAI identifier, and whether its header says it is deleted."""
    header = record.find(f"{{{OAI_PMH}}}header")
    identifier = "" if header is None else header.findtext(f"{{{OAI_PMH}}}identifier", "")
    return identifier.strip(), header is not None and header.get("status") == "deleted"


def parse_oai_dc(record: ET.Element) -> Item:
    """An OAI-PMH ``record`` element in ``oai_dc`` as an :class:`Item`: every URN with every
    location URL."""
    identifier, deleted = _header(record)
    if deleted:
        return Item(identifier, deleted=True)
    dc = record.find(f"{{{OAI_PMH}}}metadata/{{{OAI_DC}}}dc")
    if dc is None:
        return Item(identifier)
    urns: list[str] = []
    urls: list[str] = []
    others: list[str] = []
    for element in dc.iterfind(f"{{{DC}}}identifier"):
        text = (element.text or "").strip()
        urn = urn_in(text)
        if urn is not None:
            urns.append(urn)
        elif text[:7].lower() == "http://" or text[:8].lower() == "https://":
            urls.append(text)
        elif is_identifier(text):
            others.append(text)
    metadata: dict[str, object] = metadata_from_oai_dc(dc)
    if others:  # the record's other identifiers (domain/identifiers.py)
        metadata[IDENTIFIERS] = others
    locations = tuple(Location(url, n) for n, url in enumerate(urls, 1))
    entries = tuple((urn, locations) for urn in urns)
    return Item(identifier, False, entries, metadata)


def parse_epicur_item(record: ET.Element) -> Item:
    """An OAI-PMH ``record`` element in ``epicur`` as an :class:`Item`: each epicur record's
    URN with its URLs, and the update status."""
    identifier, deleted = _header(record)
    if deleted:
        return Item(identifier, deleted=True)
    metadata = record.find(f"{{{OAI_PMH}}}metadata")
    if metadata is None or len(metadata) != 1:
        return Item(identifier, problem="the record's metadata is not one epicur element")
    try:
        delivery = parse_epicur(metadata[0])
    except EpicurError as error:
        return Item(identifier, problem=str(error))
    entries = tuple((entry.urn, entry.locations) for entry in delivery.records)
    return Item(identifier, entries=entries, status=delivery.status)


# The formats harvested, by metadataPrefix.
PARSERS = {"oai_dc": parse_oai_dc, "epicur": parse_epicur_item}


@dataclass
class HarvestReport:
    """What one harvest of one source did; ``refused`` says what was not written, and why."""

    source: str
    full: bool
    asked_from: str | None = None
    next_from: str | None = None
    resumed: str | None = None  # the resumption token a stopped run left, asked first
    stopped: str | None = None  # where this run stopped at its deadline, in words
    requests: int = 0
    items: int = 0
    created: int = 0
    changed: int = 0
    unchanged: int = 0
    withdrawn: int = 0
    without_urn: int = 0
    refused: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the operator.

        >>> HarvestReport("repo", False, "2026-01-01", items=3, created=2).summary()
        'repo: from=2026-01-01, 3 items in 0 requests: 2 created, 0 changed, 0 unchanged, ...'
        """
        start = "full" if self.asked_from is None else f"from={self.asked_from}"
        if self.resumed is not None:
            start = f"resumed with resumptionToken={self.resumed}"
        return (
            f"{self.source}: {start}, {self.items} items in {self.requests} requests: "
            f"{self.created} created, {self.changed} changed, {self.unchanged} unchanged, "
            f"{self.withdrawn} withdrawn (deleted upstream), {self.without_urn} without a "
            f"URN:NBN, {len(self.refused)} refused"
            + ("" if self.stopped is None else f"; {self.stopped}")
        )


class Harvester:
    """Harvest sources, and harvests, into a store; what a source writes is authorized by
    ``access`` as its organisation's registrant would be; its requests connect where
    ``guard`` allows, each answer within ``bounds``."""

    def __init__(
        self,
        store: Store,
        access: AccessService,
        guard: FetchGuard | None = None,
        bounds: Bounds | None = None,
    ) -> None:
        self.store = store
        self.access = access
        self.guard = guard or FetchGuard()
        self.bounds = bounds or Bounds()

    def add_source(
        self,
        name: str,
        organisation: str,
        base_url: str,
        url_pattern: str,
        set_spec: str | None = None,
        metadata_prefix: str = "oai_dc",
    ) -> HarvestSource:
        """Add a source, each part checked (:func:`check_source`); :class:`ConflictError` when
        the name is taken."""
        name = name.strip()
        if not name or len(name) > 200 or not name.isprintable():
            raise UnacceptableError(
                "a source's name is 1 to 200 printable characters", field="name"
            )
        check_source(base_url, url_pattern, set_spec, metadata_prefix)
        with self.store.transaction() as tx:
            holder_id = organisation_id(tx, organisation)
            created = tx.oai.create_source(
                name, base_url, holder_id, url_pattern, set_spec, metadata_prefix
            )
            if not created:
                raise ConflictError(f"a harvest source called {name!r} exists", field="name")
            return tx.oai.sources([name])[0]

    def change_source(
        self,
        source_id: int,
        organisation: str,
        base_url: str,
        url_pattern: str,
        set_spec: str | None = None,
        metadata_prefix: str = "oai_dc",
    ) -> HarvestSource:
        """Change a source, checked as :meth:`add_source` checks a new one; its next harvest
        is full when the feed it reads (base URL, set, format) changed."""
        check_source(base_url, url_pattern, set_spec, metadata_prefix)
        with self.store.transaction() as tx:
            holder_id = organisation_id(tx, organisation)
            if not tx.oai.update_source(
                source_id, base_url, holder_id, url_pattern, set_spec, metadata_prefix
            ):
                raise NotFoundError(f"no harvest source has the id {source_id}")
        return self.source(source_id)

    def source(self, source_id: int) -> HarvestSource:
        """The source of id ``source_id``; :class:`NotFoundError` if there is none."""
        found = [source for source in self.sources() if source.id == source_id]
        if not found:
            raise NotFoundError(f"no harvest source has the id {source_id}")
        return found[0]

    def last_runs(self) -> dict[int, HarvestRun]:
        """The last harvest of each source harvested (its refusals), by the source's id."""
        with self.store.snapshot() as tx:
            return tx.oai.last_runs()

    def sources(self, names: Sequence[str] = ()) -> list[HarvestSource]:
        """The sources called ``names`` (all when none are named); :class:`NotFoundError` names
        an unknown one."""
        with self.store.snapshot() as tx:
            found = tx.oai.sources(names)
        unknown = set(names) - {source.name for source in found}
        if unknown:
            raise NotFoundError(f"no harvest source is called {', '.join(sorted(unknown))}")
        return found

    def harvest(
        self, source: HarvestSource, full: bool = False, seconds: float | None = None
    ) -> HarvestReport:
        """Harvest one source, fully or from where its last harvest ended (or stopped);
        within ``seconds`` if given: a harvest still running then stops, what it wrote staying
        written, and keeps the resumption token its next run asks with (``report.stopped``
        says where). The run is kept, with its outcome (``ok``, ``stopped``, ``failed``) and
        refusals (:meth:`last_runs`)."""
        headers = {"User-Agent": "urnkit-harvester"}
        report = HarvestReport(source.name, full or source.next_from is None)
        started = now()
        deadline = None if seconds is None else time.monotonic() + seconds
        resume = None if full else source.resumption_token
        try:
            with self.guard.client(self.bounds.answer_seconds, headers) as client:
                feed = Feed(source, client, self.bounds, deadline)
                try:
                    self._harvest(feed, report, resume)
                finally:
                    report.requests = feed.requests
        except HarvestError as error:
            self._keep(source, started, "failed", error.detail, report)
            raise
        except HarvestStopped as stop:
            # No token: stopped before the list's second page; the next run starts as this did.
            token = stop.arguments.get("resumptionToken")
            if token is not None:
                with self.store.transaction() as tx:
                    tx.oai.stop_harvest(source.id, token, report.next_from)
            report.stopped = f"stopped after {seconds:g} s; " + (
                f"the next run resumes with resumptionToken={token}"
                if token is not None
                else "the next run starts as this one did"
            )
            self._keep(source, started, "stopped", report.summary(), report)
            return report
        self._keep(source, started, "ok", report.summary(), report)
        return report

    def _keep(
        self,
        source: HarvestSource,
        started: datetime,
        outcome: str,
        summary: str,
        report: HarvestReport,
    ) -> None:
        run = HarvestRun(source.id, started, now(), outcome, summary, tuple(report.refused))
        with self.store.transaction() as tx:
            tx.oai.record_run(run)

    def _harvest(self, feed: Feed, report: HarvestReport, resume: str | None) -> None:
        source = feed.source
        granularity = feed.granularity()
        arguments = {"verb": "ListRecords", "metadataPrefix": source.metadata_prefix}
        if not report.full and source.next_from is not None:
            # A datestamp stored in seconds, asked of a repository now counting days: its day.
            day = granularity == "YYYY-MM-DD"
            report.asked_from = source.next_from[:10] if day else source.next_from
            arguments["from"] = report.asked_from
        if source.set_spec is not None:
            arguments["set"] = source.set_spec
        pattern, seen = re.compile(source.url_pattern), FirstLines("item")
        registrant = Principal(source.organisation, "registrant", 0)
        if resume is not None:
            report.resumed, report.next_from = resume, source.resumption_from
        for root, page, url, begins in feed.pages(arguments, resume):
            if begins:
                stamp = root.findtext(f"{{{OAI_PMH}}}responseDate", "").strip()
                try:
                    parse_datestamp(stamp)
                except OAIError:
                    raise feed.fail(f"the responseDate {stamp!r} is not a datestamp", url) from None
                report.next_from = stamp[:10] if granularity == "YYYY-MM-DD" else stamp
            parse = PARSERS[source.metadata_prefix]
            items = [parse(record) for record in page]
            with self.store.transaction() as tx:
                delegated = tuple((p, name) for p, name, _ in tx.organisations.prefixes())
                checks = _Checks(pattern, Rules(delegated, registrant, lenient=True), seen)
                for item in items:
                    self._store(tx, source, checks, item, report)
        assert report.next_from is not None  # pages() yields at least one response
        with self.store.transaction() as tx:
            tx.oai.finish_harvest(source.id, granularity, report.next_from)

    def _store(
        self,
        tx: Transaction,
        source: HarvestSource,
        checks: _Checks,
        item: Item,
        report: HarvestReport,
    ) -> None:
        report.items += 1
        where = item.identifier or "(no identifier)"
        if not item.identifier or len(item.identifier) > MAX_IDENTIFIER:
            report.refused.append(f"{where}: an OAI identifier is 1 to {MAX_IDENTIFIER} characters")
            return
        actor = f"oai:{source.name}"
        if item.deleted:
            for record_id, record in tx.records.by_ids(
                tx.oai.item_records(source.id, item.identifier)
            ):
                others = tuple(
                    loc for loc in record.locations if loc.organisation != source.organisation
                )
                if others != record.locations and record.status == "active":
                    withdrawn = replace(record, locations=others, updated=now())
                    tx.records.update(record_id, withdrawn, record_json(record), "withdrawn", actor)
                    report.withdrawn += 1
            return
        if item.problem is not None:
            report.refused.append(f"{where}: {item.problem}")
            return
        if not item.entries:
            report.without_urn += 1
            return
        off = {
            location.url: None
            for _, locations in item.entries
            for location in locations
            if not checks.pattern.fullmatch(location.url)
        }
        report.refused += [
            f"{where}: the URL {url} does not match the source's URL pattern {source.url_pattern!r}"
            for url in off
        ]
        record_ids = []
        for text, locations in _distinct(item.entries):
            kept = [location for location in locations if location.url not in off]
            found = tuple(replace(location, priority=n) for n, location in enumerate(kept, 1))
            try:
                record_ids.append(self._put(tx, source, checks, text, found, item, report))
            except (
                InvalidURNError,
                UnacceptableError,
                ForbiddenError,
                ConflictError,
                NotFoundError,
            ) as error:
                said = error.detail
                if not said.startswith(f"{text}:"):  # the rows' rules begin theirs with it
                    said = f"{text}: {said}"
                report.refused.append(f"{where}: {said}")
        tx.oai.add_items(source.id, item.identifier, record_ids)

    def _put(
        self,
        tx: Transaction,
        source: HarvestSource,
        checks: _Checks,
        text: str,
        found: tuple[Location, ...],
        item: Item,
        report: HarvestReport,
    ) -> int:
        """Create or update the record of one URN as the source's organisation; its id. On a
        record of another owner that granted the organisation locations, only the
        organisation's own locations are written."""
        # The rows' rules (services/rows.py), the registrant's among them (RFC 8458 §4.3): the
        # source's organisation holds the longest delegated prefix covering the URN, or a
        # grant of its own locations on the record.
        made: Record | None = None  # None: a grantee's source, its locations alone written
        try:
            made = checks.rules.record(
                {"urn": text, "metadata": item.metadata}, now(), checks.holders
            )
            key = made.key
            record_id = tx.records.id(key, for_update=True)
        except ForbiddenError:
            key = parse_urn(text).equivalence_key()
            record_id = tx.records.id(key, for_update=True)
            if record_id is None or not tx.grants.holds(record_id, source.organisation):
                raise
        owner = made is not None
        checks.seen.check(key, report.items)
        actor = f"oai:{source.name}"
        if record_id is None:
            assert made is not None  # a grant is on a record there is
            if item.status is not None and not item.status.registers:
                raise NotFoundError(
                    f"{text} is not registered; {item.status.name} changes a registered URN"
                )
            moment = now()
            record = replace(made, created=moment, updated=moment, locations=check_locations(found))
            record_id = self._create(tx, source, record, report)
            if record_id is not None:
                return record_id
            record_id = tx.records.id(key, for_update=True)  # created meanwhile: update it
            assert record_id is not None
        current = tx.records.get(key)
        assert current is not None
        if current.status == "deactivated":
            raise ConflictError(f"{current.urn} is deactivated; a deactivated URN is not written")
        record = replace(current, status="active" if owner else current.status)
        if item.status is None:
            # The source describes its records in Dublin Core: those names are replaced, the
            # others (registered through the API) kept; a grantee's source keeps them all.
            metadata = dict(current.metadata)
            if owner:
                metadata = {k: v for k, v in metadata.items() if not is_dublin_core_name(k)}
                metadata.update(item.metadata)
            record = replace(record, metadata=metadata)
        else:  # epicur carries no descriptive metadata: the stored is kept
            own = [loc for loc in current.locations if loc.organisation == source.organisation]
            found = apply_status(item.status, own, found)
        held = with_own_locations(current.locations, source.organisation, found)
        record = replace(record, locations=held)
        if record == current:
            report.unchanged += 1
            return record_id
        record = replace(record, updated=now())
        tx.records.update(record_id, record, record_json(current), "harvested", actor)
        report.changed += 1
        return record_id

    @staticmethod
    def _create(
        tx: Transaction, source: HarvestSource, record: Record, report: HarvestReport
    ) -> int | None:
        """Insert a new record as the source's organisation; None when it was created meanwhile."""
        owner_id = tx.organisations.id(source.organisation)
        assert owner_id is not None
        record_id = tx.records.insert(record, owner_id)
        if record_id is not None:
            tx.records.append_history([(record_id, "created", f"oai:{source.name}")])
            report.created += 1
        return record_id


@dataclass(slots=True)
class _Checks:
    """How a page of a source's items is checked: every location URL fully matches
    ``pattern``; each URN by the rows' ``rules`` (read in the page's transaction, the
    ``holders`` of the prefixes seen kept), and refused when an earlier item of the run named
    it (``seen``, by item number)."""

    pattern: re.Pattern[str]
    rules: Rules
    seen: FirstLines
    holders: dict[str, str] = field(default_factory=dict)


def _distinct(
    entries: Sequence[tuple[str, tuple[Location, ...]]],
) -> list[tuple[str, tuple[Location, ...]]]:
    """``entries`` without repeats of an equivalent URN (RFC 8141 §3), the first kept.

    >>> urns = ["URN:NBN:fi-1", "urn:nbn:FI-1", "urn:nbn:fi-2", "not a urn"]
    >>> [urn for urn, _ in _distinct([(urn, ()) for urn in urns])]
    ['URN:NBN:fi-1', 'urn:nbn:fi-2', 'not a urn']
    """
    found: dict[str, tuple[str, tuple[Location, ...]]] = {}
    for text, locations in entries:
        try:
            key = parse_urn(text).equivalence_key()
        except InvalidURNError:
            key = text  # refused, with the reason, when it is written
        found.setdefault(key, (text, locations))
    return list(found.values())


def check_source(
    base_url: str, url_pattern: str, set_spec: str | None, metadata_prefix: str
) -> None:
    """Refuse, naming the field, a base URL that is not an absolute http(s) URL without query,
    a pattern that is not a regular expression, a setSpec outside OAI-PMH's syntax or a format
    not harvested.

    >>> check_source("https://repo.example/oai", "(", None, "oai_dc")
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: the URL pattern '(' is not a regular expression: ...
    """
    parts = urlsplit(base_url)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.query
        or not base_url.isprintable()
    ):
        raise UnacceptableError(
            f"the base URL {base_url!r} is not an absolute http(s) URL without a query "
            "(OAI-PMH 2.0 §3.1.1: the arguments are added to it)",
            field="base_url",
        )
    if not url_pattern.isprintable():
        raise UnacceptableError(
            "a URL pattern is printable characters (write a control character as an escape)",
            field="url_pattern",
        )
    try:
        re.compile(url_pattern)
    except re.error as error:
        raise UnacceptableError(
            f"the URL pattern {url_pattern!r} is not a regular expression: {error.msg} "
            f"at position {error.pos}",
            position=error.pos,
            field="url_pattern",
        ) from None
    if set_spec is not None and (len(set_spec) > 200 or not SET_SPEC.fullmatch(set_spec)):
        raise UnacceptableError(
            f"{set_spec!r} is not a setSpec (OAI-PMH 2.0 §4.6)", field="set_spec"
        )
    if metadata_prefix not in PARSERS:
        raise UnacceptableError(
            f"{metadata_prefix!r} is not a format harvested here ({', '.join(PARSERS)})",
            field="metadata_prefix",
        )
