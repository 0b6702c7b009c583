"""Server CPU per resolution: ``urnkit serve`` with the production settings against the Go
anchor, alternated round by round; and the import that fills the databases.

Usage::

    .venv/bin/python benchmarks/resolve_bench.py [--urns N] [--seconds S] [--rounds R]
        [--databases sqlite,postgresql] [--servers uvicorn,granian] [--workers W]
        [--floors uvicorn,granian|none]
        [--connections C] [--threads T] [--warm S] [--batch-size B] [--postgresql-url URL]
        [--keep DIRECTORY] [--json OUT]

    .venv/bin/python benchmarks/resolve_bench.py --urns 20000 --seconds 3 --rounds 1  # quick

Needs the ``server`` extra and ``wrk`` (``apt-get install wrk``), and for the anchor ``go``
with SQLite's development files (Debian: ``golang``, ``libsqlite3-dev``); without ``go`` the
anchor is left out, and said so. PostgreSQL runs need a server where the URL's user may
``CREATE DATABASE`` (default ``--postgresql-url``: ``URNKIT_TEST_PG``, else
``postgresql+psycopg://postgres@/postgres``, the local socket, as docs/deploy.md connects).
The temporary files go where ``TMPDIR`` says (1,000,000 URNs: about 150 MB of NDJSON and, for
SQLite, a database of about 750 MB; PostgreSQL needs as much in its data directory).

Per database (a SQLite file; a PostgreSQL database made for the run and dropped after it):
``urnkit db upgrade``, an organisation holding ``fi:bench``, then ``--urns`` records
``urn:nbn:fi:bench-1`` … each with one location and a small metadata object, imported as
``urnkit import`` does (its NDJSON reader and ``TransferService.import_records``, batches of
``--batch-size``): the rows per second and the CPU time per row of the importer and, on
PostgreSQL, of its own backends. Then ``ANALYZE``, untimed. ``--keep DIRECTORY`` keeps the
SQLite database there and reuses it on the next run.

The systems, each started once and loaded in turn, round by round (the order turned each
round), so that whatever else the machine does falls on all of them alike:

* ``urnkit serve`` on each database and ``--servers`` with the settings of docs/deploy.md:
  ``--workers auto`` (a process per CPU) and the access log on (written to a file);
  ``--workers`` sets another number (1: one process's cost, as the Go anchor's one process);
* the Go anchor (``benchmarks/anchors/go_resolver``, built here): a ``net/http`` server giving
  the same 302 from the same SQLite file, what a team might write instead;
* the Python floors (``--floors``, both by default): uvicorn and granian answering every
  request with the same 302 and doing nothing else (``benchmarks/anchors/python_floor``), a
  process per CPU: what a Python server here costs a request before any lookup.

Each load is wrk for ``--seconds``, after ``--warm`` seconds (1) of the same load unmeasured (a
server running for hours has seen its hot set and keeps its redirects, docs/caching.md; a
longer ``--warm`` measures that steady state): ``ceiling``, ``GET /-/redirect``,
urnkit's cheapest 302 (the same server, no lookup; the Go anchor has none), then URNs as
imported, ``hot`` (drawn from a set of 10,000) or ``uniform`` (drawn from all). For each it
reports the server's CPU per request (every process of the server, from ``/proc``), on
PostgreSQL its own backends' (:func:`postgresql_cpu`), wrk's own CPU per request (it runs on
the same CPUs), the rate, p99 and the load average; each figure is the median over the rounds,
with the range. Exit status 0, or 2 when the benchmark cannot run.

The other benchmarks use this module's records, databases, server and wrk loads.
"""

from __future__ import annotations

import argparse
import functools
import http.client
import itertools
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final
from uuid import uuid4

DEFAULT_URNS: Final = 1_000_000
DEFAULT_SECONDS: Final = 10
DEFAULT_CONNECTIONS: Final = 16
DEFAULT_THREADS: Final = 2
DEFAULT_BATCH_SIZE: Final = 5_000  # what ``urnkit import`` uses
DATABASES: Final = ("sqlite", "postgresql")
SERVERS: Final = ("granian", "uvicorn")
# The local socket, as docs/deploy.md connects the servers (no host: libpq's socket directory).
DEFAULT_POSTGRESQL_URL: Final = os.environ.get(
    "URNKIT_TEST_PG", "postgresql+psycopg://postgres@/postgres"
)
SEED: Final = 8458
APPLICATION: Final = "urnkit-bench"  # the application_name of the benchmark's connections
STARTUP_SECONDS: Final = 60

