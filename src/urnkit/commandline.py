"""What the ``urnkit`` command's parts share: exit statuses, adding a command to a parser,
reporting a failure, counts given as arguments, reading input, and a progress line.

The library's commands (:mod:`urnkit.cli`) and the resolver's (:mod:`urnkit.resolver.cli`) are
built on this module, which imports neither of them.

>>> parser = argparse.ArgumentParser(prog="urnkit")
>>> commands = parser.add_subparsers()
>>> def hello(args: argparse.Namespace) -> int:
...     return EXIT_OK
>>> _ = command(commands, "hello", hello, Help("Say hello.", "Nothing more.", ("0  said",)))
>>> parser.parse_args(["hello"]).run is hello
True
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from time import monotonic
from typing import IO, NamedTuple, TypeAlias, cast

from urnkit.syntax import MODES

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141  # 128 + SIGINT, 128 + SIGPIPE, as shells report
PROGRESS_INTERVAL = 0.1  # seconds between progress redraws: at most ten a second

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""The commands of a parser (or of a group of commands), to add one to."""
Run: TypeAlias = Callable[[argparse.Namespace], int]
"""What a command does with its parsed arguments; it returns the exit status."""


class Help(NamedTuple):
    """What a command's ``--help`` says: a one-line summary (also in its parent's list of
    commands), details as they are to be shown, and its exit statuses."""

    summary: str
    details: str
    statuses: tuple[str, ...]


def command(
    commands: Commands, name: str, run: Run, about: Help, *, mode: bool = False
) -> argparse.ArgumentParser:
    """Add the command ``name``, which ``run`` does, with its help; with ``mode``, the
    ``--mode`` flag that picks the grammar (RFC 8141 or RFC 2141)."""
    parser = commands.add_parser(
        name,
        help=about.summary,
        description=f"{about.summary}\n\n{about.details}",
        epilog="exit status:\n" + "\n".join(f"  {status}" for status in about.statuses),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(run=run)
    if mode:
        parser.add_argument(
            "--mode",
            choices=MODES,
            default="rfc8141",
            help="the grammar: rfc8141 (default), or the legacy rfc2141 (no components)",
        )
    return parser


def group(commands: Commands, name: str, summary: str, description: str = "") -> Commands:
    """Add the group of commands ``name`` (as in ``urnkit admin create-org``); return its
    commands. Its help describes it with ``description`` as written, else with ``summary``."""
    parser = commands.add_parser(
        name,
        help=summary,
        description=description or summary,
        formatter_class=argparse.RawDescriptionHelpFormatter
        if description
        else argparse.HelpFormatter,
    )
    return subcommands(parser)


def subcommands(parser: argparse.ArgumentParser) -> Commands:
    """The commands of ``parser``, one of which must be given."""
    return parser.add_subparsers(title="commands", metavar="COMMAND", required=True)


def fail(message: str, status: int) -> int:
    """Say ``urnkit: message`` on stderr; return ``status``."""
    print(f"urnkit: {message}", file=sys.stderr)
    return status


def count(text: str) -> int:
    """A count given on the command line: a whole number, 1 or more.

    >>> count("4")
    4
    """
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number, 1 or more: {text!r}")
    return number


def unreadable(name: str, error: OSError) -> int:
    """Say that the file ``name`` cannot be read, and why; return the usage error status."""
    return fail(f"cannot read {name}: {error.strerror}", EXIT_USAGE)


def open_input(name: str) -> AbstractContextManager[io.BufferedReader]:
    """The bytes of the file ``name``, closed on leaving ``with``; stdin for ``-``, left open."""
    if name == "-":
        return nullcontext(cast(io.BufferedReader, sys.stdin.buffer))
    return open(name, "rb")


def _amount(size: int) -> str:
    """A byte count for humans.

    >>> _amount(512), _amount(1536), _amount(5 * 2**30)
    ('512 B', '1.5 KiB', '5.0 GiB')
    """
    if size < 1024:
        return f"{size} B"
    scaled, unit = size / 1024, "KiB"
    for bigger in ("MiB", "GiB", "TiB"):
        if scaled < 1024:
            break
        scaled, unit = scaled / 1024, bigger
    return f"{scaled:.1f} {unit}"


class Progress:
    """A one-line progress report on a terminal, redrawn at most every ``PROGRESS_INTERVAL``."""

    def __init__(self, stream: IO[str], total: int | None) -> None:
        self.stream = stream
        self.total = total
        self.done = self.lines = self.width = 0
        self.start = self.drawn = monotonic()

    def advance(self, size: int, lines: int) -> None:
        """Count ``size`` more bytes and ``lines`` more lines; redraw if it is time."""
        self.done += size
        self.lines += lines
        now = monotonic()
        if now - self.drawn >= PROGRESS_INTERVAL:
            self.drawn = now
            rate = self.lines / max(now - self.start, 1e-9)
            read = _amount(self.done)
            if self.total:
                part = min(self.done / self.total, 1.0)
                bar = "#" * round(20 * part)
                read = f"[{bar:<20}] {part:4.0%}  {read} of {_amount(self.total)}"
            self._show(f"{read}  {self.lines:,} lines  {rate:,.0f} lines/s")

    def clear(self) -> None:
        """Erase the report, if one is shown."""
        self._show("")

    def _show(self, text: str) -> None:
        if text or self.width:
            self.stream.write("\r" + text.ljust(self.width) + ("\r" if not text else ""))
            self.stream.flush()
            self.width = len(text)
