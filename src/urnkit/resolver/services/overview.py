"""The public register of prefixes, the statistics of resolutions and of records' statuses, and
search; for the staff pages, the records an organisation holds (owns or holds a grant on),
listed, read and exported."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from itertools import accumulate
from typing import Any, Literal, TypeVar

from urnkit.resolver.domain import (
    STATUSES,
    InvalidURNError,
    NotFoundError,
    Principal,
    Reader,
    Record,
    UnacceptableError,
    covers,
    normalize_prefix,
    parse_urn,
    shown,
)
from urnkit.resolver.services.access import AccessService
from urnkit.resolver.services.records import RecordService
from urnkit.resolver.statistics import DayCount, ResolutionTally
from urnkit.resolver.store import Store, now
from urnkit.resolver.store.queries.statistics import DayStatusCount, StatusChange

MAX_STATISTICS_DAYS = 366  # the longest span the statistics show
STATISTICS_CACHE = 60
"""Seconds a process reuses the records' counts by status (``statistics_cache``): each count
reads every record, and at ten million records takes seconds (docs/benchmarks.md)."""

T = TypeVar("T")


class OverviewService:
    """What the public pages show: the register, the counts, search over ``records``; what
    the staff pages list of an organisation's records. The ``tally`` is the one resolution
    counts into (:attr:`ResolutionService.tally`). The records' counts by status are reused
    for ``cache_seconds`` (0: counted every time)."""

    def __init__(
        self,
        store: Store,
        records: RecordService,
        tally: ResolutionTally,
        cache_seconds: float = STATISTICS_CACHE,
    ) -> None:
        self.store = store
        self.records = records
        self.tally = tally
        self.cache_seconds = cache_seconds
        self._counted: dict[object, tuple[float, Any]] = {}

    def _cached(self, key: object, count: Callable[[], T]) -> T:
        """What ``count`` returned for ``key`` less than ``cache_seconds`` ago, else its answer
        now, kept (and the answers that have grown older dropped).

        >>> overview = OverviewService(Store("sqlite://"), None, None, 60)  # type: ignore
        >>> overview._cached("x", lambda: 1), overview._cached("x", lambda: 2)
        (1, 1)
        """
        at = time.monotonic()
        kept = self._counted.get(key)
        if kept is not None and at - kept[0] < self.cache_seconds:
            return kept[1]  # type: ignore[no-any-return]
        answer = count()
        self._counted = {k: v for k, v in self._counted.items() if at - v[0] < self.cache_seconds}
        self._counted[key] = (at, answer)
        return answer

    def register(self) -> list[tuple[str, str, str, int]]:
        """The delegated prefixes (RFC 8458 §4.3) as (prefix, organisation, generator, URNs):
        a URN counts for the longest delegated prefix that covers its own."""
        with self.store.snapshot(standby=True) as tx:
            delegated = tx.organisations.prefixes()
            by_prefix = tx.statistics.record_counts("prefix")
        urns = dict.fromkeys((prefix for prefix, _, _ in delegated), 0)
        for prefix, count in by_prefix.items():
            holders = [p for p in urns if covers(p, prefix)]
            if holders:
                urns[max(holders, key=len)] += count
        return [(p, name, generator, urns[p]) for p, name, generator in delegated]

    def record_counts(self) -> dict[str, int]:
        """How many records there are by status (as counted up to ``cache_seconds`` ago)."""

        def count() -> dict[str, int]:
            with self.store.snapshot(standby=True) as tx:
                return tx.statistics.record_counts("status")

        return self._cached("statuses", count)

    def flush_statistics(self) -> int:
        """Add the resolutions counted in this process since the last flush to the database;
        how many (prefix, day) rows that touched. A failed flush keeps its counts for the next."""
        taken = self.tally.take()
        if not taken:  # nothing to add: no transaction (nor a refusal while the database is away)
            return 0
        try:
            with self.store.transaction() as tx:
                tx.statistics.add_resolution_counts(taken)
        except BaseException:
            self.tally.give_back(taken)
            raise
        return len(taken)

    def statistics(self, days: int = 31) -> list[DayCount]:
        """Resolutions per prefix per day (UTC) for the last ``days`` days, today included,
        the newest first; only what has been flushed (:meth:`flush_statistics`)."""
        with self.store.snapshot(standby=True) as tx:
            return tx.statistics.resolution_counts(self.statistics_since(days))

    def record_statuses(self, days: int = 31) -> list[DayCount]:
        """How many records were in each status at the end of each of the last ``days`` days
        (UTC), today (so far) included: (status, day, records), the newest day first, each
        day's statuses in the order of :data:`STATUSES`. Two aggregate queries, whatever the
        number of records (:func:`statuses_by_day`), as counted up to ``cache_seconds`` ago."""
        since = self.statistics_since(days)

        def count() -> list[DayCount]:
            with self.store.snapshot(standby=True) as tx:
                created = tx.statistics.created_by_day(since)
                changes = tx.statistics.status_changes(since)
            return statuses_by_day(since, days, created, changes)

        return self._cached(("statuses by day", since, days), count)

    @staticmethod
    def statistics_since(days: int) -> date:
        """The first day (UTC) of the last ``days`` days, today included."""
        if not 1 <= days <= MAX_STATISTICS_DAYS:
            raise UnacceptableError(f"days is 1 to {MAX_STATISTICS_DAYS}, not {days}")
        return now().date() - timedelta(days=days - 1)

    @staticmethod
    def _searchable(by: str, text: str) -> None:
        """:class:`UnacceptableError` for an empty text or one with a control character."""
        if not text:
            raise UnacceptableError(f"the {by} searched for is empty")
        for position, character in enumerate(text):
            if unicodedata.category(character) == "Cc":
                raise UnacceptableError(
                    f"the {by} searched for holds a control character at position {position}",
                    position=position,
                )

    def search(
        self,
        by: Literal["urn", "url", "title", "identifier"],
        text: str,
        cursor: int = 0,
        limit: int = 20,
        reader: Reader | None = None,
    ) -> tuple[list[Record], int | None]:
        """Records found by URN (its equivalents: one or none), by the URL of a location
        (reverse lookup), by a case-insensitive part of their ``metadata.title`` or by an
        identifier they carry (a URN equivalent by its namespace's rules to one in their
        ``metadata.identifiers``, or else their ``metadata.local_id``), a page at a time; the
        cursor of the next page. :class:`InvalidURNError` (saying where) when a URN
        searched for is not one. With a ``reader``, as :meth:`RecordService.records` shows
        them to it.

        >>> from urnkit.resolver.services import Services
        >>> Services(Store("sqlite://")).overview.search("title", "a\\x00b")
        Traceback (most recent call last):
        ...
        urnkit.resolver.domain.UnacceptableError: the title searched for holds a control character at position 1
        """  # noqa: E501
        self._searchable(by, text)
        if by != "urn":
            return self.records.records(
                None, cursor, limit, reader=reader, standby=True, **{by: text}
            )
        try:
            return [self.records.get(text, reader, standby=True)], None
        except NotFoundError:
            return [], None

    def held(self, principal: Principal, text: str) -> Record:
        """The record of a URN as the staff pages show it to ``principal``: a record its
        organisation owns or holds a grant on (an admin: any), with the locations it may see;
        :class:`NotFoundError` for any other, as for none, so that nobody learns of another
        organisation's reserved URNs."""
        record = self.records.get(text)
        if principal.role != "admin" and principal.organisation not in (
            record.owner,
            *record.grants,
        ):
            raise NotFoundError(f"no URN equivalent to {text} is registered here")
        return shown(record, AccessService.reader(principal))

    def held_records(
        self,
        principal: Principal,
        cursor: int = 0,
        limit: int = 50,
        *,
        status: str | None = None,
        prefix: str | None = None,
        text: str | None = None,
    ) -> tuple[list[Record], int | None]:
        """A page of the records ``principal``'s organisation owns or holds a grant on (an
        admin's: every record), the newest first, and the cursor of the next, filtered by
        ``status``, ``prefix`` and ``text``: a URN (its equivalents) or a part of the title.
        A refusal of the status or prefix names its ``field``; of the text, none (it is the
        caller's search box).

        >>> from urnkit.resolver.services import Services
        >>> services = Services(Store("sqlite://"))
        >>> services.overview.held_records(Principal("Library", "registrant", 1), status="lost")
        Traceback (most recent call last):
        ...
        urnkit.resolver.domain.UnacceptableError: no status is called 'lost' (reserved, active, deactivated)
        """  # noqa: E501
        if status is not None and status not in STATUSES:
            raise UnacceptableError(
                f"no status is called {status!r} ({', '.join(STATUSES)})", field="status"
            )
        try:
            normalized = None if prefix is None else normalize_prefix(prefix)
        except (InvalidURNError, UnacceptableError) as error:
            error.extensions["field"] = "prefix"
            raise
        key = title = None
        if text is not None:
            self._searchable("text", text)
            if text[:4].lower() == "urn:":
                key = parse_urn(text).equivalence_key()
            else:
                title = text
        with self.store.snapshot() as tx:
            organisation_id = (
                None if principal.role == "admin" else tx.organisations.id(principal.organisation)
            )
            page = tx.records.held_page(
                organisation_id,
                cursor,
                limit + 1,
                status=status,
                prefix=normalized,
                key=key,
                title=title,
            )
        reader = AccessService.reader(principal)
        after = page[limit - 1][0] if len(page) > limit else None
        return [shown(record, reader) for _, record in page[:limit]], after

    def prefixes(self, principal: Principal) -> list[str]:
        """The delegated prefixes ``principal`` registers and generates URNs in: its
        organisation's (an admin's: every one)."""
        organisation = None if principal.role == "admin" else principal.organisation
        with self.store.snapshot() as tx:
            return [prefix for prefix, _, _ in tx.organisations.prefixes(organisation)]

    def held_export(self, principal: Principal, page: int = 1_000) -> Iterator[Record]:
        """Every record ``principal``'s organisation owns or holds a grant on (an admin's:
        every record), the newest first, page by page, with the locations it may see:
        the staff pages' export."""
        cursor: int | None = 0
        while cursor is not None:
            found, cursor = self.held_records(principal, cursor, page)
            yield from found


