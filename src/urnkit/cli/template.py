"""``urnkit template check`` and ``template new``: registration templates, by
:func:`urnkit.registration.check` and :func:`urnkit.registration.blank`."""

from __future__ import annotations

import argparse
import sys

from urnkit import registration
from urnkit.commandline import (
    EXIT_INVALID,
    EXIT_OK,
    Commands,
    Help,
    command,
    group,
    open_input,
    unreadable,
)
from urnkit.findings import is_acceptable

_CHECK = Help(
    "Check a registration template: every field, and the rules the RFCs set for each.",
    "Which template FILE is comes from its first field label. Prints nothing when all is\n"
    "well, else 'FILE:LINE: severity: message [code, section]' for each finding, LINE\n"
    "from 1 (a missing field is reported where it belongs). Errors break a rule of the\n"
    "RFC; warnings point at what RFC 8141 §6.4 asks a section to cover and seems absent.",
    (
        "0  no finding is an error",
        "1  some finding is an error",
        "2  usage error, or FILE cannot be read",
    ),
)

_NEW = Help(
    "Print a blank registration template to fill in.",
    "Every field of the template, in order, with an empty value.",
    ("0  printed", "2  usage error"),
)


def _check(args: argparse.Namespace) -> int:
    label = "<stdin>" if args.file == "-" else args.file
    try:
        with open_input(args.file) as stream:
            text = stream.read().decode("utf-8", "surrogateescape")
    except OSError as error:
        return unreadable(args.file, error)
    findings = registration.check(text)
    for finding in findings:
        line = 1 if finding.position is None else text.count("\n", 0, finding.position) + 1
        print(
            f"{label}:{line}: {finding.severity}: {finding.message} "
            f"[{finding.code}, {finding.section}]"
        )
    return EXIT_OK if is_acceptable(findings) else EXIT_INVALID


def _new(args: argparse.Namespace) -> int:
    sys.stdout.write(registration.blank(args.kind))
    return EXIT_OK


def add_commands(commands: Commands) -> None:
    """Add ``template`` and its commands, ``check`` and ``new``."""
    templates = group(
        commands,
        "template",
        "Check or start a registration template (RFC 8141 Appendix A, RFC 4395 §5.4).",
        "Registration templates: a URN namespace's (RFC 8141 Appendix A) or a URI\n"
        "scheme's (RFC 4395 §5.4), as plain text: 'Label: value' fields, values indented below.",
    )
    check = command(templates, "check", _check, _CHECK)
    check.add_argument("file", metavar="FILE", help="the template ('-': stdin)")
    new = command(templates, "new", _new, _NEW)
    new.add_argument(
        "--kind",
        choices=registration.KINDS,
        required=True,
        help="urn-namespace (RFC 8141 Appendix A) or uri-scheme (RFC 4395 §5.4)",
    )
