"""What the resolver tests share: fresh databases, ``urnkit`` runs, server processes, and link
states written as link checking would write them.

Example::

    with fresh_database("sqlite", tmp_path) as url, Server(url) as server:
        httpx.get(server.base_url + "/urn:nbn:fi-x")
"""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any
from uuid import uuid4

import httpx
import pytest
import sqlalchemy as sa

from urnkit.cli import main
from urnkit.resolver.domain import PasswordHashing
from urnkit.resolver.store import Store, links, url_hash

DATABASES = ("sqlite", "postgresql")
PG_URL = os.environ.get("URNKIT_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
# Staff passwords are hashed at the least cost the settings take (docs/staff.md), in this
# process and in every server and command the tests start: at argon2id's default cost, hashing
# took most of the staff tests' time. The built wheel's tests keep the default.
LEAST_HASHING = PasswordHashing(memory_kib=7 * 1024, passes=5, lanes=1)
# The run's name (the test command's, tasks.py, or this process's own): the PostgreSQL
# databases the tests create begin with ``urnkit_test_<run>_``, so that what an interrupted run
# left can be dropped (:func:`drop_run_databases`).
RUN = os.environ.get("URNKIT_TEST_RUN") or uuid4().hex[:8]
STARTUP_SECONDS = 30
WAIT_SECONDS = 60  # the most a test waits for something to happen (a cluster, a flush)


def _pg_admin_engine() -> sa.Engine:
    return sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")


def require_postgresql() -> None:
    """Skip the test when PostgreSQL is unreachable, or fail under ``URNKIT_REQUIRE_PG=1``."""
    try:
        with _pg_admin_engine().connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as error:
        reason = f"PostgreSQL at {PG_URL} is unreachable: {error.orig}"
        if os.environ.get("URNKIT_REQUIRE_PG") == "1":
            pytest.fail(reason + " (URNKIT_REQUIRE_PG=1)")
        pytest.skip(reason)


@contextmanager
def fresh_database(kind: str, directory: Path) -> Iterator[str]:
    """The URL of a new empty database: a file in ``directory``, or a PostgreSQL database
    created for the test and dropped after it."""
    if kind == "sqlite":
        yield f"sqlite:///{directory / 'urnkit.db'}"
        return
    require_postgresql()
    name = f"{run_prefix(RUN)}{uuid4().hex[:12]}"
    admin = _pg_admin_engine()
    with admin.connect() as connection:
        connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    try:
        yield admin.url.set(database=name).render_as_string(hide_password=False)
    finally:
        drop_database(name)


def drop_database(name: str) -> None:
    """Drop PostgreSQL database ``name`` if it exists, whoever is connected to it."""
    admin = _pg_admin_engine()
    try:
        with admin.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def run_prefix(run: str) -> str:
    """How the names of the PostgreSQL databases of test run ``run`` begin:
    ``urnkit_test_1f2e3d4c_`` for run ``1f2e3d4c``."""
    return f"urnkit_test_{run}_"


def drop_run_databases(run: str) -> list[str]:
    """Drop the PostgreSQL databases of test run ``run`` that are left (an interrupted run's
    fixtures could not drop them); their names. Nothing when no PostgreSQL answers."""
    admin = _pg_admin_engine()
    try:
        with admin.connect() as connection:
            names = connection.execute(sa.text("SELECT datname FROM pg_database")).scalars()
            left = sorted(name for name in names if name.startswith(run_prefix(run)))
    except sa.exc.OperationalError:
        return []
    finally:
        admin.dispose()
    for name in left:
        drop_database(name)
    return left


def urnkit(
    *arguments: str, check: bool = True, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the ``urnkit`` command in a new process, ``env`` added to its environment; its
    output, checked unless ``check=False``."""
    done = subprocess.run(
        [sys.executable, "-m", "urnkit", *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if check and done.returncode != 0:
        raise AssertionError(f"urnkit {' '.join(arguments)} failed:\n{done.stderr}")
    return done


def urnkit_here(*arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the ``urnkit`` command's ``main`` in this process, sparing a new one's start (about
    1.5 s of imports and set-up); its output, checked unless ``check=False``, as
    :func:`urnkit`'s. An exception escaping ``main`` fails the test as a traceback would."""
    output, errors = io.StringIO(), io.StringIO()
    with redirect_stdout(output), redirect_stderr(errors):
        status = main(list(arguments))
    if check and status != 0:
        raise AssertionError(f"urnkit {' '.join(arguments)} failed:\n{errors.getvalue()}")
    return subprocess.CompletedProcess(
        list(arguments), status, output.getvalue(), errors.getvalue()
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(ready: Any, what: str, seconds: float = WAIT_SECONDS) -> Any:
    """Call ``ready`` until it returns something true (which is returned), at most
    ``seconds``; an AssertionError naming ``what`` was waited for."""
    deadline = time.monotonic() + seconds
    while True:
        found = ready()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds} s for {what}: {found!r}")
        time.sleep(0.1)


class Server:
    """``urnkit serve`` in a child process on a free port, stopped on leaving ``with``; ``env``
    adds to the environment it inherits (``URNKIT_*`` settings). ``urnkit`` is the command
    that runs (this interpreter's by default, an installed one's in ``tests/wheel``), in
    directory ``cwd``."""

    def __init__(
        self,
        database_url: str,
        *extra: str,
        env: Mapping[str, str] | None = None,
        urnkit: Sequence[str] = (sys.executable, "-m", "urnkit"),
        cwd: Path | None = None,
    ) -> None:
        self.database_url = database_url
        self.env = {**os.environ, **(env or {})}  # the server's environment: URNKIT_* settings
        self.urnkit, self.cwd = urnkit, cwd
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.extra = extra
        self.process: subprocess.Popen[bytes] | None = None
        # The server's stdout and stderr go to a file: a pipe that nobody reads fills up (64 KiB
        # of logged tracebacks) and then blocks the server in mid-request.
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__

    def output(self) -> str:
        """What the server has written to stdout and stderr so far (tracebacks, warnings)."""
        descriptor = self.log.fileno()
        return os.pread(descriptor, os.fstat(descriptor).st_size, 0).decode(errors="replace")

    def __enter__(self) -> Server:
        command = [*self.urnkit, "serve", "--database-url", self.database_url]
        command += ["--port", str(self.port), *self.extra]
        self.process = subprocess.Popen(
            command, stdout=self.log, stderr=subprocess.STDOUT, env=self.env, cwd=self.cwd
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"urnkit serve exited: {self.output()}")
            try:
                httpx.get(self.base_url + "/api/v1/prefixes", timeout=1)
                return self
            except httpx.TransportError:
                time.sleep(0.1)
        self.__exit__(None, None, None)
        raise AssertionError(f"urnkit serve did not answer within {STARTUP_SECONDS} s")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@dataclass(frozen=True)
class Resolver:
    """A running resolver and the credentials its tests use."""

    base_url: str
    database_url: str
    admin_token: str
    registrant_token: str
    other_token: str

    def client(self, token: str | None = None) -> httpx.Client:
        """An HTTP client for the server; with ``token`` as its bearer token if given."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30)


def set_up_resolver(database_url: str) -> dict[str, str]:
    """Organisations, prefixes and tokens made with ``urnkit admin`` (in this process); the
    tokens by role."""
    url = ("--database-url", database_url)
    urnkit_here("db", "upgrade", *url)
    urnkit_here("admin", "create-org", "Test Library", *url)
    urnkit_here("admin", "create-org", "Other Library", *url)
    urnkit_here("admin", "delegate", "Test Library", "fi:test", *url)
    urnkit_here("admin", "delegate", "Other Library", "fi:other", "--generator", "random", *url)

    def token(organisation: str, role: str) -> str:
        output = urnkit_here("admin", "create-token", organisation, "--role", role, *url).stdout
        return output.splitlines()[-1]

    return {
        "admin_token": token("Test Library", "admin"),
        "registrant_token": token("Test Library", "registrant"),
        "other_token": token("Other Library", "registrant"),
    }


@contextmanager
def statistics_interval(seconds: int) -> Iterator[None]:
    """Servers started in the block flush their resolution counts every ``seconds`` seconds
    (``URNKIT_STATISTICS_INTERVAL``, which the server process inherits)."""
    before = os.environ.get("URNKIT_STATISTICS_INTERVAL")
    os.environ["URNKIT_STATISTICS_INTERVAL"] = str(seconds)
    try:
        yield
    finally:
        if before is None:
            del os.environ["URNKIT_STATISTICS_INTERVAL"]
        else:
            os.environ["URNKIT_STATISTICS_INTERVAL"] = before


def mark_links(store: Store, status: str, *urls: str) -> None:
    """Record ``urls`` as link checking would: in ``links`` with ``status``; then refresh."""
    with store.transaction() as tx:
        for url in urls:
            tx.connection.execute(sa.delete(links).where(links.c.url_hash == url_hash(url)))
            tx.connection.execute(
                links.insert().values(
                    url_hash=url_hash(url),
                    url=url,
                    status=status,
                    failures=0 if status == "ok" else 3,
                    since=datetime.now(UTC),
                    checked=datetime.now(UTC),
                )
            )
        tx.links.refresh_targets(set(urls))


# What the black-box tests of every area send and expect (RFC 9457 problems, media types).
PROBLEM = "application/problem+json"
BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
JSON = "application/json"


def register(
    api: httpx.Client,
    urn: str,
    locations: Sequence[dict[str, Any]] = (),
    metadata: dict[str, Any] | None = None,
) -> None:
    """Create the record of ``urn`` through the API."""
    body = {"locations": list(locations), "metadata": metadata or {}}
    response = api.put(f"/api/v1/urns/{urn}", json=body)
    assert response.status_code == 201, response.text


def deactivate(api: httpx.Client, urn: str, successors: Sequence[str], note: str = "") -> None:
    """Deactivate ``urn`` naming ``successors``."""
    body = {"note": note or None, "successors": list(successors)}
    response = api.post(f"/api/v1/urns/{urn}/deactivate", json=body)
    assert response.status_code == 200, response.text


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """An RFC 9457 problem of ``status``; its members."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    problem: dict[str, Any] = response.json()
    assert problem["status"] == status
    assert problem["type"] == "about:blank"
    assert problem["title"]
    assert problem["detail"]
    return problem


# The test command's last step (tasks.py): python tests/resolver/resolver_support.py RUN
if __name__ == "__main__":
    for dropped in drop_run_databases(sys.argv[1]):
        print(f"dropped database {dropped}, left by test run {sys.argv[1]}")
