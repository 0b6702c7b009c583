"""The two Quick start commands: ``python3 tasks.py demo`` and ``python3 tasks.py test``.

Each makes (or reuses) a virtual environment in ``.venv`` with urnkit installed in editable mode,
using nothing but Python 3.11+ and pip, then runs the job. Example::

    python3 tasks.py test
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def _run(*command: str | Path) -> None:
    print("+", " ".join(str(part) for part in command), flush=True)
    subprocess.run([str(part) for part in command], cwd=ROOT, check=True)


def setup(extras: str) -> None:
    """Create ``.venv`` if needed and install urnkit with ``extras`` into it."""
    if not (BIN / "python").exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    _run(
        BIN / "python",
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "-e",
        f".[{extras}]",
    )


DEMO_DIR = ROOT / ".demo"
DEMO_RECORDS = ROOT / "examples" / "resolver-demo.ndjson"
# Who holds which prefix in the demo (RFC 8458 §4.3 prefixes: country code, sub-namespaces).
DEMO_DELEGATIONS = {
    "Demo National Library": ("fi", "se:uu", "ch:bel", "hu"),
    "Demo University": ("fi:demo",),
}


def _urnkit(*arguments: str) -> str:
    """Run the urnkit command of ``.venv``; its standard output."""
    done = subprocess.run(
        [str(BIN / "urnkit"), *arguments], cwd=ROOT, check=True, capture_output=True, text=True
    )
    return done.stdout


def _answering(port: str) -> bool:
    """Whether something already listens on 127.0.0.1:``port`` (a demo running, say)."""
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", int(port))) == 0


def demo() -> None:
    """Start the resolver on a fresh SQLite database holding the demo records; refuse (exit 2)
    while something listens on its port. Each port has a database of its own."""
    port = os.environ.get("URNKIT_PORT", "8000")
    if _answering(port):
        print(
            f"tasks.py demo: port {port} is taken (is a demo running?): stop it with Ctrl-C, "
            "or run this one on another port: URNKIT_PORT=8001 python3 tasks.py demo",
            file=sys.stderr,
        )
        sys.exit(2)
    setup("server")
    DEMO_DIR.mkdir(exist_ok=True)
    database = DEMO_DIR / f"urnkit-demo-{port}.db"  # a demo per port: none shares a database
    for stale in DEMO_DIR.glob(f"{database.name}*"):
        stale.unlink()
    url = ("--database-url", f"sqlite:///{database}")
    _urnkit("db", "upgrade", *url)
    for organisation, prefixes in DEMO_DELEGATIONS.items():
        _urnkit("admin", "create-org", organisation, *url)
        for prefix in prefixes:
            _urnkit("admin", "delegate", organisation, prefix, *url)
    admin = _urnkit("admin", "create-token", "Demo National Library", "--role", "admin", *url)
    registrant = _urnkit("admin", "create-token", "Demo University", *url)
    print(_urnkit("import", str(DEMO_RECORDS), *url).strip(), f"from {DEMO_RECORDS.name}")
    base = f"http://127.0.0.1:{port}"
    print(
        f"""
Demo resolver on SQLite ({database.relative_to(ROOT)}). Try, in a browser or with curl -i:
  {base}/URN:NBN:fi-fe201003181510          302 to its best location
  {base}/urn:nbn:fi-fe201003181510?=page=2  the q-component travels along (RFC 8141 §2.3.2)
  {base}/urn:nbn:se:uu:diva-3475            200, its metadata: no copy online (RFC 8458 §4.5)
  {base}/urn:nbn:hu-3006                    410 Gone, naming its successor
  {base}/urn:nbn:fi-fe2010%zz               400, explaining where and why
  {base}/urn:nbn:fi-fe201003181510?s=I2C    its landing page (RFC 2483 I2C)
  {base}/uri-res/I2Ls?urn:nbn:fi-fe201003181510  every location as text/uri-list
  {base}/urn:nbn:de:gbv:089-3321752945      302 to the German national resolver (forwarding)
  {base}/                                   search by URN, URL or title; /prefixes, /statistics
  {base}/oai?verb=Identify                  OAI-PMH; /metrics for Prometheus
  {base}/docs                               the registration API
