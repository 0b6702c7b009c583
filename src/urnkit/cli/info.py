"""``urnkit info``: what :mod:`urnkit.namespaces` knows about a URN: its namespace in IANA's
registry, its NID class, the fields of its NSS and every finding of :func:`urnkit.validate`."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from urnkit.cli.check import finding_lines
from urnkit.commandline import EXIT_INVALID, EXIT_OK, Commands, Help, command, fail
from urnkit.findings import is_acceptable
from urnkit.namespaces import classify_nid, lookup, namespace_fields, reservation, validate
from urnkit.syntax import URNSyntaxError
from urnkit.urn import URN

_INFO = Help(
    "Show what urnkit knows about a URN: its namespace, NID class, fields and findings.",
    "Prints the NID, its class (formal, informal, unregistered or reserved, with the RFC\n"
    "section), the namespace's entry in IANA's registry, the fields its namespace module\n"
    "reads from the NSS (if urnkit has one for the NID) and every finding of\n"
    "urnkit.validate: lenient unless --strict, where an unregistered NID is an error.",
    (
        "0  no finding is an error",
        "1  some finding is an error, or the text is not a URN (explained on stderr)",
        "2  usage error",
    ),
)


def _info(args: argparse.Namespace) -> int:
    try:
        urn = URN.parse(args.urn)
    except URNSyntaxError as error:
        return fail(str(error), EXIT_INVALID)
    nid_class = classify_nid(urn.nid)
    reserved = reservation(urn.nid)
    namespace = lookup(urn.nid)
    fields = namespace_fields(urn)
    findings = validate(args.urn, strict=args.strict)
    info: dict[str, Any] = {
        "urn": args.urn,
        "nid": urn.nid,
        "nid_class": nid_class.value,
        "nid_class_section": nid_class.section if reserved is None else reserved.section,
        "namespace": None
        if namespace is None
        else {
            "nid": namespace.nid,
            "kind": namespace.kind,
            "reference": namespace.reference,
            "date": None if namespace.date is None else namespace.date.isoformat(),
            "template": namespace.template,
        },
        "fields": None if fields is None else dict(fields),
        "valid": is_acceptable(findings),
        "findings": [asdict(finding) for finding in findings],
    }
    if args.json:
        print(json.dumps(info, default=str))
        return EXIT_OK if info["valid"] else EXIT_INVALID
    rows: list[tuple[str, object]] = [
        ("urn", urn),
        ("nid", urn.nid),
        ("nid_class", f"{info['nid_class']} ({info['nid_class_section']})"),
    ]
    if namespace is None:
        rows.append(("namespace", "(not in IANA's registry)"))
    else:
        rows += [
            ("namespace", f"{namespace.kind}, {namespace.reference}"),
            ("registered", info["namespace"]["date"] or "(date not given)"),
            ("template", namespace.template or "(none linked)"),
        ]
    if fields is None:
        rows.append(("fields", "(no namespace module for this NID)"))
    rows += [("fields." + key, value) for key, value in (fields or {}).items()]
    rows.append(("findings", len(findings) or "none"))
    for label, value in rows:
        print(f"{label:<16} {value}")
    if findings:
        print(finding_lines(args.urn, findings))
    return EXIT_OK if info["valid"] else EXIT_INVALID


def add_commands(commands: Commands) -> None:
    """Add ``info``."""
    info = command(commands, "info", _info, _INFO)
    info.add_argument("urn", metavar="URN")
    info.add_argument("--strict", action="store_true", help="the strict view (see check)")
    info.add_argument("--json", action="store_true", help="print one JSON object (null: absent)")
