"""The public register of prefixes, the statistics of resolutions, and search."""

from __future__ import annotations

import unicodedata
from datetime import date, timedelta
from typing import Literal

from urnkit.resolver.domain import (
    NotFoundError,
    Reader,
    Record,
    UnacceptableError,
    covers,
)
from urnkit.resolver.services.records import RecordService
from urnkit.resolver.statistics import DayCount, ResolutionTally
from urnkit.resolver.store import Store, now

MAX_STATISTICS_DAYS = 366  # the longest span the statistics show


class OverviewService:
    """What the public pages show: the register, the counts, search over ``records``. The
    ``tally`` is the one resolution counts into (:attr:`ResolutionService.tally`)."""

    def __init__(self, store: Store, records: RecordService, tally: ResolutionTally) -> None:
        self.store = store
        self.records = records
        self.tally = tally

    def register(self) -> list[tuple[str, str, str, int]]:
        """The delegated prefixes (RFC 8458 §4.3) as (prefix, organisation, generator, URNs):
        a URN counts for the longest delegated prefix that covers its own."""
        with self.store.snapshot() as tx:
            delegated = tx.organisations.prefixes()
            by_prefix = tx.statistics.record_counts("prefix")
        urns = dict.fromkeys((prefix for prefix, _, _ in delegated), 0)
        for prefix, count in by_prefix.items():
            holders = [p for p in urns if covers(p, prefix)]
            if holders:
                urns[max(holders, key=len)] += count
        return [(p, name, generator, urns[p]) for p, name, generator in delegated]

    def record_counts(self) -> dict[str, int]:
        """How many records there are by status."""
        with self.store.snapshot() as tx:
            return tx.statistics.record_counts("status")

    def flush_statistics(self) -> int:
        """Add the resolutions counted in this process since the last flush to the database;
        how many (prefix, day) rows that touched. A failed flush keeps its counts for the next."""
        taken = self.tally.take()
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
        with self.store.snapshot() as tx:
            return tx.statistics.resolution_counts(self.statistics_since(days))

    @staticmethod
    def statistics_since(days: int) -> date:
        """The first day (UTC) of the last ``days`` days, today included."""
        if not 1 <= days <= MAX_STATISTICS_DAYS:
            raise UnacceptableError(f"days is 1 to {MAX_STATISTICS_DAYS}, not {days}")
        return now().date() - timedelta(days=days - 1)

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
        if not text:
            raise UnacceptableError(f"the {by} searched for is empty")
        for position, character in enumerate(text):
            if unicodedata.category(character) == "Cc":
                raise UnacceptableError(
                    f"the {by} searched for holds a control character at position {position}",
                    position=position,
                )
        if by != "urn":
            return self.records.records(None, cursor, limit, reader=reader, **{by: text})
        try:
            return [self.records.get(text, reader)], None
        except NotFoundError:
            return [], None