ORGANISATION: Final = "Benchmark Library"
PREFIX: Final = "fi:bench"

# --- the records --------------------------------------------------------------------------------


def write_records(path: Path, count: int) -> None:
    """``count`` NDJSON import rows ``urn:nbn:fi:bench-1`` … with one location each."""
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for n in range(1, count + 1):
            row = {
                "urn": f"urn:nbn:{PREFIX}-{n}",
                "locations": [{"url": f"https://example.org/bench/{n}"}],
                "metadata": {"title": f"Benchmark record {n}", "year": 2026},
            }
            out.write(json.dumps(row, separators=(",", ":")) + "\n")


# --- databases ----------------------------------------------------------------------------------


@contextmanager
def fresh_database(kind: str, directory: Path, postgresql_url: str) -> Iterator[str]:
    """The URL of a new empty database: a SQLite file in ``directory``, or a PostgreSQL
    database created on ``postgresql_url``'s server and dropped afterwards, whose connections
    name themselves :data:`APPLICATION` (see :func:`postgresql_cpu`)."""
    if kind == "sqlite":
        yield f"sqlite:///{directory / 'bench.db'}"
        return
    import sqlalchemy as sa

    name = f"urnkit_bench_{uuid4().hex[:12]}"
    admin = sa.create_engine(postgresql_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    except sa.exc.OperationalError as error:
        admin.dispose()
        raise BenchmarkError(
            f"cannot create a database on {postgresql_url}: {error.orig} "
            "(give --postgresql-url, or leave postgresql out of --databases)"
        ) from None
    try:
        url = admin.url.set(database=name).update_query_dict({"application_name": APPLICATION})
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def urnkit(*arguments: str) -> str:
    """Run ``python -m urnkit`` with ``arguments``; its standard output."""
    done = subprocess.run(
        [sys.executable, "-m", "urnkit", *arguments],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise BenchmarkError(f"urnkit {' '.join(arguments)} failed:\n{done.stderr.strip()}")
    return done.stdout


def prepare(url: str) -> None:
    """The schema, the organisation and its delegated prefix, as an operator makes them."""
    urnkit("db", "upgrade", "--database-url", url)
    urnkit("admin", "create-org", ORGANISATION, "--database-url", url)
    urnkit("admin", "delegate", ORGANISATION, PREFIX, "--database-url", url)


@dataclass(frozen=True, slots=True)
class Import:
    """One timed import: rows (URN + location) stored and the seconds it took; the CPU time per
    row of the importer (this process and the one preparing its batches) and of its PostgreSQL
    backends (None for SQLite, which runs in the importer, or where they cannot be read)."""

    database: str
    rows: int
    skipped: int
    seconds: float
    batch_size: int
    importer_cpu_us: float | None = None
    postgresql_cpu_us: float | None = None

    @property
    def rate(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


def import_records(kind: str, url: str, path: Path, batch_size: int) -> Import:
    """Import ``path`` as ``urnkit import`` does, timed from opening the file to the last
    commit; then ``ANALYZE`` (``VACUUM ANALYZE`` on PostgreSQL), untimed."""
    import sqlalchemy as sa

    from urnkit.resolver.cli.transfer import Rejects
    from urnkit.resolver.services import Services
    from urnkit.resolver.services.rows import ndjson_rows  # as ``urnkit import`` reads
    from urnkit.resolver.store import Store

    store = Store(url)
    try:
        services = Services(store)
        cpu = _importer_cpu(), postgresql_cpu(url)
        start = time.perf_counter()
        with open(path, "rb") as raw:
            rejects = Rejects(0, None)
            imported, skipped = services.transfer.import_records(
                ndjson_rows(raw, rejects), None, batch_size, None, rejects
            )
        seconds = time.perf_counter() - start
        per_row = 1e6 / max(imported, 1)
        importer = (_importer_cpu() - cpu[0]) * per_row
        after = postgresql_cpu(url)
        postgresql = None if cpu[1] is None or after is None else (after - cpu[1]) * per_row
        if kind == "postgresql":
            autocommit = store.engine.execution_options(isolation_level="AUTOCOMMIT")
            with autocommit.connect() as connection:
                connection.execute(sa.text("VACUUM ANALYZE"))
        else:
            with store.engine.connect() as connection:
                connection.exec_driver_sql("ANALYZE")
    finally:
        store.close()
    return Import(kind, imported, skipped, seconds, batch_size, importer, postgresql)


def import_through_command(kind: str, url: str, path: Path, batch_size: int) -> Import:
    """Import ``path`` with ``python -m urnkit import``, timed from starting the command to its
    end (its start-up included): the way to measure a checkout whose Python API differs, such
    as the code an issue was filed on (``PYTHONPATH=…/src``); then ``ANALYZE``, untimed. The
    server's CPU (its backends', :func:`backend_ticks`) is read every 50 ms while the command
    runs: its connection's process ends with it."""
    importer = _importer_cpu()
    seen = backend_ticks(url)
    first = dict(seen or {})
    start = time.perf_counter()
    arguments = [str(path), "--batch-size", str(batch_size), "--database-url", url]
    with (
        tempfile.TemporaryFile("w+") as stderr,
        subprocess.Popen(
            [sys.executable, "-m", "urnkit", "import", *arguments],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
        ) as child,
    ):
        while child.poll() is None:
            time.sleep(0.05)
            if seen is not None:
                seen |= backend_ticks(url) or {}
        seconds = time.perf_counter() - start
        if child.returncode != 0:
            stderr.seek(0)
            raise BenchmarkError(f"urnkit import failed:\n{stderr.read().strip()}")
    rows = _count_records(url)
    per_row = 1e6 / max(rows, 1)
    postgresql = None
    if seen is not None:
        ticks = sum(seen.values()) - sum(first.values())
        postgresql = ticks / os.sysconf("SC_CLK_TCK") * per_row
    importer = (_importer_cpu() - importer) * per_row
    return Import(kind, rows, 0, seconds, batch_size, importer, postgresql)


def _count_records(url: str) -> int:
    """How many records the database at ``url`` holds, after ``ANALYZE``."""
    import sqlalchemy as sa

    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            analyze = "VACUUM ANALYZE" if engine.dialect.name == "postgresql" else "ANALYZE"
            connection.exec_driver_sql(analyze)
            return int(connection.exec_driver_sql("SELECT count(*) FROM records").scalar_one())
    finally:
        engine.dispose()


def _importer_cpu() -> float:
    """CPU seconds of this process and of its children that ended (the batch preparer)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def postgresql_cpu(url: str) -> float | None:
    """The CPU seconds so far of the benchmark's own PostgreSQL backends (see
    :func:`backend_ticks`); None for SQLite, or when they cannot be read. A backend that ends
    between two readings takes its CPU time with it: read while the connections are open."""
    ticks = backend_ticks(url)
    return None if ticks is None else sum(ticks.values()) / os.sysconf("SC_CLK_TCK")


def backend_ticks(url: str) -> dict[int, int] | None:
    """The CPU ticks so far of each backend connected to ``url``'s database (made for the run
    by :func:`fresh_database`) as :data:`APPLICATION`, by process id (``pg_stat_activity``),
    read from ``/proc/<pid>/stat`` of those processes only: not the server's other processes
    nor anyone else's backends. None for SQLite, or when they cannot be read (the server on
    another machine)."""
    if not url.startswith("postgresql"):
        return None
    with _monitor(url).connect() as connection:
        pids = set(connection.exec_driver_sql(_BACKENDS, (APPLICATION,)).scalars())
    ticks = {pid: found for pid in pids if (found := pid_ticks(pid)) is not None}
    return None if pids and not ticks else ticks


_BACKENDS: Final = """SELECT pid FROM pg_stat_activity
WHERE datname = current_database() AND application_name = %s AND pid <> pg_backend_pid()"""


@functools.cache
def _monitor(url: str) -> Any:
    """An engine that opens a connection for each reading of :func:`postgresql_cpu`."""
    import sqlalchemy as sa

    return sa.create_engine(url, poolclass=sa.pool.NullPool, isolation_level="AUTOCOMMIT")


def pid_ticks(pid: int) -> int | None:
    """The CPU ticks, user and system, of process ``pid`` so far (``/proc/<pid>/stat``);
    None when it is not there."""
    fields = _stat_fields(Path(f"/proc/{pid}/stat"))
    return None if fields is None else int(fields[11]) + int(fields[12])


# --- the server ---------------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _redirect_location(port: int, path: str) -> str | None:
    """Where ``GET path`` on 127.0.0.1:``port`` redirects to; None when it does not redirect
    or nothing answers."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.getheader("Location") if 300 <= response.status < 400 else None
    except OSError:
        return None
    finally:
        connection.close()


