"""The two Quick start commands: ``python3 tasks.py demo`` and ``python3 tasks.py test``.

Each makes (or reuses) a virtual environment in ``.venv`` with urnkit installed in editable mode,
using nothing but Python 3.11+ and pip, then runs the job. Example::

    python3 tasks.py test
"""

from __future__ import annotations

import os
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


def demo() -> None:
    """Check the demo file of URNs and explain the ones that fail."""
    setup("dev")
    demo_file = ROOT / "examples" / "demo-urns.txt"
    print(f"\nChecking {demo_file.relative_to(ROOT)} (urnkit check --file):", flush=True)
    subprocess.run([str(BIN / "urnkit"), "check", "--file", str(demo_file)], cwd=ROOT, check=False)
    print(f"\nURNs found in {demo_file.relative_to(ROOT)} (urnkit find):", flush=True)
    _run(BIN / "urnkit", "find", demo_file)
    print(f"\nTry it yourself: {BIN / 'urnkit'} --help", flush=True)


def test() -> None:
    """Lint, type-check and run the whole test suite."""
    setup("dev,bench,checks,server")
    _run(BIN / "ruff", "check", ".")
    _run(BIN / "ruff", "format", "--check", ".")
    _run(BIN / "mypy")
    _run(BIN / "python", "-m", "pytest", *sys.argv[2:])


if __name__ == "__main__":
    jobs = {"demo": demo, "test": test}
    if len(sys.argv) < 2 or sys.argv[1] not in jobs:
        sys.exit(f"usage: python3 {Path(__file__).name} {{{'|'.join(jobs)}}} [pytest arguments]")
    try:
        jobs[sys.argv[1]]()
    except subprocess.CalledProcessError as failure:
        sys.exit(failure.returncode)
