"""A registrant's upload of records (a CSV or NDJSON file, as ``urnkit import`` reads it):
previewed row by row without writing anything, then committed as previewed.

Every row is checked by the rows' rules (:class:`~urnkit.resolver.services.rows.Rules`,
:class:`~urnkit.resolver.services.rows.FirstLines`), those of ``urnkit import``: the preview
reads the records the file names in a read-only snapshot, a few statements for the whole
file, and writes nothing, so it holds no lock. A row naming a URN registered already is
``present`` (left as it is, as an import skips it) unless ``change_existing``. The commit
writes the rows as the API writes them (:meth:`RecordService.put_in`, then
:meth:`RecordService.deactivate_in` for a row whose ``status`` is ``deactivated``), with the
history entries naming the principal. A row refused says its line and the field it concerns
(``extensions["row"]`` and ``["field"]``); its findings are those of :func:`urnkit.validate`.

>>> from urnkit.resolver.services import Services
>>> services = Services(Store("sqlite://"))
>>> services.store.upgrade()
>>> services.admin.create_organisation("Library")
'Library'
>>> services.admin.delegate("Library", "fi:lib")
'fi:lib'
>>> principal = services.access.authenticate(services.admin.create_token("Library"))
>>> data = b"urn,url\\nurn:nbn:fi:lib-1,https://example.org/1\\nurn:nbn:fi:other-1,https://example.org/2\\n"
>>> preview = services.uploads.preview(principal, data, "csv")
>>> [(row.line, row.outcome, row.field) for row in preview.rows]
[(2, 'created', None), (3, 'refused', 'urn')]
>>> services.records.records(None)[0]
[]
>>> [(row.line, row.urn) for row in services.uploads.commit(principal, data, "csv", preview.digest).rows]
[(2, 'urn:nbn:fi:lib-1')]
"""  # noqa: E501

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from urnkit import validate
from urnkit.findings import Finding
from urnkit.resolver.domain import (
    ConflictError,
    Difference,
    ForbiddenError,
    Principal,
    Record,
    ResolverError,
    UnacceptableError,
    differences,
    parse_urn,
)
from urnkit.resolver.domain.changes import EMPTY
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services.locations import held_as_stored
from urnkit.resolver.services.records import MAX_BATCH, MAX_NOTE, MAX_SUCCESSORS, RecordService
from urnkit.resolver.services.rows import (
    FirstLines,
    Rules,
    csv_rows,
    equivalence_keys,
    ndjson_rows,
    row_locations,
)
from urnkit.resolver.store import Store, Transaction, now

MAX_UPLOAD_BYTES = 10 * 2**20  # the largest file taken at once
MAX_UPLOAD_ROWS = MAX_BATCH  # rows of one file: its commit is one transaction, as a batch's

FileFormat = Literal["csv", "ndjson"]
Outcome = Literal["created", "replaced", "deactivated", "unchanged", "present", "refused"]
Progress = Callable[[int, int], None]  # rows checked, rows in the file
_Row = tuple[int, Mapping[str, Any] | ResolverError]  # a line and its row, or why it was not read


@dataclass(frozen=True, slots=True)
class RowPreview:
    """What a row of the file does: ``outcome``, its ``differences`` from the record as
    stored (all of it when created; for a ``present`` one, what it would change), or the
    ``refusal`` (whose ``extensions`` name the ``row`` and the ``field``); the
    :func:`urnkit.validate` ``findings`` of its URN as given."""

    line: int
    urn: str
    findings: tuple[Finding, ...]
    outcome: Outcome
    differences: tuple[Difference, ...] = ()
    refusal: ResolverError | None = None

    @property
    def field(self) -> str | None:
        """The field of the row a refusal concerns (None: the row, or no refusal)."""
        return None if self.refusal is None else self.refusal.extensions.get("field")


@dataclass(frozen=True, slots=True)
class UploadPreview:
    """Every row of a file and what it does; ``digest`` names the file and what its rows do,
    to :meth:`UploadService.commit` it as previewed."""

    rows: tuple[RowPreview, ...]
    digest: str

    @property
    def accepted(self) -> tuple[RowPreview, ...]:
        """The rows a commit writes: neither refused, unchanged nor present."""
        return tuple(
            row for row in self.rows if row.outcome not in ("refused", "unchanged", "present")
        )


