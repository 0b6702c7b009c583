"""Server CPU per redirect: ``urnkit serve`` with the production settings against the Go anchor.

Usage::

    .venv/bin/python benchmarks/redirect_bench.py [--urns N] [--seconds S] [--rounds R]
        [--databases sqlite,postgresql] [--servers uvicorn,granian] [--connections C] [--threads T]
        [--warm S] [--keep DIRECTORY] [--json OUT]

    .venv/bin/python benchmarks/redirect_bench.py --urns 20000 --seconds 3 --rounds 1  # quick

Needs the ``server`` extra, ``wrk``, and for the anchor ``go`` with SQLite's development files
(Debian: ``golang``, ``libsqlite3-dev``); without ``go`` the anchor is left out, and said so.

The systems, each started once and loaded in turn, round by round (the order alternates), so
that whatever else the machine does falls on all of them alike:

* ``urnkit serve`` on each database with the settings of docs/deploy.md: ``workers = "auto"``
  (a process per CPU) and the access log on (written to a file);
* the Go anchor (``benchmarks/anchors/go_resolver``, built here): a ``net/http`` server giving
  the same 302 from the same SQLite file, what a team might write instead.

Each load is wrk for ``--seconds`` on URNs as imported (``urn:nbn:fi:bench-N``), either
``hot`` (drawn from a set of 10,000) or ``uniform`` (drawn from all). For each it reports the
server's CPU per request (every process of the server, from ``/proc``), on PostgreSQL the
database's (the backends of the benchmark's own database only), wrk's own CPU per request, the
rate and the load average. Each figure is the median over the rounds, with the range. Each
load follows ``--warm`` seconds (1) of the same load, unmeasured: a server running for hours
has seen its hot set, and keeps its redirects (docs/caching.md); a longer ``--warm`` measures
that steady state.
``--keep DIRECTORY`` keeps the imported databases there and reuses them on the next run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Final

from resolve_bench import (
    DEFAULT_POSTGRESQL_URL,
    PREFIX,
    STARTUP_SECONDS,
    BenchmarkError,
    LoadSettings,
    _redirect_location,
    _stop,
    find_wrk,
    free_port,
    fresh_database,
    import_records,
    load,
    prepare,
    process_ticks,
    write_records,
)

ANCHOR: Final = Path(__file__).parent / "anchors" / "go_resolver"
KEYS: Final = ("hot", "uniform")

Serving = tuple[str, int, Callable[[], float]]  # a system's name, port and CPU seconds so far


def build_anchor(directory: Path) -> Path | None:
    """The Go anchor built into ``directory``; None (and why, on standard error) without Go."""
    go = shutil.which("go")
    if go is None:
        print("go is not on PATH: the Go anchor is left out", file=sys.stderr)
        return None
    binary = directory / "go_resolver"
    built = subprocess.run(
        [go, "build", "-o", str(binary), "."], cwd=ANCHOR, capture_output=True, text=True
    )
    if built.returncode != 0:
        raise BenchmarkError(f"the Go anchor did not build:\n{built.stderr}")
    return binary


@contextmanager
def started(name: str, command: Sequence[str], port: int, log: Path) -> Iterator[int]:
    """``command`` in a session of its own, once it redirects ``/urn:nbn:fi:bench-1``; its
    process group."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + STARTUP_SECONDS
            while _redirect_location(port, f"/urn:nbn:{PREFIX}-1") is None:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise BenchmarkError(f"{name} did not start: see {log}")
                time.sleep(0.1)
            yield process.pid
        finally:
            _stop(process)


def urnkit_serve(url: str, port: int, server: str) -> list[str]:
    """``urnkit serve`` as docs/deploy.md runs it (its access log stays on: the default) on
    the ASGI ``server``."""
    return [sys.executable, "-m", "urnkit", "serve", "--database-url", url, "--host",
            "127.0.0.1", "--port", str(port), "--workers", "auto", "--server", server]  # fmt: skip


def group_cpu(group: int) -> Callable[[], float]:
    """The CPU seconds of process group ``group`` so far."""
    return lambda: sum((process_ticks(group=group) or {}).values()) / os.sysconf("SC_CLK_TCK")


def backends_cpu(url: str) -> Callable[[], float]:
    """The CPU seconds so far of the PostgreSQL backends connected to ``url``'s database."""
    import sqlalchemy as sa

    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    query = "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"

    def cpu() -> float:
        with engine.connect() as connection:
            pids = set(connection.exec_driver_sql(query).scalars())
        ticks = process_ticks(command="postgres") or {}
        return sum(ticks[pid] for pid in pids if pid in ticks) / os.sysconf("SC_CLK_TCK")

    return cpu