@contextmanager
def serving(url: str, server: str, workers: int | str, log: Path) -> Iterator[tuple[int, int]]:
    """``python -m urnkit serve`` over ``url`` in a child process; once it answers, its port
    and its process group (the server and its workers)."""
    port = free_port()
    command = [sys.executable, "-m", "urnkit", "serve", "--database-url", url]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    command += ["--server", server, "--workers", str(workers)]
    with log.open("wb") as output:
        # A session of its own, so that the server and its worker processes can be stopped
        # together and a Ctrl-C in the terminal reaches this script only.
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + STARTUP_SECONDS
            while _redirect_location(port, "/-/redirect") is None:
                if process.poll() is not None:
                    raise BenchmarkError(f"urnkit serve exited:\n{_tail(log)}")
                if time.monotonic() > deadline:
                    raise BenchmarkError(
                        f"urnkit serve did not answer in {STARTUP_SECONDS} s:\n{_tail(log)}"
                    )
                time.sleep(0.1)
            yield port, process.pid
        finally:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server: SIGTERM, and SIGKILL to its process group if it lingers."""
    if process.poll() is None:
        process.terminate()
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=15)
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # worker processes it may have left behind
    process.wait()


def cpu_seconds(*, group: int) -> float | None:
    """The CPU time (user and system) that the live processes of process group ``group`` have
    used, read from ``/proc``; None where there is no ``/proc``."""
    ticks = process_ticks(group=group)
    return None if ticks is None else sum(ticks.values()) / os.sysconf("SC_CLK_TCK")


def process_ticks(*, group: int) -> dict[int, int] | None:
    """:func:`cpu_seconds` by process: each live process's CPU ticks, by its id."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    ticks = {}
    for stat in proc.glob("[0-9]*/stat"):
        fields = _stat_fields(stat)
        if fields is not None and int(fields[2]) == group:
            ticks[int(stat.parent.name)] = int(fields[11]) + int(fields[12])
    return ticks


