"""URN namespaces: IANA's registry of NIDs, the NID policy of RFC 8141 §5, and validation.

RFC 8141 §1: "The syntactical correctness of a name starting with "urn:" is not sufficient to make
it a URN. In order for the name to be a valid URN, the namespace identifier (NID) needs to be
registered ..., and the remaining parts of the assigned-name portion of the URN need to be
generated in accordance with the rules for the registered URN namespace." :func:`validate` checks
all three in turn: syntax (RFC 8141 §2), NID policy (:func:`classify_nid`), then the namespace's
own rules, which namespace modules add with :func:`register_validator`.

The registry is IANA's (``registry.csv``, made from IANA's XML by ``scripts/update_registry.py``).

>>> lookup("NBN").reference
'RFC 8458'
>>> classify_nid("x-foo").value, classify_nid("x-foo").section
('reserved', 'RFC 8141 §5.1')
>>> [(f.severity, f.code, f.position, f.section) for f in validate("urn:x-foo:bar")]
[('error', 'nid.reserved', 4, 'RFC 8141 §5.1, Appendix C')]
"""

from __future__ import annotations

import csv
import datetime
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib.resources import files
from types import MappingProxyType
from typing import Literal, Protocol, TypeVar

from urnkit.findings import NID_RESERVED, NID_UNREGISTERED, SYNTAX_INVALID, Finding, Severity
from urnkit.syntax import URNSyntaxError, is_valid
from urnkit.urn import URN

NID_POSITION = 4  # where the NID starts: after "urn:"


class NIDClass(StrEnum):
    """What RFC 8141 §5 makes of a well-formed NID; ``.section`` names the section.

    ``FORMAL`` and ``INFORMAL``: registered with IANA as a formal (§5.1) or informal (§5.2)
    namespace. ``UNREGISTERED``: not registered, but it could be, so a string with it is not yet
    a URN (§1). That includes a well-formed informal NID IANA has not assigned, such as
    ``urn-99``: §5.2 gives its syntax, and IANA assigns such NIDs in sequence, so it is free, not
    reserved. ``RESERVED``: it can never be registered (see :func:`reservation`).

    A registered NID is formal or informal even if it also had a reserved shape (none has).

    >>> NIDClass.INFORMAL == "informal", NIDClass.INFORMAL.section
    (True, 'RFC 8141 §5.2')
    """

    FORMAL = "formal"
    INFORMAL = "informal"
    UNREGISTERED = "unregistered"
    RESERVED = "reserved"

    @property
    def section(self) -> str:
        """The RFC section behind this class."""
        return _CLASS_SECTIONS[self]


_CLASS_SECTIONS = {
    NIDClass.FORMAL: "RFC 8141 §5.1",
    NIDClass.INFORMAL: "RFC 8141 §5.2",
    NIDClass.UNREGISTERED: "RFC 8141 §1",
    NIDClass.RESERVED: "RFC 8141 §5.1",
}


Kind = Literal["formal", "informal"]


@dataclass(frozen=True, slots=True)
class Namespace:
    """A URN namespace in IANA's registry.

    ``nid`` as IANA lists it; ``kind`` formal or informal; ``reference`` the RFCs, organizations
    or people IANA names (several joined with "; "); ``date`` the registration date, when IANA
    gives one; ``template`` the URL of the registration template, when IANA links one.

    >>> lookup("urn-7")
    Namespace(nid='urn-7', kind='informal', reference='RFC 6050', date=None, template=None)
    """

    nid: str
    kind: Kind
    reference: str
    date: datetime.date | None
    template: str | None


_KINDS: dict[str, Kind] = {"formal": "formal", "informal": "informal"}


@cache
def _registry() -> Mapping[str, Namespace]:
    text = files(__name__).joinpath("registry.csv").read_text(encoding="utf-8")
    namespaces = {}
    for row in csv.DictReader(io.StringIO(text)):
        if row["kind"] not in _KINDS:
            raise ValueError(f"registry.csv: unknown kind {row['kind']!r} for {row['nid']!r}")
        namespaces[row["nid"].lower()] = Namespace(
            nid=row["nid"],
            kind=_KINDS[row["kind"]],
            reference=row["reference"],
            date=datetime.date.fromisoformat(row["date"]) if row["date"] else None,
            template=row["template"] or None,
        )
    return MappingProxyType(namespaces)


def registry() -> Mapping[str, Namespace]:
    """Every registered namespace, read-only, by lower-case NID, in NID order.

    >>> len(registry()), registry()["nbn"].kind
    (105, 'formal')
    """
    return _registry()


def lookup(nid: str) -> Namespace | None:
    """The registry entry for ``nid`` (NIDs are case-insensitive, RFC 8141 §3), or None.

    >>> lookup("ISBN").template
    'https://www.iana.org/assignments/urn-formal/isbn'
    >>> lookup("notregistered") is None
    True
    """
    return _registry().get(nid.lower())


@dataclass(frozen=True, slots=True)
class Reservation:
    """Which clause of the NID policy reserves a NID, why, and where it is stated.

    ``clause`` is one of "urn", "urn-prefix", "experimental", "country-code", "a-label" and
    "two-characters" (see :func:`reservation`).
    """

    clause: str
    reason: str
    section: str


