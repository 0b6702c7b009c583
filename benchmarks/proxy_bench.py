"""Resolution through the documented nginx site (its cache in front of two urnkit servers) against
the limit of an HTTP redirect here: nginx answering the same mapping from a ``map``.

Usage::

    .venv/bin/python benchmarks/proxy_bench.py [--urns N] [--hot K] [--seconds S]
        [--rounds R] [--connections C] [--threads T] [--nginx-workers W] [--workers W]
        [--cache-seconds S]
        [--database sqlite|postgresql] [--postgresql-url URL] [--json OUT]

    .venv/bin/python benchmarks/proxy_bench.py --urns 1000000    # the issue's measurement
    .venv/bin/python benchmarks/proxy_bench.py --cache-seconds 10   # past several expiries

Needs the ``server`` extra, ``wrk`` and Debian's ``nginx`` (``apt-get install wrk nginx``). What
it does:

1. Imports ``--urns`` records (``urn:nbn:fi:bench-1`` … each with one location) into a new
   database, as ``benchmarks/resolve_bench.py`` does.
2. Starts two ``urnkit serve`` processes with the production settings of docs/deploy.md
   (``--workers auto``, the access log on; trusting 127.0.0.1's forwarding headers; redirects
   kept ``--cache-seconds``, ``cache_redirect``, 300 by default as in production: give a few
   seconds so that a run of minutes passes several expiries of the hot set) and, with
   ``--nginx-workers`` worker processes each, two nginx servers: **cache**, the site of
   ``docs/deploy/nginx-urnkit.conf`` in front of them, and **limit**, a ``map`` of every URN's
   path to its location, answered with ``return 302`` (no upstream, no cache: the most an
   HTTP redirect costs nginx here).
3. Loads each with wrk for ``--seconds``, in the same run, on the same requests: **hot**, URNs
   drawn from a set of ``--hot`` (after one pass that fills the cache), and **uniform**, URNs
   drawn from all, ``--rounds`` times (limit, then cache, for each mode). The cache's rate on
   the hot set is the ratio's numerator; the target is 70% of the limit's, the median of the
   rounds' ratios. The CPU time per request is nginx's (and, behind the cache, urnkit's too);
   wrk's own, on the same CPUs, is reported beside it.
   A round's uniform misses stay cached for the next: the uniform ratio is the first round's.
4. Counts, from the cache's access log (``$upstream_cache_status``), how the hot set's
   requests were answered over the whole run: the hit ratio is those served from the cache
   (HIT, and STALE or UPDATING while one request fetches the expired answer again) over all;
   the target is 99.9%. It says how many expiries the run spanned; under two, the ratio says
   nothing of expiry.

Prints a table and the target, PASS or FAIL; ``--json OUT`` also writes every number. Exit
status: 0 when the target passes, 1 when it fails, 2 when the benchmark cannot run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from nginx_site import NginxError, free_port, running_nginx, urnkit_site
from resolve_bench import (
    DEFAULT_POSTGRESQL_URL,
    PREFIX,
    BenchmarkError,
    Import,
    Load,
    LoadSettings,
    add_wrk_arguments,
    fresh_database,
    import_records,
    load,
    prepare,
    serving,
    write_records,
)

TARGET_RATIO: Final = 0.70  # the cache's hot-set rate against the map's (the issue)
TARGET_HITS: Final = 0.999  # of the hot set's requests answered from the cache (issue 33)
FROM_CACHE: Final = frozenset({"HIT", "STALE", "UPDATING"})


def cache_statuses(log: Path, offset: int) -> tuple[dict[str, int], int]:
    """How many of the requests logged in ``log`` after byte ``offset`` had each cache
    status; and the log's end, the next offset."""
    counts: dict[str, int] = {}
    with log.open("rb") as lines:
        lines.seek(offset)
        for line in lines:
            status = line.strip().decode("ascii") or "-"
            counts[status] = counts.get(status, 0) + 1
        return counts, lines.tell()


