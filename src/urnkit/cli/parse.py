"""``urnkit parse``, ``normalize`` and ``compare``: a URN's parts, its normal form, and
URN-equivalence (RFC 8141 §3), by :meth:`urnkit.URN.parse` and :meth:`~urnkit.URN.normalize`."""

from __future__ import annotations

import argparse
import json

from urnkit.commandline import EXIT_INVALID, EXIT_OK, EXIT_USAGE, Commands, Help, command, fail
from urnkit.syntax import Mode, URNSyntaxError
from urnkit.urn import URN

_EQUIVALENCE_SECTION: dict[Mode, str] = {"rfc8141": "RFC 8141 §3", "rfc2141": "RFC 2141 §5"}


_PARSE = Help(
    "Show the parts of a URN.",
    "Prints scheme, nid, nss, r_component, q_component, f_component, assigned_name,\n"
    "equivalence_key (RFC 8141 §3) and display (RFC 8141 §4.4).",
    ("0  the text is a URN", "1  it is not (explained on stderr)", "2  usage error"),
)

_NORMALIZE = Help(
    "Print each URN normalized (RFC 8141 §3).",
    "Lower-case scheme and NID, upper-case hex digits in percent-encodings; nothing is\n"
    "decoded, components are kept.",
    ("0  every text is a URN", "1  some text is not (explained on stderr)", "2  usage error"),
)

_COMPARE = Help(
    "Say whether two URNs are URN-equivalent (RFC 8141 §3).",
    "Prints the verdict and each URN's equivalence key: its assigned-name with scheme and\n"
    "NID in lower case and percent-encodings in upper case. Components do not count.",
    (
        "0  A and B are equivalent",
        "1  they are not",
        "2  usage error, or A or B is not a URN (explained on stderr)",
    ),
)


def _parse(args: argparse.Namespace) -> int:
    try:
        urn = URN.parse(args.urn, mode=args.mode)
    except URNSyntaxError as error:
        return fail(str(error), EXIT_INVALID)
    fields = {
        "scheme": urn.scheme,
        "nid": urn.nid,
        "nss": urn.nss,
        "r_component": urn.r_component,
        "q_component": urn.q_component,
        "f_component": urn.f_component,
        "assigned_name": urn.assigned_name,
        "equivalence_key": urn.equivalence_key(),
        "display": urn.display(),
    }
    if args.json:
        print(json.dumps(fields))
    else:
        for key, value in fields.items():
            shown = "(absent)" if value is None else value or "(empty)"
            print(f"{key:<16} {shown}")
    return EXIT_OK


def _normalize(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for text in args.urns:
        try:
            print(URN.parse(text, mode=args.mode).normalize())
        except URNSyntaxError as error:
            status = fail(str(error), EXIT_INVALID)
    return status


def _compare(args: argparse.Namespace) -> int:
    urns, status = [], EXIT_OK
    for text in (args.a, args.b):
        try:
            urns.append(URN.parse(text, mode=args.mode))
        except URNSyntaxError as error:
            status = fail(str(error), EXIT_USAGE)
    if status != EXIT_OK:
        return status
    first, second = urns
    verdict = "equivalent" if first == second else "not equivalent"
    print(f"{verdict} ({_EQUIVALENCE_SECTION[args.mode]})")
    for letter, urn in zip("AB", urns, strict=True):
        print(f"  {letter}: {urn}\n     equivalence key: {urn.equivalence_key()}")
    return EXIT_OK if first == second else EXIT_INVALID


def add_commands(commands: Commands) -> None:
    """Add ``parse``, ``normalize`` and ``compare``."""
    parse = command(commands, "parse", _parse, _PARSE, mode=True)
    parse.add_argument("urn", metavar="URN")
    parse.add_argument("--json", action="store_true", help="print one JSON object (null: absent)")
    normalize = command(commands, "normalize", _normalize, _NORMALIZE, mode=True)
    normalize.add_argument("urns", nargs="+", metavar="URN")
    compare = command(commands, "compare", _compare, _COMPARE, mode=True)
    compare.add_argument("a", metavar="A")
    compare.add_argument("b", metavar="B")
