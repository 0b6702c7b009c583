"""URN:IETF (RFC 2648; the ``params`` sub-namespace, RFC 3553): validate, compare, parse.

RFC 2648 §2 gives the NSS's syntax:

    NSS       = rfc-nss / fyi-nss / std-nss / bcp-nss / draft-nss / mtg-nss / other-nss
    rfc-nss   = "rfc:" 1*DIGIT       (likewise "fyi:", "std:", "bcp:")
    draft-nss = "id:" string
    mtg-nss   = "mtg:" string
    other-nss = string  ; beginning with a prefix other than one of those above
    string    = 1*(DIGIT / ALPHA / "-")

Quoted ABNF strings match either case (RFC 5234 §2.3), so ``RFC:2648`` is an rfc-nss. RFC
3553 §3 adds ``params``, a "primarily opaque" sub-namespace in which a colon marks hierarchy
and "the items on both sides of it are valid names", so no part is empty. Further
sub-namespaces are registered with IANA (RFC 6924), so an unknown first segment is a warning.
RFC 2648 expects new working-group names outside its ``string`` rule ("this specification will
need to be updated"), so a ``string`` that breaks it is an error only when strict.

Equivalence stays at RFC 8141 §3. RFC 2648 may declare its NSS case-insensitive, but no copy
of its "Rules for Lexical Equivalence" could be read to confirm it, and a rule that merges too
much cannot be taken back; :func:`equivalence_key` returns the key unchanged.

>>> parse("urn:ietf:params:xml:ns:netconf:base:1.0").parts
('xml', 'ns', 'netconf', 'base', '1.0')
>>> [(f.code, f.severity, f.position) for f in validate("urn:ietf:rfc:26a")]
[('ietf.number', 'error', 15)]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from urnkit.findings import Finding, Severity
from urnkit.namespaces import register_fields, register_validator
from urnkit.namespaces._common import as_urn, key_nss, nss_start
from urnkit.urn import URN, register_equivalence_rule

NID = "ietf"
NUMBER = "ietf.number"
NAME = "ietf.name"
PARAMS_EMPTY_PART = "ietf.params-empty-part"
UNKNOWN_SERIES = "ietf.unknown-series"
_SECTION = "RFC 2648 §2"
_PARAMS_SECTION = "RFC 3553 §3"

_NUMBERED = frozenset({"rfc", "fyi", "std", "bcp"})
_NAMED = frozenset({"id", "mtg"})
_SERIES = _NUMBERED | _NAMED | {"params"}
_DIGITS = frozenset("0123456789")
_STRING = frozenset("0123456789-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass(frozen=True, slots=True)
class IETFName:
    """A URN:IETF's fields: ``series`` the first segment in lower case (``rfc``, ``fyi``,
    ``std``, ``bcp``, ``id``, ``mtg``, ``params`` or another); ``value`` the rest after its
    colon, as written ("" if none); ``number`` the document number of rfc, fyi, std and bcp
    names, else None; ``parts`` the colon-separated parts of ``value``.

    >>> parse("urn:ietf:rfc:2648")
    IETFName(series='rfc', value='2648', number=2648, parts=('2648',))
    """

    series: str
    value: str
    number: int | None
    parts: tuple[str, ...]


def parse(urn_or_text: URN | str) -> IETFName:
    """Split a URN:IETF's NSS at its first colon into series and value.

    Raises :class:`~urnkit.URNSyntaxError` if the text is not a URN, ValueError if it is not a
    URN:IETF.

    >>> parse("urn:ietf:id:ietf-urn-ietf-07").value
    'ietf-urn-ietf-07'
    """
    nss = as_urn(urn_or_text, NID).nss
    series, _, value = nss.partition(":")
    series = series.lower()
    number = None
    if series in _NUMBERED and value and _DIGITS.issuperset(value):
        number = int(value)
    return IETFName(series, value, number, tuple(value.split(":")) if value else ())


def _fields(urn: URN) -> Mapping[str, object]:
    name = parse(urn)
    return {"series": name.series, "value": name.value, "number": name.number, "parts": name.parts}


def equivalence_key(key: str) -> str:
    """Plain RFC 8141 §3 (see the module's docstring): the key as it is.

    >>> equivalence_key("urn:ietf:rfc:2648")
    'urn:ietf:rfc:2648'
    """
    key_nss(key, NID)
    return key


def _first_outside(text: str, allowed: frozenset[str]) -> int | None:
    return next((index for index, char in enumerate(text) if char not in allowed), None)


def validate(urn: URN | str, *, strict: bool = False) -> list[Finding]:
    """The findings of RFC 2648 §2 and RFC 3553 §3 for a URN:IETF, at most one:
    ``ietf.number`` (an rfc, fyi, std or bcp name that is not digits; error),
    ``ietf.name`` (an id or mtg name outside ``1*(DIGIT / ALPHA / "-")``; error when
    ``strict``, else warning), ``ietf.params-empty-part`` (error), ``ietf.unknown-series``
    (warning).

    >>> validate("urn:ietf:params:dns:rr-type-codes:soa")
    []
    >>> [(f.code, f.severity) for f in validate("urn:ietf:mtg:41_urn", strict=True)]
    [('ietf.name', 'error')]
    """
    urn = as_urn(urn, NID)
    nss, start = urn.nss, nss_start(urn)
    series, colon, value = nss.partition(":")
    at = start + len(series) + len(colon)  # where the value starts
    key = series.lower()
    if key not in _SERIES:
        message = (
            f'"{series}" is not one of the IETF sub-namespaces of RFC 2648 and RFC 3553 '
            "(rfc, fyi, std, bcp, id, mtg, params)"
        )
        return [Finding(UNKNOWN_SERIES, "warning", message, start, "RFC 2648 §2; RFC 6924")]
    if key in _NUMBERED:
        bad = _first_outside(value, _DIGITS) if value else 0
        if bad is None:
            return []
        message = f'a "{key}:" name is the document number: one or more digits'
        return [Finding(NUMBER, "error", message, at + bad, _SECTION)]
    if key in _NAMED:
        bad = _first_outside(value, _STRING) if value else 0
        if bad is None:
            return []
        severity: Severity = "error" if strict else "warning"
        message = f'an "{key}:" name is one or more letters, digits and hyphens'
        return [Finding(NAME, severity, message, at + bad, _SECTION)]
    if not colon:  # "urn:ietf:params" names the sub-namespace itself
        return []
    offset = 0
    for part in value.split(":"):
        if not part:
            message = 'a "params:" name has no empty part: names stand on both sides of a colon'
            return [Finding(PARAMS_EMPTY_PART, "error", message, at + offset, _PARAMS_SECTION)]
        offset += len(part) + 1
    return []


register_equivalence_rule(NID, equivalence_key)
register_validator(NID, validate)
register_fields(NID, _fields)

__all__ = [
    "NAME",
    "NUMBER",
    "PARAMS_EMPTY_PART",
    "UNKNOWN_SERIES",
    "IETFName",
    "equivalence_key",
    "parse",
    "validate",
]
