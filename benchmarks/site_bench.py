"""Cache hits of two nginx sites written like ``docs/deploy/nginx-urnkit.conf``, alternated in one
run: what a change to the site costs nginx a hit, with less of the machine's noise between the
two than two runs of ``benchmarks/proxy_bench.py`` have.

Usage::

    .venv/bin/python benchmarks/site_bench.py BEFORE.conf AFTER.conf [--rounds R]
        [--seconds S] [--urns N] [--hot K] [--connections C] [--threads T] [--nginx-workers W]

    git show HEAD:docs/deploy/nginx-urnkit.conf > /tmp/before.conf
    .venv/bin/python benchmarks/site_bench.py /tmp/before.conf docs/deploy/nginx-urnkit.conf

Needs the ``server`` extra, ``wrk`` and Debian's ``nginx``. Imports ``--urns`` records into a
new SQLite database, starts two ``urnkit serve`` processes (the production settings of
docs/deploy.md: ``--workers auto``, the access log on; trusting 127.0.0.1) and one nginx per
site in front of both, fills each site's cache with the hot set (``--hot`` URNs), then loads the
sites in turn, ``--rounds`` times, ``--seconds`` each, the order turned each round. Prints each
load's requests a second, nginx's CPU time a request (only nginx's: a hit never reaches urnkit)
and wrk's own (on the same CPUs), and the median of each site. Exit status 0, or 2 when the
benchmark cannot run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from nginx_site import NginxError, free_port, running_nginx, urnkit_site
from resolve_bench import (
    BenchmarkError,
    Load,
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


def run(args: argparse.Namespace) -> dict[str, list[Load]]:
    """Import, start the servers and one nginx per site, load the sites in turn; each site's
    loads, in order."""
    os.environ["URNKIT_TRUSTED_PROXIES"] = "127.0.0.1"  # the servers' (they inherit it)
    sites = {"before": args.before, "after": args.after}
    with tempfile.TemporaryDirectory(prefix="urnkit-site-") as temporary, ExitStack() as stack:
        directory = Path(temporary)
        records = directory / "records.ndjson"
        write_records(records, args.urns)
        url = stack.enter_context(fresh_database("sqlite", directory, ""))
        prepare(url)
        import_records("sqlite", url, records, 10_000)
        upstreams = [
            port
            for port, _ in (
                stack.enter_context(serving(url, "uvicorn", "auto", directory / f"urnkit-{n}.log"))
                for n in (1, 2)
            )
        ]
        ports, groups = {}, {}
        for name, template in sites.items():
            place = directory / name
            place.mkdir()
            ports[name] = free_port()
            site = urnkit_site(place, upstreams, ports[name], free_port(), template)
            groups[name] = stack.enter_context(running_nginx(place, site, args.nginx_workers))
        settings = LoadSettings(
            args.wrk, args.seconds, args.connections, args.threads, args.urns, directory, args.hot
        )
        for name in sites:  # every hot URN cached before the first measured load
            load(ports[name], groups[name], "hot", args.seconds, settings)
        loads: dict[str, list[Load]] = {name: [] for name in sites}
        for number in range(args.rounds):
            for name in sites if number % 2 == 0 else list(reversed(sites)):
                found = load(ports[name], groups[name], "hot", args.seconds, settings)
                loads[name].append(found)
                print(f"{name}: {_line(found)}", flush=True)
    return loads


def _line(found: Load) -> str:
    cpu = "-" if found.server_cpu_us is None else f"{found.server_cpu_us:.1f}"
    wrk = "-" if found.wrk_cpu_us is None else f"{found.wrk_cpu_us:.1f}"
    return (
        f"{found.rate:,.0f} requests/s, nginx {cpu} µs CPU a request, wrk {wrk}, "
        f"p99 {found.p99_ms} ms"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    add_wrk_arguments(parser, 6, connections=64)
    parser.add_argument("--urns", type=int, default=20_000)
    parser.add_argument("--hot", type=int, default=10_000)
    parser.add_argument("--nginx-workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    try:
        args.wrk = find_wrk()
        loads = run(args)
    except (BenchmarkError, NginxError, OSError) as error:
        print(f"site_bench: {error}", file=sys.stderr)
        return 2
    for name, found in loads.items():
        rate = statistics.median(f.rate for f in found)
        cpu = statistics.median(f.server_cpu_us or 0.0 for f in found)
        wrk = statistics.median(f.wrk_cpu_us or 0.0 for f in found)
        print(
            f"{name}, median: {rate:,.0f} requests/s, nginx {cpu:.1f} µs CPU a request, "
            f"wrk {wrk:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