class UploadService:
    """Uploads of records by a principal, written through ``records``."""

    def __init__(self, store: Store, records: RecordService) -> None:
        self.store = store
        self.records = records

    def preview(
        self,
        principal: Principal,
        data: bytes | str,
        kind: FileFormat,
        *,
        change_existing: bool = False,
        progress: Progress | None = None,
    ) -> UploadPreview:
        """What each row of ``data`` would do, nothing written, read in one snapshot. A row
        that would change a record already stored is ``present`` unless ``change_existing``.
        ``progress(checked, total)`` is called as each row has been checked."""
        rows = _read(data, kind)
        with self.store.snapshot() as tx:
            found = _previewed(tx, principal, rows, change_existing, progress)
        return UploadPreview(found, _digest(principal, data, kind, change_existing, found))

    def commit(
        self,
        principal: Principal,
        data: bytes | str,
        kind: FileFormat,
        digest: str,
        *,
        change_existing: bool = False,
    ) -> UploadPreview:
        """Write the rows :meth:`preview` accepted, in one transaction; the rows written.
        :class:`ConflictError` (nothing written) when the file, or what its rows would do,
        is not what the preview of ``digest`` showed."""
        rows = dict(_read(data, kind))
        with self.store.transaction() as tx:
            found = _previewed(tx, principal, list(rows.items()), change_existing)
            if _digest(principal, data, kind, change_existing, found) != digest:
                raise ConflictError(
                    "the file, or what its rows would do, changed since its preview: "
                    "preview it again",
                    field="file",
                )
            accepted = UploadPreview(found, digest).accepted
            for previewed in accepted:
                row = rows[previewed.line]
                assert not isinstance(row, ResolverError)
                self._write(tx, principal, previewed, row)
        return UploadPreview(accepted, digest)

    def _write(
        self, tx: Transaction, principal: Principal, previewed: RowPreview, row: Mapping[str, Any]
    ) -> None:
        """Write one accepted row in ``tx`` as the API does."""
        try:
            found, metadata = row_locations(row), row.get("metadata") or {}
            self.records.put_in(tx, principal, previewed.urn, found, metadata)
            if row.get("status") == "deactivated":
                note, successors = row.get("note") or None, row.get("successors") or []
                self.records.deactivate_in(tx, principal, previewed.urn, note, successors)
        except ResolverError as error:  # the preview said otherwise: the store changed
            _in_row(error, previewed.line, previewed.urn)
            raise ConflictError(f"{error.detail}: preview the file again", field="file") from None


def _previewed(
    tx: Transaction,
    principal: Principal,
    rows: Sequence[_Row],
    change_existing: bool,
    progress: Progress | None = None,
) -> tuple[RowPreview, ...]:
    """What each row does, read in ``tx`` (nothing written): each checked by the rows'
    rules (``progress`` told after each), then the records the file names read in a few
    statements."""
    rules = Rules(tuple((p, name) for p, name, _ in tx.organisations.prefixes()), principal)
    moment, seen = now(), FirstLines()
    holders: dict[str, str] = {}
    texts = (str(row.get("urn", "")) for _, row in rows if not isinstance(row, ResolverError))
    stored = tx.bulk.registered(equivalence_keys(texts))
    checked: list[tuple[int, str, tuple[Finding, ...], Record | ResolverError]] = []
    for line, row in _told(rows, progress):
        text = "" if isinstance(row, ResolverError) else str(row.get("urn") or "")
        findings = tuple(validate(text)) if text else ()
        try:
            if isinstance(row, ResolverError):
                raise row
            record = rules.record(row, moment, holders, stored)
            _check_deactivation(record)
            seen.check(record.key, line)
        except ResolverError as error:
            _in_row(error, line, text)
            checked.append((line, text, findings, error))
            continue
        checked.append((line, text, findings, record))
    found = []
    for line, text, findings, made in checked:
        if isinstance(made, ResolverError):
            found.append(RowPreview(line, text, findings, "refused", refusal=made))
            continue
        try:
            outcome, changed = _outcome(stored.get(made.key), made, change_existing)
        except ResolverError as error:
            _in_row(error, line, text)
            found.append(RowPreview(line, text, findings, "refused", refusal=error))
            continue
        found.append(RowPreview(line, text, findings, outcome, changed))
    return tuple(found)


def _told(rows: Sequence[_Row], progress: Progress | None) -> Iterator[_Row]:
    """``rows``, telling ``progress(checked, total)`` before each and when all are checked."""
    for checked, row in enumerate(rows):
        if progress is not None:
            progress(checked, len(rows))
        yield row
    if progress is not None:
        progress(len(rows), len(rows))


def _check_deactivation(record: Record) -> None:
    """A registrant's deactivation names URNs as its successors and a note within the API's
    bounds (:meth:`RecordService.deactivate_in`); an import keeps what the file says."""
    if record.status != "deactivated":
        return
    try:
        if len(record.note or "") > MAX_NOTE:
            raise UnacceptableError(f"a note is at most {MAX_NOTE} characters", field="note")
        if len(record.successors) > MAX_SUCCESSORS:
            raise UnacceptableError(f"at most {MAX_SUCCESSORS} successors are named")
        for successor in record.successors:
            parse_urn(successor)
    except ResolverError as error:
        error.extensions.setdefault("field", "successors")
        raise


