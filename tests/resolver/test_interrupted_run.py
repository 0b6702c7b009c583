"""The test command leaves nothing behind when interrupted: ``tasks.run_pytest`` (what
``python3 tasks.py test`` runs after its checks) is started on ``interrupted_run.py``, whose test
creates a PostgreSQL database and starts a server; once both exist, the command gets SIGINT (as
Ctrl-C in a terminal sends it) or SIGTERM; afterwards no process of the run is left and the
database is gone (docs/development.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from resolver_support import PG_URL, drop_database, require_postgresql, wait_for

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RUN = "import sys, tasks; sys.exit(tasks.run_pytest(*sys.argv[1:]))"
# As a background job of a shell (or nohup) starts it: SIGINT ignored, and an ignored signal
# stays ignored in every program started after.
RUN_IGNORING_SIGINT = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); " + RUN
SECONDS = 180  # for the run to start its server and to end once interrupted


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def _databases() -> set[str]:
    engine = sa.create_engine(PG_URL)
    try:
        with engine.connect() as connection:
            return set(connection.execute(sa.text("SELECT datname FROM pg_database")).scalars())
    finally:
        engine.dispose()


@pytest.fixture
def command(
    tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[tuple[subprocess.Popen[bytes], Path, Path]]:
    """The test command's pytest runner on ``interrupted_run.py``, in a process group of its
    own as a terminal starts it (with SIGINT ignored, as a background job, where the test asks
    for ``RUN_IGNORING_SIGINT``); the file where its test says what it started, and its output.
    Whatever is left is killed afterwards, passed or failed."""
    require_postgresql()
    ready, output = tmp_path / "started.json", tmp_path / "output.txt"
    environment = {**os.environ, "URNKIT_INTERRUPTED_RUN": str(ready)}
    arguments = ["-p", "no:cacheprovider", str(HERE / "interrupted_run.py")]
    with output.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-c", getattr(request, "param", RUN), *arguments],
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            process_group=0,
        )
    try:
        yield process, ready, output
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if ready.exists():
            drop_database(json.loads(ready.read_text(encoding="utf-8"))["database"])


def _started(process: subprocess.Popen[bytes], ready: Path, output: Path) -> dict[str, Any]:
    """What the run's test started, once it says so."""

    def written() -> bool:
        if ready.exists():
            return True
        assert process.poll() is None, output.read_text(errors="replace")
        return False

    wait_for(written, f"the run's test to write {ready} (the run's output: {output})", SECONDS)
    started: dict[str, Any] = json.loads(ready.read_text(encoding="utf-8"))
    return started


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_an_interrupted_run_leaves_no_process_and_no_database(
    command: tuple[subprocess.Popen[bytes], Path, Path], signal_name: str
) -> None:
    _interrupted(command, signal_name)


@pytest.mark.parametrize("command", [RUN_IGNORING_SIGINT], indirect=True)
def test_a_run_started_as_a_background_job_is_interrupted_as_well(
    command: tuple[subprocess.Popen[bytes], Path, Path],
) -> None:
    # Its SIGTERM (a CI runner cancelling it) is passed on as SIGINT, which its tests must not
    # inherit ignored.
    _interrupted(command, "SIGTERM")


def _interrupted(command: tuple[subprocess.Popen[bytes], Path, Path], signal_name: str) -> None:
    """``command`` given ``signal_name`` once its test has started a server and a database;
    then neither is left, nor any process of its group."""
    process, ready, output = command
    started = _started(process, ready, output)
    assert httpx.get(started["base_url"] + "/healthz", timeout=10).status_code == 200
    assert started["database"] in _databases()
    # As a terminal sends Ctrl-C: to the command's process group.
    os.killpg(process.pid, getattr(signal, signal_name))
    status = process.wait(timeout=SECONDS)
    log = output.read_text(errors="replace")
    assert status != 0, log
    assert not _alive(started["server"]), log
    assert not _group_alive(started["group"]), log
    assert started["database"] not in _databases(), log
    with pytest.raises(httpx.TransportError):
        httpx.get(started["base_url"] + "/healthz", timeout=10)
