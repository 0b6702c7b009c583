"""What an operator sees when a database, a port or a file cannot be used: one line on stderr
and exit 2, never a traceback; and the export of a prefix nobody holds (exit 1)."""

from __future__ import annotations

import argparse
import re
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from resolver_support import fresh_database, urnkit, urnkit_here

from urnkit.cli import build_parser, main
from urnkit.resolver.store import Store

# Each URL fails differently: unreadable, no such dialect, a driver not installed here, a SQLite
# file in a missing directory, a PostgreSQL server that is down, a database that does not exist.
BAD_DATABASES = {
    "unparsable": "not a url",
    "unknown scheme": "foo://somewhere/db",
    "driver missing": "mysql://root@127.0.0.1/test",
    "missing directory": "sqlite:///{tmp}/no/such/directory/urnkit.db",
    "server down": "postgresql+psycopg://postgres@127.0.0.1:1/test",
    "no such database": "postgresql+psycopg://postgres@127.0.0.1:5432/urnkit_no_such_db",
    "postgres scheme": "postgres://postgres:secret@127.0.0.1:5432/test",
    "no such role": "postgresql+psycopg://urnkit_no_such_role@127.0.0.1:5432/test",
}
# What the one line says to do about each (store/failures.py).
FIXES = {
    "unparsable": ": use sqlite:///FILE or postgresql+psycopg://ROLE@HOST:PORT/NAME",
    "unknown scheme": ": use sqlite:///FILE or postgresql+psycopg://ROLE@HOST:PORT/NAME",
    "driver missing": ": use sqlite:///FILE or postgresql+psycopg://ROLE@HOST:PORT/NAME",
    "missing directory": ": check that its directory exists and that this user may write there",
    "server down": (
        "cannot connect to PostgreSQL on 127.0.0.1:1: "
        "is PostgreSQL running on 127.0.0.1:1? start it or check host and port"
    ),
    "no such database": (
        "the database urnkit_no_such_db does not exist on 127.0.0.1:5432: "
        "create it: createdb -h 127.0.0.1 -p 5432 -U postgres urnkit_no_such_db"
    ),
    # the password is not repeated
    "postgres scheme": ": use postgresql+psycopg://postgres:PASSWORD@127.0.0.1:5432/test",
    "no such role": (
        "the role urnkit_no_such_role does not exist on 127.0.0.1:5432: "
        "create the role: createuser -h 127.0.0.1 -p 5432 --pwprompt urnkit_no_such_role"
    ),
}

# Every resolver command that opens the database, with arguments that are otherwise right.
COMMANDS = {
    "db upgrade": ["db", "upgrade"],
    "db check": ["db", "check"],
    "db backup": ["db", "backup", "{tmp}/copy.db"],
    "db restore": ["db", "restore", "{tmp}/copy.db"],
    "admin create-org": ["admin", "create-org", "Library"],
    "admin delegate": ["admin", "delegate", "Library", "fi:lib"],
    "admin create-token": ["admin", "create-token", "Library"],
    "admin revoke-token": ["admin", "revoke-token", "1"],
    "admin create-user": ["admin", "create-user", "Library", "alice", "--role", "admin"],
    "admin disable-user": ["admin", "disable-user", "alice"],
    "admin enable-user": ["admin", "enable-user", "alice"],
    "admin forwarding list": ["admin", "forwarding", "list"],
    "admin grant": ["admin", "grant", "urn:nbn:fi:lib-1", "Library"],
    "admin revoke-grant": ["admin", "revoke-grant", "urn:nbn:fi:lib-1", "Library"],
    "admin grants": ["admin", "grants", "urn:nbn:fi:lib-1"],
    "admin network list": ["admin", "network", "list"],
    "admin network set": ["admin", "network", "set", "Library", "rooms", "10.0.0.0/8"],
    "admin network remove": ["admin", "network", "remove", "Library", "rooms"],
    "export": ["export"],
    "import": ["import", "{tmp}/rows.ndjson"],
    "admin forwarding set": ["admin", "forwarding", "set", "se", "https://urn.kb.se/{{urn}}"],
    "admin forwarding remove": ["admin", "forwarding", "remove", "se"],
    "admin forwarding check": ["admin", "forwarding", "check", "se"],
    "links check": ["links", "check"],
    "links report": ["links", "report"],
    "oai add-source": [
        *("oai", "add-source", "repo", "--organisation", "Library"),
        *("--base-url", "https://x.example/oai", "--url-pattern", "https://x[.]example/.*"),
    ],
    "oai sources": ["oai", "sources"],
    "oai harvest": ["oai", "harvest"],
    "serve": ["serve", "--port", "{port}"],
}
RESOLVER_GROUPS = ("serve", "db", "admin", "import", "export", "links", "oai")


