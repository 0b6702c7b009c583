"""Ten million URNs: import time, database size, resolution rate and p99 with the production
settings, and title searches through HTTP, on SQLite and PostgreSQL.

Usage::

    .venv/bin/python benchmarks/scale_bench.py [--urns N] [--databases sqlite,postgresql]
        [--seconds S] [--connections C] [--workers W] [--batch-size B] [--postgresql-url URL]
        [--json OUT]

    .venv/bin/python benchmarks/scale_bench.py --urns 10000000    # the issue's measurement

Needs the ``server`` extra and ``wrk``; about 1 GB a million URNs on disk per database, and the
NDJSON (150 MB a million) where ``TMPDIR`` says. Per database, as
``benchmarks/resolve_bench.py`` does: ``urnkit import`` of ``--urns`` records (each with one
location and a title, ``Benchmark record N``), then ``urnkit serve --workers W`` loaded by wrk
for ``--seconds`` with URNs drawn uniformly from all (a bounded run: wrk's ``--duration``; the
server's CPU and wrk's own per request beside the rate), then
title searches through HTTP (``GET /api/v1/search?title=…&limit=20`` on the same server, the
three alternating, 51 rounds; the median and the 99th percentile): a rare title (one record),
a title nobody has, and a word every title has (a first page of 20). The target: each median
at most 20 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Sequence
from contextlib import closing
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from resolve_bench import (
    DEFAULT_POSTGRESQL_URL,
    BenchmarkError,
    LoadSettings,
    _us,
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

TARGET_SEARCH_MS: Final = 20.0  # p50 through HTTP (issue 33, point 3)
SEARCH_ROUNDS: Final = 51


def searches(urns: int) -> dict[str, str]:
    """The titles searched for: a rare one (one record, far from the first), a word every
    title has (a first page of 20), and a title nobody has."""
    return {
        "rare": f"Benchmark record {urns - urns // 3}",
        "common": "Benchmark",
        "missing": "Nobody has this title",
    }


def timed_searches(
    port: int, urns: int, rounds: int = SEARCH_ROUNDS
) -> dict[str, dict[str, float]]:
    """Milliseconds of ``GET /api/v1/search?title=…&limit=20`` through HTTP, one of each
    search a round (they alternate), ``rounds`` rounds: each search's median and 99th
    percentile."""
    titles = searches(urns)
    times: dict[str, list[float]] = {name: [] for name in titles}
    with closing(http.client.HTTPConnection("127.0.0.1", port, timeout=60)) as connection:
        for _ in range(rounds):
            for name, title in titles.items():
                path = "/api/v1/search?" + urllib.parse.urlencode({"title": title, "limit": 20})
                start = time.perf_counter()
                connection.request("GET", path)
                response = connection.getresponse()
                body = json.loads(response.read())
                times[name].append((time.perf_counter() - start) * 1000)
                if response.status != 200:
                    raise BenchmarkError(f"{path} answered {response.status}")
                found = [item["urn"] for item in body["records"]]
                if name == "rare" and found != [f"urn:nbn:fi:bench-{urns - urns // 3}"]:
                    raise BenchmarkError(f"the rare title found {found}")
    return {
        name: {
            "p50_ms": statistics.median(found),
            "p99_ms": statistics.quantiles(found, n=100, method="inclusive")[98],
        }
        for name, found in times.items()
    }


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
            print(f"{kind}: title searches through HTTP", file=sys.stderr, flush=True)
            titled = timed_searches(port, args.urns)
    return {
        "import": asdict(imported) | {"rate": imported.rate},
        "bytes": sizes["total"],
        "bytes_per_urn": sizes["total"] / args.urns,
        "resolution": asdict(resolution) | {"rate": resolution.rate},
        "title_search_ms": titled,
    }


def format_report(result: dict[str, Any]) -> str:
    lines = [
        "| database | import | rows/s | CPU µs/row | size | bytes/URN | resolutions/s | "
        "server CPU µs/req | wrk CPU µs/req | p99 ms | not 3xx | rare title ms p50 (p99) | "
        "missing | common |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
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
            f"{resolution['rate']:,.0f} | {_us(resolution['server_cpu_us'])} | "
            f"{_us(resolution['wrk_cpu_us'])} | {resolution['p99_ms']:.2f} | "
            f"{resolution['not_3xx'] + resolution['socket_errors']} | "
            + " | ".join(
                f"{search[name]['p50_ms']:.1f} ({search[name]['p99_ms']:.0f})"
                for name in ("rare", "missing", "common")
            )
            + " |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urns", type=int, default=10_000_000)
    parser.add_argument("--databases", default="postgresql,sqlite")
    add_wrk_arguments(parser, 20, connections=64)
    # The production settings of docs/deploy.md: as many workers as CPUs, the access log on.
    parser.add_argument("--workers", default="auto")
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument(
        "--postgresql-url",
        default=DEFAULT_POSTGRESQL_URL,
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
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
    medians = [
        search["p50_ms"]
        for found in result["databases"].values()
        for search in found["title_search_ms"].values()
    ]
    return 0 if all(ms <= TARGET_SEARCH_MS for ms in medians) else 1


if __name__ == "__main__":
    sys.exit(main())
