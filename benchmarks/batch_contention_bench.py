"""Six overlapping API batches over the same URNs, against the same six one after another.

Usage::

    .venv/bin/python benchmarks/batch_contention_bench.py [--urns N] [--clients C]
        [--server uvicorn|granian] [--timeout S] [--databases sqlite,postgresql]
        [--postgresql-url URL] [--json OUT]

    .venv/bin/python benchmarks/batch_contention_bench.py --urns 200   # a quick check

Per database, prepared as ``benchmarks/resolve_bench.py`` prepares it (a SQLite file in a
temporary directory; a PostgreSQL database made for the run and dropped after it), with a
registrant token from ``urnkit admin create-token``, and ``python -m urnkit serve`` with the
production settings of docs/deploy.md (``--workers auto``, the access log on) on a free port of
127.0.0.1:

1. **Serial.** ``--clients`` ``POST /api/v1/urns:batch``, one after another, each over the same
   ``--urns`` new URNs (the first creates them, the others replace them), alternately in
   ascending and descending order; each client's records carry its number in their metadata.
2. **Overlapping.** The same over ``--urns`` other new URNs, but every client sends its batch
   at once (a thread each, released together, the ascending ones first), and waits up to
   ``--timeout`` seconds for its answer.

For each phase it prints each batch's status and wall time, the phase's total (first request to
last answer), the server's CPU time (its process group's, and on PostgreSQL its own backends',
from ``/proc``: ``resolve_bench.postgresql_cpu``), and whether the records ended as some serial
order leaves them: every record written by the same client, the last to commit. The overlapping
total is given as a multiple of the serial one. Exit status: 0 when every batch of both phases
got 200 and both states are consistent, 1 when not, 2 when the benchmark cannot run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from resolve_bench import (
    DATABASES,
    DEFAULT_POSTGRESQL_URL,
    ORGANISATION,
    PREFIX,
    BenchmarkError,
    _choices,
    cpu_seconds,
    fresh_database,
    postgresql_cpu,
    prepare,
    serving,
    urnkit,
)

DEFAULT_URNS: Final = 2_000
DEFAULT_CLIENTS: Final = 6
DEFAULT_TIMEOUT: Final = 900.0


@dataclass(frozen=True, slots=True)
class Batch:
    """One client's batch: its order, the answer's status (0: no answer in time) and seconds."""

    client: int
    order: str
    status: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Phase:
    """The batches of one phase, its wall time, the server's CPU seconds (the server's process
    group; the benchmark's PostgreSQL backends, None on SQLite) and whether the records ended
    consistent."""

    name: str
    batches: list[Batch]
    seconds: float
    server_cpu: float | None
    postgresql_cpu: float | None
    consistent: bool
    last_writer: int | None


def batch_body(client: int, first: int, count: int) -> bytes:
    """The batch of ``client``: URNs ``first`` … ``first + count - 1``, ascending for even
    clients and descending for odd ones, each record naming the client in its metadata."""
    numbers = range(first, first + count)
    records = [
        {
            "urn": f"urn:nbn:{PREFIX}-{n}",
            "locations": [{"url": f"https://example.org/bench/{client}/{n}"}],
            "metadata": {"title": f"Batch record {n}", "client": client},
        }
        for n in (numbers if client % 2 == 0 else reversed(numbers))
    ]
    return json.dumps({"records": records}).encode()


def post_batch(port: int, token: str, client: int, body: bytes, timeout: float) -> Batch:
    """``POST /api/v1/urns:batch`` with ``body``; its status (0 when no answer came within
    ``timeout``) and wall time."""
    order = "ascending" if client % 2 == 0 else "descending"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    start = time.perf_counter()
    try:
        connection.request("POST", "/api/v1/urns:batch", body, headers)
        response = connection.getresponse()
        response.read()
        status = response.status
    except TimeoutError:
        status = 0
    finally:
        connection.close()
    return Batch(client, order, status, time.perf_counter() - start)


def last_writers(url: str, first: int, count: int) -> Counter[int]:
    """How many of the URNs ``first`` … each client's batch left as they are."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                sa.text("SELECT urn, metadata FROM records WHERE prefix = :prefix"),
                {"prefix": PREFIX},
            ).all()
    finally:
        engine.dispose()
    wanted = {f"urn:nbn:{PREFIX}-{n}" for n in range(first, first + count)}
    found: Counter[int] = Counter()
    for urn, metadata in rows:
        if urn in wanted:
            document = metadata if isinstance(metadata, dict) else json.loads(metadata)
            found[document["client"]] += 1
    return found


