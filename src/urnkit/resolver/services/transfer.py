"""Import and export of records: what ``urnkit import`` and ``urnkit export`` run.

An import reads its rows in batches; each batch is checked and made ready for the database
(staged: PostgreSQL's COPY text, SQLite's rows) while the database stores the one before
(:mod:`urnkit.resolver.services.prefetch`), and stored in one transaction.
"""

from __future__ import annotations

import csv
import gc
import io
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from urnkit.resolver.domain import (
    NotFoundError,
    Record,
    ResolverError,
    UnacceptableError,
    carries_identifiers,
    covers,
    normalize_prefix,
)
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services.prefetch import cycles_uncollected, made_elsewhere, read_ahead
from urnkit.resolver.services.records import RecordService, record_successions
from urnkit.resolver.services.rows import FirstLines, Rules
from urnkit.resolver.store import (
    SqliteStagedImport,
    StagedImport,
    Store,
    now,
    stage_import,
    stage_sqlite_import,
)


class TransferService:
    """Records in and out of a store in bulk; export reads pages of ``records``."""

    def __init__(self, store: Store, records: RecordService) -> None:
        self.store = store
        self.records = records

    def import_records(
        self,
        rows: Iterable[tuple[int, Mapping[str, Any]]],
        owner: str | None = None,
        batch_size: int = 5_000,
        progress: Callable[[int, int], None] | None = None,
        rejected: Callable[[int, Mapping[str, Any], str], None] | None = None,
    ) -> tuple[int, int]:
        """Import records (``urn``, ``locations``, ``metadata``, optional ``status``,
        ``successors`` and ``note``), each row with its line (any increasing number), in
        transactional batches; records already present are skipped, so a rerun after a crash
        completes the import without duplicates. Rows are checked by the rows' rules
        (:class:`~urnkit.resolver.services.rows.Rules`, :class:`~.rows.FirstLines`): each
        record belongs to ``owner``, or else to the holder of its prefix. Returns (imported,
        skipped).

        A row unfit to store raises its refusal before its batch is stored; given ``rejected``,
        it is handed there instead (its line, the row and the reason) once the rest of its
        batch is stored: ``rejected`` may raise to stop the import.

        >>> from urnkit.resolver.services import Services
        >>> services = Services(Store("sqlite://"))
        >>> services.store.upgrade()
        >>> services.admin.create_organisation("Library")
        'Library'
        >>> services.admin.delegate("Library", "fi:lib")
        'fi:lib'
        >>> rows = [(1, {"urn": "urn:nbn:fi:lib-1", "locations": [{"url": "https://example.org/"}]})]
        >>> transfer = services.transfer
        >>> transfer.import_records(rows), transfer.import_records(rows)
        ((1, 0), (0, 1))
        """
        with self.store.snapshot() as tx:
            owner_ids = tx.organisations.ids()
            delegated = tuple((prefix, name) for prefix, name, _ in tx.organisations.prefixes())
            base = tx.records.highest_id()
        if owner is not None and owner not in owner_ids:
            raise NotFoundError(f"no organisation is called {owner!r}")

        postgresql = self.store.engine.dialect.name == "postgresql"
        rules = Rules(delegated, owner=owner)
        make = partial(_import_batch, rules, owner_ids, None if postgresql else base)

        def prepared() -> Iterator[_ImportBatch]:
            batches = _batches(rows, batch_size)
            first = next(batches, None)
            try:  # read ahead, so that the child starts while the first batch is made here
                following = next(batches, None)
            except Exception:
                if first is not None:  # committed before the error, as without the peek
                    yield make(first)
                raise
            if first is None or following is None:  # one batch or none: made here
                if first is not None:
                    yield make(first)
                return
            # From the second batch on, other processes prepare them: in this one they held
            # the GIL half the time and kept the database's thread waiting for it. Two on
            # SQLite, whose inserts here take less than a batch's preparing; one on PostgreSQL,
            # whose server needs the CPU left (benchmarks/storage_bench.py).
            rest = itertools.chain([following], batches)
            yield from made_elsewhere(make, first, rest, 1 if postgresql else 2)

        # Reference counting frees what a batch leaves (as in made_elsewhere's child), but for
        # its refusals (an error's frames): the cycle collector's passes over the batches in
        # flight took 7 µs a row on SQLite (benchmarks/storage_bench.py).
        with cycles_uncollected():
            return self._store_all(prepared(), owner_ids, progress, rejected)

    def _store_all(
        self,
        batches: Iterator[_ImportBatch],
        owner_ids: Mapping[str, int],
        progress: Callable[[int, int], None] | None,
        rejected: Callable[[int, Mapping[str, Any], str], None] | None,
    ) -> tuple[int, int]:
        """Store ``batches`` (see :meth:`import_records`); (imported, skipped)."""
        imported = skipped = 0
        refusals_held = False
        seen = FirstLines()
        # The next batch is read and checked while the database stores this one.
        for prepared_batch in read_ahead(batches):
            if refusals_held:  # the last batch's refusals, garbage now, hold cycles
                gc.collect()
            # A row repeating one of an earlier batch: stored already, so the store skips it.
            prepared_batch.rejected.extend(_repeated(seen, prepared_batch))
            refusals_held = bool(prepared_batch.rejected)
            size = prepared_batch.size - len(prepared_batch.rejected)
            if prepared_batch.rejected and rejected is None:
                raise prepared_batch.rejected[0][2]
            inserted = self._store(prepared_batch, owner_ids)
            imported += inserted
            skipped += size - inserted
            if progress is not None:
                progress(imported, skipped)
            for line, row, error in sorted(prepared_batch.rejected, key=lambda r: r[0]):
                assert rejected is not None
                rejected(line, row, error.detail)
        return imported, skipped

    def _store(self, prepared: _ImportBatch, owner_ids: Mapping[str, int]) -> int:
        """Store a prepared batch in one transaction; how many of its records were new."""
        with self.store.transaction() as tx:
            inserted = tx.bulk.import_staged(prepared.staged)
            record_successions(tx, prepared.succeeding)
            tx.identifiers.refresh(prepared.identified)
        return inserted

    def export_records(self, prefix: str | None = None, page: int = 1_000) -> Iterator[Record]:
        """Every record (under ``prefix`` if given), in registration order, page by page;
        :class:`NotFoundError` at once if no prefix under or over ``prefix`` is delegated.

        >>> from urnkit.resolver.services import Services
        >>> services = Services(Store("sqlite://"))
        >>> services.store.upgrade()
        >>> services.transfer.export_records("se:x")
        Traceback (most recent call last):
        ...
        urnkit.resolver.domain.NotFoundError: no prefix under or over 'se:x' is delegated
        """
        if prefix is not None:
            wanted = normalize_prefix(prefix)
            with self.store.snapshot() as tx:
                delegated = [known for known, _, _ in tx.organisations.prefixes()]
            if not any(covers(wanted, p) or covers(p, wanted) for p in delegated):
                raise NotFoundError(f"no prefix under or over {prefix!r} is delegated")
        return self._pages(prefix, page)

    def _pages(self, prefix: str | None, page: int) -> Iterator[Record]:
        cursor: int | None = 0
        while cursor is not None:
            found, cursor = self.records.records(prefix, cursor, page)
            yield from found