_URN = Reservation(
    "urn",
    'it would be confused with the scheme name "urn"',
    "RFC 2141 §2",
)
_URN_PREFIX = Reservation(
    "urn-prefix",
    '"urn-" begins only informal NIDs, "urn-" and a number without leading zeros',
    "RFC 8141 §5.1, §5.2",
)
_EXPERIMENTAL = Reservation(
    "experimental",
    '"X-" marked the experimental namespaces of RFC 3406, which RFC 8141 removed; names in them '
    "are not valid URNs",
    "RFC 8141 §5.1, Appendix C",
)
_COUNTRY_CODE = Reservation(
    "country-code",
    "NIDs beginning with two letters and a hyphen are reserved for national namespaces based on "
    "ISO 3166-1 alpha-2 country codes",
    "RFC 8141 §5.1",
)
_A_LABEL = Reservation(
    "a-label",
    'NIDs beginning with two letters and two hyphens, such as "xn--", are reserved for DNS '
    "A-labels (RFC 5890)",
    "RFC 8141 §5.1",
)
_TWO_CHARACTERS = Reservation(
    "two-characters",
    "a formal NID must be more than two characters long, and an informal one is "
    '"urn-" and a number',
    "RFC 8141 §5.1",
)
_DIGITS = frozenset("0123456789")


def reservation(nid: str) -> Reservation | None:
    """Why no namespace can be registered with ``nid`` (any case), or None if one could.

    The clauses (RFC 8141 §5.1 unless stated; no NID matches two of them):

    * "urn": the NID ``urn`` itself, which RFC 2141 §2 reserves to avoid confusion with the
      scheme name (RFC 8141 does not lift it);
    * "urn-prefix": ``urn-`` not followed by a §5.2 Number: digits without a leading zero
      (``urn-0``, ``urn-01``, ``urn-a``);
    * "experimental": ``X-`` (Appendix C: names in such namespaces "are not valid URNs");
    * "country-code": two letters and a hyphen (``fi-abc``), for ISO 3166-1 alpha-2 codes;
    * "a-label": two letters and two hyphens (``xn--abc``), for DNS A-labels;
    * "two-characters": any NID of two characters (``fi``): "It MUST be more than two characters
      long", and an informal NID has at least five.

    Raises ValueError if ``nid`` is not a NID (RFC 8141 §2).

    >>> reservation("urn-01").clause, reservation("XN--abc").clause, reservation("nbn") is None
    ('urn-prefix', 'a-label', True)
    """
    _require_nid(nid)
    return _reservation(nid.lower())


def _reservation(key: str) -> Reservation | None:
    """:func:`reservation` for a well-formed NID in lower case."""
    if key == "urn":
        return _URN
    if key.startswith("urn-"):
        number = key[4:]
        if number[0] == "0" or not _DIGITS.issuperset(number):
            return _URN_PREFIX
        return None
    if key.startswith("x-"):
        return _EXPERIMENTAL
    if key[:2].isalpha() and key[2:3] == "-":
        return _A_LABEL if key[3:4] == "-" else _COUNTRY_CODE
    if len(key) == 2:
        return _TWO_CHARACTERS
    return None


def _require_nid(nid: str) -> None:
    # The NID rule of RFC 8141 §2, from the one grammar in urnkit.syntax: ":" would end the NID.
    if ":" in nid or not is_valid(f"urn:{nid}:0"):
        raise ValueError(f"not a NID (RFC 8141 §2): {nid!r}")


def classify_nid(nid: str) -> NIDClass:
    """The class of ``nid`` (any case): registered formal or informal, unregistered, reserved.

    Raises ValueError if ``nid`` is not a NID (RFC 8141 §2).

    >>> [classify_nid(nid).value for nid in ("NBN", "urn-7", "urn-99", "urn-07", "xn--abc")]
    ['formal', 'informal', 'unregistered', 'reserved', 'reserved']
    """
    _require_nid(nid)
    return _classify(nid.lower())


def _classify(key: str) -> NIDClass:
    namespace = _registry().get(key)
    if namespace is not None:
        return NIDClass(namespace.kind)
    return NIDClass.UNREGISTERED if _reservation(key) is None else NIDClass.RESERVED


# --- namespace modules ---------------------------------------------------------------------------
#
# A namespace module (nbn, isbn, ...) adds its NID's own rules (RFC 8141 §1: the NSS must be
# "generated in accordance with the rules for the registered URN namespace") by registering a
# validator, and optionally the structured fields it reads from an NSS, for its lower-case NID.
# urnkit's own modules register here when they are written; others call the same functions.


class Validator(Protocol):
    """A namespace's rules: the findings for a URN (syntactically valid, in that namespace).

    ``strict`` asks for the letter of the namespace's specification: a rule that real URNs
    often break may be a warning when lenient and an error when strict.
    """

    def __call__(self, urn: URN, /, *, strict: bool) -> list[Finding]: ...


FieldsParser = Callable[[URN], Mapping[str, object]]

