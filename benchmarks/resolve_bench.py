"""Resolution throughput of the URN:NBN resolver against its own bare redirect, and import speed.

Usage::

    .venv/bin/python benchmarks/resolve_bench.py [--urns N] [--seconds S] [--warmup S]
        [--connections C] [--threads T] [--workers W] [--batch-size B]
        [--databases sqlite,postgresql] [--servers granian,uvicorn] [--postgresql-url URL]
        [--json OUT]

    .venv/bin/python benchmarks/resolve_bench.py --urns 20000 --seconds 5   # a quick check

Needs the ``server`` extra and ``wrk`` (``apt-get install wrk``); PostgreSQL runs need a server
where the URL's user may ``CREATE DATABASE`` (default ``--postgresql-url``: ``URNKIT_TEST_PG``,
else ``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``). Run it on a quiet machine: the
load generator and the server share its CPUs, and anything else running skews both. The
temporary files go where ``TMPDIR`` says (1,000,000 URNs: about 150 MB of NDJSON and, for
SQLite, a database of about 750 MB; PostgreSQL needs as much in its data directory).

What it does, per database (a SQLite file in a temporary directory; a PostgreSQL database made
for the run and dropped after it):

1. ``urnkit db upgrade``, ``urnkit admin create-org`` and ``urnkit admin delegate`` give an
   organisation the prefix ``fi:bench``.
2. **Import.** ``--urns`` records ``urn:nbn:fi:bench-1`` … ``urn:nbn:fi:bench-N``, each with one
   location and a small metadata object, are written as NDJSON and imported in-process through
   what ``urnkit import`` runs (its NDJSON reader and ``TransferService.import_records``, batches of
   ``--batch-size``). The time covers reading the file to the last commit; a row is one URN and
   its location (each also gets its history entry). Then ``ANALYZE`` (``VACUUM ANALYZE`` on
   PostgreSQL), untimed: what autovacuum would do after a bulk load.
3. **Resolution**, for each ``--servers``: ``python -m urnkit serve`` in a child process on a
   free port of 127.0.0.1, with ``--workers``. wrk warms it up with the resolution mix for
   ``--warmup`` seconds, then loads it for ``--seconds`` each, one after the other in the same
   server process: first ``GET /-/redirect``, the cheapest 302 the same application gives (the
   ceiling), then ``GET /{urn}`` for URNs drawn at random from the whole table, in
   varied case (``URN:NBN:FI:BENCH-7``, ``urn:Nbn:fi:bench-7`` …) so that every lookup goes
   through equivalence matching. Both runs use the same wrk Lua script (only the path differs),
   which draws each thread's requests before the run (2**17 of them, used in turn), counts the
   responses that are not 3xx and prints the exact latency percentiles.
4. **Resolution without its database**, for each ``--servers``: a second server, the same but
   for resolution's lookup, which its processes answer from memory with the row the database
   holds (``WITHOUT_LOOKUP``), is loaded the same way. Its ratio is what the rest of resolution
   leaves; the report splits the server's time per request (1 / rate) into the ceiling's, the
   rest of resolution's and the lookup's, and gives the time the target leaves the lookup.

Targets (the resolver issue): resolution >= 60% of the ceiling's requests/s (the ratio) with
p99 <= 10 ms and every response a 3xx (wrk's socket errors count against it too), on each
database and server; import >= 50,000 rows/s on PostgreSQL. Latency depends on how many requests
are in flight: wrk keeps ``--connections`` open, each with one request outstanding, so report
the numbers with the flags. The default ASGI server of ``urnkit serve`` is chosen by them.

Prints a table and the targets, PASS or FAIL; ``--json OUT`` also writes every number. With
each load the table gives the server's CPU time per request (its process group's, from
``/proc``): the ratio of the two is what resolving costs next to the bare redirect, whatever
share of the CPUs wrk took; and wrk's own CPU time per request (its rusage once it ended), which
it takes from the same CPUs; with each import, the CPU time per row of the importer and, on
PostgreSQL, of the benchmark's own backends (:func:`postgresql_cpu`, when the server runs
here). Exit
status: 0 when every target passes, 1 when one fails, 2 when the benchmark cannot run.
"""

