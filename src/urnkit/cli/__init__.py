"""The ``urnkit`` command: a thin adapter from the command line to the library.

Each command is one library call: ``check`` is :func:`urnkit.diagnose` (:func:`urnkit.validate`
with ``--strict``), ``parse`` and ``normalize`` are :meth:`urnkit.URN.parse` and
:meth:`~urnkit.URN.normalize`, ``compare`` is URN-equivalence (RFC 8141 §3), ``find`` is
:func:`urnkit.find_urns`, ``explain`` is :func:`urnkit.explain`, ``info`` gathers what
:mod:`urnkit.namespaces` knows about a URN, and ``template check`` and ``template new`` are
:func:`urnkit.registration.check` and :func:`urnkit.registration.blank`. Each group of commands
is a module here that only reads input, formats output and picks exit statuses; the resolver's
commands (:mod:`urnkit.resolver.cli`) follow them.

>>> main(["normalize", "URN:EXAMPLE:a%2c"])
urn:example:a%2C
0
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Collection, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import cast

from urnkit.cli import check, find, info, parse, template
from urnkit.commandline import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    fail,
    subcommands,
)


def _version() -> str:
    try:
        return version("urnkit")
    except PackageNotFoundError:
        return "(not installed)"


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``urnkit`` command, with one subparser per command. The
    resolver's commands are added unless ``argv`` names a library command or asks for the
    version only: those then import nothing of the resolver or the server's libraries.

    >>> build_parser(["check", "urn:example:a"]).parse_args(["check", "urn:example:a"]).strict
    False
    """
    parser = argparse.ArgumentParser(
        prog="urnkit",
        description="Uniform Resource Names to the letter of RFC 8141 (and RFC 2141).",
        epilog="exit status:\n"
        "  0  success\n"
        "  1  a negative answer: some text is not a URN, the URNs are not equivalent, or no\n"
        "     URN was found\n"
        "  2  usage error, a file that cannot be read, or (compare) a text that is not a URN\n\n"
        "Run 'urnkit COMMAND --help' for a command's input, output and exit status.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"urnkit {_version()}")
    commands = subcommands(parser)
    for group in (check, parse, find, info, template):
        group.add_commands(commands)
    if argv is None or _resolver_wanted(argv, commands.choices):
        # The resolver's commands come last; they load the server's libraries only when they run.
        from urnkit.resolver.cli import add_commands

        add_commands(commands)
    return parser


def _resolver_wanted(argv: Sequence[str], library: Collection[str]) -> bool:
    """Whether ``argv`` may need the resolver's commands: it names none of the ``library``'s
    commands, and asks for more than the version (help lists every command).

    >>> _resolver_wanted(["parse", "urn:a:b"], ["parse"]), _resolver_wanted(["--vers"], [])
    (False, False)
    >>> _resolver_wanted(["serve"], ["parse"]), _resolver_wanted(["--help"], ["parse"])
    (True, True)
    """
    named = next((argument for argument in argv if not argument.startswith("-")), None)
    if named is not None:
        return named not in library
    first = argv[0] if argv else ""
    return not (len(first) > 2 and "--version".startswith(first))


def main(argv: list[str] | None = None) -> int:
    """Run the ``urnkit`` command with ``argv`` (default: ``sys.argv[1:]``); return its status.

    >>> main(["compare", "URN:EXAMPLE:a", "urn:example:a?=q"])
    equivalent (RFC 8141 §3)
      A: URN:EXAMPLE:a
         equivalence key: urn:example:a
      B: urn:example:a?=q
         equivalence key: urn:example:a
    0
    """
    try:
        arguments = sys.argv[1:] if argv is None else argv
        args = build_parser(arguments).parse_args(arguments)
    except SystemExit as done:  # --help, --version, or a usage error argparse has reported
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # echoed input may hold undecodable bytes
            stream.reconfigure(errors="backslashreplace")
    try:
        return cast(int, args.run(args))
    except BrokenPipeError:
        # The reader left (``urnkit find big.txt | head``): stop quietly, as Unix filters do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return fail("interrupted", EXIT_INTERRUPTED)
