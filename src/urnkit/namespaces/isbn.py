"""URN:ISBN (RFC 3187; the ISBN Agency's updated namespace registration, RFC 8254): validate,
compare, parse.

The NSS is an ISBN (ISO 2108), ISBN-13 or ISBN-10, with or without hyphens. URN-equivalence
follows the ISBN Agency's registration: hyphens are ignored and an ISBN-10 is the ISBN-13 it
converts to (prefix 978, new check digit), so ``urn:isbn:0-451-45052-3`` and
``urn:isbn:978-0-451-45052-4`` name one book. Only a NSS that is a valid ISBN (check digit
right) is converted; any other keeps its RFC 8141 §3 key, so the rule only merges.

The check digit in :func:`validate` is python-stdnum's (``urnkit[checks]``); without it the
check is skipped with a warning. The equivalence rule does its own arithmetic (ISO 2108: ISBN-10
modulus 11, ISBN-13 the EAN-13 modulus 10) so that URN equality and hashes are the same with or
without optional packages.

>>> from urnkit.urn import URN
>>> URN.parse("urn:isbn:0-451-45052-3") == URN.parse("URN:ISBN:9780451450524")
True
>>> [(f.code, f.position) for f in validate("urn:isbn:0-451-45052-4")]
[('isbn.check-digit', 21)]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from urnkit.findings import Finding
from urnkit.namespaces import register_fields, register_validator
from urnkit.namespaces._common import as_urn, key_nss, nss_start, unchecked
from urnkit.urn import URN, register_equivalence_rule

NID = "isbn"
SYNTAX = "isbn.syntax"
LENGTH = "isbn.length"
PREFIX = "isbn.prefix"
CHECK_DIGIT = "isbn.check-digit"
CHECK_UNCHECKED = "isbn.check-unchecked"
_SECTION = "RFC 3187 (ISBN namespace, updated by RFC 8254); ISO 2108"

# An ISBN with its hyphens taken out: ten characters (the last may be X, in either case) or
# thirteen digits.
_ISBN10 = re.compile(r"[0-9]{9}[0-9Xx]")
_ISBN13 = re.compile(r"[0-9]{13}")
_EAN_PREFIXES = ("978", "979")  # the GS1 prefixes assigned to ISBNs (ISO 2108)


def _isbn10_sum_ok(isbn10: str) -> bool:
    """ISO 2108 ISBN-10: weights 10 down to 1, the sum divisible by 11 (X is 10)."""
    values = [10 if char in "Xx" else int(char) for char in isbn10]
    return (
        sum(weight * value for weight, value in zip(range(10, 0, -1), values, strict=True)) % 11
        == 0
    )


def _ean13_check_digit(first12: str) -> str:
    """The EAN-13 check digit (ISO 2108 ISBN-13): weights 1, 3, 1, 3, ...; modulus 10."""
    total = sum(int(char) * (3 if index % 2 else 1) for index, char in enumerate(first12))
    return str(-total % 10)


def _isbn10_check_digit(first9: str) -> str:
    total = sum(weight * int(char) for weight, char in zip(range(10, 1, -1), first9, strict=True))
    digit = -total % 11
    return "X" if digit == 10 else str(digit)


def _isbn13(compact: str) -> str | None:
    """The ISBN-13 of a valid ISBN without hyphens, or None if it is not a valid ISBN."""
    if _ISBN10.fullmatch(compact):
        if not _isbn10_sum_ok(compact):
            return None
        first12 = "978" + compact[:9]
        return first12 + _ean13_check_digit(first12)
    if _ISBN13.fullmatch(compact) and compact.startswith(_EAN_PREFIXES):
        return compact if _ean13_check_digit(compact[:12]) == compact[12] else None
    return None


@dataclass(frozen=True, slots=True)
class ISBN:
    """A URN:ISBN's fields: the ISBN-13; the ISBN-10 (only for prefix 978); the prefix (978 or
    979); and, when python-stdnum knows the ranges, the registration group, registrant and
    publication elements (ISO 2108), else None.

    >>> parse("urn:isbn:0-451-45052-3").isbn13
    '9780451450524'
    """

    isbn13: str
    isbn10: str | None
    prefix: str
    registration_group: str | None
    registrant: str | None
    publication: str | None


def parse(urn_or_text: URN | str) -> ISBN:
    """The ISBN of a URN:ISBN and its elements.

    Raises :class:`~urnkit.URNSyntaxError` if the text is not a URN, ValueError if it is not a
    URN:ISBN or its NSS is not a valid ISBN (:func:`validate` says why).

    >>> i = parse("urn:isbn:978-0-451-45052-4")
    >>> i.isbn10, i.prefix, i.registration_group, i.registrant, i.publication
    ('0451450523', '978', '0', '451', '45052')
    """
    nss = as_urn(urn_or_text, NID).nss
    isbn13 = _isbn13(nss.replace("-", ""))
    if isbn13 is None:
        raise ValueError(f"not a valid ISBN: {nss!r}")
    prefix = isbn13[:3]
    isbn10 = None
    if prefix == "978":
        isbn10 = isbn13[3:12] + _isbn10_check_digit(isbn13[3:12])
    group = registrant = publication = None
    try:
        import stdnum.isbn
    except ImportError:
        pass
    else:
        _, group_, registrant_, publication_, _ = stdnum.isbn.split(isbn13)
        if group_ and registrant_:  # stdnum knows the ranges of this group
            group, registrant, publication = group_, registrant_, publication_
    return ISBN(isbn13, isbn10, prefix, group, registrant, publication)


def _fields(urn: URN) -> Mapping[str, object]:
    try:
        isbn = parse(urn)
    except ValueError:
        return {}
    return {
        "isbn13": isbn.isbn13,
        "isbn10": isbn.isbn10,
        "prefix": isbn.prefix,
        "registration_group": isbn.registration_group,
        "registrant": isbn.registrant,
        "publication": isbn.publication,
    }


def equivalence_key(key: str) -> str:
    """The ISBN Agency's equivalence on an RFC 8141 §3 key: a NSS that is a valid ISBN becomes
    its ISBN-13 without hyphens; any other NSS keeps its key.

    >>> equivalence_key("urn:isbn:0-451-45052-3"), equivalence_key("urn:isbn:0-451-45052-4")
    ('urn:isbn:9780451450524', 'urn:isbn:0-451-45052-4')
    """
    isbn13 = _isbn13(key_nss(key, NID).replace("-", ""))
    return key if isbn13 is None else f"urn:{NID}:{isbn13}"


def validate(urn: URN | str, *, strict: bool = False) -> list[Finding]:
    """The findings for a URN:ISBN, each an error and at most one: ``isbn.syntax`` (a character
    other than digits, hyphens and a final X), ``isbn.length`` (not 10 or 13 digits),
    ``isbn.prefix`` (an ISBN-13 not starting 978 or 979), ``isbn.check-digit``; or the warning
    ``isbn.check-unchecked`` when python-stdnum is missing. ``strict`` changes nothing.

    >>> validate("urn:isbn:978-0-451-45052-4")
    []
    >>> [(f.code, f.position) for f in validate("urn:isbn:0-451-4505a-3")]
    [('isbn.syntax', 19)]
    """
    urn = as_urn(urn, NID)
    nss, start = urn.nss, nss_start(urn)
    compact = nss.replace("-", "")
    for index, char in enumerate(nss):
        final_x = char in "Xx" and index == len(nss) - 1 and len(compact) == 10
        if not (char.isascii() and char.isdigit()) and char != "-" and not final_x:
            message = f"{char!r} cannot be in an ISBN: only digits, hyphens and a final X"
            return [Finding(SYNTAX, "error", message, start + index, _SECTION)]
    if len(compact) not in (10, 13):
        message = f"an ISBN has 10 or 13 digits, not {len(compact)}"
        return [Finding(LENGTH, "error", message, start, _SECTION)]
    if len(compact) == 13 and not compact.startswith(_EAN_PREFIXES):
        message = f"an ISBN-13 starts with 978 or 979, not {compact[:3]}"
        return [Finding(PREFIX, "error", message, start, _SECTION)]
    try:
        import stdnum.isbn
    except ImportError:
        return [unchecked(NID, "ISBN check digit", _SECTION)]
    if stdnum.isbn.is_valid(compact):
        return []
    expected = (
        _isbn10_check_digit(compact[:9]) if len(compact) == 10 else _ean13_check_digit(compact[:12])
    )
    message = f"the check digit is {compact[-1]}, but the ISBN's digits give {expected}"
    position = start + len(nss.rstrip("-")) - 1
    return [Finding(CHECK_DIGIT, "error", message, position, _SECTION)]


register_equivalence_rule(NID, equivalence_key)
register_validator(NID, validate)
register_fields(NID, _fields)

__all__ = [
    "CHECK_DIGIT",
    "CHECK_UNCHECKED",
    "ISBN",
    "LENGTH",
    "PREFIX",
    "SYNTAX",
    "equivalence_key",
    "parse",
    "validate",
]