from __future__ import annotations

import argparse
import functools
import http.client
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Final
from uuid import uuid4

DEFAULT_URNS: Final = 1_000_000
DEFAULT_SECONDS: Final = 10
DEFAULT_WARMUP: Final = 2
DEFAULT_CONNECTIONS: Final = 16
DEFAULT_THREADS: Final = 2
DEFAULT_WORKERS: Final = 1
DEFAULT_BATCH_SIZE: Final = 5_000  # what ``urnkit import`` uses
DATABASES: Final = ("sqlite", "postgresql")
SERVERS: Final = ("granian", "uvicorn")
DEFAULT_POSTGRESQL_URL: Final = os.environ.get(
    "URNKIT_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
SEED: Final = 8458
APPLICATION: Final = "urnkit-bench"  # the application_name of the benchmark's connections
STARTUP_SECONDS: Final = 60

ORGANISATION: Final = "Benchmark Library"
PREFIX: Final = "fi:bench"

# The targets of the resolver issue.
TARGET_RATIO: Final = 0.60
TARGET_P99_MS: Final = 10.0
TARGET_IMPORT_RATE: Final = 50_000  # URN + location rows/s, on PostgreSQL


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
def serving(
    url: str, server: str, workers: int | str, log: Path, customize: Path | None = None
) -> Iterator[tuple[int, int]]:
    """``python -m urnkit serve`` over ``url`` in a child process; once it answers, its port
    and its process group (the server and its workers). With ``customize``, a directory put
    first on ``PYTHONPATH``, every process of the server imports its ``sitecustomize``."""
    environment = None
    if customize is not None:
        path = os.pathsep.join(filter(None, [str(customize), os.environ.get("PYTHONPATH")]))
        environment = os.environ | {"PYTHONPATH": path}
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
            env=environment,
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

# One script for every run: with ``mode = "ceiling"`` every request is GET /-/redirect, with
# ``"resolve"`` it is a URN drawn from 1..count in one of the case spellings below; with
# ``"hot"`` a URN, as imported, drawn from a set of ``hot`` of them (the same in every run and
# thread), with ``"uniform"`` one drawn from all (benchmarks/proxy_bench.py). Each thread
# draws its requests before the run (``drawn`` of them, then again from the first) so that
# both modes cost wrk the same per request: wrk shares the CPUs with the server, and building
# a request per request in Lua took CPU from the server in the resolution run only. Each thread
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
local schemes = {"urn", "URN", "Urn"}
local nids = {"nbn", "NBN", "Nbn"}
local prefixes = {"fi:bench", "FI:BENCH", "Fi:Bench", "fi:BENCH"}
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
    elseif mode == "uniform" then
      prepared[i] = wrk.format("GET", "/urn:nbn:%(prefix)s-" .. math.random(count))
    else
      prepared[i] = wrk.format("GET", string.format("/%%s:%%s:%%s-%%d",
        schemes[math.random(#schemes)], nids[math.random(#nids)],
        prefixes[math.random(#prefixes)], math.random(count)))
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


# Each run also loads a second server, whose processes import this module at start-up (as
# sitecustomize; see serving): in it, resolution's lookup is answered from memory with the row
# that the database holds for the benchmark's records. Everything else is the first server's:
# the ratio it reaches is resolution's without its database (see Run.lookup_us).
WITHOUT_LOOKUP: Final = """\
# Written by benchmarks/resolve_bench.py: resolution's lookup answered from memory.
from urnkit.resolver.store import Store


async def _row(self, key):
    # What the database holds for urn:nbn:fi:bench-N: active, at one location.
    return ("active", "https://example.org/bench/" + key.rpartition("-")[2], None, %(prefix)r, None)


Store.resolution_row_async = _row
"""


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
    """Run wrk against 127.0.0.1:``port`` for ``seconds`` in ``mode`` (ceiling, resolve, hot
    or uniform); the server's CPU time is read from its process group ``group`` (or the sum
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


@dataclass(frozen=True, slots=True)
class Run:
    """The ceiling and the resolution load of one server over one database, and the same
    for the server whose lookup is answered from memory (:data:`WITHOUT_LOOKUP`)."""

    database: str
    server: str
    ceiling: Load
    resolution: Load
    without_lookup_ceiling: Load
    without_lookup: Load

    @property
    def ratio(self) -> float:
        return _ratio(self.resolution, self.ceiling)

    @property
    def ratio_without_lookup(self) -> float:
        return _ratio(self.without_lookup, self.without_lookup_ceiling)

    @property
    def lookup_us(self) -> float:
        """The server's time per resolution that the database lookup takes, from the rates:
        resolution's time per request less the ceiling's and less what the rest of resolution
        adds to the ceiling in the server without the lookup."""
        return 1e6 / self.resolution.rate - 1e6 / self.ceiling.rate - self._rest_us

    @property
    def lookup_budget_us(self) -> float:
        """What the target leaves the lookup: resolution reaches the target ratio exactly
        when :attr:`lookup_us` is at most this."""
        return (1 / TARGET_RATIO - 1) * 1e6 / self.ceiling.rate - self._rest_us

    @property
    def _rest_us(self) -> float:
        return 1e6 / self.without_lookup.rate - 1e6 / self.without_lookup_ceiling.rate


def _ratio(load: Load, ceiling: Load) -> float:
    return load.rate / ceiling.rate if ceiling.rate > 0 else 0.0


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Generate, import and load every database and server; the report."""
    wrk = find_wrk()
    try:
        import urnkit.resolver.web  # noqa: F401  (the server extra's libraries, all of them)
    except ImportError as error:
        raise BenchmarkError(
            f"{error}: the resolver needs the server extra: pip install -e '.[server]'"
        ) from None
    load_average = os.getloadavg()
    imports: list[Import] = []
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="urnkit-bench-") as temporary:
        directory = Path(temporary)
        records = directory / "records.ndjson"
        _say(f"writing {args.urns:,} records to {records}")
        write_records(records, args.urns)
        without_lookup = directory / "without-lookup"
        without_lookup.mkdir()
        (without_lookup / "sitecustomize.py").write_text(
            WITHOUT_LOOKUP % {"prefix": PREFIX}, encoding="utf-8"
        )
        settings = LoadSettings(
            wrk, args.seconds, args.connections, args.threads, args.urns, directory
        )
        for kind in args.databases:
            with fresh_database(kind, directory, args.postgresql_url) as url:
                prepare(url)
                _say(f"{kind}: importing {args.urns:,} records")
                imported = import_records(kind, url, records, args.batch_size)
                if imported.rows != args.urns:
                    raise BenchmarkError(f"{kind}: imported {imported.rows:,} of {args.urns:,}")
                imports.append(imported)
                _say(f"{kind}: {imported.rate:,.0f} rows/s")
                for server in args.servers:
                    loads = []
                    for customize in (None, without_lookup):
                        log = directory / f"{kind}-{server}{'-memory' if customize else ''}.log"
                        with serving(url, server, args.workers, log, customize) as (port, group):
                            _say(
                                f"{kind}, {server}{' without lookup' if customize else ''}: "
                                f"warming up, then wrk for 2 x {args.seconds} s"
                            )
                            # bench-0 was not imported: only the lookup from memory finds it
                            # (the database's would forward it to the national resolver).
                            found = _redirect_location(port, f"/urn:nbn:{PREFIX}-0")
                            if customize and found != "https://example.org/bench/0":
                                raise BenchmarkError("the lookup from memory was not in place")
                            if args.warmup > 0:
                                load(port, group, "resolve", args.warmup, settings)
                            loads.append(load(port, group, "ceiling", args.seconds, settings))
                            loads.append(load(port, group, "resolve", args.seconds, settings))
                    runs.append(Run(kind, server, *loads))
    return report(args, imports, runs, load_average, os.getloadavg())


def _target(
    name: str, measured: float, required: float, *, at_most: bool = False
) -> dict[str, Any]:
    passed = measured <= required if at_most else measured >= required
    return {
        "target": name,
        "required": required,
        "measured": measured,
        "status": "PASS" if passed else "FAIL",
    }


def report(
    args: argparse.Namespace,
    imports: Sequence[Import],
    runs: Sequence[Run],
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
) -> dict[str, Any]:
    """The numbers, the targets met or missed, and which server resolved fastest."""
    targets: list[dict[str, Any]] = []
    for item in runs:
        where = f"{item.database}, {item.server}"
        ratio, p99 = item.ratio, item.resolution.p99_ms
        failures = item.resolution.not_3xx + item.resolution.socket_errors
        targets += [
            _target(
                f"{where}: resolution >= {TARGET_RATIO:.0%} of the ceiling ({ratio:.0%})",
                ratio,
                TARGET_RATIO,
            ),
            _target(
                f"{where}: p99 <= {TARGET_P99_MS:g} ms ({p99:.2f} ms)",
                p99,
                TARGET_P99_MS,
                at_most=True,
            ),
            _target(
                f"{where}: every resolution a 3xx ({failures:,} not)", failures, 0, at_most=True
            ),
        ]
    for imported in imports:
        if imported.database == "postgresql":
            targets.append(
                _target(
                    f"postgresql: import >= {TARGET_IMPORT_RATE:,} rows/s ({imported.rate:,.0f})",
                    imported.rate,
                    TARGET_IMPORT_RATE,
                )
            )
    fastest = {
        database: max(
            (r for r in runs if r.database == database), key=lambda r: r.resolution.rate
        ).server
        for database in dict.fromkeys(r.database for r in runs)
    }
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "urns": args.urns,
        "seconds": args.seconds,
        "warmup": args.warmup,
        "connections": args.connections,
        "threads": args.threads,
        "workers": args.workers,
        "batch_size": args.batch_size,
        "imports": [asdict(i) | {"rows_per_second": i.rate} for i in imports],
        "runs": [
            {
                "database": r.database,
                "server": r.server,
                "ceiling": asdict(r.ceiling) | {"per_second": r.ceiling.rate},
                "resolution": asdict(r.resolution) | {"per_second": r.resolution.rate},
                "ratio": r.ratio,
                "without_lookup_ceiling": asdict(r.without_lookup_ceiling)
                | {"per_second": r.without_lookup_ceiling.rate},
                "without_lookup": asdict(r.without_lookup) | {"per_second": r.without_lookup.rate},
                "ratio_without_lookup": r.ratio_without_lookup,
                "lookup_us": r.lookup_us,
                "lookup_budget_us": r.lookup_budget_us,
            }
            for r in runs
        ],
        "fastest_server": fastest,
        "targets": targets,
    }


def _cpu(measured: dict[str, Any]) -> str:
    return _us(measured["server_cpu_us"])


def _us(cpu: float | None) -> str:
    return "?" if cpu is None else f"{cpu:.0f}"


def format_report(result: dict[str, Any]) -> str:
    """The human-readable table of a :func:`run` report."""
    before, after = result["load_average_before"], result["load_average_after"]
    lines = [
        f"{result['urns']:,} URNs; wrk {result['threads']} threads, {result['connections']} "
        f"connections, {result['seconds']} s per run after {result['warmup']} s warm-up; "
        f"{result['workers']} server worker(s)",
        f"{result['implementation']} {result['python']} on {result['machine']}, "
        f"{result['cpus']} CPUs; load average {before[0]:.2f} before, {after[0]:.2f} after",
        "",
        f"{'database':<11} {'server':<8} {'ceiling/s':>10} {'resolve/s':>10} {'ratio':>6} "
        f"{'p50 ms':>7} {'p99 ms':>7} {'not 3xx':>8} {'import rows/s':>14} "
        f"{'CPU µs/request':>15} {'wrk µs/request':>15}",
        "-" * 120,
    ]
    rates = {i["database"]: i["rows_per_second"] for i in result["imports"]}
    for row in result["runs"]:
        resolution = row["resolution"]
        lines.append(
            f"{row['database']:<11} {row['server']:<8} {row['ceiling']['per_second']:>10,.0f} "
            f"{resolution['per_second']:>10,.0f} {row['ratio']:>6.0%} "
            f"{resolution['p50_ms']:>7.2f} {resolution['p99_ms']:>7.2f} "
            f"{resolution['not_3xx'] + resolution['socket_errors']:>8,} "
            f"{rates[row['database']]:>14,.0f} "
            f"{_cpu(row['ceiling']) + ' / ' + _cpu(resolution):>15} "
            f"{_us(row['ceiling']['wrk_cpu_us']) + ' / ' + _us(resolution['wrk_cpu_us']):>15}"
        )
    lines += [
        "",
        "CPU µs/request: the server's CPU time per request, ceiling / resolution; wrk µs/request:",
        "the load generator's own, on the same CPUs.",
    ]
    lines += [
        "",
        "Resolution without its database (a second server, the lookup answered from memory):",
        f"{'database':<11} {'server':<8} {'ratio':>6} {'without lookup':>15} "
        f"{'lookup µs':>10} {'the target leaves':>18}",
        "-" * 73,
    ]
    for row in result["runs"]:
        lines.append(
            f"{row['database']:<11} {row['server']:<8} {row['ratio']:>6.0%} "
            f"{row['ratio_without_lookup']:>15.0%} {row['lookup_us']:>10.1f} "
            f"{row['lookup_budget_us']:>18.1f}"
        )
    lines += [
        "",
        "lookup µs: the server's time per request (1 / rate) that the lookup adds: resolution's",
        "less the ceiling's, less what the rest of resolution adds in the server without it.",
        "The target leaves: the time per request it allows above the ceiling's, less the rest.",
        "",
    ]
    for imported in result["imports"]:
        database = imported["postgresql_cpu_us"]
        lines.append(
            f"Import, {imported['database']}: {imported['rows_per_second']:,.0f} rows/s; CPU "
            f"µs/row: importer {_us(imported['importer_cpu_us'])}"
            + ("" if database is None else f", its PostgreSQL backends {database:.0f}")
        )
    lines.append("")
    for database, server in result["fastest_server"].items():
        lines.append(f"Fastest resolution on {database}: {server}")
    lines += ["", "Targets:"]
    for target in result["targets"]:
        lines.append(f"  {target['status']:<5} {target['target']}")
    return "\n".join(lines)


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
    parser.add_argument("--warmup", type=int, default=DEFAULT_WARMUP, help="seconds, untimed")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="server processes")
    parser.add_argument(
        "--databases", type=_choices(DATABASES), default=list(DATABASES), help="sqlite,postgresql"
    )
    parser.add_argument(
        "--servers", type=_choices(SERVERS), default=list(SERVERS), help="granian,uvicorn"
    )
    parser.add_argument(
        "--postgresql-url",
        default=DEFAULT_POSTGRESQL_URL,
        help="a database on the PostgreSQL server to create the benchmark's database from",
    )
    parser.add_argument(
        "--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="records per import batch"
    )
    parser.add_argument("--json", metavar="OUT", help="also write the numbers as JSON to OUT")
    args = parser.parse_args(argv)
    if min(args.urns, args.seconds, args.connections, args.threads, args.workers) < 1:
        parser.error("--urns, --seconds, --connections, --threads and --workers must be >= 1")
    if args.connections < args.threads or args.warmup < 0 or args.batch_size < 1:
        parser.error("need --connections >= --threads, --warmup >= 0 and --batch-size >= 1")
    try:
        result = run(args)
    except BenchmarkError as error:
        print(f"resolve_bench: {error}", file=sys.stderr)
        return 2
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(format_report(result))
    return 0 if all(t["status"] == "PASS" for t in result["targets"]) else 1


if __name__ == "__main__":
    sys.exit(main())
