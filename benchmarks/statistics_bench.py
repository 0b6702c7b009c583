"""The records-by-status counts with and without ``statistics_cache``, on SQLite and PostgreSQL.

Usage::

    .venv/bin/python benchmarks/statistics_bench.py [--urns N] [--days D] [--repeat R]
        [--databases sqlite,postgresql] [--postgresql-url URL]

    .venv/bin/python benchmarks/statistics_bench.py --urns 200000   # the dated run

Per database, as ``benchmarks/resolve_bench.py`` prepares it: ``--urns`` records imported, then
what the staff overview and the statistics page ask for, ``record_counts()`` and
``record_statuses(D)``, timed ``--repeat`` times counted afresh (``statistics_cache`` 0: each
call reads every record) and 1,000 times from a process's cache (``statistics_cache`` 60,
warmed by one call). It prints the median wall time and the CPU time per call (this process;
on PostgreSQL also the benchmark's own backends) and the ratio of the two medians.

No server runs: the counts are the services' calls made in this process, what one worker does
for a page, so docs/deploy.md's server settings (workers, access log) do not apply.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from resolve_bench import (
    DATABASES,
    DEFAULT_POSTGRESQL_URL,
    BenchmarkError,
    _choices,
    _importer_cpu,
    fresh_database,
    import_records,
    postgresql_cpu,
    prepare,
    write_records,
)

CACHED_CALLS = 1000  # the cached calls timed: each takes microseconds


def timed(url: str, call: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The median milliseconds of ``repeat`` calls of ``call`` and the CPU milliseconds per
    call (this process, and on PostgreSQL the benchmark's own backends on ``url``)."""
    walls = []
    cpu = _importer_cpu(), postgresql_cpu(url) or 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        walls.append((time.perf_counter() - start) * 1000)
    used = _importer_cpu() - cpu[0] + (postgresql_cpu(url) or 0.0) - cpu[1]
    return statistics.median(walls), used * 1000 / repeat


def measure(kind: str, url: str, days: int, repeat: int) -> dict[str, tuple[float, float]]:
    """The timings of the counts, afresh and cached."""
    from urnkit.resolver.services import Services
    from urnkit.resolver.store import Store

    store = Store(url)
    try:
        found = {}
        for name, seconds in (("afresh", 0), ("cached", 60)):
            overview = Services(store, statistics_cache=seconds).overview

            def counts(overview: object = overview) -> object:
                return overview.record_counts(), overview.record_statuses(days)  # type: ignore[attr-defined]

            counts()  # warm: the cache, and the database's pages
            found[name] = timed(url, counts, repeat if seconds == 0 else CACHED_CALLS)
        return found
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--urns", type=int, default=200_000, help="records to import")
    parser.add_argument("--days", type=int, default=30, help="days of statuses asked for")
    parser.add_argument("--repeat", type=int, default=5, help="calls timed afresh")
    parser.add_argument(
        "--databases", type=_choices(DATABASES), default=list(DATABASES), help="sqlite,postgresql"
    )
    parser.add_argument("--postgresql-url", default=DEFAULT_POSTGRESQL_URL)
    args = parser.parse_args(argv)
    if min(args.urns, args.days, args.repeat) < 1:
        parser.error("--urns, --days and --repeat must be 1 or more")
    try:
        with tempfile.TemporaryDirectory() as temporary:
            directory = Path(temporary)
            write_records(directory / "records.ndjson", args.urns)
            print(f"{args.urns:,} records; record_counts() + record_statuses({args.days})")
            for kind in args.databases:
                with fresh_database(kind, directory, args.postgresql_url) as url:
                    prepare(url)
                    import_records(kind, url, directory / "records.ndjson", 10_000)
                    found = measure(kind, url, args.days, args.repeat)
                (cold, cold_cpu), (warm, warm_cpu) = found["afresh"], found["cached"]
                print(
                    f"{kind}: afresh {cold:.1f} ms (CPU {cold_cpu:.1f} ms), "
                    f"cached {warm * 1000:.1f} µs (CPU {warm_cpu * 1000:.1f} µs): "
                    f"{cold / warm:,.0f} times faster"
                )
    except BenchmarkError as error:
        print(f"statistics_bench: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
