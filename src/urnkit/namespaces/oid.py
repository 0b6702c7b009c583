"""URN:OID (RFC 3061): validate, compare, parse.

RFC 3061 §2: the NSS is an object identifier in dotted decimal, ``number *( "." number )``,
each number without leading zeros (``number = DIGIT / ( LEADDIGIT 1*DIGIT )``). The tree of
ITU-T X.660 | ISO/IEC 9834-1 has three top-level arcs, 0, 1 and 2, and under 0 and 1 only the
arcs 0 to 39 (which is why X.690 §8.19.4 can encode the first two arcs as one number, 40X + Y).

RFC 3061 adds no equivalence rule, and with leading zeros excluded the RFC 8141 §3 key is
already exact: :func:`equivalence_key` returns it unchanged.

>>> parse("urn:oid:1.3.6.1.4.1").arcs
(1, 3, 6, 1, 4, 1)
>>> [(f.code, f.position) for f in validate("urn:oid:1.03.6")]
[('oid.leading-zero', 10)]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from urnkit.findings import Finding
from urnkit.namespaces import register_fields, register_validator
from urnkit.namespaces._common import as_urn, key_nss, nss_start
from urnkit.urn import URN, register_equivalence_rule

NID = "oid"
SYNTAX = "oid.syntax"
LEADING_ZERO = "oid.leading-zero"
FIRST_ARC = "oid.first-arc"
SECOND_ARC = "oid.second-arc"
_SECTION = "RFC 3061 §2"
_TREE = "ITU-T X.660 | ISO/IEC 9834-1; X.690 §8.19.4"

_OID = re.compile(r"(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))*")
_DIGITS = frozenset("0123456789")


@dataclass(frozen=True, slots=True)
class OID:
    """A URN:OID's fields: the arcs, as integers.

    >>> parse("urn:oid:2.999")
    OID(arcs=(2, 999))
    """

    arcs: tuple[int, ...]


def parse(urn_or_text: URN | str) -> OID:
    """The arcs of a URN:OID.

    Raises :class:`~urnkit.URNSyntaxError` if the text is not a URN, ValueError if it is not a
    URN:OID or its NSS breaks the dotted-decimal syntax of RFC 3061 §2 (the arcs' values are
    not checked here: see :func:`validate`).

    >>> parse("urn:oid:0").arcs
    (0,)
    """
    nss = as_urn(urn_or_text, NID).nss
    if _OID.fullmatch(nss) is None:
        raise ValueError(f"not an OID in dotted decimal without leading zeros: {nss!r}")
    return OID(tuple(int(arc) for arc in nss.split(".")))


def _fields(urn: URN) -> Mapping[str, object]:
    try:
        return {"arcs": parse(urn).arcs}
    except ValueError:
        return {}


def equivalence_key(key: str) -> str:
    """RFC 3061 defines no equivalence beyond RFC 8141 §3: the key as it is.

    >>> equivalence_key("urn:oid:1.3.6.1")
    'urn:oid:1.3.6.1'
    """
    key_nss(key, NID)
    return key


def validate(urn: URN | str, *, strict: bool = False) -> list[Finding]:
    """The findings for a URN:OID, each an error: ``oid.syntax`` (at the first character that
    is neither a digit nor a dot between arcs; then nothing more), ``oid.leading-zero`` (at
    each arc that has one), ``oid.first-arc`` (not 0, 1 or 2), ``oid.second-arc`` (40 or more
    under 0 or 1). ``strict`` changes nothing.

    >>> validate("urn:oid:2.5.4.3")
    []
    >>> [(f.code, f.position) for f in validate("urn:oid:1.40")]
    [('oid.second-arc', 10)]
    """
    urn = as_urn(urn, NID)
    nss, start = urn.nss, nss_start(urn)
    arcs: list[tuple[int, str]] = []  # (offset in the NSS, arc)
    offset = 0
    for arc in nss.split("."):
        bad = next((i for i, char in enumerate(arc) if char not in _DIGITS), None)
        if bad is not None or not arc:
            position = start + offset + (0 if bad is None else bad)
            message = "an OID is numbers separated by single dots (dotted decimal)"
            return [Finding(SYNTAX, "error", message, position, _SECTION)]
        arcs.append((offset, arc))
        offset += len(arc) + 1
    findings = [
        Finding(LEADING_ZERO, "error", f"the arc {arc!r} has a leading zero", start + at, _SECTION)
        for at, arc in arcs
        if len(arc) > 1 and arc[0] == "0"
    ]
    first = int(arcs[0][1])
    if first > 2:
        message = f"the first arc of an OID is 0, 1 or 2, not {first}"
        findings.append(Finding(FIRST_ARC, "error", message, start, _TREE))
    elif first < 2 and len(arcs) > 1 and int(arcs[1][1]) >= 40:
        at, second = arcs[1]
        message = f"under the arc {first}, the second arc is 0 to 39, not {int(second)}"
        findings.append(Finding(SECOND_ARC, "error", message, start + at, _TREE))
    return findings


register_equivalence_rule(NID, equivalence_key)
register_validator(NID, validate)
register_fields(NID, _fields)

__all__ = [
    "FIRST_ARC",
    "LEADING_ZERO",
    "OID",
    "SECOND_ARC",
    "SYNTAX",
    "equivalence_key",
    "parse",
    "validate",
]
