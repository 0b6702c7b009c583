"""On SQLite, writers wait for each other: the statistics flush started while the largest
batch holds the database's write lock waits for it (``BEGIN IMMEDIATE`` and the busy timeout,
store/engine.py), and both succeed, instead of one failing with "database is locked"."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from resolver_support import wait_for
from services_support import set_up

from urnkit.resolver.domain import Location
from urnkit.resolver.services import Services
from urnkit.resolver.services.records import MAX_BATCH, MAX_BATCH_LOCATIONS
from urnkit.resolver.store import Store


def write_locked(path: Path) -> bool:
    """Whether another connection holds the database's write lock now."""
    probe = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as error:
        if "locked" not in str(error):
            raise
        return True
    finally:
        probe.close()


def test_the_statistics_flush_waits_for_the_largest_batch(tmp_path: Path) -> None:
    path = tmp_path / "urnkit.db"
    services = Services(Store(f"sqlite:///{path}"))
    who = set_up(services)
    per_record = MAX_BATCH_LOCATIONS // MAX_BATCH
    items = [
        (
            f"urn:nbn:fi:demo-{n}",
            [Location(f"https://example.org/{n}/{k}") for k in range(per_record)],
            {"title": f"Record {n}"},
        )
        for n in range(MAX_BATCH)
    ]
    outcome: list[object] = []

    def batch() -> None:
        try:
            outcome.append(services.records.batch(who.demo, items)[0])
        except Exception as error:  # reported by the assertion below
            outcome.append(error)

    writer = threading.Thread(target=batch)
    writer.start()

    def batch_writing() -> bool:  # the batch is in its write transaction
        if write_locked(path):
            return True
        assert writer.is_alive(), outcome
        return False

    wait_for(batch_writing, "the batch to take the write lock", seconds=60)
    services.overview.tally.add("fi:demo")
    assert services.overview.flush_statistics() == 1  # waited, then wrote
    writer.join()
    assert outcome == [200]
    assert [count for _, _, count in services.overview.statistics(1)] == [1]
    assert len(list(services.transfer.export_records())) == MAX_BATCH
    services.store.close()
