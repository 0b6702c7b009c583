"""Which database a read goes to (store/databases.py): the order of the primary and the
standbys by their state, probes of a database that answers and of one that does not, and the
settings that name the standbys (issue 35). Real replication: ``web/test_replication.py``."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from resolver_support import PG_URL, free_port, require_postgresql

from urnkit.resolver.cli.common import settings_for
from urnkit.resolver.settings import Settings
from urnkit.resolver.store import Store, create_engine
from urnkit.resolver.store.databases import Database, Databases

ENGINE = "postgresql+psycopg://urnkit@{}/urnkit"


@pytest.fixture
def three() -> Iterator[Databases]:
    """A primary and two standbys, never probed (no thread: the tests set their states)."""
    made = [Database(name, create_engine(ENGINE.format(name.replace(" ", "")))) for name in
            ("primary", "standby 1", "standby 2")]  # fmt: skip
    databases = Databases(made[0], made[1:], max_lag=10)
    yield databases
    databases.close()


def _names(databases: list[Database]) -> list[str]:
    return [database.name for database in databases]


def _lost(database: Database) -> None:
    """``database`` refused a connection (libpq's words)."""
    refused = psycopg.OperationalError("connection failed: Connection refused")
    assert database.outages.unavailable(refused) is not None


def test_reads_that_may_be_old_try_the_standbys_first(three: Databases) -> None:
    assert _names(three.order(standby=True)) == ["standby 1", "standby 2", "primary"]
    assert _names(three.order(standby=False)) == ["primary", "standby 1", "standby 2"]


def test_a_standby_beyond_the_lag_comes_after_the_primary(three: Databases) -> None:
    standby = three.standbys[0]
    states = []
    for lag in (10.0, 10.5):  # as far as allowed: still in; then beyond
        standby.lag = lag
        states.append(standby.state)
    assert states == ["ok", "lagging"]
    assert _names(three.order(standby=True)) == ["standby 2", "primary", "standby 1"]
    standby.lag = 0.2  # caught up: taken back
    assert _names(three.order(standby=True))[0] == "standby 1"


def test_without_the_primary_every_read_goes_to_the_standbys(three: Databases) -> None:
    assert not three.read_only
    _lost(three.primary)
    assert three.primary.state == "unreachable"
    assert three.read_only
    assert _names(three.order(standby=False)) == ["standby 1", "standby 2", "primary"]
    three.primary.outages.answered()
    assert not three.read_only


def test_a_store_without_standbys_reads_its_one_database() -> None:
    store = Store("sqlite://")
    assert _names(store.databases.order(standby=True)) == ["primary"]
    assert not store.read_only
    store.close()
    with pytest.raises(ValueError, match="PostgreSQL's standbys"):
        Store("sqlite://", replica_urls=["postgresql+psycopg://u@standby/db"])


def test_a_probe_measures_a_database_that_answers_and_skips_one_that_does_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    require_postgresql()
    # Not in recovery, the shared server is behind nothing: a lag of 0.
    answering = Database("standby 1", create_engine(PG_URL), logged=True)
    away = ENGINE.format(f"127.0.0.1:{free_port()}")
    silent = Database("standby 2", create_engine(away), logged=True)
    databases = Databases(Database("primary", create_engine(PG_URL)), [answering, silent])
    try:
        with caplog.at_level(logging.WARNING, "urnkit.resolver.database"):
            databases.probe()
        assert (answering.state, answering.lag) == ("ok", 0.0)
        assert silent.state == "unreachable"
        assert _names(databases.order(standby=True)) == ["standby 1", "primary", "standby 2"]
        [line] = [r.getMessage() for r in caplog.records if "unavailable" in r.getMessage()]
        assert line.startswith("database (standby 2) unavailable, reads go to the others")
    finally:
        databases.close()


_NAMES = st.text("abcdefghijklmnopqrstuvwxyz0123456789.-", min_size=1, max_size=10)
URLS = st.lists(
    st.builds("postgresql+psycopg://{}@{}/{}?host={}:5432".format, _NAMES, _NAMES, _NAMES, _NAMES),
    max_size=4,
)
"""Standbys' URLs: a list of any length (none, one, several), each with a query."""


@settings(deadline=None)  # the first example imports the web layer (Settings.checked)
@given(URLS)
def test_the_standbys_travel_to_the_workers_as_one_variable(urls: list[str]) -> None:
    """``urnkit serve`` hands its settings to its workers as ``URNKIT_*`` variables."""
    settings = Settings(replica_urls=tuple(urls))
    assert Settings.from_environment(settings.environment()).replica_urls == tuple(urls)


def test_the_standbys_from_a_variable_a_file_and_flags(tmp_path: Path) -> None:
    one, two = "postgresql+psycopg://u@s1/db", "postgresql+psycopg://u@s2/db"
    variable = {"URNKIT_REPLICA_URLS": f" {one} ,{two},"}
    assert Settings.from_environment(variable).replica_urls == (one, two)
    file = tmp_path / "urnkit.toml"
    file.write_text(f'replica_urls = ["{one}", "{two}"]\n')
    assert Settings.from_environment({}, str(file)).replica_urls == (one, two)
    file.write_text(f'replica_urls = "{one}"\n')  # a list, not text
    with pytest.raises(ValueError, match="must be a list of text"):
        Settings.from_environment({}, str(file))
    with pytest.raises(ValueError, match="is no PostgreSQL URL"):
        Settings.from_environment({"URNKIT_REPLICA_URLS": "sqlite:///standby.db"})
    with pytest.raises(ValueError, match="replica_max_lag must be 1"):
        Settings.from_environment({"URNKIT_REPLICA_MAX_LAG": "0"})
    flags = argparse.Namespace(replica_url=[one, two], replica_max_lag=3, config=None)
    found = settings_for(flags)
    assert (found.replica_urls, found.replica_max_lag) == ((one, two), 3)
