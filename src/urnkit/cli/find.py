"""``urnkit find`` and ``explain``: the URNs in a text file (:func:`urnkit.find_urns`), and
each grammar's verdict on texts with the reasons they differ (:func:`urnkit.explain`)."""

from __future__ import annotations

import argparse
import io
import sys

from urnkit.commandline import (
    EXIT_INVALID,
    EXIT_OK,
    Commands,
    Help,
    command,
    open_input,
    unreadable,
)
from urnkit.explain import explain
from urnkit.find import find_urns

_FIND = Help(
    "Print every URN in a text file.",
    "Prints 'LINE:COLUMN: URN' (both from 1) for each URN found, line by line, as UTF-8;\n"
    "a URN does not span lines. Trailing punctuation and enclosing marks are left out.",
    ("0  some URN was found", "1  none was found", "2  usage error, or FILE cannot be read"),
)

_EXPLAIN = Help(
    "Judge texts under both RFC 8141 and RFC 2141, and say why the verdicts differ.",
    "Prints each text, each grammar's verdict, and the RFC 8141 Appendix B changes behind\n"
    "a difference.",
    ("0  whatever the verdicts", "2  usage error"),
)


def _find(args: argparse.Namespace) -> int:
    try:
        opened = open_input(args.file)
    except OSError as error:
        return unreadable(args.file, error)
    found = False
    with opened as stream:
        # Lines end at "\n" only, as in ``check --file``; undecodable bytes never join a URN.
        text = io.TextIOWrapper(stream, "utf-8", "surrogateescape", newline="\n")
        for number, line in enumerate(text, 1):
            for match in find_urns(line, mode=args.mode):
                sys.stdout.write(f"{number}:{match.start + 1}: {match.text}\n")
                found = True
        text.detach()  # leave the stream, stdin included, to its owner
    return EXIT_OK if found else EXIT_INVALID


def _explain(args: argparse.Namespace) -> int:
    print("\n\n".join(str(explain(text)) for text in args.urns))
    return EXIT_OK


def add_commands(commands: Commands) -> None:
    """Add ``find`` and ``explain``."""
    find = command(commands, "find", _find, _FIND, mode=True)
    find.add_argument("file", metavar="FILE", help="the text to search ('-': stdin)")
    explain_ = command(commands, "explain", _explain, _EXPLAIN)
    explain_.add_argument("urns", nargs="+", metavar="URN")