def _commands(parser: argparse.ArgumentParser, words: str = "") -> Iterator[str]:
    """The names of the commands under ``parser``, as typed: ``admin forwarding list``."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        yield words
    for group in groups:
        for name, child in group.choices.items():
            yield from _commands(child, f"{words} {name}".strip())


def test_every_resolver_command_is_tried() -> None:
    every = {name for name in _commands(build_parser()) if name.split()[0] in RESOLVER_GROUPS}
    assert every == set(COMMANDS)


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


def _arguments(command: list[str], database: str, tmp_path: Path) -> list[str]:
    """``command`` on ``database``, its ``{tmp}`` and ``{port}`` filled in (and a file to
    import)."""
    (tmp_path / "rows.ndjson").write_text('{"urn": "urn:nbn:fi:lib-1"}\n')
    port = str(_free_port())
    arguments = [part.format(tmp=tmp_path, port=port) for part in command]
    return [*arguments, "--database-url", database.format(tmp=tmp_path)]


@pytest.mark.parametrize("database", BAD_DATABASES.values(), ids=list(BAD_DATABASES))
@pytest.mark.parametrize("command", COMMANDS.values(), ids=list(COMMANDS))
def test_a_database_that_cannot_be_used_is_one_line_and_exit_2(
    command: list[str], database: str, tmp_path: Path
) -> None:
    # In this process, for speed: an exception escaping ``main`` fails the test as a
    # traceback would; the process as a whole is tried below, once per database.
    done = urnkit_here(*_arguments(command, database, tmp_path), check=False)
    line = assert_one_line_refusal(done)
    assert line.startswith("urnkit: cannot use the database: "), line


@pytest.mark.parametrize("database", BAD_DATABASES.values(), ids=list(BAD_DATABASES))
def test_the_process_says_the_same_in_one_line(database: str, tmp_path: Path) -> None:
    done = urnkit(*_arguments(COMMANDS["db check"], database, tmp_path), check=False)
    line = assert_one_line_refusal(done)
    assert line.startswith("urnkit: cannot use the database: "), line


@pytest.mark.parametrize("case", FIXES)
def test_each_database_failure_names_its_fix(case: str, tmp_path: Path) -> None:
    done = urnkit_here(
        *_arguments(COMMANDS["db check"], BAD_DATABASES[case], tmp_path), check=False
    )
    line = assert_one_line_refusal(done)
    assert line.endswith(FIXES[case]), line
    assert "secret" not in line


@contextmanager
def _refusing_passwords() -> Iterator[int]:
    """A port where a stand-in for PostgreSQL refuses every password as PostgreSQL does: an
    ``ErrorResponse`` with SQLSTATE 28P01 after the startup message (the shared server trusts
    every local connection, so it cannot be asked to)."""
    listener = socket.create_server(("127.0.0.1", 0))
    fields = [b"SFATAL", b"VFATAL", b"C28P01", b'Mpassword authentication failed for user "x"']
    body = b"".join(field + b"\0" for field in fields) + b"\0"
    refusal = b"E" + struct.pack("!I", 4 + len(body)) + body

    def serve() -> None:
        with suppress(OSError):  # the listener closed: the test is over
            while True:
                connection, _ = listener.accept()
                with connection:
                    while True:  # GSSENCRequest and SSLRequest: "N", then the startup message
                        length, code = struct.unpack("!II", connection.recv(8, socket.MSG_WAITALL))
                        connection.recv(length - 8, socket.MSG_WAITALL)
                        if code not in (80877103, 80877104):
                            break
                        connection.sendall(b"N")
                    connection.sendall(refusal)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        with suppress(OSError):  # wakes the accept() that close() alone leaves waiting
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=10)
        assert not thread.is_alive()


def test_a_wrong_password_names_its_fix() -> None:
    with _refusing_passwords() as port:
        url = f"postgresql+psycopg://urnkit:secret@127.0.0.1:{port}/urnkit"
        done = urnkit_here("db", "check", "--database-url", url, check=False)
    assert assert_one_line_refusal(done) == (
        f"urnkit: cannot use the database: PostgreSQL on 127.0.0.1:{port} refused the password "
        f"of urnkit: check the password in the URL "
        f"(postgresql+psycopg://urnkit:PASSWORD@127.0.0.1:{port}/urnkit)"
    )


def test_a_database_with_an_older_schema_says_to_upgrade(database_url: str) -> None:
    store = Store(database_url)
    try:
        store.upgrade("oai")  # a migration before the latest
    finally:
        store.close()
    done = urnkit("admin", "create-org", "Library", "--database-url", database_url, check=False)
    line = assert_one_line_refusal(done)
    assert line.endswith(" has an older schema: run 'urnkit db upgrade' first"), line


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
    urnkit_here("db", "upgrade", *database)
    urnkit_here("admin", "create-org", "Library", *database)
    urnkit_here("admin", "delegate", "Library", "fi:lib", *database)
    done = urnkit_here("export", "--prefix", "se:nowhere", *database, check=False)
    assert_one_line_refusal(done, status=1)
    assert "'se:nowhere'" in done.stderr
    assert done.stdout == ""
    # A prefix above or below a delegated one is known: it exports its records (none here).
    for known in ("fi", "fi:lib", "fi:lib:sub"):
        assert urnkit_here("export", "--prefix", known, *database).stdout == ""


def test_a_missing_input_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    database = ("--database-url", f"sqlite:///{tmp_path / 'urnkit.db'}")
    urnkit_here("db", "upgrade", *database)
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


@pytest.mark.parametrize(("flags", "port"), [(["--port", "70000"], None), ([], "65536")])
def test_serve_on_a_port_that_is_not_one_is_one_line_and_exit_2(
    flags: list[str],
    port: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if port is not None:
        monkeypatch.setenv("URNKIT_PORT", port)
    database = tmp_path / "urnkit.db"
    assert main(["serve", *flags, "--database-url", f"sqlite:///{database}"]) == 2
    assert capsys.readouterr().err.endswith(": a TCP port is 1 to 65535\n")
    assert not database.exists()  # refused before the schema is made


@pytest.mark.parametrize(
    "arguments",
    [
        ("admin", "revoke-token", str(2**31)),  # beyond the API's ids: PostgreSQL's integer
        ("admin", "revoke-token", "0"),
        ("links", "check", "--older-than", "1e300"),  # before the year 1
        ("links", "check", "--timeout", "nan"),
    ],
    ids=" ".join,
)
def test_arguments_out_of_range_are_usage_errors(
    arguments: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*arguments, "--database-url", f"sqlite:///{tmp_path / 'x.db'}"]) == 2
    error = capsys.readouterr().err
    assert re.search(r"error: argument .*: (must be|no token has an id this large)", error)
    assert not (tmp_path / "x.db").exists()


def test_values_longer_than_stored_are_refused_alike_on_both_databases(database_url: str) -> None:
    database = ("--database-url", database_url)
    urnkit_here("admin", "create-org", "Library", *database)
    for arguments, reason in (
        (("admin", "delegate", "Library", "fi:" + "a" * 198), "a prefix is at most 200"),
        (("admin", "create-token", "Library", "--label", "x" * 201), "label is at most 200"),
        (("admin", "create-user", "Library", "x" * 255), "a user name is 1 to 254"),
        (("oai", "add-source", "repo", "--organisation", "Library", "--set", "s" * 201), "setSpec"),
    ):
        extra = ("--base-url", "https://x.example/oai", "--url-pattern", ".*")
        done = urnkit_here(
            *arguments, *(extra if arguments[0] == "oai" else ()), *database, check=False
        )
        assert reason in assert_one_line_refusal(done, status=1)
        assert done.stdout == ""


def test_a_value_the_database_refuses_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fresh_database("postgresql", tmp_path) as database:
        url = ["--database-url", database]
        assert main(["admin", "create-org", "Library", *url]) == 0
        capsys.readouterr()
        # (a token's label is checked for its length alone: the database judges the rest)
        status = main(["admin", "create-token", "Library", "--label", "a\x00b", *url])
    assert status == 1
    assert capsys.readouterr().err == (
        "urnkit: the database refused a value: "
        "PostgreSQL text fields cannot contain NUL (0x00) bytes\n"
    )


def test_export_to_a_reader_that_leaves_stops_quietly_with_141(tmp_path: Path) -> None:
    database = ("--database-url", f"sqlite:///{tmp_path / 'urnkit.db'}")
    urnkit_here("admin", "create-org", "Library", *database)
    urnkit_here("admin", "delegate", "Library", "fi:lib", *database)
    rows = tmp_path / "rows.ndjson"
    with rows.open("w") as out:  # far more than a pipe's buffer (64 KiB) once exported
        for number in range(3_000):
            out.write(f'{{"urn": "urn:nbn:fi:lib-{number}", "locations": [], "metadata": {{}}}}\n')
    urnkit("import", str(rows), *database)
    export = subprocess.Popen(
        [sys.executable, "-m", "urnkit", "export", *database],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert export.stdout is not None
    assert export.stderr is not None
    assert export.stdout.read(10) == b'{"urn":"ur'
    export.stdout.close()  # as `| head -c 10` does
    assert export.wait(timeout=60) == 141  # 128 + SIGPIPE, as shells report
    assert export.stderr.read() == b""
    export.stderr.close()
