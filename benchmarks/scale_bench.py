"""Ten million URNs: import time, database size, resolution rate and p99 at two workers, and a
title search served by its index, on SQLite and PostgreSQL.

Usage::

    .venv/bin/python benchmarks/scale_bench.py [--urns N] [--databases sqlite,postgresql]
        [--seconds S] [--connections C] [--workers W] [--batch-size B] [--postgresql-url URL]
        [--json OUT]

    .venv/bin/python benchmarks/scale_bench.py --urns 10000000    # the issue's measurement

Needs the ``server`` extra and ``wrk``; about 1 GB a million URNs on disk per database, and the
NDJSON (150 MB a million) where ``TMPDIR`` says. Per database, as
``benchmarks/resolve_bench.py`` does: ``urnkit import`` of ``--urns`` records (each with one
location and a title, ``Benchmark record N``), then ``urnkit serve --workers W`` loaded by wrk
for ``--seconds`` with URNs drawn uniformly from all (a bounded run: wrk's ``--duration``), then
title searches through the service, each timed five times (the median): a rare title (one
record), a title nobody has, and a word every title has (a first page of 20).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from resolve_bench import (
    BenchmarkError,
    LoadSettings,
    add_wrk_arguments,
    find_wrk,
    fresh_database,
    import_records,
    load,
    prepare,
    serving,
    write_records,
)
from storage_bench import postgresql_sizes, sqlite_sizes

TARGET_SEARCH_MS: Final = 50.0


def timed_searches(url: str, urns: int) -> dict[str, float]:
    """Milliseconds of the title searches (median of five), through the service."""
    from urnkit.resolver.services import Services
    from urnkit.resolver.store import Store

    store = Store(url)
    services = Services(store)
    rare = f"Benchmark record {urns - urns // 3}"  # one record, far from the first
    searches = {"rare": rare, "missing": "Nobody has this title", "common": "Benchmark"}
    found: dict[str, float] = {}
    try:
        for name, title in searches.items():
            times = []
            for _ in range(5):
                start = time.perf_counter()
                page, _ = services.overview.search("title", title)
                times.append((time.perf_counter() - start) * 1000)
            if name == "rare" and [r.urn for r in page] != [f"urn:nbn:fi:bench-{urns - urns // 3}"]:
                raise BenchmarkError(f"the rare title found {[r.urn for r in page]}")
            found[name] = statistics.median(times)
    finally:
        store.close()
    return found


def measure(kind: str, args: argparse.Namespace, records: Path, directory: Path) -> dict[str, Any]:
    """Import, measure the size, load the server, time the searches: one database."""
    with fresh_database(kind, directory, args.postgresql_url) as url:
        prepare(url)
        print(f"{kind}: importing {args.urns:,} records", file=sys.stderr, flush=True)
        imported = import_records(kind, url, records, args.batch_size)
        if kind == "sqlite":
            sizes = sqlite_sizes(Path(url.removeprefix("sqlite:///")))
        else:
            sizes = postgresql_sizes(url)
        settings = LoadSettings(
            args.wrk, args.seconds, args.connections, args.threads, args.urns, directory
        )
        log = directory / f"{kind}-serve.log"
        with serving(url, "uvicorn", args.workers, log) as (port, group):
            print(f"{kind}: wrk for {args.seconds} s", file=sys.stderr, flush=True)
            load(port, group, "uniform", min(args.seconds, 5), settings)  # warm-up
            resolution = load(port, group, "uniform", args.seconds, settings)
        searches = timed_searches(url, args.urns)
    return {
        "import": asdict(imported) | {"rate": imported.rate},
        "bytes": sizes["total"],
        "bytes_per_urn": sizes["total"] / args.urns,
        "resolution": asdict(resolution) | {"rate": resolution.rate},
        "title_search_ms": searches,
    }


def format_report(result: dict[str, Any]) -> str:
    lines = [
        "| database | import | rows/s | CPU µs/row | size | bytes/URN | resolutions/s | "
        "p99 ms | not 3xx | rare title ms | missing ms | common ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, found in result["databases"].items():
        imported, resolution, search = (
            found["import"],
            found["resolution"],
            found["title_search_ms"],
        )
        cpu = f"{imported['importer_cpu_us']:.0f}"
        if imported["postgresql_cpu_us"] is not None:
            cpu += f" + {imported['postgresql_cpu_us']:.0f}"
        lines.append(
            f"| {kind} | {imported['seconds'] / 60:.1f} min | {imported['rate']:,.0f} | {cpu} | "
            f"{found['bytes'] / 1e9:.2f} GB | {found['bytes_per_urn']:.0f} | "
            f"{resolution['rate']:,.0f} | {resolution['p99_ms']:.2f} | "
            f"{resolution['not_3xx'] + resolution['socket_errors']} | {search['rare']:.1f} | "
            f"{search['missing']:.1f} | {search['common']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urns", type=int, default=10_000_000)
    parser.add_argument("--databases", default="postgresql,sqlite")
    add_wrk_arguments(parser, 20, connections=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument(
        "--postgresql-url",
        default=os.environ.get(
            "URNKIT_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
        ),
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("URNKIT_ACCESS_LOG", "0")
    result: dict[str, Any] = {"urns": args.urns, "databases": {}}
    try:
        args.wrk = find_wrk()
        with tempfile.TemporaryDirectory(prefix="urnkit-scale-") as temporary:
            directory = Path(temporary)
            records = directory / "records.ndjson"
            write_records(records, args.urns)
            for kind in args.databases.split(","):
                result["databases"][kind] = measure(kind, args, records, directory)
                if args.json is not None:  # what is measured so far, should a later one fail
                    args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    except BenchmarkError as error:
        print(f"scale_bench: {error}", file=sys.stderr)
        return 2
    print(format_report(result))
    rare = [found["title_search_ms"]["rare"] for found in result["databases"].values()]
    return 0 if all(ms < TARGET_SEARCH_MS for ms in rare) else 1


if __name__ == "__main__":
    sys.exit(main())