def wrk_cpu() -> float:
    """The CPU seconds of this process's children that ended (every wrk run)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def measure(
    systems: Sequence[tuple[Serving, Callable[[], float] | None]],
    settings: LoadSettings,
    rounds: int,
    warm: int = 1,
) -> list[dict[str, Any]]:
    """Every system under every key mode, ``rounds`` times, the order turned each round, each
    load after ``warm`` seconds of the same load unmeasured."""
    samples: list[dict[str, Any]] = []
    for number in range(rounds):
        order = systems if number % 2 == 0 else list(reversed(systems))
        for keys in KEYS:
            for (name, port, server), database in order:
                load(port, [], keys, warm, settings)  # warm: the hot set, the caches
                cpu = server(), database() if database else 0.0, wrk_cpu()
                measured = load(port, [], keys, settings.seconds, settings)
                after = server(), database() if database else 0.0, wrk_cpu()
                per = 1e6 / max(measured.requests, 1)
                samples.append({
                    "system": name, "keys": keys, "round": number + 1,
                    "server_us": (after[0] - cpu[0]) * per,
                    "database_us": (after[1] - cpu[1]) * per if database else None,
                    "wrk_us": (after[2] - cpu[2]) * per, "rate": measured.rate,
                    "p99_ms": measured.p99_ms, "not_3xx": measured.not_3xx + measured.socket_errors,
                    "load": os.getloadavg()[0],
                })  # fmt: skip
                print(json.dumps(samples[-1]), file=sys.stderr, flush=True)
    return samples


def summary(samples: Sequence[dict[str, Any]]) -> str:
    """The table: per system and key mode, each figure's median and range over the rounds."""
    lines = [
        "| system | keys | server CPU µs/req | + database | wrk CPU µs/req | req/s | p99 ms | "
        "errors | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for sample in samples:
        groups.setdefault((sample["system"], sample["keys"]), []).append(sample)

    def spread(rows: list[dict[str, Any]], field: str, form: str = "{:.0f}") -> str:
        values = [row[field] for row in rows if row[field] is not None]
        if not values:
            return "—"
        low, middle, high = min(values), statistics.median(values), max(values)
        return f"{form.format(middle)} ({form.format(low)}-{form.format(high)})"

    for (system, keys), rows in groups.items():
        database = spread(rows, "database_us")
        errors = sum(row["not_3xx"] for row in rows)
        lines.append(
            f"| {system} | {keys} | {spread(rows, 'server_us')} | {database} | "
            f"{spread(rows, 'wrk_us')} | {spread(rows, 'rate')} | "
            f"{spread(rows, 'p99_ms', '{:.1f}')} | {errors} | {spread(rows, 'load', '{:.1f}')} |"
        )
    return "\n".join(lines)


def databases(
    stack: ExitStack, args: argparse.Namespace, directory: Path
) -> dict[str, tuple[str, Path | None]]:
    """Each database's URL (imported, or reused from ``--keep``) and, for SQLite, its file."""
    found: dict[str, tuple[str, Path | None]] = {}
    records = directory / "records.ndjson"
    for kind in args.databases:
        if kind == "sqlite" and (directory / "bench.db").exists():
            found[kind] = f"sqlite:///{directory / 'bench.db'}", directory / "bench.db"
            continue
        if not records.exists():
            write_records(records, args.urns)
        url = stack.enter_context(fresh_database(kind, directory, args.postgresql_url))
        prepare(url)
        print(f"{kind}: importing {args.urns:,} records", file=sys.stderr, flush=True)
        import_records(kind, url, records, 5_000)
        found[kind] = url, directory / "bench.db" if kind == "sqlite" else None
    return found


def run(args: argparse.Namespace) -> str:
    """Import, start every system, measure; the report."""
    wrk = find_wrk()
    with ExitStack() as stack:
        if args.keep:
            directory = Path(args.keep)
            directory.mkdir(parents=True, exist_ok=True)
        else:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        found = databases(stack, args, directory)
        systems: list[tuple[Serving, Callable[[], float] | None]] = []
        for (kind, (url, _)), server in itertools.product(found.items(), args.servers):
            port, name = free_port(), f"urnkit serve, {server}, {kind}"
            log = directory / f"urnkit-{server}-{kind}.log"
            group = stack.enter_context(started(name, urnkit_serve(url, port, server), port, log))
            database = backends_cpu(url) if kind == "postgresql" else None
            systems.append(((name, port, group_cpu(group)), database))
        binary = build_anchor(directory)
        sqlite_file = found.get("sqlite", ("", None))[1]
        if binary is not None and sqlite_file is not None:
            port = free_port()
            command = [str(binary), str(sqlite_file), f"127.0.0.1:{port}"]
            group = stack.enter_context(started("go", command, port, directory / "go.log"))
            systems.append((("Go anchor, sqlite", port, group_cpu(group)), None))
        settings = LoadSettings(wrk, args.seconds, args.connections, args.threads, args.urns,
                                directory)  # fmt: skip
        samples = measure(systems, settings, args.rounds, args.warm)
    if args.json:
        Path(args.json).write_text(json.dumps(samples, indent=1), encoding="utf-8")
    return summary(samples)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--urns", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--warm", type=int, default=1, help="seconds of unmeasured load before each load"
    )
    parser.add_argument("--databases", type=lambda text: text.split(","), default=["sqlite"])
    parser.add_argument("--servers", type=lambda text: text.split(","), default=["uvicorn"])
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--postgresql-url", default=DEFAULT_POSTGRESQL_URL)
    parser.add_argument("--keep", help="a directory to keep the databases in, and reuse")
    parser.add_argument("--json", help="write every sample to this file")
    args = parser.parse_args(argv)
    try:
        print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs")
        print(run(args))
    except BenchmarkError as error:
        print(f"redirect_bench: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