def run_phase(
    name: str, kind: str, url: str, port: int, group: int, token: str, args: argparse.Namespace
) -> Phase:
    """One phase (``serial`` or ``overlapping``) over URNs of its own."""
    first = 1 if name == "serial" else args.urns + 1
    bodies = [batch_body(client, first, args.urns) for client in range(args.clients)]
    cpu = cpu_seconds(group=group), postgresql_cpu(url)
    start = time.perf_counter()
    if name == "serial":
        batches = [
            post_batch(port, token, client, body, args.timeout)
            for client, body in enumerate(bodies)
        ]
    else:
        batches = _overlapping(port, token, bodies, args.timeout)
    seconds = time.perf_counter() - start
    after = cpu_seconds(group=group), postgresql_cpu(url)
    server = None if cpu[0] is None or after[0] is None else after[0] - cpu[0]
    postgresql = None if cpu[1] is None or after[1] is None else after[1] - cpu[1]
    if any(batch.status == 0 for batch in batches):
        _say(f"{kind}, {name}: waiting for the server to finish the batches that timed out")
        _idle(group)
    writers = last_writers(url, first, args.urns)
    consistent = len(writers) == 1 and sum(writers.values()) == args.urns
    last = next(iter(writers)) if consistent else None
    return Phase(name, batches, seconds, server, postgresql, consistent, last)


def _overlapping(port: int, token: str, bodies: Sequence[bytes], timeout: float) -> list[Batch]:
    """Every batch sent at once from a thread of its own, the ascending ones started first."""
    results: list[Batch | None] = [None] * len(bodies)
    release = threading.Barrier(len(bodies))

    def send(client: int) -> None:
        release.wait()
        results[client] = post_batch(port, token, client, bodies[client], timeout)

    order = sorted(range(len(bodies)), key=lambda client: client % 2)
    threads = [threading.Thread(target=send, args=(client,)) for client in order]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [batch for batch in results if batch is not None]


def _idle(group: int) -> None:
    """Wait until the server's processes have used no CPU for two seconds running."""
    quiet, last = 0, cpu_seconds(group=group)
    while quiet < 4:
        time.sleep(0.5)
        now = cpu_seconds(group=group)
        quiet = quiet + 1 if now == last else 0
        last = now


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Both phases on every database; the report."""
    load_average = os.getloadavg()
    phases: dict[str, list[Phase]] = {}
    with tempfile.TemporaryDirectory(prefix="urnkit-batch-bench-") as temporary:
        directory = Path(temporary)
        for kind in args.databases:
            with fresh_database(kind, directory, args.postgresql_url) as url:
                prepare(url)
                token = urnkit("admin", "create-token", ORGANISATION, "--database-url", url)
                token = token.strip().splitlines()[-1]
                log = directory / f"{kind}.log"
                with serving(url, args.server, "auto", log) as (port, group):
                    phases[kind] = []
                    for name in ("serial", "overlapping"):
                        _say(f"{kind}: {name}, {args.clients} batches of {args.urns:,} URNs")
                        phases[kind].append(run_phase(name, kind, url, port, group, token, args))
    return {
        "urns": args.urns,
        "clients": args.clients,
        "server": args.server,
        "load_average": load_average,
        "cpus": os.cpu_count(),
        "phases": {kind: [asdict(phase) for phase in found] for kind, found in phases.items()},
    }


def format_report(result: dict[str, Any]) -> str:
    """The report as text: each phase's batches, total, CPU and consistency."""
    lines = [
        f"{result['clients']} batches of {result['urns']:,} URNs, {result['server']}, "
        f"{result['cpus']} CPUs, load average {result['load_average'][0]:.2f} at the start",
    ]
    for kind, found in result["phases"].items():
        serial = found[0]["seconds"]
        for phase in found:
            statuses = Counter(batch["status"] for batch in phase["batches"])
            walls = " ".join(
                f"{b['order'][0]}{b['client']}:{b['seconds']:.1f}s/{b['status'] or 'timeout'}"
                for b in phase["batches"]
            )
            cpu = "" if phase["server_cpu"] is None else f", server CPU {phase['server_cpu']:.1f} s"
            if phase["postgresql_cpu"] is not None:
                cpu += f", PostgreSQL CPU {phase['postgresql_cpu']:.1f} s"
            lines.append(
                f"{kind:<10} {phase['name']:<11} total {phase['seconds']:.1f} s "
                f"({phase['seconds'] / serial:.2f} x serial){cpu}; statuses "
                f"{dict(sorted(statuses.items()))}; "
                f"{'consistent' if phase['consistent'] else 'INCONSISTENT'}"
            )
            lines.append(f"{'':<10} batches: {walls}")
    return "\n".join(lines)


def passed(result: dict[str, Any]) -> bool:
    """Every batch answered 200 and every phase left the records consistent."""
    return all(
        phase["consistent"] and all(batch["status"] == 200 for batch in phase["batches"])
        for found in result["phases"].values()
        for phase in found
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--urns", type=int, default=DEFAULT_URNS, help="URNs in each batch")
    parser.add_argument("--clients", type=int, default=DEFAULT_CLIENTS, help="batches a phase")
    parser.add_argument("--server", choices=("uvicorn", "granian"), default="uvicorn")
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds a client waits"
    )
    parser.add_argument("--databases", type=_choices(DATABASES), default=list(DATABASES))
    parser.add_argument("--postgresql-url", default=DEFAULT_POSTGRESQL_URL)
    parser.add_argument("--json", type=Path, help="also write every number here")
    args = parser.parse_args(argv)
    try:
        result = run(args)
    except BenchmarkError as error:
        print(f"batch_contention_bench: {error}", file=sys.stderr)
        return 2
    print(format_report(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if passed(result) else 1


if __name__ == "__main__":
    sys.exit(main())
