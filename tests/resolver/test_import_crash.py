"""``kill -9`` during ``urnkit import``: every committed batch stays whole, no partial batch is
left, and rerunning the import completes it without duplicates.

Acceptance point of the resolver issue: "`kill -9` during `urnkit import` leaves every committed
batch and no partial batch; rerunning completes the import without duplicates." The import runs
as its own process, as an operator would run it; the test watches the database from outside and
sends SIGKILL once a few batches are in and a batch's transaction is open (PostgreSQL: the
import's session holds a transaction id; SQLite: the database's write lock is taken), so the
process dies in the middle of a batch, not between two. It is killed three times, each time a
little later into a transaction, and restarted; the last run completes the import.
"""

from __future__ import annotations

import csv
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import sqlalchemy as sa
from resolver_support import urnkit, urnkit_here

from urnkit.resolver.store import history, locations, records

TOTAL = 20_000
BATCH = 1_000
KILLS = ((4 * BATCH, 0.0), (8 * BATCH, 0.03), (12 * BATCH, 0.06))  # (committed, then seconds)


def urn(number: int) -> str:
    """The URN of the ``number``-th record of the import file."""
    return f"urn:nbn:fi:test-imp{number}"


def urls(number: int) -> tuple[str, str]:
    """The two locations of the ``number``-th record: the resource and a mirror."""
    return f"https://example.org/{number}", f"https://mirror.example.org/{number}"


def write_import_file(directory: Path, kind: str) -> Path:
    """:data:`TOTAL` records, each with two locations and metadata, as ``urnkit import`` reads
    them: NDJSON with a ``locations`` array, or CSV with a ``url`` and a ``locations`` cell."""
    path = directory / f"records.{kind}"
    with path.open("w", encoding="utf-8", newline="") as out:
        if kind == "ndjson":
            for n in range(TOTAL):
                first, mirror = urls(n)
                row = {
                    "urn": urn(n),
                    "locations": [{"url": first}, {"url": mirror, "priority": 2}],
                    "metadata": {"title": f"Record {n}"},
                }
                out.write(json.dumps(row) + "\n")
        else:
            writer = csv.writer(out)
            writer.writerow(["urn", "url", "locations", "metadata"])
            for n in range(TOTAL):
                first, mirror = urls(n)
                mirrors = json.dumps([{"url": mirror, "priority": 2}])
                writer.writerow([urn(n), first, mirrors, json.dumps({"title": f"Record {n}"})])
    return path


def import_command(path: Path, database_url: str) -> list[str]:
    """The arguments of ``urnkit import`` in batches of :data:`BATCH`."""
    return ["import", str(path), "--batch-size", str(BATCH), "--database-url", database_url]


def writing(engine: sa.Engine) -> bool:
    """Whether another session is inside a write transaction on the database now."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            sessions = connection.scalar(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL"
                )
            )
        return bool(sessions)
    probe = sqlite3.connect(str(engine.url.database), timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")  # fails at once while a writer holds the lock
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as error:
        if "locked" not in str(error):
            raise
        return True
    finally:
        probe.close()


def kill_mid_import(
    path: Path, database_url: str, engine: sa.Engine, log: Path, committed: int, delay: float
) -> None:
    """Start the import in a process of its own and SIGKILL it inside a batch's transaction,
    ``delay`` seconds into one that began once ``committed`` records were in."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "urnkit", *import_command(path, database_url)],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, (
                f"the import ended (exit {process.returncode}) before it could be killed:\n"
                + log.read_text(errors="replace")
            )
            assert time.monotonic() < deadline, "the import committed too little in 120 s"
            if count(engine, records) >= committed and writing(engine):
                time.sleep(delay)
                if writing(engine):
                    break
            time.sleep(0.002)
        process.send_signal(signal.SIGKILL)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL, log.read_text(errors="replace")


def count(engine: sa.Engine, table: sa.Table) -> int:
    """The number of rows in ``table``."""
    with engine.connect() as connection:
        return int(connection.scalar(sa.select(sa.func.count()).select_from(table)) or 0)


def check_whole_records(engine: sa.Engine) -> int:
    """Every stored record is one of the file's first records, whole: both its locations and
    one history entry ("imported"). The number of records."""
    with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            # One snapshot for every query: a COMMIT the killed client sent just before it died
            # may still land between two statements, as PostgreSQL finishes what it received.
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
        stored = connection.execute(sa.select(records.c.id, records.c.urn)).all()
        found = {
            row.record_id: row.urls
            for row in connection.execute(
                sa.select(
                    locations.c.record_id, sa.func.count(locations.c.id).label("urls")
                ).group_by(locations.c.record_id)
            )
        }
        entries = connection.execute(
            sa.select(history.c.record_id, history.c.action, history.c.actor)
        ).all()
        sample = connection.scalars(
            sa.select(locations.c.url)
            .join(records)
            .where(records.c.urn == urn(0))
            .order_by(locations.c.priority)
        ).all()
    assert {row.urn for row in stored} == {urn(n) for n in range(len(stored))}, (
        "the stored records are not the file's first ones"
    )
    assert all(found.get(row.id) == 2 for row in stored), "a record lacks locations"
    assert len(found) == len(stored), "locations of records not stored"
    assert sorted(e.record_id for e in entries) == sorted(row.id for row in stored), (
        "not exactly one history entry per record"
    )
    assert {(e.action, e.actor) for e in entries} == {("imported", "Test Library")}
    assert tuple(sample) == urls(0)
    return len(stored)


def test_kill_during_import_leaves_whole_batches_and_rerun_completes(
    database_url: str, tmp_path: Path
) -> None:
    """SIGKILL mid-batch, three times: a whole number of batches each time, each record whole;
    the last run imports the rest, says how many it skipped, and leaves every record once.
    Each format once, on a database of its own: the batches they are read into are one code."""
    kind = "csv" if database_url.startswith("sqlite") else "ndjson"
    urnkit_here("admin", "create-org", "Test Library", "--database-url", database_url)
    urnkit_here("admin", "delegate", "Test Library", "fi:test", "--database-url", database_url)
    path = write_import_file(tmp_path, kind)
    engine = sa.create_engine(database_url)
    try:
        for at_least, delay in KILLS:
            kill_mid_import(path, database_url, engine, tmp_path / "import.log", at_least, delay)
            committed = check_whole_records(engine)
            assert committed % BATCH == 0, f"{committed} records: a partial batch was committed"
            assert at_least <= committed < TOTAL, committed

        rerun = urnkit(*import_command(path, database_url))
        skipped = f"{TOTAL - committed:,} imported, {committed:,} already present (skipped)"
        assert rerun.stdout.strip() == skipped, rerun.stdout + rerun.stderr

        assert check_whole_records(engine) == TOTAL
        with engine.connect() as connection:
            keys = connection.scalar(sa.select(sa.func.count(records.c.equivalence_key.distinct())))
        assert keys == TOTAL
        assert count(engine, locations) == 2 * TOTAL
        assert count(engine, history) == TOTAL
    finally:
        engine.dispose()
