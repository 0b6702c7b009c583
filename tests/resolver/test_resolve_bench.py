"""benchmarks/resolve_bench.py: its Go anchor answers a resolution as urnkit does (the same
302 to the same location, for any case of the URN; 404 for a URN it does not hold), its Python
floors answer every request with that 302, its rounds
alternate the systems, its table gives each figure's median and range over the rounds, and it
counts the CPU of wrk and of its own PostgreSQL backends only. Nothing here measures speed."""

from __future__ import annotations

import http.client
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import resolve_bench
from resolver_support import PG_URL


def _sample(system: str, server_us: float) -> dict[str, object]:
    return {
        "system": system, "keys": "hot", "round": 1, "server_us": server_us,
        "database_us": None, "wrk_us": 20.0, "rate": 1000.0, "p99_ms": 1.0, "not_3xx": 0,
        "load": 1.0,
    }  # fmt: skip


def test_the_table_gives_the_median_and_the_range_over_the_rounds() -> None:
    samples = [_sample("Go anchor, sqlite", us) for us in (90.0, 60.0, 70.0)]
    table = resolve_bench.summary(samples)
    assert "| Go anchor, sqlite | hot | 70 (60-90) | — | 20 (20-20) |" in table


def test_the_rounds_alternate_the_systems_and_the_ceiling_is_urnkits_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    loaded: list[tuple[int, str]] = []

    def load(port: int, group: object, keys: str, seconds: int, settings: object) -> object:
        if seconds > 1:  # not the warm-up
            loaded.append((port, keys))
        return resolve_bench.Load(100, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0, 0, None, 5.0)

    @contextmanager
    def writing(url: str | None, rate: float, urns: int) -> Iterator[list[int]]:
        written.append((url, rate, urns))
        yield [0]

    written: list[tuple[str | None, float, int]] = []
    monkeypatch.setattr(resolve_bench, "load", load)
    monkeypatch.setattr(resolve_bench, "writing", writing)
    systems: list[resolve_bench.System] = [
        ("urnkit", 1, lambda: 0.0, None, True, "sqlite:///bench.db"),
        ("floor", 2, lambda: 0.0, None, False, None),
    ]
    settings = resolve_bench.LoadSettings("wrk", 2, 1, 1, 10, tmp_path)
    samples = resolve_bench.measure(systems, settings, 2, writes=3.0)
    assert loaded == [
        (1, "ceiling"), (1, "hot"), (2, "hot"), (1, "uniform"), (2, "uniform"),
        (1, "ceiling"), (2, "hot"), (1, "hot"), (2, "uniform"), (1, "uniform"),
    ]  # fmt: skip
    assert {sample["wrk_us"] for sample in samples} == {5.0}
    # Each load writes to the database of the system under it, if it has one.
    assert written == [("sqlite:///bench.db" if port == 1 else None, 3.0, 10) for port, _ in loaded]
    loaded.clear()
    resolve_bench.measure(systems, settings, 1, modes=["uniform"])
    assert loaded == [(1, "uniform"), (2, "uniform")]


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_writes_update_records_of_the_benchmark_from_an_uncounted_connection(
    kind: str, tmp_path: Path
) -> None:
    # The writes move SQLite's change counter, each for a record of the benchmark (migration
    # resolution_changed_keys); on PostgreSQL, the writer is none of the backends counted.
    records = tmp_path / "records.ndjson"
    resolve_bench.write_records(records, 5)
    with resolve_bench.fresh_database(kind, tmp_path, PG_URL) as url:
        resolve_bench.prepare(url)
        resolve_bench.import_records(kind, url, records, 100)
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
        with resolve_bench.writing(url, 200.0, 5) as written:
            deadline = time.monotonic() + 60
            while written[0] < 10 and time.monotonic() < deadline:
                time.sleep(0.01)
            counted = resolve_bench.backend_ticks(url)
        assert written[0] >= 10
        with engine.connect() as connection:
            if kind == "postgresql":
                assert counted == {}
                return
            keys = connection.exec_driver_sql(
                "SELECT DISTINCT equivalence_key FROM resolution_changed_keys"
            ).scalars()
            assert set(keys) <= {f"urn:nbn:fi:bench-{n}" for n in range(1, 6)}
            moves = connection.exec_driver_sql("SELECT counter FROM resolution_changes")
            assert moves.scalar_one() == written[0]
        engine.dispose()


def _answer(port: int, path: str) -> tuple[int, str | None]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Location")
    finally:
        connection.close()