def _stat_fields(stat: Path) -> list[str] | None:
    """The fields of a ``/proc/<pid>/stat`` after the command's name, in parentheses (which
    may hold anything): state, ppid, pgrp, … utime and stime are the 12th and 13th (proc(5));
    None when the process has ended."""
    try:
        return stat.read_text().rpartition(")")[2].split()
    except OSError:
        return None


def _tail(log: Path, lines: int = 20) -> str:
    return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


# --- wrk ----------------------------------------------------------------------------------------

# One script for every run: with ``mode = "ceiling"`` every request is GET /-/redirect; with
# ``"hot"`` a URN, as imported, drawn from a set of ``hot`` of them (the same in every run and
# thread), with ``"uniform"`` one drawn from all. Each thread draws its requests before the
# run (``drawn`` of them, then again from the first) so that every mode costs wrk the same per
# request: wrk shares the CPUs with the server, and building a request per request in Lua took
# CPU from the server in the resolution runs only. Each thread
# counts the responses that are not 3xx; done() adds them up and prints one parseable line with
# the exact percentiles (wrk's own table rounds them).
DRAWN: Final = 1 << 17  # requests drawn per wrk thread: 262,144 URNs drawn by two threads
LUA_SCRIPT: Final = """\
-- Written by benchmarks/resolve_bench.py.
local mode = "%(mode)s"
local count = %(count)d
local seed = %(seed)d
local drawn = %(drawn)d
local hot = %(hot)d
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("number", #threads)
end

function init(args)
  math.randomseed(seed)
  local set = {}
  for i = 1, hot do
    set[i] = math.random(count)
  end
  math.randomseed(seed + number)
  not_3xx = 0
  prepared = {}
  for i = 1, drawn do
    if mode == "ceiling" then
      prepared[i] = wrk.format("GET", "/-/redirect")
    elseif mode == "hot" then
      prepared[i] = wrk.format("GET", "/urn:nbn:%(prefix)s-" .. set[math.random(hot)])
    else
      prepared[i] = wrk.format("GET", "/urn:nbn:%(prefix)s-" .. math.random(count))
    end
  end
  next_request = 0
end

function request()
  next_request = next_request %% drawn + 1
  return prepared[next_request]
end

function response(status, headers, body)
  if status < 300 or status > 399 then
    not_3xx = not_3xx + 1
  end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("not_3xx")
  end
  local e = summary.errors
  io.write(string.format(
    "URNKIT requests=%%d duration_us=%%d p50_us=%%d p90_us=%%d p99_us=%%d max_us=%%d " ..
    "mean_us=%%.1f not_3xx=%%d connect=%%d read=%%d write=%%d timeout=%%d\\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean, total,
    e.connect, e.read, e.write, e.timeout))
end
"""
_RESULT = re.compile(r"^URNKIT (.*)$", re.MULTILINE)