Tokens (shown once): admin (Demo National Library) {admin.splitlines()[-1]}
                     registrant (Demo University, fi:demo) {registrant.splitlines()[-1]}
Stop with Ctrl-C.
""",
        flush=True,
    )
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how the demo ends
        _run(BIN / "urnkit", "serve", *url, "--port", port)


# One process per CPU, each test file whole in one of them: its module's servers and browser
# start once (docs/development.md). The files go out in collection order, the longest first
# (tests/resolver/conftest.py), not by how many tests each holds (xdist's default). The slowest
# tests are listed at the end, to keep LONGEST_FIRST and CI's time honest.
PYTEST_OPTIONS = ("-n", "auto", "--dist", "loadfile", "--no-loadscope-reorder", "--durations=25")
INTERRUPTS = (signal.SIGINT, signal.SIGTERM)  # what the test command passes on to pytest
# Drops the PostgreSQL databases a run's tests left (tests/resolver/resolver_support.py).
DROP_RUN_DATABASES = ROOT / "tests" / "resolver" / "resolver_support.py"


def run_pytest(*arguments: str) -> int:
    """Run pytest over ``arguments`` and leave nothing behind; its exit status.

    pytest runs in a process group of its own, its run named in ``URNKIT_TEST_RUN`` (the prefix
    of the PostgreSQL databases its tests create). A SIGINT (Ctrl-C) or SIGTERM to this process
    is passed on as SIGINT to that group, so every test process tears its fixtures down (servers
    stopped, databases dropped), and a second one kills the group; once pytest has ended,
    whatever the group left running is killed and the run's remaining databases are dropped.
    Example::

        python3 -c "import tasks; tasks.run_pytest('tests/test_urn.py')"
    """
    run = secrets.token_hex(4)
    command = [str(BIN / "python"), "-m", "pytest", *PYTEST_OPTIONS, *arguments]
    print("+", " ".join(command), flush=True)
    environment = {**os.environ, "URNKIT_TEST_RUN": run}
    signals: list[int] = []
    started: list[subprocess.Popen[bytes]] = []

    def interrupt(signal_number: int, frame: object) -> None:
        # The first is passed on as SIGINT, for every test process to tear down; another kills.
        signals.append(signal_number)
        for process in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGINT if len(signals) == 1 else signal.SIGKILL)

    # Handled before pytest starts: a signal handled here is SIG_DFL in the new program, where an
    # ignored one would stay ignored (a background job of a shell, nohup, starts with SIGINT
    # ignored), and pytest would not tear anything down on the SIGINT passed on.
    previous = {number: signal.signal(number, interrupt) for number in INTERRUPTS}
    try:
        started.append(subprocess.Popen(command, cwd=ROOT, env=environment, process_group=0))
        if signals:  # one came before pytest did
            interrupt(signals.pop(), None)
        status = started[0].wait()
    finally:
        for process in started:  # what the group left: servers, browsers
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        subprocess.run([BIN / "python", DROP_RUN_DATABASES, run], cwd=ROOT, check=False)
        for number, handler in previous.items():
            signal.signal(number, handler)
    return status if status >= 0 else 128 - status  # a signal's death as a shell reports it


def test() -> None:
    """Lint, type-check and run the whole test suite."""
    setup("dev,bench,checks,server")
    _run(BIN / "ruff", "check", ".")
    _run(BIN / "ruff", "format", "--check", ".")
    _run(BIN / "mypy")
    status = run_pytest(*sys.argv[2:])
    if status != 0:
        sys.exit(status)


if __name__ == "__main__":
    jobs = {"demo": demo, "test": test}
    if len(sys.argv) < 2 or sys.argv[1] not in jobs:
        sys.exit(f"usage: python3 {Path(__file__).name} {{{'|'.join(jobs)}}} [pytest arguments]")
    try:
        jobs[sys.argv[1]]()
    except subprocess.CalledProcessError as failure:
        sys.exit(failure.returncode)