def statuses_by_day(
    since: date, days: int, created: list[DayStatusCount], changes: list[StatusChange]
) -> list[DayCount]:
    """The records in each status at the end of each of ``days`` days from ``since``, newest
    first, from the records ``created`` by day and status now, and the status ``changes`` by
    day since: on a day, a record created by then is in its status now, unless a change after
    that day took it there (then it was in the status before). A running sum over the days.

    >>> day = date(2026, 1, 1)
    >>> statuses_by_day(day, 2, [(None, "active", 1), (day, "deactivated", 2)],
    ...                 [(day + timedelta(1), day, "active", "deactivated", 1)])
    ... # doctest: +NORMALIZE_WHITESPACE
    [('reserved', datetime.date(2026, 1, 2), 0), ('active', datetime.date(2026, 1, 2), 1),
     ('deactivated', datetime.date(2026, 1, 2), 2), ('reserved', datetime.date(2026, 1, 1), 0),
     ('active', datetime.date(2026, 1, 1), 2), ('deactivated', datetime.date(2026, 1, 1), 1)]
    """
    # the change in each status's count from one day on
    steps: dict[str, list[int]] = {status: [0] * (days + 1) for status in STATUSES}

    def step(status: str, first: date | None, end: int, count: int) -> None:
        start = 0 if first is None else (first - since).days
        if start < end:
            counts = steps.setdefault(status, [0] * (days + 1))
            counts[start] += count
            counts[end] -= count

    for first, status, count in created:
        step(status, first, days, count)
    for changed, first, before, after, count in changes:
        end = min((changed - since).days, days)
        step(before, first, end, count)
        step(after, first, end, -count)
    totals = {status: list(accumulate(counts[:days])) for status, counts in steps.items()}
    return [
        (status, since + timedelta(days=offset), totals[status][offset])
        for offset in reversed(range(days))
        for status in totals
    ]