EXPORT_FORMATS = ("ndjson", "csv")
CSV_COLUMNS = ("urn", "status", "locations", "metadata", "successors", "note", "created", "updated")
# What a spreadsheet takes for the start of a formula, after OWASP's "CSV Injection" page
# (https://owasp.org/www-community/attacks/CSV_Injection): =, +, -, @, tab and carriage return.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def export_lines(
    found: Iterable[Record], kind: str, for_spreadsheets: bool = False
) -> Iterator[str]:
    """The lines of an export of ``found`` as ``kind``: NDJSON, one record a line as the API
    shows it, or CSV, a header row then JSON for locations and metadata, successors
    space-separated. What ``urnkit import`` reads back, every value exactly; unless
    ``for_spreadsheets`` (the staff pages' download), where a CSV cell a spreadsheet would run
    as a formula is neutralised (:func:`spreadsheet_cell`). An unknown ``kind`` is refused at
    once.

    >>> from datetime import datetime, UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> record = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t)
    >>> list(export_lines([record], "csv"))[1][:30]
    'urn:nbn:fi-1,active,[],{},,,20'
    """
    if kind not in EXPORT_FORMATS:
        raise UnacceptableError(f"an export is {' or '.join(EXPORT_FORMATS)}", field="format")
    return _export_lines(found, kind, spreadsheet_cell if for_spreadsheets else str)


