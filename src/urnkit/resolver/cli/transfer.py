"""``urnkit import`` and ``export``: URN records from and to CSV or NDJSON files."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from array import array
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, nullcontext
from time import monotonic
from typing import IO, Any, BinaryIO

from urnkit.commandline import (
    EXIT_OK,
    EXIT_USAGE,
    PROGRESS_INTERVAL,
    Commands,
    Help,
    count,
    fail,
)
from urnkit.resolver.cli.common import REFUSED, add, database_flag, output, services_for

EXPORT_FORMATS = ("ndjson", "csv")
CSV_COLUMNS = ("urn", "status", "locations", "metadata", "successors", "note", "created", "updated")


_IMPORT = Help(
    "Import URN records from CSV or NDJSON, in transactional batches.",
    "NDJSON: one object a line, {urn, status?, locations, metadata, successors?}, as\n"
    "'urnkit export' writes. CSV: a header row with 'urn' and any of 'status',\n"
    "'locations' (JSON array) or 'url', 'metadata' (JSON object), 'successors'.\n"
    "Each batch commits whole or not at all; URNs already stored are skipped, so\n"
    "rerunning after a failure or a kill completes the import without duplicates.",
    REFUSED,
)

_EXPORT = Help(
    "Export URN records as NDJSON or CSV, in registration order.",
    "Writes what 'urnkit import' reads back.",
    REFUSED,
)


def _format_of(name: str, chosen: str | None) -> str:
    if chosen:
        return chosen
    lowered = name.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".ndjson", ".jsonl")):
        return "ndjson"
    raise ValueError(f"cannot tell the format of {name!r} from its name: give --format")


Reject = Callable[[int, Any, str], None]
"""Told of a row that cannot be imported: its line, the row (or the line's text), the reason."""


def _json_cell(text: str, where: str, empty: Any) -> Any:
    """``text`` read as JSON (``empty`` if blank); :class:`ValueError` naming ``where`` and the
    column of the error in ``text``."""
    if not text.strip():
        return empty
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where} is not JSON: {error.msg} at character {error.pos + 1}") from None


def _decoded(raw: bytes, line: int) -> str:
    """The line ``raw`` as UTF-8 text; :class:`ValueError` naming the line and byte if it is not.

    >>> _decoded(b"caf\\xc3\\xa9", 1)
    'café'
    >>> _decoded(b"ok \\xff", 7)
    Traceback (most recent call last):
    ...
    ValueError: line 7: not UTF-8 at byte 4 (invalid start byte)
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"line {line}: not UTF-8 at byte {error.start + 1} ({error.reason})"
        ) from None


def csv_rows(stream: BinaryIO, reject: Reject) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV file with their line numbers: ``urn``, then optional ``status``,
    ``locations`` (a JSON array) or ``url`` (one location), ``metadata`` (a JSON object),
    ``successors`` (space-separated), ``note``. A row whose cell is not JSON goes to ``reject``;
    a line that is not UTF-8 stops the file (:class:`ValueError`)."""
    reader = csv.DictReader(_decoded(raw, line) for line, raw in enumerate(stream, 1))
    if reader.fieldnames is None or "urn" not in reader.fieldnames:
        raise ValueError("line 1: a CSV import needs a header row with a 'urn' column")
    for row in reader:
        line = reader.line_num
        try:
            cell = "locations"
            locations = _json_cell(row.get(cell) or "", f"line {line}, column {cell!r}", [])
            if row.get("url"):
                locations = (
                    [*locations, {"url": row["url"]}] if isinstance(locations, list) else locations
                )
            cell = "metadata"
            metadata = _json_cell(row.get(cell) or "", f"line {line}, column {cell!r}", {})
        except ValueError as error:
            reject(line, row, str(error))
            continue
        yield (
            line,
            {
                "urn": row["urn"],
                "status": row.get("status") or None,
                "locations": locations,
                "metadata": metadata,
                "successors": (row.get("successors") or "").split(),
                "note": row.get("note") or None,
            },
        )


