"""A file of rows previewed as a registrant's upload and imported as ``urnkit import`` does, on
SQLite and PostgreSQL: the CPU time per row of each, and another organisation's writes while
the preview runs.

Usage::

    .venv/bin/python benchmarks/rows_bench.py [--rows N] [--databases sqlite,postgresql]
        [--write-every SECONDS] [--postgresql-url URL] [--json OUT]

Per database (a new SQLite file, or a PostgreSQL database made for the run and dropped after
it): two organisations, "Library" holding ``fi:bench`` and "Other" holding ``fi:other``; a CSV
of ``--rows`` rows under ``fi:bench``, one location and a title each, 2% of them bad (a prefix
no organisation holds, a URN repeated, bad URN syntax, a URL that is none, metadata nested
100,000 deep, bytes that are not UTF-8, a cell missing).

1. **Preview.** Library's token previews the file (``services.uploads.preview``) while a
   thread writes as Other, one ``PUT`` every ``--write-every`` seconds: the preview's seconds
   and CPU time per row (this process; on PostgreSQL, the benchmark's backends too), and each
   write's outcome and latency.
2. **Import.** The same file imported into the same database as ``urnkit import`` reads it
   (``csv_rows``, every refusal allowed): its seconds and CPU time per row (this process, the
   children preparing its batches and the benchmark's PostgreSQL backends).

Target (issue 36): the preview's CPU per row within twice the import's; every write succeeds.
The PostgreSQL server's CPU is that of the benchmark's own backends (``pg_stat_activity``'s
pids for its database; ``resolve_bench.postgresql_cpu``), not every ``postgres`` process.

No server runs: the preview, the writes and the import are the services' calls in this process
(the writes from a thread), so that each one's CPU can be told apart; docs/deploy.md's server
settings (workers, access log) do not apply.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from resolve_bench import (
    DEFAULT_POSTGRESQL_URL,
    BenchmarkError,
    _importer_cpu,
    fresh_database,
    postgresql_cpu,
)

BAD_EVERY = 50  # 2% of the rows
BAD_ROWS = (
    "urn:nbn:se:kb-{n},https://example.org/{n},{{}}",  # a prefix no organisation holds
    "urn:nbn:fi:bench-1,https://example.org/{n},{{}}",  # line 2's URN again
    "urn:nbn:fi:bench-%zz{n},https://example.org/{n},{{}}",  # bad URN syntax
    "urn:nbn:fi:bench-{n},not a url,{{}}",  # a URL that is none
    'urn:nbn:fi:bench-{n},https://example.org/{n},"' + "[" * 100_000 + "]" * 100_000 + '"',
    "urn:nbn:fi:bench-{n}\xff,https://example.org/{n},{{}}",  # not UTF-8 (latin-1 bytes)
    "urn:nbn:fi:bench-{n},https://example.org/{n}",  # a cell missing
)


@dataclass(frozen=True, slots=True)
class Figures:
    """What one database measured."""

    database: str
    rows: int
    preview_seconds: float
    preview_cpu_us: float
    preview_server_cpu_us: float | None
    import_seconds: float
    import_cpu_us: float
    import_server_cpu_us: float | None
    refused_in_preview: int
    refused_in_import: int
    writes: int
    writes_failed: int
    write_max_ms: float
    write_mean_ms: float

    @property
    def ratio(self) -> float:
        """The preview's CPU per row over the import's, the server's included."""
        preview = self.preview_cpu_us + (self.preview_server_cpu_us or 0.0)
        return preview / max(self.import_cpu_us + (self.import_server_cpu_us or 0.0), 1e-9)