def spreadsheet_cell(text: str) -> str:
    """``text`` as a spreadsheet shows it without running it: a cell beginning with one of
    :data:`FORMULA_STARTS` gets a single quote before it, OWASP's rule.

    >>> spreadsheet_cell("=cmd|' /C calc'!A0"), spreadsheet_cell("a=b")
    ("'=cmd|' /C calc'!A0", 'a=b')
    """
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text


def _export_lines(found: Iterable[Record], kind: str, cell: Callable[[str], str]) -> Iterator[str]:
    compact: dict[str, Any] = {"ensure_ascii": False, "separators": (",", ":")}
    if kind == "csv":
        yield _csv_line(CSV_COLUMNS)
    for record in found:
        row = record_json(record)
        if kind == "ndjson":
            yield json.dumps(row, **compact) + "\n"
            continue
        yield _csv_line(
            [
                cell(text)
                for text in (
                    row["urn"],
                    row["status"],
                    json.dumps(row["locations"], **compact),
                    json.dumps(row["metadata"], **compact),
                    " ".join(row["successors"]),
                    row["note"] or "",
                    row["created"],
                    row["updated"],
                )
            ]
        )


def _csv_line(cells: Sequence[str]) -> str:
    line = io.StringIO()
    csv.writer(line).writerow(cells)
    return line.getvalue()


@dataclass(frozen=True, slots=True)
class _ImportBatch:
    """A batch of import rows made ready for the database: ``size`` rows, the keys of its
    records that name successors and of those that carry other identifiers, the rows refused,
    with their lines and reasons, the line, :func:`~.rows.key_digest` and URN of each row
    kept, and the records staged for the database."""

    size: int
    succeeding: list[str]
    identified: list[str]
    rejected: list[tuple[int, Mapping[str, Any], ResolverError]]
    kept: list[tuple[int, int, str]]
    staged: StagedImport | SqliteStagedImport


def _import_batch(
    rules: Rules,
    owner_ids: Mapping[str, int],
    base: int | None,
    batch: Sequence[tuple[int, Mapping[str, Any]]],
) -> _ImportBatch:
    """Import rows (with their lines) made ready for the database (see
    :meth:`TransferService.import_records`): staged for PostgreSQL if ``base`` is None, else
    for SQLite, each record's id ``base`` plus its row's line."""
    records: dict[str, tuple[int, Record]] = {}
    rejected = []
    moment = now()  # the batch's records are created together
    holders: dict[str, str] = {}  # of each prefix seen
    seen = FirstLines()
    for line, row in batch:
        try:
            record = rules.record(row, moment, holders)
            seen.check(record.key, line)
        except ResolverError as error:
            rejected.append((line, row, error))
            continue
        records[record.key] = (line, record)
    fresh = [r for _, r in records.values()]
    records_by_line = {line: r.urn for line, r in records.values()}
    succeeding = [r.key for r in fresh if r.successors]
    identified = [r.key for r in fresh if carries_identifiers(r.metadata)]
    kept = [(line, digest, records_by_line[line]) for digest, line in seen.lines.items()]
    # Staged here, outside the transaction (see BulkImport.import_staged).
    staged: StagedImport | SqliteStagedImport
    if base is None:
        staged = stage_import(fresh, owner_ids, [record_json(r) for r in fresh])
    else:
        staged = stage_sqlite_import([(base + n, r) for n, r in records.values()], owner_ids)
    return _ImportBatch(len(batch), succeeding, identified, rejected, kept, staged)


_SENDER_FAILED = "the rows failed"  # the sender's word to the child and back


def _batches(
    rows: Iterable[tuple[int, Mapping[str, Any]]], size: int
) -> Iterator[list[tuple[int, Mapping[str, Any]]]]:
    """The rows (with their lines) in batches of ``size``."""
    batch: list[tuple[int, Mapping[str, Any]]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _repeated(
    seen: FirstLines, batch: _ImportBatch
) -> Iterator[tuple[int, Mapping[str, Any], ResolverError]]:
    """The rows of ``batch`` that repeat the URN of a row of an earlier batch (``seen``),
    refused; the others noted in ``seen``."""
    for line, digest, urn in batch.kept:
        try:
            seen.check_digest(digest, line)
        except ResolverError as error:
            yield line, {"urn": urn}, error
