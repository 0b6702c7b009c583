"""What benchmarks/resolve_bench.py computes and replaces is what it says. Nothing here
measures or asserts speed."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import resolve_bench
from resolver_support import PG_URL

from urnkit.resolver.services import Services
from urnkit.resolver.store import Store

rates = st.floats(min_value=100, max_value=100_000)


def _load(rate: float) -> resolve_bench.Load:
    return resolve_bench.Load(int(rate * 10), 10.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0, 0)


@given(rates, rates, rates, rates)
def test_the_lookup_fits_what_the_target_leaves_exactly_when_the_ratio_is_met(
    ceiling: float, resolution: float, ceiling_2: float, without: float
) -> None:
    run = resolve_bench.Run(
        "sqlite", "uvicorn", _load(ceiling), _load(resolution), _load(ceiling_2), _load(without)
    )
    if abs(run.ratio - resolve_bench.TARGET_RATIO) > 1e-6:  # not on the edge, where it rounds
        fits = run.lookup_us <= run.lookup_budget_us
        assert fits == (run.ratio >= resolve_bench.TARGET_RATIO)


def test_the_lookup_from_memory_replaces_the_hot_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'bench.db'}")
    store.upgrade()
    services = Services(store)
    urn = f"URN:NBN:{resolve_bench.PREFIX.upper()}-7"
    # Not registered: forwarded to the national resolver (RFC 8458 §4.4).
    assert asyncio.run(services.resolution.resolve_async(urn)).target == f"https://urn.fi/{urn}"
    monkeypatch.setattr(Store, "resolution_row_async", Store.resolution_row_async)  # restored
    exec(resolve_bench.WITHOUT_LOOKUP % {"prefix": resolve_bench.PREFIX}, {})
    found = asyncio.run(services.resolution.resolve_async(urn))
    # What resolve_bench.write_records stores for record 7: active, at this location.
    assert (found.kind, found.target) == ("redirect", "https://example.org/bench/7")
    store.close()


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