def rows_file(count: int) -> bytes:
    """``count`` rows of CSV (a header first), every :data:`BAD_EVERY`-th a bad one."""
    lines = [b"urn,url,metadata"]
    for n in range(1, count + 1):
        if n % BAD_EVERY == 0:
            text = BAD_ROWS[(n // BAD_EVERY) % len(BAD_ROWS)].format(n=n)
            lines.append(text.encode("latin-1"))
        else:
            lines.append(
                f'urn:nbn:fi:bench-{n},https://example.org/{n},"{{""title"": ""T{n}""}}"'.encode()
            )
    return b"\n".join(lines) + b"\n"


class Writer(threading.Thread):
    """Another organisation's PUTs, one every ``every`` seconds until stopped: the outcome
    and latency of each."""

    def __init__(self, services: Any, principal: Any, every: float) -> None:
        super().__init__(name="rows-bench-writer", daemon=True)
        self.services, self.principal, self.every = services, principal, every
        self.stop = threading.Event()
        self.latencies: list[float] = []
        self.failures: list[str] = []

    def run(self) -> None:
        from urnkit.resolver.domain import Location

        n = 0
        while not self.stop.wait(0 if n == 0 else self.every):
            n += 1
            start = time.perf_counter()
            try:
                found = [Location(f"https://other.example/{n}")]
                self.services.records.put(self.principal, f"urn:nbn:fi:other-w{n}", found, {})
            except Exception as error:  # what the writer would have been answered
                self.failures.append(f"{type(error).__name__}: {error}")
            self.latencies.append(time.perf_counter() - start)


def measure(kind: str, url: str, count: int, every: float) -> Figures:
    """The preview and the import of :func:`rows_file` on the database at ``url``."""
    from urnkit.resolver.cli.transfer import Rejects
    from urnkit.resolver.services import Services
    from urnkit.resolver.services.rows import csv_rows
    from urnkit.resolver.store import Store

    store = Store(url)
    try:
        services = Services(store)
        store.upgrade()
        for name, prefix in (("Library", "fi:bench"), ("Other", "fi:other")):
            services.admin.create_organisation(name)
            services.admin.delegate(name, prefix)
        library = services.access.authenticate(services.admin.create_token("Library"))
        other = services.access.authenticate(services.admin.create_token("Other"))
        data = rows_file(count)

        writer = Writer(Services(Store(url)), other, every)
        writer.start()
        cpu, server = time.process_time(), postgresql_cpu(url)
        start = time.perf_counter()
        preview = services.uploads.preview(library, data, "csv")
        preview_seconds = time.perf_counter() - start
        preview_cpu = (time.process_time() - cpu) * 1e6 / count
        after = postgresql_cpu(url)
        preview_server = None if server is None or after is None else (after - server) * 1e6
        writer.stop.set()
        writer.join()

        rejects = Rejects(count, None)
        cpu, server = _importer_cpu(), postgresql_cpu(url)
        start = time.perf_counter()
        services.transfer.import_records(
            csv_rows(io.BytesIO(data), rejects), None, 5_000, None, rejects
        )
        import_seconds = time.perf_counter() - start
        import_cpu = (_importer_cpu() - cpu) * 1e6 / count
        after = postgresql_cpu(url)
        import_server = None if server is None or after is None else (after - server) * 1e6
    finally:
        store.close()
    latencies = writer.latencies or [0.0]
    return Figures(
        database=kind,
        rows=count,
        preview_seconds=preview_seconds,
        preview_cpu_us=preview_cpu,
        preview_server_cpu_us=None if preview_server is None else preview_server / count,
        import_seconds=import_seconds,
        import_cpu_us=import_cpu,
        import_server_cpu_us=None if import_server is None else import_server / count,
        refused_in_preview=sum(row.outcome == "refused" for row in preview.rows),
        refused_in_import=rejects.count,
        writes=len(writer.latencies),
        writes_failed=len(writer.failures),
        write_max_ms=max(latencies) * 1e3,
        write_mean_ms=sum(latencies) / len(latencies) * 1e3,
    )


def report(figures: Figures) -> str:
    """One database's figures as lines of text."""
    server = (
        ""
        if figures.preview_server_cpu_us is None or figures.import_server_cpu_us is None
        else f" (server {figures.preview_server_cpu_us:,.0f} / {figures.import_server_cpu_us:,.0f})"
    )
    return (
        f"{figures.database}: {figures.rows:,} rows\n"
        f"  preview {figures.preview_seconds:,.2f} s, import {figures.import_seconds:,.2f} s\n"
        f"  CPU per row, preview / import: {figures.preview_cpu_us:,.0f} / "
        f"{figures.import_cpu_us:,.0f} us{server}; ratio {figures.ratio:.2f} (target <= 2)\n"
        f"  refused: preview {figures.refused_in_preview:,}, import {figures.refused_in_import:,}\n"
        f"  writes during the preview: {figures.writes}, failed {figures.writes_failed}, "
        f"latency mean {figures.write_mean_ms:,.1f} ms, max {figures.write_max_ms:,.1f} ms"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--write-every", type=float, default=1.0, metavar="SECONDS")
    parser.add_argument("--postgresql-url", default=DEFAULT_POSTGRESQL_URL)
    parser.add_argument("--json", type=Path, help="write the figures there as JSON")
    args = parser.parse_args(argv)
    found = []
    try:
        for kind in args.databases.split(","):
            with (
                tempfile.TemporaryDirectory() as directory,
                fresh_database(kind, Path(directory), args.postgresql_url) as url,
            ):
                figures = measure(kind, url, args.rows, args.write_every)
            print(report(figures), flush=True)
            found.append(figures)
    except BenchmarkError as error:
        print(f"rows_bench: {error}", file=sys.stderr)
        return 2
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(f) for f in found], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