def ndjson_rows(stream: BinaryIO, reject: Reject) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of an NDJSON file with their line numbers: one JSON object a line, as ``urnkit
    export`` writes them; a line that is not UTF-8, not JSON or not an object goes to
    ``reject``."""
    for line, raw in enumerate(stream, 1):
        try:
            text = _decoded(raw, line)
            if not text.strip():
                continue
            row = _json_cell(text, f"line {line}", None)
            if not isinstance(row, dict):
                raise ValueError(f"line {line} is not a JSON object")
        except ValueError as error:
            reject(line, raw.decode("utf-8", "backslashreplace").rstrip("\r\n"), str(error))
            continue
        yield line, row


class TooManyRejectsError(Exception):
    """More rows were refused than ``--max-errors`` allows."""


class Rejects:
    """The rows an import refuses: counted, written to ``--rejects`` as NDJSON lines
    (``{"line", "reason", "row"}``), and the import stopped when more than ``allowed`` are."""

    def __init__(self, allowed: int, out: IO[str] | None) -> None:
        self.allowed, self.out, self.count = allowed, out, 0
        self.lines: array[int] = array("q")  # the file line of each row handed on, in order

    def __call__(self, line: int, row: Any, reason: str) -> None:
        self.count += 1
        if self.out is not None:
            entry = {"line": line, "reason": reason, "row": row}
            self.out.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
        if self.count > self.allowed:
            where = "" if reason.startswith("line ") else f"line {line}: "
            raise TooManyRejectsError(where + reason)

    def numbered(self, rows: Iterator[tuple[int, dict[str, Any]]]) -> Iterator[dict[str, Any]]:
        """The rows without their lines, which are kept to name a row the service refuses."""
        for line, row in rows:
            self.lines.append(line)
            yield row

    def refused(self, number: int, row: Mapping[str, Any], reason: str) -> None:
        """A row the service refused: ``number`` counts the rows handed on, from 1."""
        self(self.lines[number - 1], dict(row), reason)


class RowProgress:
    """Rows stored, skipped and refused so far: redrawn on a terminal, else a line every
    ``every`` seconds."""

    def __init__(self, stream: IO[str], every: float) -> None:
        self.stream, self.every = stream, every
        self.terminal = stream.isatty()
        self.start = self.shown = monotonic()

    def text(self, stored: int, rejected: int) -> str:
        """The report: rows done, refused, and the rate."""
        rate = stored / max(monotonic() - self.start, 1e-9)
        return f"{stored:,} rows stored or present, {rejected:,} refused, {rate:,.0f} rows/s"

    def update(self, stored: int, rejected: int) -> None:
        """Show the counts if it is time."""
        now = monotonic()
        if now - self.shown >= (PROGRESS_INTERVAL if self.terminal else self.every):
            self.shown = now
            end = "\r" if self.terminal else "\n"
            print(f"urnkit: {self.text(stored, rejected)}", end=end, file=self.stream, flush=True)


def _import(args: argparse.Namespace) -> int:
    services = services_for(args)
    kind = _format_of(args.file, args.format)
    with open(args.file, "rb") as raw, _rejects_file(args.rejects) as out:
        rejects = Rejects(args.max_errors, out)
        read = csv_rows if kind == "csv" else ndjson_rows
        rows = rejects.numbered(read(raw, rejects))
        progress = RowProgress(sys.stderr, args.progress_every)
        done = [0]

        def report(imported: int, skipped: int) -> None:
            done[0] = imported + skipped
            progress.update(done[0], rejects.count)

        try:
            imported, skipped = services.transfer.import_records(
                rows, args.owner, args.batch_size, report, rejects.refused
            )
        except TooManyRejectsError as error:
            return fail(
                f"stopped: {error} ({done[0]:,} rows stored or present in committed batches; "
                "rerun skips them)",
                EXIT_USAGE,
            )
    refused = f", {rejects.count:,} refused" if rejects.count else ""
    print(f"{imported:,} imported, {skipped:,} already present (skipped){refused}")
    return EXIT_OK


def _rejects_file(name: str | None) -> AbstractContextManager[IO[str] | None]:
    """The file ``--rejects`` names, to write; nothing without one."""
    return nullcontext() if name is None else output(name)


def _export(args: argparse.Namespace) -> int:
    from urnkit.resolver.services.shapes import record_json

    services = services_for(args)
    kind = args.format or (_format_of(args.output, None) if args.output != "-" else "ndjson")
    with output(args.output) as out:
        writer = csv.writer(out) if kind == "csv" else None
        if writer is not None:
            writer.writerow(CSV_COLUMNS)
        for record in services.transfer.export_records(args.prefix):
            row = record_json(record)
            if writer is None:
                out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            else:
                writer.writerow(_csv_cells(row))
    return EXIT_OK


def _csv_cells(row: Mapping[str, Any]) -> list[str]:
    """A record's CSV cells: JSON for locations and metadata, successors space-separated."""
    compact = {"ensure_ascii": False, "separators": (",", ":")}
    return [
        row["urn"],
        row["status"],
        json.dumps(row["locations"], **compact),  # type: ignore[arg-type]
        json.dumps(row["metadata"], **compact),  # type: ignore[arg-type]
        " ".join(row["successors"]),
        row["note"] or "",
        row["created"],
        row["updated"],
    ]


def add_commands(commands: Commands) -> None:
    """Add ``import`` and ``export``."""
    import_ = add(commands, "import", _import, _IMPORT)
    import_.add_argument("file", metavar="FILE")
    import_.add_argument("--format", choices=EXPORT_FORMATS, help="default: from FILE's suffix")
    import_.add_argument(
        "--owner", help="organisation owning every record (default: its prefix's holder)"
    )
    import_.add_argument("--batch-size", type=count, default=5_000, help="records per transaction")
    import_.add_argument(
        "--max-errors",
        type=int,
        default=0,
        metavar="N",
        help="rows that may be refused before the import stops (default 0: the first stops it)",
    )
    import_.add_argument(
        "--rejects",
        metavar="FILE",
        help='write each refused row there as NDJSON: {"line", "reason", "row"}',
    )
    import_.add_argument(
        "--progress-every",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="when stderr is no terminal, a progress line this often (default 10)",
    )
    export = add(commands, "export", _export, _EXPORT)
    export.add_argument("--format", choices=EXPORT_FORMATS, help="default: from -o, else ndjson")
    export.add_argument("--prefix", help="only records under this delegated prefix")
    export.add_argument("-o", "--output", default="-", help="file to write ('-': stdout)")
    database_flag(import_, export)