def find_wrk() -> str:
    """wrk's path, or a :class:`BenchmarkError` saying how to install it."""
    found = shutil.which("wrk")
    if found is None:
        raise BenchmarkError(
            "wrk is not on PATH: install it (Debian, Ubuntu: apt-get install wrk; "
            "macOS: brew install wrk)"
        )
    return found


@dataclass(frozen=True, slots=True)
class Load:
    """What one wrk run measured."""

    requests: int
    seconds: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    mean_ms: float
    not_3xx: int
    socket_errors: int
    server_cpu_us: float | None = None  # the server's CPU time per request (see cpu_seconds)
    wrk_cpu_us: float | None = None  # wrk's own CPU time per request (see _run_measured)

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True, slots=True)
class LoadSettings:
    wrk: str
    seconds: int
    connections: int
    threads: int
    urns: int
    directory: Path
    hot: int = 10_000  # URNs in the "hot" mode's set


def load(
    port: int, group: int | Sequence[int], mode: str, seconds: int, settings: LoadSettings
) -> Load:
    """Run wrk against 127.0.0.1:``port`` for ``seconds`` in ``mode`` (ceiling, hot or
    uniform); the server's CPU time is read from its process group ``group`` (or the sum
    of several: a proxy and its upstreams)."""
    script = settings.directory / f"{mode}.lua"
    values = {"mode": mode, "count": settings.urns, "seed": SEED, "drawn": DRAWN}
    script.write_text(
        LUA_SCRIPT % (values | {"hot": settings.hot, "prefix": PREFIX}), encoding="utf-8"
    )
    groups = [group] if isinstance(group, int) else list(group)
    command = [settings.wrk, "--threads", str(settings.threads)]
    command += ["--connections", str(settings.connections), "--duration", f"{seconds}s"]
    command += ["--timeout", "2s", "--latency", "--script", str(script)]
    command.append(f"http://127.0.0.1:{port}/")
    before = _groups_cpu(groups)
    returncode, output, wrk_seconds = _run_measured(command)
    after = _groups_cpu(groups)
    found = _RESULT.search(output)
    if returncode != 0 or found is None:
        raise BenchmarkError(f"wrk failed:\n{output}")
    measured = parse_result(found.group(1))
    if measured.requests == 0:
        return measured
    per = 1e6 / measured.requests
    measured = replace(measured, wrk_cpu_us=wrk_seconds * per)
    if before is None or after is None:
        return measured
    return replace(measured, server_cpu_us=(after - before) * per)


def _run_measured(command: Sequence[str]) -> tuple[int, str, float]:
    """Run ``command`` to its end: its exit status, its output (standard output, then
    standard error) and the CPU seconds, user and system, that it used (its own rusage, from
    ``os.wait4``: no other child's)."""
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        return process.returncode, stdout.read() + stderr.read(), usage.ru_utime + usage.ru_stime