def map_site(directory: Path, urns: int, port: int) -> str:
    """An nginx ``http`` block answering ``GET /urn:nbn:fi:bench-N`` with a 302 to its location
    from a ``map`` of all ``urns``, on 127.0.0.1:``port``."""
    entries = directory / "map.conf"
    with entries.open("w", encoding="ascii") as out:
        for n in range(1, urns + 1):
            out.write(f"/urn:nbn:{PREFIX}-{n} https://example.org/bench/{n};\n")
    size = 1 << max(urns, 1).bit_length()
    return (
        f"map_hash_max_size {size * 2};\nmap_hash_bucket_size 128;\n"
        f'map $uri $target {{\n    default "";\n    include {entries};\n}}\n'
        f"server {{\n    listen 127.0.0.1:{port};\n    location / {{\n"
        '        if ($target = "") { return 404; }\n        return 302 $target;\n    }\n}\n'
    )


def _ratios(loads: dict[str, list[Load]], mode: str) -> list[float]:
    """The cache's rate over the limit's in ``mode``, round by round."""
    return [
        cache.rate / limit.rate
        for limit, cache in zip(loads[f"limit_{mode}"], loads[f"cache_{mode}"], strict=True)
    ]


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Import, start the servers and both nginx, load each; the numbers."""
    loads: dict[str, list[Load]] = {}
    load_average = os.getloadavg()
    os.environ["URNKIT_TRUSTED_PROXIES"] = "127.0.0.1"  # the servers' (they inherit it)
    os.environ["URNKIT_CACHE_REDIRECT"] = str(args.cache_seconds)
    hot_statuses: dict[str, int] = {}
    hot_span = [0.0, 0.0]  # when the first and the last hot load behind the cache ran
    with tempfile.TemporaryDirectory(prefix="urnkit-proxy-") as temporary, ExitStack() as stack:
        directory = Path(temporary)
        records = directory / "records.ndjson"
        write_records(records, args.urns)
        url = stack.enter_context(fresh_database(args.database, directory, args.postgresql_url))
        prepare(url)
        _say(f"importing {args.urns:,} records into {args.database}")
        imported = import_records(args.database, url, records, 10_000)
        upstreams = [
            stack.enter_context(
                serving(url, "uvicorn", args.workers, directory / f"urnkit-{n}.log")
            )
            for n in (1, 2)
        ]
        cache_dir, limit_dir = directory / "cache-nginx", directory / "limit-nginx"
        cache_dir.mkdir()
        limit_dir.mkdir()
        cache_port, limit_port = free_port(), free_port()
        site = urnkit_site(cache_dir, [port for port, _ in upstreams], cache_port, free_port())
        access_log = cache_dir / "access.log"
        cache = stack.enter_context(running_nginx(cache_dir, site, args.nginx_workers, access_log))
        _say(f"building nginx's map of {args.urns:,} URNs")
        limit_site = map_site(limit_dir, args.urns, limit_port)
        limit = stack.enter_context(running_nginx(limit_dir, limit_site, args.nginx_workers))
        settings = LoadSettings(
            args.wrk, args.seconds, args.connections, args.threads, args.urns, directory, args.hot
        )
        behind = [cache, *(group for _, group in upstreams)]
        _say("filling the cache with the hot set")
        load(cache_port, behind, "hot", max(args.seconds // 2, 2), settings)
        _, offset = cache_statuses(access_log, 0)
        for round_ in range(1, args.rounds + 1):
            for mode in ("hot", "uniform"):
                _say(f"round {round_}, {mode}: wrk for 2 x {args.seconds} s")
                for name, port, group in (
                    ("limit", limit_port, limit),
                    ("cache", cache_port, behind),
                ):
                    started = time.monotonic()
                    found = load(port, group, mode, args.seconds, settings)
                    loads.setdefault(f"{name}_{mode}", []).append(found)
                    if name == "cache":
                        counts, offset = cache_statuses(access_log, offset)
                    if name == "cache" and mode == "hot":
                        for status, number in counts.items():
                            hot_statuses[status] = hot_statuses.get(status, 0) + number
                        hot_span[:] = [hot_span[0] or started, time.monotonic()]
    return _result(args, imported, loads, hot_statuses, hot_span, load_average)


def _result(
    args: argparse.Namespace,
    imported: Import,
    loads: dict[str, list[Load]],
    hot_statuses: dict[str, int],
    hot_span: list[float],
    load_average: tuple[float, float, float],
) -> dict[str, Any]:
    """The numbers of a run, the ratios and the targets."""
    ratios = {mode: _ratios(loads, mode) for mode in ("hot", "uniform")}
    ratio = statistics.median(ratios["hot"])
    served = sum(number for status, number in hot_statuses.items() if status in FROM_CACHE)
    hits = served / max(sum(hot_statuses.values()), 1)
    return {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_before": load_average,
            "load_average_after": os.getloadavg(),
        },
        "settings": {name: str(value) for name, value in vars(args).items()},
        "import": asdict(imported) | {"rate": imported.rate},
        "loads": {
            name: [asdict(found) | {"rate": found.rate} for found in rounds]
            for name, rounds in loads.items()
        },
        "ratios_hot": ratios["hot"],
        "ratios_uniform": ratios["uniform"],
        "ratio_hot": ratio,
        "ratio_uniform": ratios["uniform"][0],  # the cold round: later ones find its misses
        "target": {
            "required": TARGET_RATIO,
            "measured": ratio,
            "status": "PASS" if ratio >= TARGET_RATIO else "FAIL",
        },
        "hot_cache_statuses": hot_statuses,
        "hot_expiries": (hot_span[1] - hot_span[0]) / args.cache_seconds,
        "hit_target": {
            "required": TARGET_HITS,
            "measured": hits,
            "status": "PASS" if hits >= TARGET_HITS else "FAIL",
        },
    }


def format_report(result: dict[str, Any]) -> str:
    """The numbers as a Markdown table, and the target."""
    lines = [
        "| server | round | requests | req/s | CPU µs/request | wrk's CPU µs/request | p50 ms | "
        "p99 ms | not 3xx |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, rounds in result["loads"].items():
        for number, found in enumerate(rounds, 1):
            cpu = found["server_cpu_us"]
            lines.append(
                f"| {name.replace('_', ', ')} | {number} | {found['requests']:,} | "
                f"{found['rate']:,.0f} | {'-' if cpu is None else f'{cpu:.1f}'} | "
                f"{found['wrk_cpu_us']:.1f} | "
                f"{found['p50_ms']:.2f} | {found['p99_ms']:.2f} | "
                f"{found['not_3xx'] + found['socket_errors']:,} |"
            )
    target = result["target"]
    each = ", ".join(f"{ratio:.2f}" for ratio in result["ratios_hot"])
    lines.append(
        f"\ncache/limit, hot set: {result['ratio_hot']:.2f}, the median of {each} (target >= "
        f"{target['required']:.2f}: {target['status']}); uniform, first round: "
        f"{result['ratio_uniform']:.2f}"
    )
    hits, statuses = result["hit_target"], result["hot_cache_statuses"]
    lines.append(
        f"hot set answered from the cache: {hits['measured']:.4%} over "
        f"{result['hot_expiries']:.1f} expiries ("
        + ", ".join(f"{status} {number:,}" for status, number in sorted(statuses.items()))
        + f"; "
        f"target >= {TARGET_HITS:.1%}: {hits['status']})"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urns", type=int, default=1_000_000)
    parser.add_argument("--hot", type=int, default=10_000)
    add_wrk_arguments(parser, 10, connections=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--nginx-workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--workers", default="auto")  # each server's, as docs/deploy.md says
    parser.add_argument("--cache-seconds", type=int, default=300)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument(
        "--postgresql-url",
        default=DEFAULT_POSTGRESQL_URL,
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    try:
        from resolve_bench import find_wrk

        args.wrk = find_wrk()
        result = run(args)
    except (BenchmarkError, NginxError) as error:
        print(f"proxy_bench: {error}", file=sys.stderr)
        return 2
    print(format_report(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    passed = {result["target"]["status"], result["hit_target"]["status"]} == {"PASS"}
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
