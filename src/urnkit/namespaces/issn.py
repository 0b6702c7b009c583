"""URN:ISSN (RFC 3044; the ISSN International Centre's updated namespace registration, RFC
8254): validate, compare, parse.

The NSS is an ISSN (ISO 3297): seven digits and a check character (a digit or X), written
``NNNN-NNNC``; the hyphen is optional and ``x`` is ``X``. URN-equivalence writes every NSS of
that shape as ``NNNN-NNNC`` with an upper-case X. Neither the hyphen nor the case of X carries
information, so the rule merges whether or not the check digit is right; any other NSS keeps
its RFC 8141 §3 key.

The check digit in :func:`validate` is python-stdnum's (``urnkit[checks]``); without it the
check is skipped with a warning.

>>> from urnkit.urn import URN
>>> URN.parse("urn:issn:0002-936x") == URN.parse("urn:ISSN:0002936X")
True
>>> [(f.code, f.position) for f in validate("urn:issn:0167-6424")]
[('issn.check-digit', 17)]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from urnkit.findings import Finding
from urnkit.namespaces import register_fields, register_validator
from urnkit.namespaces._common import as_urn, first_mismatch, key_nss, nss_start, unchecked
from urnkit.urn import URN, register_equivalence_rule

NID = "issn"
SYNTAX = "issn.syntax"
CHECK_DIGIT = "issn.check-digit"
CHECK_UNCHECKED = "issn.check-unchecked"
_SECTION = "RFC 3044 (ISSN namespace, updated by RFC 8254); ISO 3297"

_ISSN = re.compile(r"([0-9]{4})-?([0-9]{3}[0-9Xx])")


def _check_character(first7: str) -> str:
    """ISO 3297: weights 8 down to 2, modulus 11; 10 is written X."""
    digit = (
        -sum(weight * int(char) for weight, char in zip(range(8, 1, -1), first7, strict=True)) % 11
    )
    return "X" if digit == 10 else str(digit)


@dataclass(frozen=True, slots=True)
class ISSN:
    """A URN:ISSN's fields: the ISSN written ``NNNN-NNNC`` and its check character.

    >>> parse("urn:issn:0002936x")
    ISSN(issn='0002-936X', check_character='X')
    """

    issn: str
    check_character: str


def _canonical(nss: str) -> str | None:
    match = _ISSN.fullmatch(nss)
    return None if match is None else f"{match[1]}-{match[2].upper()}"


def parse(urn_or_text: URN | str) -> ISSN:
    """The ISSN of a URN:ISSN, written ``NNNN-NNNC``. The check digit is not checked here.

    Raises :class:`~urnkit.URNSyntaxError` if the text is not a URN, ValueError if it is not a
    URN:ISSN or its NSS is not of the ISSN's shape.

    >>> parse("urn:issn:0167-6423").issn
    '0167-6423'
    """
    nss = as_urn(urn_or_text, NID).nss
    issn = _canonical(nss)
    if issn is None:
        raise ValueError(f"not an ISSN (NNNN-NNNC, ISO 3297): {nss!r}")
    return ISSN(issn, issn[-1])


def _fields(urn: URN) -> Mapping[str, object]:
    try:
        issn = parse(urn)
    except ValueError:
        return {}
    return {"issn": issn.issn, "check_character": issn.check_character}


def equivalence_key(key: str) -> str:
    """The ISSN namespace's equivalence on an RFC 8141 §3 key: hyphen optional, ``x`` = ``X``;
    a NSS of the ISSN's shape becomes ``NNNN-NNNC``, any other keeps its key.

    >>> equivalence_key("urn:issn:0167642x")
    'urn:issn:0167-642X'
    """
    issn = _canonical(key_nss(key, NID))
    return key if issn is None else f"urn:{NID}:{issn}"


def validate(urn: URN | str, *, strict: bool = False) -> list[Finding]:
    """The findings for a URN:ISSN, each an error and at most one: ``issn.syntax`` (at the
    first character that breaks ``NNNN-NNNC``, hyphen optional) and ``issn.check-digit``; or the
    warning ``issn.check-unchecked`` when python-stdnum is missing. ``strict`` changes nothing.

    >>> validate("urn:issn:0002-936x"), validate("urn:issn:01676423")
    ([], [])
    >>> [(f.code, f.position) for f in validate("urn:issn:0167-64")]
    [('issn.syntax', 16)]
    """
    urn = as_urn(urn, NID)
    nss, start = urn.nss, nss_start(urn)
    pattern = "9999-999C" if nss[4:5] == "-" else "9999999C"
    mismatch = first_mismatch(nss, pattern)
    if mismatch is not None:
        message = "an ISSN is seven digits and a check character (a digit or X): NNNN-NNNC"
        return [Finding(SYNTAX, "error", message, start + mismatch, _SECTION)]
    try:
        import stdnum.issn
    except ImportError:
        return [unchecked(NID, "ISSN check digit", _SECTION)]
    if stdnum.issn.is_valid(nss):
        return []
    digits = nss.replace("-", "")
    expected = _check_character(digits[:7])
    message = f"the check character is {digits[7]}, but the ISSN's digits give {expected}"
    return [Finding(CHECK_DIGIT, "error", message, start + len(nss) - 1, _SECTION)]


register_equivalence_rule(NID, equivalence_key)
register_validator(NID, validate)
register_fields(NID, _fields)

__all__ = [
    "CHECK_DIGIT",
    "CHECK_UNCHECKED",
    "ISSN",
    "SYNTAX",
    "equivalence_key",
    "parse",
    "validate",
]