_T = TypeVar("_T")
_validators: dict[str, Validator] = {}
_fields_parsers: dict[str, FieldsParser] = {}


def register_validator(nid: str, validator: Validator) -> None:
    """Make :func:`validate` call ``validator`` for URNs with the NID ``nid`` (any case).

    >>> def no_empty_parts(urn: URN, *, strict: bool) -> list[Finding]:
    ...     if "::" not in urn.nss:
    ...         return []
    ...     return [Finding("example.empty-part", "warning", "an empty part", None, "RFC 6963")]
    >>> register_validator("x-demo", no_empty_parts)
    >>> [f.code for f in validate("urn:x-demo:a::b")]
    ['nid.reserved', 'example.empty-part']
    >>> del _validators["x-demo"]  # tidy up after the example
    """
    _register(_validators, nid, validator, "validator")


def register_fields(nid: str, parser: FieldsParser) -> None:
    """Make :func:`namespace_fields` use ``parser`` for URNs with the NID ``nid`` (any case).

    >>> register_fields("x-demo", lambda urn: {"parts": tuple(urn.nss.split(":"))})
    >>> namespace_fields(URN.parse("urn:x-demo:a:b"))
    {'parts': ('a', 'b')}
    >>> del _fields_parsers["x-demo"]  # tidy up after the example
    """
    _register(_fields_parsers, nid, parser, "fields parser")


def _register(table: dict[str, _T], nid: str, value: _T, what: str) -> None:
    key = nid.lower()
    if key in table and table[key] != value:
        raise ValueError(f"a {what} for the NID {nid!r} is registered already")
    table[key] = value


def namespace_fields(urn: URN) -> Mapping[str, object] | None:
    """The structured fields the namespace module of ``urn``'s NID reads from it, or None when
    no module is registered for that NID.

    >>> namespace_fields(URN.parse("urn:x-demo:a")) is None
    True
    """
    parser = _fields_parsers.get(urn.nid.lower())
    return None if parser is None else parser(urn)


# --- validation ----------------------------------------------------------------------------------


def validate(text: str, *, strict: bool = False) -> list[Finding]:
    """Everything wrong with ``text`` as a URN: syntax, then NID policy, then the namespace's
    rules. The text is acceptable when no finding is an error (:func:`urnkit.is_acceptable`).

    * Syntax (RFC 8141 §2): a text that is not a URN gets one error at the first character at
      fault, and nothing more.
    * NID policy, at position 4 where the NID starts: a reserved NID (RFC 8141 §5.1, Appendix C)
      is an error. An unregistered NID makes the text not a URN (RFC 8141 §1): an error when
      ``strict``, a warning when lenient (such URNs are common in the wild).
    * The namespace's rules, from the validator registered for the NID, if any.

    >>> validate("urn:nbn:fi-fe201003181510")
    []
    >>> [(f.severity, f.code) for f in validate("urn:notregistered:x")]
    [('warning', 'nid.unregistered')]
    >>> [(f.severity, f.code) for f in validate("urn:notregistered:x", strict=True)]
    [('error', 'nid.unregistered')]
    >>> [(f.code, f.position, f.section) for f in validate("urn:example:a b")]
    [('syntax.invalid', 13, 'RFC 8141 §2.2')]
    """
    try:
        urn = URN.parse(text)
    except URNSyntaxError as error:
        return [Finding(SYNTAX_INVALID, "error", error.reason, error.position, error.section)]
    key = urn.nid.lower()
    findings = _nid_findings(urn.nid, key, strict)
    validator = _validators.get(key)
    if validator is not None:
        findings += validator(urn, strict=strict)
    return findings


def _nid_findings(nid: str, key: str, strict: bool) -> list[Finding]:
    if key in _registry():
        return []
    reserved = _reservation(key)
    if reserved is not None:
        message = f'the NID "{nid}" is reserved: {reserved.reason}'
        return [Finding(NID_RESERVED, "error", message, NID_POSITION, reserved.section)]
    if key.startswith("urn-"):  # a well-formed informal NID (RFC 8141 §5.2), not assigned
        message = (
            f'the NID "{nid}" has the form of an informal NID, but IANA has not assigned it; '
            "without a registered NID, a string is not a URN"
        )
        section = "RFC 8141 §1, §5.2"
    else:
        message = (
            f'the NID "{nid}" is not registered with IANA; without a registered NID, '
            "a string is not a URN"
        )
        section = NIDClass.UNREGISTERED.section
    severity: Severity = "error" if strict else "warning"
    return [Finding(NID_UNREGISTERED, severity, message, NID_POSITION, section)]


__all__ = [
    "FieldsParser",
    "NIDClass",
    "Namespace",
    "Reservation",
    "Validator",
    "classify_nid",
    "lookup",
    "namespace_fields",
    "register_fields",
    "register_validator",
    "registry",
    "reservation",
    "validate",
]

# The namespace modules register their rules, validators and fields parsers on import; they
# import from this module, so they come last.
from urnkit.namespaces import doi, example, ietf, isbn, issn, nbn, oid, uuid  # noqa: E402, F401
