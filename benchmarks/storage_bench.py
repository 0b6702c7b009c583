"""Import speed and storage per URN, on SQLite and PostgreSQL: what ``urnkit import`` costs per
row, and what a URN with one location and a title takes on disk, table by table.

Usage::

    .venv/bin/python benchmarks/storage_bench.py [--urns N] [--databases sqlite,postgresql]
        [--batch-size B] [--postgresql-url URL] [--json OUT] [--through-command]

    # before and after a change, in the same sitting: the same script over another checkout
    PYTHONPATH=../other-checkout/src .venv/bin/python benchmarks/storage_bench.py --urns 1000000
    # against the code an issue was filed on, whose Python API differs: both through the command
    PYTHONPATH=../filed/src .venv/bin/python benchmarks/storage_bench.py --through-command

Imports ``--urns`` records (``urn:nbn:fi:bench-N``, one location, metadata ``{"title": …,
"year": 2026}``) into a new database as ``benchmarks/resolve_bench.py`` does (its NDJSON and
import code), then reports the rows per second, the CPU time per row (the importer's and, on
PostgreSQL, the benchmark's own backends'), and the bytes per URN: SQLite's file after a WAL
checkpoint, split by table and index (``dbstat``); PostgreSQL's database growth, split by table
(with its TOAST) and index (``pg_total_relation_size`` less ``pg_indexes_size``;
``pg_relation_size`` of each index). Targets (the scale issue): 350 bytes per URN at most on
each database; the import's CPU per row on SQLite at most 65 µs.

No server runs: the import is ``urnkit import``'s code in this process (or the command itself,
``--through-command``), so docs/deploy.md's server settings (workers, access log) do not apply.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from resolve_bench import (
    DEFAULT_POSTGRESQL_URL,
    BenchmarkError,
    fresh_database,
    import_records,
    import_through_command,
    prepare,
    write_records,
)

TARGET_BYTES: Final = 350
TARGET_SQLITE_CPU_US: Final = 65.0


def sqlite_sizes(path: Path) -> dict[str, int]:
    """Bytes of each table and index of the SQLite database at ``path``, after a checkpoint
    that moves the WAL into it; ``total``: the file."""
    connection = sqlite3.connect(path)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = connection.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
    finally:
        connection.close()
    return {name: size for name, size in rows if size} | {"total": path.stat().st_size}


def postgresql_sizes(url: str) -> dict[str, int]:
    """Bytes of each table of the database at ``url`` (its heap and TOAST) and of each index;
    ``total``: the database."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                sa.text(
                    "SELECT relname, CASE relkind WHEN 'i' THEN pg_relation_size(oid)"
                    " ELSE pg_total_relation_size(oid) - pg_indexes_size(oid) END FROM pg_class"
                    " WHERE relkind IN ('r', 'i') AND relnamespace = 'public'::regnamespace"
                )
            ).all()
            total = connection.execute(sa.text("SELECT pg_database_size(current_database())"))
            sizes = {"total": int(total.scalar_one())}
    finally:
        engine.dispose()
    # The empty tables' and indexes' pages left out.
    sizes |= {name: int(size) for name, size in rows if size > 16_384}
    return sizes


def measure(kind: str, args: argparse.Namespace, records: Path, directory: Path) -> dict[str, Any]:
    """Import into a new database of ``kind``; the import's numbers and the sizes."""
    with fresh_database(kind, directory, args.postgresql_url) as url:
        prepare(url)
        empty = 0 if kind == "sqlite" else postgresql_sizes(url)["total"]
        run = import_through_command if args.through_command else import_records
        imported = run(kind, url, records, args.batch_size)
        if imported.rows != args.urns:
            raise BenchmarkError(f"{kind}: imported {imported.rows:,} of {args.urns:,}")
        if kind == "sqlite":
            sizes = sqlite_sizes(Path(url.removeprefix("sqlite:///")))
        else:
            sizes = postgresql_sizes(url)
    per_urn = {name: size / args.urns for name, size in sizes.items()}
    per_urn["total"] = (sizes["total"] - empty) / args.urns
    return {"import": asdict(imported) | {"rate": imported.rate}, "bytes_per_urn": per_urn}


def format_report(result: dict[str, Any]) -> str:
    """The numbers, a block per database."""
    lines = []
    for kind, found in result["databases"].items():
        imported = found["import"]
        cpu = imported["importer_cpu_us"]
        server = imported["postgresql_cpu_us"]
        lines.append(
            f"{kind}: {imported['rows']:,} rows in {imported['seconds']:.1f} s, "
            f"{imported['rate']:,.0f} rows/s; CPU µs/row: importer {cpu:.0f}"
            + ("" if server is None else f", PostgreSQL {server:.0f}")
        )
        sizes = found["bytes_per_urn"]
        lines.append(f"  bytes per URN: {sizes['total']:.0f}")
        for name, size in sorted(sizes.items(), key=lambda item: -item[1]):
            if name != "total" and size >= 1:
                lines.append(f"    {name:40s} {size:8.1f}")
    for target in result["targets"]:
        lines.append(f"{target['status']}  {target['target']} ({target['measured']:.0f})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urns", type=int, default=1_000_000)
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument(
        "--postgresql-url",
        default=DEFAULT_POSTGRESQL_URL,
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--through-command",
        action="store_true",
        help="import with `python -m urnkit import` (for a checkout whose Python API differs)",
    )
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"urns": args.urns, "databases": {}, "targets": []}
    try:
        with tempfile.TemporaryDirectory(prefix="urnkit-storage-") as temporary:
            directory = Path(temporary)
            records = directory / "records.ndjson"
            write_records(records, args.urns)
            for kind in args.databases.split(","):
                print(f"{kind}: importing {args.urns:,} records", file=sys.stderr, flush=True)
                result["databases"][kind] = measure(kind, args, records, directory)
    except BenchmarkError as error:
        print(f"storage_bench: {error}", file=sys.stderr)
        return 2
    for kind, found in result["databases"].items():
        size = found["bytes_per_urn"]["total"]
        result["targets"].append(
            _target(f"{kind}: bytes per URN <= {TARGET_BYTES}", size, TARGET_BYTES)
        )
        if kind == "sqlite":
            cpu = found["import"]["importer_cpu_us"]
            result["targets"].append(
                _target(
                    f"sqlite: import CPU µs/row <= {TARGET_SQLITE_CPU_US:.0f}",
                    cpu,
                    TARGET_SQLITE_CPU_US,
                )
            )
    print(format_report(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0 if all(t["status"] == "PASS" for t in result["targets"]) else 1


def _target(name: str, measured: float, limit: float) -> dict[str, Any]:
    return {
        "target": name,
        "measured": measured,
        "limit": limit,
        "status": "PASS" if measured <= limit else "FAIL",
    }


if __name__ == "__main__":
    sys.exit(main())
