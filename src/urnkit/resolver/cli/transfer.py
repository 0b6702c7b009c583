"""``urnkit import`` and ``export``: URN records from and to CSV or NDJSON files."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

from urnkit.commandline import EXIT_OK, Commands, Help, Progress, count
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


def _json_cell(text: str, line: int, column: str, empty: Any) -> Any:
    if not text.strip():
        return empty
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"line {line}: column {column!r} is not JSON: {error.msg}") from None


def csv_rows(stream: TextIO) -> Iterator[dict[str, Any]]:
    """Rows of a CSV file: ``urn``, then optional ``status``, ``locations`` (a JSON array) or
    ``url`` (one location), ``metadata`` (a JSON object), ``successors`` (space-separated),
    ``note``."""
    reader = csv.DictReader(stream)
    if reader.fieldnames is None or "urn" not in reader.fieldnames:
        raise ValueError("line 1: a CSV import needs a header row with a 'urn' column")
    for row in reader:
        line = reader.line_num
        locations = _json_cell(row.get("locations") or "", line, "locations", [])
        if row.get("url"):
            locations = [*locations, {"url": row["url"]}]
        yield {
            "urn": row["urn"],
            "status": row.get("status") or None,
            "locations": locations,
            "metadata": _json_cell(row.get("metadata") or "", line, "metadata", {}),
            "successors": (row.get("successors") or "").split(),
            "note": row.get("note") or None,
        }


def ndjson_rows(stream: TextIO) -> Iterator[dict[str, Any]]:
    """Rows of an NDJSON file: one JSON object a line, as ``urnkit export`` writes them."""
    for line, text in enumerate(stream, 1):
        if not text.strip():
            continue
        row = _json_cell(text, line, "", None)
        if not isinstance(row, dict):
            raise ValueError(f"line {line}: not a JSON object")
        yield row


def _import(args: argparse.Namespace) -> int:
    services = services_for(args)
    kind = _format_of(args.file, args.format)
    with open(args.file, "rb") as raw, io.TextIOWrapper(raw, "utf-8", newline="") as stream:
        size = os.fstat(raw.fileno()).st_size
        progress = Progress(sys.stderr, size) if sys.stderr.isatty() else None
        rows = csv_rows(stream) if kind == "csv" else ndjson_rows(stream)
        done = {"records": 0, "position": 0}

        def report(imported: int, skipped: int) -> None:
            done["records"] = imported + skipped
            if progress is not None:
                position = raw.tell()
                progress.advance(position - done["position"], imported + skipped - progress.lines)
                done["position"] = position

        try:
            imported, skipped = services.transfer.import_records(
                rows, args.owner, args.batch_size, report
            )
        except BaseException:
            if progress is not None:
                progress.clear()
            print(
                f"urnkit: stopped after {done['records']:,} records in committed batches; "
                "fix the cause and rerun: what is stored is skipped",
                file=sys.stderr,
            )
            raise
        if progress is not None:
            progress.clear()
    print(f"{imported:,} imported, {skipped:,} already present (skipped)")
    return EXIT_OK


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
    export = add(commands, "export", _export, _EXPORT)
    export.add_argument("--format", choices=EXPORT_FORMATS, help="default: from -o, else ndjson")
    export.add_argument("--prefix", help="only records under this delegated prefix")
    export.add_argument("-o", "--output", default="-", help="file to write ('-': stdout)")
    database_flag(import_, export)
