"""A PostgreSQL primary and its streaming standby of the tests' own, made with the server's
binaries (``initdb``, ``pg_basebackup -R``, ``postgres``: where ``pg_config --bindir`` says)
as the database's OS user when the tests run as root, on free ports, with their sockets in
a temporary directory: the shared server is never touched.

Each ``postgres`` is a child of the test process, in its process group: ``pg_ctl start``
would put it in a session of its own, out of reach of the test command's clean-up if a run
were killed before :class:`Replication` stops it (docs/development.md).
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from resolver_support import WAIT_SECONDS, free_port, wait_for

OS_USER = "postgres"  # the database's OS user (Debian's); the tests' own when not root


def server_binaries() -> Path:
    """The directory of PostgreSQL's server programs (``pg_config --bindir``, else where
    ``initdb`` is on the PATH, else Debian's newest); a skip (a failure under
    ``URNKIT_REQUIRE_PG=1``) when there is none."""
    found: Path | None = None
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        found = Path(done.stdout.strip()) if done.returncode == 0 else None
    if found is None or not (found / "initdb").exists():
        initdb = shutil.which("initdb")
        found = None if initdb is None else Path(initdb).parent
    if found is None:  # Debian's layout, one directory a major version: the newest
        versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=_major)
        found = versions[-1].parent if versions else None
    if found is None or not (found / "pg_basebackup").exists():
        reason = "PostgreSQL's server programs (initdb, pg_basebackup, pg_ctl) are not installed"
        if os.environ.get("URNKIT_REQUIRE_PG") == "1":
            pytest.fail(reason + " (URNKIT_REQUIRE_PG=1)")
        pytest.skip(reason)
    return found


def _major(initdb: Path) -> int:
    """The major version of a Debian ``/usr/lib/postgresql/VERSION/bin/initdb``."""
    version = initdb.parent.parent.name
    return int(version) if version.isdigit() else 0


class Cluster:
    """One PostgreSQL cluster: its data directory, port and socket directory."""

    def __init__(self, name: str, top: Path, binaries: Path, port: int | None = None) -> None:
        self.name = name
        self.data = top / name
        self.top = top
        self.binaries = binaries
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, database: str = "postgres") -> str:
        """A SQLAlchemy URL of ``database`` on this cluster, by TCP."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def run(self, program: str, *arguments: str) -> None:
        """Run one of the server's programs as the database's OS user."""
        done = subprocess.run(
            [str(self.binaries / program), *arguments],
            capture_output=True,
            text=True,
            timeout=WAIT_SECONDS,
            cwd=self.top,
            **_as_database_user(),
        )
        if done.returncode != 0:
            raise AssertionError(f"{program} {' '.join(arguments)} failed:\n{done.stderr}")

    def start(self) -> None:
        """Start the cluster, waiting until it accepts connections."""
        where = ("-p", str(self.port), "-k", str(self.top), "-c", "listen_addresses=127.0.0.1")
        with (self.top / f"{self.name}.log").open("ab") as log:
            self.process = subprocess.Popen(
                [str(self.binaries / "postgres"), "-D", str(self.data), *where],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.top,
                **_as_database_user(),
            )
        wait_for(self._accepting, f"the {self.name} to accept connections")

    def _accepting(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            log = (self.top / f"{self.name}.log").read_text(errors="replace")
            raise AssertionError(f"the {self.name} stopped:\n{log}")
        try:
            self.execute("SELECT 1")
        except sa.exc.OperationalError:
            return False
        return True

    def stop(self, mode: str = "fast") -> None:
        """Stop the cluster (``immediate``: as if its machine were lost), if it runs."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGQUIT if mode == "immediate" else signal.SIGINT)
        try:
            self.process.wait(WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def execute(self, sql: str, database: str = "postgres") -> Any:
        """Run ``sql`` in autocommit; its first value, if it returns rows."""
        engine = sa.create_engine(self.url(database), isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as connection:
                result = connection.execute(sa.text(sql))
                return result.scalar() if result.returns_rows else None
        finally:
            engine.dispose()


class Replication:
    """A primary and its streaming standby, synchronous (``synchronous_standby_names``: a
    commit is acknowledged once the standby has it), with the database ``urnkit``."""

    def __init__(self, top: Path, binaries: Path) -> None:
        self.primary = Cluster("primary", top, binaries)
        self.standby = Cluster("standby", top, binaries)

    def start(self) -> None:
        """Make and start both clusters."""
        primary, standby = self.primary, self.standby
        primary.run(
            "initdb", "-D", str(primary.data), "-U", "postgres", "--auth=trust", "--no-sync"
        )
        with (primary.data / "postgresql.conf").open("a") as conf:
            conf.write("fsync = off\n")
        primary.start()
        primary.execute("CREATE DATABASE urnkit")
        source = ("-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres")
        standby.run("pg_basebackup", *source, "-D", str(standby.data), "-R", "-c", "fast")
        standby.start()
        # Synchronous from now on: before, a commit would wait for a standby yet to be.
        primary.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
        primary.execute("SELECT pg_reload_conf()")
        wait_for(
            lambda: primary.execute("SELECT sync_state FROM pg_stat_replication") == "sync",
            "the standby to be synchronous",
        )
        self.wait_until_replayed()

    def wait_until_replayed(self) -> None:
        """Wait until the standby has replayed everything the primary has written so far."""
        written = self.primary.execute("SELECT pg_current_wal_lsn()")
        wait_for(
            lambda: self.standby.execute(f"SELECT pg_last_wal_replay_lsn() >= '{written}'::pg_lsn"),
            "the standby to replay the primary's writes",
        )

    def stop(self) -> None:
        """Stop both clusters, whatever state they are in."""
        for cluster in (self.standby, self.primary):
            cluster.stop("immediate")


@contextmanager
def replication() -> Iterator[Replication]:
    """A started :class:`Replication` in a new temporary directory, stopped and removed on
    leaving the block."""
    binaries = server_binaries()
    top = Path(tempfile.mkdtemp(prefix="urnkit-replication-"))
    top.chmod(0o700)
    if os.geteuid() == 0:
        user = pwd.getpwnam(OS_USER)
        os.chown(top, user.pw_uid, user.pw_gid)
    pair = Replication(top, binaries)
    try:
        pair.start()
        yield pair
    finally:
        pair.stop()
        shutil.rmtree(top, ignore_errors=True)


def _as_database_user() -> dict[str, Any]:
    """Popen's arguments that run a program as the database's OS user, when root (PostgreSQL
    refuses to run as root)."""
    if os.geteuid() != 0:
        return {}
    user = pwd.getpwnam(OS_USER)
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