def _outcome(
    current: Record | None, record: Record, change_existing: bool
) -> tuple[Outcome, tuple[Difference, ...]]:
    """What a row making ``record`` does to the record stored (``current``, None: none), and
    what it changes; :class:`ConflictError` when it cannot."""
    if current is None:
        if record.status == "reserved":
            raise ConflictError(
                "a file does not reserve URNs: reserve new URNs by generating them",
                field="status",
            )
        created = differences(EMPTY, record_json(record))
        return ("deactivated" if record.status == "deactivated" else "created"), tuple(created)
    changed = tuple(differences(record_json(current), record_json(_written(current, record))))
    if not change_existing:
        return "present", changed
    if record.status == "reserved" and (current.status != "reserved" or changed):
        raise ConflictError(
            "a file does not reserve URNs, nor set a record back to reserved: "
            "reserve new URNs by generating them",
            field="status",
        )
    if changed and current.status == "deactivated":
        raise ConflictError(
            f"{current.urn} is deactivated; a deactivated URN is not written again",
            field="status",
        )
    if not changed:
        return "unchanged", changed
    if record.status == "deactivated" and current.status != "deactivated":
        return "deactivated", changed
    return "replaced", changed


def _written(current: Record, record: Record) -> Record:
    """The record ``current`` as a row making ``record`` would write it (see
    :meth:`UploadService._write`)."""
    if current.status == "deactivated" and not (record.locations or record.metadata):
        found = current.locations  # only the deactivation is written again
    else:
        found = held_as_stored(current.locations, record.locations, current.owner)
    status = current.status if record.status == "reserved" else record.status
    after = replace(current, status=status, locations=found, metadata=record.metadata)
    if status == "deactivated":
        after = replace(after, note=record.note, successors=record.successors)
    return after


def _in_row(error: ResolverError, line: int, text: str) -> None:
    """``error``, saying it concerns the row on ``line`` and (when it told no field) the
    field its type concerns: the URN for a refusal of the principal, the status for a
    conflict with the record as stored."""
    if isinstance(error, ConflictError):
        error.extensions.setdefault("field", "status")
    elif isinstance(error, ForbiddenError):
        error.extensions.setdefault("field", "urn")
    error.extensions.setdefault("field", None)
    error.extensions["row"] = line
    if not error.detail.startswith(f"line {line}"):
        error.detail = f"line {line} ({text or 'no URN'}): {error.detail}"


def _read(data: bytes | str, kind: FileFormat) -> list[_Row]:
    """The rows of a file as ``urnkit import`` reads them, each with its line; a line that
    could not be read is its refusal. :class:`UnacceptableError` when the file is too large
    (:data:`MAX_UPLOAD_BYTES`, :data:`MAX_UPLOAD_ROWS`) or cannot be read at all."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > MAX_UPLOAD_BYTES:
        raise UnacceptableError(
            f"the file has {len(raw):,} bytes; at most {MAX_UPLOAD_BYTES:,} are taken at once",
            limit=MAX_UPLOAD_BYTES,
            field="file",
        )
    found: list[_Row] = []

    def refused(line: int, _row: Any, reason: str) -> None:
        found.append((line, UnacceptableError(reason, row=line, field=None)))

    read = csv_rows if kind == "csv" else ndjson_rows
    try:
        for line, row in _bounded(read(io.BytesIO(raw), refused)):
            found.append((line, row))
    except ValueError as error:  # not UTF-8 (CSV), no header
        raise UnacceptableError(str(error), field="file") from None
    return sorted(found, key=lambda entry: entry[0])


def _bounded(rows: Iterator[tuple[int, dict[str, Any]]]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``rows``, refused when there are more than :data:`MAX_UPLOAD_ROWS`."""
    for number, row in enumerate(rows, 1):
        if number > MAX_UPLOAD_ROWS:
            raise UnacceptableError(
                f"the file has more than {MAX_UPLOAD_ROWS:,} rows; at most {MAX_UPLOAD_ROWS:,} "
                "are taken at once: split it",
                limit=MAX_UPLOAD_ROWS,
                field="file",
            )
        yield row


def _digest(
    principal: Principal,
    data: bytes | str,
    kind: FileFormat,
    change_existing: bool,
    rows: Sequence[RowPreview],
) -> str:
    """A digest of the file and of what its rows do (their lines and outcomes)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    summary = json.dumps(
        [principal.organisation, kind, change_existing, [[r.line, r.outcome] for r in rows]]
    )
    return hashlib.sha256(raw + b"\0" + summary.encode()).hexdigest()
