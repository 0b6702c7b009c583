"""``urnkit import`` and ``export``: URN records from and to CSV or NDJSON files."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import AbstractContextManager, nullcontext
from time import monotonic
from typing import IO, Any

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
from urnkit.resolver.services.rows import csv_rows, format_of, ndjson_rows

# services.transfer.EXPORT_FORMATS, which export_lines writes; named here too, so that the
# command line parses its arguments without importing the services.
EXPORT_FORMATS = ("ndjson", "csv")


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


class TooManyRejectsError(Exception):
    """More rows were refused than ``--max-errors`` allows."""


class Rejects:
    """The rows an import refuses: counted, written to ``--rejects`` as NDJSON lines
    (``{"line", "reason", "row"}``), and the import stopped when more than ``allowed`` are."""

    def __init__(self, allowed: int, out: IO[str] | None) -> None:
        self.allowed, self.out, self.count = allowed, out, 0

    def __call__(self, line: int, row: Any, reason: str) -> None:
        self.count += 1
        if self.out is not None:
            entry = {"line": line, "reason": reason, "row": row}
            self.out.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
        if self.count > self.allowed:
            where = "" if reason.startswith("line ") else f"line {line}: "
            raise TooManyRejectsError(where + reason)


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
    kind = format_of(args.file, args.format)
    with open(args.file, "rb") as raw, _rejects_file(args.rejects) as out:
        rejects = Rejects(args.max_errors, out)
        read = csv_rows if kind == "csv" else ndjson_rows
        rows = read(raw, rejects)
        progress = RowProgress(sys.stderr, args.progress_every)
        done = [0]

        def report(imported: int, skipped: int) -> None:
            done[0] = imported + skipped
            progress.update(done[0], rejects.count)

        try:
            imported, skipped = services.transfer.import_records(
                rows, args.owner, args.batch_size, report, rejects
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
    from urnkit.resolver.services.transfer import export_lines

    services = services_for(args)
    kind = args.format or (format_of(args.output, None) if args.output != "-" else "ndjson")
    with output(args.output) as out:
        out.writelines(export_lines(services.transfer.export_records(args.prefix), kind))
    return EXIT_OK


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
