"""A registrant's upload of records (a CSV or NDJSON file, as ``urnkit import`` reads it):
previewed row by row without writing anything, then committed as previewed.

Each row is written as the API writes it (:meth:`RecordService.put_in`, then
:meth:`RecordService.deactivate_in` for a row whose ``status`` is ``deactivated``), the same
rules checked and the same history entries naming the principal; the preview does so in a
transaction that is rolled back (:meth:`Store.rehearsal`), each row in a savepoint of its
own. A row refused says its line and the field it concerns (``extensions["row"]`` and
``["field"]``); its findings are those of :func:`urnkit.validate`.

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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from urnkit import validate
from urnkit.findings import Finding
from urnkit.resolver.domain import (
    STATUSES,
    ConflictError,
    Difference,
    ForbiddenError,
    Principal,
    Record,
    ResolverError,
    UnacceptableError,
    check_identifiers,
    check_json,
    check_urn_length,
    differences,
    parse_urn,
)
from urnkit.resolver.domain.changes import EMPTY
from urnkit.resolver.services.locations import check_locations
from urnkit.resolver.services.records import MAX_BATCH, RecordService
from urnkit.resolver.services.rows import csv_rows, ndjson_rows
from urnkit.resolver.services.shapes import record_json
from urnkit.resolver.services.transfer import row_locations
from urnkit.resolver.store import Store, Transaction

MAX_UPLOAD_BYTES = 10 * 2**20  # the largest file taken at once
MAX_UPLOAD_ROWS = MAX_BATCH  # rows of one file: its commit is one transaction, as a batch's

FileFormat = Literal["csv", "ndjson"]
Outcome = Literal["created", "replaced", "deactivated", "unchanged", "refused"]


@dataclass(frozen=True, slots=True)
class RowPreview:
    """What a row of the file does: ``outcome``, its ``differences`` from the record as
    stored (all of it when created), or the ``refusal`` (whose ``extensions`` name the
    ``row`` and the ``field``); the :func:`urnkit.validate` ``findings`` of its URN as given."""

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
        """The rows a commit writes: neither refused nor unchanged."""
        return tuple(row for row in self.rows if row.outcome not in ("refused", "unchanged"))


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
    ) -> UploadPreview:
        """What each row of ``data`` would do, nothing written. A row that would change a
        record already stored is refused unless ``change_existing``."""
        rows = _read(data, kind)
        with self.store.rehearsal() as tx:
            found = self._rows(tx, principal, rows, change_existing)
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
        rows = _read(data, kind)
        with self.store.transaction() as tx:
            found = self._rows(tx, principal, rows, change_existing)
            if _digest(principal, data, kind, change_existing, found) != digest:
                raise ConflictError(
                    "the file, or what its rows would do, changed since its preview: "
                    "preview it again",
                    field="file",
                )
        return UploadPreview(UploadPreview(found, digest).accepted, digest)

    def _rows(
        self,
        tx: Transaction,
        principal: Principal,
        rows: Sequence[tuple[int, Mapping[str, Any] | ResolverError]],
        change_existing: bool,
    ) -> tuple[RowPreview, ...]:
        """Each row written in a savepoint of ``tx``, kept when accepted."""
        seen: dict[str, int] = {}
        found = []
        for line, row in rows:
            text = "" if isinstance(row, ResolverError) else str(row.get("urn") or "")
            findings = tuple(validate(text)) if text else ()
            if isinstance(row, ResolverError):
                found.append(RowPreview(line, text, findings, "refused", refusal=row))
                continue
            savepoint = tx.connection.begin_nested()
            try:
                outcome, changed = self._row(tx, principal, line, row, seen, change_existing)
            except ResolverError as error:
                savepoint.rollback()
                _in_row(error, line, text)
                found.append(RowPreview(line, text, findings, "refused", refusal=error))
                continue
            if outcome == "unchanged":
                savepoint.rollback()  # no history entry for nothing
            else:
                savepoint.commit()
            found.append(RowPreview(line, text, findings, outcome, tuple(changed)))
        return tuple(found)

    def _row(
        self,
        tx: Transaction,
        principal: Principal,
        line: int,
        row: Mapping[str, Any],
        seen: dict[str, int],
        change_existing: bool,
    ) -> tuple[Outcome, list[Difference]]:
        """Write one row in ``tx``: what it did, and what changed."""
        text, status, metadata, found, successors = _fields(row)
        key = parse_urn(text).equivalence_key()
        if key in seen:
            raise UnacceptableError(f"line {seen[key]} has this URN already", field="urn")
        seen[key] = line
        current = tx.records.get(key)
        before = EMPTY if current is None else record_json(current)
        if status == "reserved":
            if current is None or current.status != "reserved" or found or metadata:
                raise ConflictError(
                    "a file does not reserve URNs, nor set a record back to reserved: "
                    "reserve new URNs by generating them",
                    field="status",
                )
            return "unchanged", []
        if current is None or current.status != "deactivated" or found or metadata:
            self.records.put_in(tx, principal, text, found, metadata)
        if status == "deactivated":
            note = row.get("note") or None
            self.records.deactivate_in(tx, principal, text, note, successors)
        after = tx.records.get(key)
        assert after is not None
        changed = differences(before, record_json(after))
        if current is not None and changed and not change_existing:
            raise ConflictError(
                f"{current.urn} is registered already, and this row would change it",
                field="urn",
            )
        return _outcome(current, after, changed), changed


def _outcome(current: Record | None, after: Record, changed: Sequence[Difference]) -> Outcome:
    """What writing a row did to the record ``current`` (None: there was none)."""
    if current is None:
        return "deactivated" if after.status == "deactivated" else "created"
    if not changed:
        return "unchanged"
    if after.status == "deactivated" and current.status != "deactivated":
        return "deactivated"
    return "replaced"


def _fields(row: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any], list[Any], list[str]]:
    """A row's URN, status, metadata, locations and successors, each checked as the API
    checks it; a refusal names the row's ``field`` (``locations``, not a location's ``url``)."""
    text = str(row.get("urn") or "")
    field = "urn"
    try:
        check_urn_length(text)
        parse_urn(text)
        field = "status"
        status = row.get("status") or "active"
        if status not in STATUSES:
            raise UnacceptableError(f"unknown status {status!r} (one of {', '.join(STATUSES)})")
        field = "metadata"
        metadata = row.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise UnacceptableError("'metadata' must be an object")
        check_json(metadata, ("metadata",))
        check_identifiers(metadata)
        field = "locations"
        found = row_locations(row, text)
        check_locations(found)
        field = "successors"
        successors = row.get("successors") or []
        if not isinstance(successors, list) or not all(isinstance(s, str) for s in successors):
            raise UnacceptableError("'successors' must be a list of URNs")
        for successor in successors:
            parse_urn(successor)
        field = "note"
        if not isinstance(row.get("note") or "", str):
            raise UnacceptableError("'note' must be text")
    except ResolverError as error:
        error.extensions["field"] = field
        raise
    return text, status, metadata, found, successors


def _in_row(error: ResolverError, line: int, text: str) -> None:
    """``error``, saying it concerns the row on ``line`` and (when the write told no field)
    the field its type concerns: the URN for a refusal of the principal, the status for a
    conflict with the record as stored."""
    if isinstance(error, ConflictError):
        error.extensions.setdefault("field", "status")
    elif isinstance(error, ForbiddenError):
        error.extensions.setdefault("field", "urn")
    elif error.detail.startswith("location"):
        error.extensions.setdefault("field", "locations")
    error.extensions.setdefault("field", None)
    error.extensions["row"] = line
    error.detail = f"line {line} ({text or 'no URN'}): {error.detail}"


def _read(
    data: bytes | str, kind: FileFormat
) -> list[tuple[int, Mapping[str, Any] | ResolverError]]:
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
    found: list[tuple[int, Mapping[str, Any] | ResolverError]] = []

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
