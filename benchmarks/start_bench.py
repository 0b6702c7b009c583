"""The library's commands start like a small tool: the CPU time of a new process running
``urnkit --version``, ``check``, ``parse`` and ``normalize`` against that of
``python -c "import urnkit"``, the anchor (issue 33, point 4: under three times it).

Usage::

    .venv/bin/python benchmarks/start_bench.py [--rounds R] [--json OUT]

Each round starts every command once, in the same order, the anchor first: the commands
alternate round by round, so a change in the machine's load falls on all of them. A process's
CPU time (user and system) is the kernel's account of it (``os.wait4``); wall-clock time is not
used. Prints each command's median and spread (lowest to highest), its median's ratio to the
anchor's, and PASS or FAIL; exit status 0 when every ratio is under the target.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

TARGET_RATIO: Final = 3.0
ANCHOR: Final = ("import urnkit", ["-c", "import urnkit"])
COMMANDS: Final = [
    ("urnkit --version", ["-m", "urnkit", "--version"]),
    ("urnkit check", ["-m", "urnkit", "check", "URN:NBN:fi-fe2021"]),
    ("urnkit parse", ["-m", "urnkit", "parse", "urn:example:a?=q"]),
    ("urnkit normalize", ["-m", "urnkit", "normalize", "URN:EXAMPLE:a"]),
]


def cpu_seconds(arguments: Sequence[str]) -> float:
    """The CPU time, user and system, of a new Python process run with ``arguments``."""
    process = subprocess.Popen(
        [sys.executable, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(arguments)} exited with {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def run(rounds: int) -> dict[str, Any]:
    """Every command's CPU times over ``rounds`` alternated rounds, and their summary."""
    times: dict[str, list[float]] = {name: [] for name, _ in [ANCHOR, *COMMANDS]}
    load_before = os.getloadavg()
    for _ in range(rounds):
        for name, arguments in [ANCHOR, *COMMANDS]:
            times[name].append(cpu_seconds(arguments))
    anchor = statistics.median(times[ANCHOR[0]])
    summary = {
        name: {
            "median_ms": statistics.median(found) * 1000,
            "lowest_ms": min(found) * 1000,
            "highest_ms": max(found) * 1000,
            "ratio": statistics.median(found) / anchor,
        }
        for name, found in times.items()
    }
    worst = max(found["ratio"] for name, found in summary.items() if name != ANCHOR[0])
    return {
        "rounds": rounds,
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "commands": summary,
        "target": {"required": TARGET_RATIO, "measured": worst},
        "status": "PASS" if worst < TARGET_RATIO else "FAIL",
    }


def format_report(result: dict[str, Any]) -> str:
    """The summary as a Markdown table, and the target."""
    lines = [
        "| command | CPU ms, median | lowest to highest | ratio to import urnkit |",
        "|---|---|---|---|",
    ]
    for name, found in result["commands"].items():
        lines.append(
            f"| {name} | {found['median_ms']:.0f} | {found['lowest_ms']:.0f} to "
            f"{found['highest_ms']:.0f} | {found['ratio']:.2f} |"
        )
    load = ", ".join(f"{value:.1f}" for value in result["load_average_before"])
    lines.append(
        f"\n{result['rounds']} rounds, load average {load} before; worst ratio "
        f"{result['target']['measured']:.2f} (target < {TARGET_RATIO:.0f}): {result['status']}"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    result = run(args.rounds)
    print(format_report(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0 if result["status"] == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