@pytest.mark.skipif(shutil.which("go") is None, reason="Go is not installed: no anchor to test")
def test_the_go_anchor_redirects_as_urnkit_does(tmp_path: Path) -> None:
    # RFC 8458 §3: a URN:NBN is equivalent to itself in any case.
    records = tmp_path / "records.ndjson"
    resolve_bench.write_records(records, 3)
    with resolve_bench.fresh_database("sqlite", tmp_path, "") as url:
        resolve_bench.prepare(url)
        resolve_bench.import_records("sqlite", url, records, 100)
        binary = resolve_bench.build_anchor(tmp_path)
        assert binary is not None
        port = resolve_bench.free_port()
        command = [str(binary), str(tmp_path / "bench.db"), f"127.0.0.1:{port}"]
        with resolve_bench.started("go", command, port, tmp_path / "go.log"):
            expected = (302, "https://example.org/bench/2")
            assert _answer(port, "/urn:nbn:fi:bench-2") == expected
            assert _answer(port, "/URN:NBN:FI:BENCH-2") == expected
            assert _answer(port, "/urn:nbn:fi:bench-4")[0] == 404


@pytest.mark.parametrize("server", resolve_bench.SERVERS)
def test_each_python_floor_answers_every_request_with_the_anchors_302(
    server: str, tmp_path: Path
) -> None:
    port = resolve_bench.free_port()
    command = resolve_bench.floor_command(server, port)
    with resolve_bench.started(server, command, port, tmp_path / "floor.log") as group:
        for path in ("/urn:nbn:fi:bench-2", "/anything?at=all"):
            assert _answer(port, path) == (302, "https://example.org/bench/1")
        assert resolve_bench.cpu_seconds(group=group)  # its processes are counted
    # As many worker processes as CPUs: the production settings' "auto".
    assert command[command.index("--workers") + 1] == str(os.cpu_count() or 1)


def test_cpu_seconds_counts_a_process_group() -> None:
    sum(range(3_000_000))  # some CPU time of our own
    mine = resolve_bench.cpu_seconds(group=os.getpgrp())
    assert mine is not None
    assert mine > 0
    assert resolve_bench.cpu_seconds(group=2**22 + 1) == 0  # beyond pid_max: no such group


def test_pid_ticks_reads_one_process() -> None:
    sum(range(3_000_000))
    assert (resolve_bench.pid_ticks(os.getpid()) or 0) > 0
    assert resolve_bench.pid_ticks(2**22 + 1) is None


def test_a_run_reports_its_own_cpu_time_and_no_other_childs() -> None:
    busy = [sys.executable, "-c", "sum(range(20_000_000)); print('done')"]
    status, output, seconds = resolve_bench._run_measured(busy)
    assert (status, output) == (0, "done\n")
    assert seconds > 0.05
    status, output, idle = resolve_bench._run_measured(["sleep", "0.3"])
    assert (status, output) == (0, "")
    assert idle < seconds / 4  # its own rusage, not the children's that ended before it


def test_postgresql_cpu_is_none_on_sqlite(tmp_path: Path) -> None:
    assert resolve_bench.postgresql_cpu(f"sqlite:///{tmp_path / 'bench.db'}") is None


def test_postgresql_cpu_counts_the_benchmarks_own_backends_only(tmp_path: Path) -> None:
    try:
        context = resolve_bench.fresh_database("postgresql", tmp_path, PG_URL)
        url = context.__enter__()
    except resolve_bench.BenchmarkError as error:
        pytest.skip(f"no PostgreSQL server: {error}")
    try:
        ours = sa.create_engine(url, poolclass=sa.pool.NullPool)
        theirs = sa.create_engine(PG_URL, poolclass=sa.pool.NullPool)  # another database
        with ours.connect() as mine, theirs.connect() as other:
            own_pid = mine.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
            other_pid = other.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
            ticks = resolve_bench.backend_ticks(url)
            assert ticks is not None
            assert set(ticks) == {own_pid}
            assert other_pid not in ticks
        ours.dispose()
        theirs.dispose()
    finally:
        context.__exit__(None, None, None)


@pytest.mark.parametrize("workers", ["0", "two", "-1"])
def test_workers_are_auto_or_a_whole_number(
    workers: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        resolve_bench.main(["--workers", workers])
    assert stopped.value.code == 2
    assert "--workers must be auto or a whole number >= 1" in capsys.readouterr().err