def _groups_cpu(groups: Sequence[int]) -> float | None:
    """The CPU seconds of the process groups ``groups`` together (None without /proc)."""
    seconds = [cpu_seconds(group=group) for group in groups]
    return None if None in seconds else sum(filter(None, seconds))


def parse_result(text: str) -> Load:
    """A :class:`Load` from the ``key=value`` line the Lua ``done`` function prints.

    >>> parse_result("requests=10 duration_us=2000000 p50_us=900 p90_us=1500 p99_us=2500 "
    ...     "max_us=3000 mean_us=1000.0 not_3xx=0 connect=0 read=0 write=0 timeout=0").rate
    5.0
    """
    values = {key: float(value) for key, value in (item.split("=") for item in text.split())}
    return Load(
        requests=int(values["requests"]),
        seconds=values["duration_us"] / 1e6,
        p50_ms=values["p50_us"] / 1e3,
        p90_ms=values["p90_us"] / 1e3,
        p99_ms=values["p99_us"] / 1e3,
        max_ms=values["max_us"] / 1e3,
        mean_ms=values["mean_us"] / 1e3,
        not_3xx=int(values["not_3xx"]),
        socket_errors=int(sum(values[key] for key in ("connect", "read", "write", "timeout"))),
    )


# --- running ------------------------------------------------------------------------------------


class BenchmarkError(Exception):
    """Something the benchmark needs is missing or failed; the message says what."""


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _us(cpu: float | None) -> str:
    return "?" if cpu is None else f"{cpu:.0f}"


ANCHOR: Final = Path(__file__).parent / "anchors" / "go_resolver"
FLOOR: Final = Path(__file__).parent / "anchors" / "python_floor"


def floor_command(server: str, port: int) -> list[str]:
    """The command serving ``anchors/python_floor/floor.py`` on ``server`` (uvicorn, as
    ``urnkit serve`` runs it; granian, its RSGI interface), a process per CPU as ``--workers
    auto`` gives urnkit, at ``port``."""
    workers = str(os.cpu_count() or 1)
    where = ["--host", "127.0.0.1", "--port", str(port), "--workers", workers]
    if server == "granian":
        return [sys.executable, "-m", "granian", "--interface", "rsgi", "--no-ws",
                "--working-dir", str(FLOOR), *where, "--log-level", "warning",
                "floor:rsgi"]  # fmt: skip
    return [sys.executable, "-m", "uvicorn", "--app-dir", str(FLOOR), *where,
            "--http", "httptools", "--loop", "uvloop", "--lifespan", "off",
            "--no-access-log", "--log-level", "warning", "floor:app"]  # fmt: skip


KEYS: Final = ("ceiling", "hot", "uniform")

# A system: its name, its port, its CPU seconds so far, its database's (None: no database of
# its own to count), whether it has the bare redirect of the ceiling, and the URL of the
# database it reads (None: none, a floor).
System = tuple[str, int, Callable[[], float], Callable[[], float | None] | None, bool, str | None]
WRITER: Final = "urnkit-bench-writes"  # the application_name of --writes' connection


@contextmanager
def writing(url: str | None, rate: float, urns: int) -> Iterator[list[int]]:
    """While in the block, ``rate`` records a second of ``url``'s database updated, each drawn
    from all ``urns`` (its locations written again: what a registrant's correction or a link
    check does to what servers keep), from a thread of this process, whose CPU no figure
    counts (on PostgreSQL its backend is not :data:`APPLICATION`'s); the list holds how many
    so far. Nothing when ``rate`` is 0 or there is no ``url``."""
    done = [0]
    if not rate or url is None:
        yield done
        return
    import sqlalchemy as sa

    arguments = {"application_name": WRITER} if url.startswith("postgresql") else {}
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool, connect_args=arguments)
    statement = sa.text("UPDATE records SET targets = targets WHERE equivalence_key = :key")
    stop = threading.Event()

    def write() -> None:
        draw, start = random.Random(SEED + 1), time.monotonic()
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            while not stop.wait(max(0.0, start + done[0] / rate - time.monotonic())):
                key = f"urn:nbn:{PREFIX}-{draw.randint(1, urns)}"
                connection.execute(statement, {"key": key})
                done[0] += 1

    writer = threading.Thread(target=write, name="writes", daemon=True)
    writer.start()
    try:
        yield done
    finally:
        stop.set()
        writer.join()
        engine.dispose()


