"""``urnkit db backup`` and ``urnkit db restore``: a SQLite database copied through the online
backup API while it is written, checked by reopening it, and put back; nothing stored is lost."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from resolver_support import urnkit
from services_support import HERE, set_up

from urnkit.resolver.services import Services
from urnkit.resolver.store import Store


def _services(path: Path) -> Services:
    return Services(Store(f"sqlite:///{path}"))


def _everything(services: Services) -> list[tuple[object, ...]]:
    """Every record with its history, as the services read them."""
    records = list(services.transfer.export_records())
    return [(record, services.records.history(record.urn)) for record in records]


@pytest.fixture
def live(tmp_path: Path) -> Services:
    """A database with active, deactivated and changed records (and so history)."""
    services = _services(tmp_path / "live.db")
    who = set_up(services)
    for n in range(1, 6):
        services.records.put(who.demo, f"urn:nbn:fi:demo-{n}", HERE, {"title": f"T{n}"})
    services.records.patch(who.demo, "urn:nbn:fi:demo-2", {"metadata": {"year": 2026}})
    services.records.deactivate(who.demo, "urn:nbn:fi:demo-3", "merged", ["urn:nbn:fi:demo-1"])
    return services


def test_a_backup_restored_elsewhere_holds_everything(live: Services, tmp_path: Path) -> None:
    url = ("--database-url", live.store.url)
    done = urnkit("db", "backup", str(tmp_path / "copy.db"), *url)
    assert done.stdout.startswith("backed up 5 records to ")
    target = ("--database-url", f"sqlite:///{tmp_path / 'restored.db'}")
    assert urnkit("db", "restore", str(tmp_path / "copy.db"), *target).stdout.startswith(
        "restored 5 records"
    )
    restored = _services(tmp_path / "restored.db")
    assert _everything(restored) == _everything(live)
    assert restored.store.schema_state() == "current"
    assert restored.resolution.resolve("urn:nbn:fi:demo-3").kind == "gone"


def test_a_backup_taken_while_records_are_written_is_consistent(
    live: Services, tmp_path: Path
) -> None:
    # The online backup API copies one snapshot: every record in the copy has its history.
    principal = live.access.authenticate(live.admin.create_token("Demo Library"))
    stop = threading.Event()

    def write() -> None:
        n = 100
        while not stop.is_set():
            live.records.put(principal, f"urn:nbn:fi:demo-{n}", HERE, {"title": str(n)})
            n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        copies = [tmp_path / f"copy-{n}.db" for n in range(3)]
        for copy in copies:
            urnkit("db", "backup", str(copy), "--database-url", live.store.url)
    finally:
        stop.set()
        writer.join()
    for copy in copies:
        with sqlite3.connect(copy) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            orphans = connection.execute(
                "SELECT count(*) FROM records WHERE id NOT IN (SELECT record_id FROM history)"
            ).fetchone()
            assert orphans == (0,)
    counts = [
        sqlite3.connect(copy).execute("SELECT count(*) FROM records").fetchone()[0]
        for copy in copies
    ]
    assert counts == sorted(counts)
    assert counts[0] >= 5


def test_an_existing_file_is_replaced_only_with_force(live: Services, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    copy.write_text("precious")
    done = urnkit("db", "backup", str(copy), "--database-url", live.store.url, check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == f"urnkit: {copy} exists: give --force to replace it"
    assert copy.read_text() == "precious"
    urnkit("db", "backup", str(copy), "--force", "--database-url", live.store.url)
    assert sqlite3.connect(copy).execute("SELECT count(*) FROM records").fetchone() == (5,)
    assert not copy.with_name("copy.db.partial").exists()


def test_a_restore_over_records_needs_force(live: Services, tmp_path: Path) -> None:
    urnkit("db", "backup", str(tmp_path / "copy.db"), "--database-url", live.store.url)
    other = _services(tmp_path / "other.db")
    set_up(other)
    other.records.put(
        other.access.authenticate(other.admin.create_token("Demo Library")),
        "urn:nbn:fi:demo-999",
        HERE,
        {},
    )
    url = ("--database-url", other.store.url)
    done = urnkit("db", "restore", str(tmp_path / "copy.db"), *url, check=False)
    assert done.returncode == 2
    assert "holds 1 records: give --force" in done.stderr
    urnkit("db", "restore", str(tmp_path / "copy.db"), "--force", *url)
    assert [r.urn for r in _services(tmp_path / "other.db").transfer.export_records()] == [
        r.urn for r in live.transfer.export_records()
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a database at all" * 100, "is not a usable SQLite database"),
        (None, "is a SQLite database, but not an urnkit one"),
    ],
)
def test_a_restore_of_something_else_is_refused(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    source = tmp_path / "source.db"
    if content is None:
        sqlite3.connect(source).execute("CREATE TABLE t (x)").connection.close()
    else:
        source.write_bytes(content)
    target = f"sqlite:///{tmp_path / 'target.db'}"
    done = urnkit("db", "restore", str(source), "--database-url", target, check=False)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_postgresql_is_pointed_to_pg_dump(tmp_path: Path) -> None:
    url = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
    done = urnkit("db", "backup", str(tmp_path / "x.dump"), "--database-url", url, check=False)
    assert done.returncode == 2
    assert "use pg_dump --format=custom" in done.stderr


def test_a_backup_into_a_missing_directory_is_refused(live: Services, tmp_path: Path) -> None:
    copy = tmp_path / "no" / "copy.db"
    done = urnkit("db", "backup", str(copy), "--database-url", live.store.url, check=False)
    assert done.returncode == 2
    assert f"{copy.parent} is not a directory" in done.stderr
