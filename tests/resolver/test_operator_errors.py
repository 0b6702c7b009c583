"""What an operator sees when a database, a port or a file cannot be used: one line on stderr
and exit 2, never a traceback; and the export of a prefix nobody holds (exit 1)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from resolver_support import urnkit

# Each URL fails differently: unreadable, no such dialect, a driver not installed here, a SQLite
# file in a missing directory, a PostgreSQL server that is down, a database that does not exist.
BAD_DATABASES = {
    "unparsable": "not a url",
    "unknown scheme": "foo://somewhere/db",
    "driver missing": "mysql://root@127.0.0.1/test",
    "missing directory": "sqlite:///{tmp}/no/such/directory/urnkit.db",
    "server down": "postgresql+psycopg://postgres@127.0.0.1:1/test",
    "no such database": "postgresql+psycopg://postgres@127.0.0.1:5432/urnkit_no_such_db",
}

# Every resolver command that opens the database, with arguments that are otherwise right.
COMMANDS = {
    "db upgrade": ["db", "upgrade"],
    "db check": ["db", "check"],
    "admin create-org": ["admin", "create-org", "Library"],
    "admin delegate": ["admin", "delegate", "Library", "fi:lib"],
    "admin create-token": ["admin", "create-token", "Library"],
    "admin revoke-token": ["admin", "revoke-token", "1"],
    "admin forwarding list": ["admin", "forwarding", "list"],
    "export": ["export"],
    "import": ["import", "{tmp}/rows.ndjson"],
    "links report": ["links", "report"],
    "oai sources": ["oai", "sources"],
    "serve": ["serve", "--port", "{port}"],
}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def assert_one_line_refusal(done: subprocess.CompletedProcess[str], status: int = 2) -> str:
    """The command ended with ``status`` and said why in one line, without a traceback."""
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert done.returncode == status, done.stderr
    return lines[0]


@pytest.mark.parametrize("database", BAD_DATABASES.values(), ids=list(BAD_DATABASES))
@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_a_database_that_cannot_be_used_is_one_line_and_exit_2(
    command: list[str], database: str, tmp_path: Path
) -> None:
    (tmp_path / "rows.ndjson").write_text('{"urn": "urn:nbn:fi:lib-1"}\n')
    port = str(_free_port())
    arguments = [part.format(tmp=tmp_path, port=port) for part in command]
    done = urnkit(*arguments, "--database-url", database.format(tmp=tmp_path), check=False)
    line = assert_one_line_refusal(done)
    assert line.startswith("urnkit: cannot use the database: "), line


def test_serve_on_a_taken_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'urnkit.db'}"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = urnkit("serve", "--port", port, "--database-url", database, check=False)
    line = assert_one_line_refusal(done)
    assert line == f"urnkit: cannot listen on 127.0.0.1:{port}: Address already in use"


def test_export_of_a_prefix_nobody_holds_says_so(database_url: str, tmp_path: Path) -> None:
    database = ("--database-url", database_url)
    urnkit("db", "upgrade", *database)
    urnkit("admin", "create-org", "Library", *database)
    urnkit("admin", "delegate", "Library", "fi:lib", *database)
    done = urnkit("export", "--prefix", "se:nowhere", *database, check=False)
    assert_one_line_refusal(done, status=1)
    assert "'se:nowhere'" in done.stderr
    assert done.stdout == ""
    # A prefix above or below a delegated one is known: it exports its records (none here).
    for known in ("fi", "fi:lib", "fi:lib:sub"):
        assert urnkit("export", "--prefix", known, *database).stdout == ""


def test_a_missing_input_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    database = ("--database-url", f"sqlite:///{tmp_path / 'urnkit.db'}")
    urnkit("db", "upgrade", *database)
    done = urnkit("import", str(tmp_path / "absent.ndjson"), *database, check=False)
    assert "No such file" in assert_one_line_refusal(done)


ROOT = Path(__file__).resolve().parents[2]


def test_a_second_demo_refuses_while_the_first_holds_its_port(tmp_path: Path) -> None:
    """The demo never removes a database a running server holds: on a taken port it refuses
    (exit 2) before touching anything, and each port has a database of its own."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        demo_database = ROOT / ".demo" / f"urnkit-demo-{port}.db"
        demo_database.parent.mkdir(exist_ok=True)
        demo_database.write_text("held by a running server")
        try:
            done = subprocess.run(
                [sys.executable, str(ROOT / "tasks.py"), "demo"],
                capture_output=True,
                text=True,
                timeout=120,
                env={"URNKIT_PORT": port, "PATH": ""},
                check=False,
            )
            assert done.returncode == 2, done.stderr
            assert f"port {port} is taken" in done.stderr
            assert demo_database.read_text() == "held by a running server"
        finally:
            demo_database.unlink()