def build_anchor(directory: Path) -> Path | None:
    """The Go anchor built into ``directory``; None (and why, on standard error) without Go."""
    go = shutil.which("go")
    if go is None:
        _say("go is not on PATH: the Go anchor is left out")
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


def measure(
    systems: Sequence[System],
    settings: LoadSettings,
    rounds: int,
    warm: int = 1,
    modes: Sequence[str] = KEYS,
    writes: float = 0.0,
) -> list[dict[str, Any]]:
    """Every system under every key mode of ``modes``, ``rounds`` times, the order turned each
    round, each load after ``warm`` seconds of the same load unmeasured, ``writes`` records
    a second of its database updated meanwhile (:func:`writing`)."""
    samples: list[dict[str, Any]] = []
    for number in range(rounds):
        order = systems if number % 2 == 0 else list(reversed(systems))
        for keys in modes:
            for name, port, server, database, has_ceiling, url in order:
                if keys == "ceiling" and not has_ceiling:
                    continue
                with writing(url, writes, settings.urns) as written:
                    load(port, [], keys, warm, settings)  # warm: the hot set, the caches
                    cpu = server(), database() if database else None
                    before = written[0]
                    measured = load(port, [], keys, settings.seconds, settings)
                    after = server(), database() if database else None
                    written_per_second = (written[0] - before) / max(measured.seconds, 1e-9)
                per = 1e6 / max(measured.requests, 1)
                samples.append({
                    "system": name, "keys": keys, "round": number + 1,
                    "server_us": (after[0] - cpu[0]) * per,
                    "database_us": None if cpu[1] is None or after[1] is None
                    else (after[1] - cpu[1]) * per,
                    "wrk_us": measured.wrk_cpu_us, "rate": measured.rate,
                    "p99_ms": measured.p99_ms, "not_3xx": measured.not_3xx + measured.socket_errors,
                    "load": os.getloadavg()[0], "writes_per_s": written_per_second,
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
    """Each database's URL (imported, or reused from ``--keep``) and, for SQLite, its file;
    each import's figures on standard output."""
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
        _say(f"{kind}: importing {args.urns:,} records")
        imported = import_records(kind, url, records, args.batch_size)
        if imported.rows != args.urns:
            raise BenchmarkError(f"{kind}: imported {imported.rows:,} of {args.urns:,}")
        database = imported.postgresql_cpu_us
        print(
            f"Import, {kind}: {imported.rate:,.0f} rows/s; CPU µs/row: importer "
            f"{_us(imported.importer_cpu_us)}"
            + ("" if database is None else f", its PostgreSQL backends {database:.0f}")
        )
        found[kind] = url, directory / "bench.db" if kind == "sqlite" else None
    return found


def run(args: argparse.Namespace) -> str:
    """Import, start every system, measure; the table."""
    wrk = find_wrk()
    with ExitStack() as stack:
        if args.keep:
            directory = Path(args.keep)
            directory.mkdir(parents=True, exist_ok=True)
        else:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        found = databases(stack, args, directory)
        systems: list[System] = []
        for (kind, (url, _)), server in itertools.product(found.items(), args.servers):
            log = directory / f"urnkit-{server}-{kind}.log"
            port, group = stack.enter_context(serving(url, server, args.workers, log))
            database = functools.partial(postgresql_cpu, url) if kind == "postgresql" else None
            name = f"urnkit serve, {server}, {kind}"
            seconds = functools.partial(_group_seconds, group)
            systems.append((name, port, seconds, database, True, url))
        binary = build_anchor(directory)
        sqlite_file = found.get("sqlite", ("", None))[1]
        if binary is not None and sqlite_file is not None:
            port = free_port()
            command = [str(binary), str(sqlite_file), f"127.0.0.1:{port}"]
            group = stack.enter_context(started("go", command, port, directory / "go.log"))
            seconds = functools.partial(_group_seconds, group)
            systems.append(("Go anchor, sqlite", port, seconds, None, False, found["sqlite"][0]))
        for server in (floor for floor in args.floors if floor != "none"):
            port = free_port()
            log = directory / f"floor-{server}.log"
            group = stack.enter_context(started(server, floor_command(server, port), port, log))
            seconds = functools.partial(_group_seconds, group)
            systems.append((f"Python floor, {server}", port, seconds, None, False, None))
        settings = LoadSettings(wrk, args.seconds, args.connections, args.threads, args.urns,
                                directory)  # fmt: skip
        samples = measure(systems, settings, args.rounds, args.warm, args.keys, args.writes)
    if args.json:
        Path(args.json).write_text(json.dumps(samples, indent=1), encoding="utf-8")
    return summary(samples)


def _group_seconds(group: int) -> float:
    return cpu_seconds(group=group) or 0.0


def _choices(allowed: Sequence[str]) -> Any:
    def parse(text: str) -> list[str]:
        chosen = [item.strip() for item in text.split(",") if item.strip()]
        unknown = [item for item in chosen if item not in allowed]
        if not chosen or unknown:
            raise argparse.ArgumentTypeError(
                f"a comma-separated list of {', '.join(allowed)}, not {text!r}"
            )
        return list(dict.fromkeys(chosen))

    return parse


def add_wrk_arguments(
    parser: argparse.ArgumentParser, seconds: int, connections: int = DEFAULT_CONNECTIONS
) -> None:
    """``--seconds``, ``--connections`` and ``--threads`` of the wrk loads, with these defaults;
    the benchmarks that load a server share them."""
    parser.add_argument("--seconds", type=int, default=seconds, help="per wrk run")
    parser.add_argument("--connections", type=int, default=connections, help="open by wrk")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="wrk threads")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--urns", type=int, default=DEFAULT_URNS, help="records to import")
    add_wrk_arguments(parser, DEFAULT_SECONDS)
    parser.add_argument("--rounds", type=int, default=3, help="rounds, the order turned each")
    parser.add_argument(
        "--warm", type=int, default=1, help="seconds of unmeasured load before each load"
    )
    parser.add_argument(
        "--databases", type=_choices(DATABASES), default=["sqlite"], help="sqlite,postgresql"
    )
    parser.add_argument(
        "--servers", type=_choices(SERVERS), default=["uvicorn"], help="uvicorn,granian"
    )
    parser.add_argument(
        "--floors",
        type=_choices((*SERVERS, "none")),
        default=list(SERVERS),
        help="the Python floors measured beside (anchors/python_floor): uvicorn,granian or none",
    )
    parser.add_argument(
        "--workers",
        default="auto",
        help="urnkit serve's worker processes: auto (docs/deploy.md's), or a number",
    )
    parser.add_argument(
        "--postgresql-url",
        default=DEFAULT_POSTGRESQL_URL,
        help="a database on the PostgreSQL server to create the benchmark's database from",
    )
    parser.add_argument(
        "--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="records per import batch"
    )
    parser.add_argument(
        "--keys", type=_choices(KEYS), default=list(KEYS), help="ceiling,hot,uniform: the loads"
    )
    parser.add_argument(
        "--writes",
        type=float,
        default=0.0,
        help="records a second updated in the database of the system under load",
    )
    parser.add_argument("--keep", help="a directory to keep the SQLite database in, and reuse")
    parser.add_argument("--json", metavar="OUT", help="also write every sample to OUT")
    args = parser.parse_args(argv)
    if min(args.urns, args.seconds, args.connections, args.threads, args.rounds) < 1:
        parser.error("--urns, --seconds, --connections, --threads and --rounds must be >= 1")
    if args.workers != "auto" and not (args.workers.isdigit() and int(args.workers) >= 1):
        parser.error("--workers must be auto or a whole number >= 1")
    if args.writes < 0:
        parser.error("--writes must be >= 0")
    if args.connections < args.threads or args.batch_size < 1:
        parser.error("need --connections >= --threads and --batch-size >= 1")
    try:
        writes = f", {args.writes:g} records updated a second" if args.writes else ""
        print(
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs{writes}"
        )
        print(run(args))
    except BenchmarkError as error:
        print(f"resolve_bench: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
