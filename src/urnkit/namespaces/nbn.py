"""URN:NBN, National Bibliography Numbers (RFC 8458): parse, validate, compare.

RFC 8458 §4.2: the NSS is a prefix (an ISO 3166-1 alpha-2 country code and optional
sub-namespaces, separated by colons), a hyphen, and the NBN string. The prefix is case-insensitive
(§4.3); the NBN string is case-sensitive. National rules (DNB's check digit for de, at and ch; the
Czech format) are data looked up by prefix and reported as warnings.

>>> n = parse("urn:nbn:se:uu:diva-3475")
>>> n.country, n.subnamespaces, n.prefix, n.nbn_string
('se', ('uu', 'diva'), 'se:uu:diva', '3475')
>>> from urnkit.urn import URN
>>> URN.parse("URN:NBN:SE:UU:diva-3475") == URN.parse("urn:nbn:se:uu:diva-3475")
True
>>> [(f.code, f.severity) for f in validate("urn:nbn:hr:168:748382", strict=True)]
[('nbn.no-hyphen', 'error')]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from urnkit.findings import Finding, Severity
from urnkit.namespaces import register_fields, register_validator
from urnkit.urn import URN, register_equivalence_rule

NID = "nbn"
_KEY_START = len("urn:nbn:")  # where the NSS starts in an RFC 8141 §3 key

# RFC 8458 §4.2 (ABNF, RFC 5234):
#   nbn-nss    = prefix "-" nbn-string
#   prefix     = iso-cc *( ":" subspc )   ; The entire prefix is case insensitive.
#   iso-cc     = 2ALPHA                   ; Alpha-2 country code as assigned by part 1 of ISO 3166
#   subspc     = 1*(ALPHA / DIGIT)        ; As assigned by the respective national library.
#   nbn-string = path-rootless            ; RFC 3986
# A subspc cannot hold a hyphen ("They MUST NOT contain any colons or hyphens", §4.3), so the
# first hyphen of the NSS always ends the prefix; later hyphens belong to the NBN string ("Within
# the NBN string, a hyphen MAY be used", §4.2).
_ISO_CC = re.compile(r"[A-Za-z]{2}")
_SUBSPC = re.compile(r"[A-Za-z0-9]+")

# ISO 3166-1 leaves AA, QM-QZ, XA-XZ and ZZ for user assignment: they name no country.
_USER_ASSIGNED = frozenset(
    [
        "aa",
        "zz",
        *(f"q{c}" for c in "mnopqrstuvwxyz"),
        *(f"x{c}" for c in "abcdefghijklmnopqrstuvwxyz"),
    ]
)

# Finding codes (stable).
NO_HYPHEN = "nbn.no-hyphen"
COUNTRY = "nbn.country"
COUNTRY_USER_ASSIGNED = "nbn.country-user-assigned"
COUNTRY_UNCHECKED = "nbn.country-unchecked"
SUBNAMESPACE = "nbn.subnamespace"
NBN_STRING = "nbn.nbn-string"
EMPTY_NBN_STRING = "nbn.empty-nbn-string"
R_COMPONENT = "nbn.r-component"
Q_COMPONENT = "nbn.q-component"
CHECK_DIGIT = "nbn.check-digit"
CZ_FORMAT = "nbn.cz-format"

_SYNTAX = "RFC 8458 §4.2"
_NATIONAL = "RFC 8458 §4.1"  # national libraries set the local assignment policy


@dataclass(frozen=True, slots=True)
class NBN:
    """The parts of a URN:NBN's NSS, as written (RFC 8458 §4.2).

    ``country`` the ISO 3166-1 alpha-2 code (compare it in lower case); ``subnamespaces`` the
    sub-namespace codes; ``prefix`` the country and sub-namespaces joined by ":"; ``nbn_string``
    the case-sensitive rest.

    >>> parse("urn:nbn:ch:bel-9039")
    NBN(country='ch', subnamespaces=('bel',), prefix='ch:bel', nbn_string='9039')
    """

    country: str
    subnamespaces: tuple[str, ...]
    prefix: str
    nbn_string: str


def _split(nss: str) -> tuple[str, str, bool]:
    """``(prefix, nbn_string, delimited)`` of an NSS; ``delimited`` is whether it had a hyphen.

    With a hyphen, the first one splits (RFC 8458 §4.2). Without one, the NSS breaks §4.2, and
    the lenient reading follows the national practice of hyphen-less URN:NBNs such as Croatia's
    ``hr:<institution>:<number>``: the last colon splits, so the colon-separated parts before
    it are the prefix and the last part is the NBN string. An NSS with neither is all prefix and
    has an empty NBN string.
    """
    prefix, hyphen, nbn_string = nss.partition("-")
    if hyphen:
        return prefix, nbn_string, True
    prefix, _, nbn_string = nss.rpartition(":")
    return (prefix, nbn_string, False) if prefix else (nss, "", False)


def _as_nbn_urn(urn_or_text: URN | str) -> URN:
    urn = urn_or_text if isinstance(urn_or_text, URN) else URN.parse(urn_or_text)
    if urn.nid.lower() != NID:
        raise ValueError(f"not a URN:NBN (RFC 8458): the NID is {urn.nid!r}, not 'nbn'")
    return urn


def parse(urn_or_text: URN | str) -> NBN:
    """Split a URN:NBN's NSS into country, sub-namespaces and NBN string (RFC 8458 §4.2).

    The first hyphen ends the prefix. Leniently, an NSS without a hyphen (Croatia's
    ``urn:nbn:hr:168:748382``) is split at its last colon: the NBN string is the last
    colon-separated part, the sub-namespaces are the parts between it and the country, and an NSS
    without a colon either is all country, with an empty NBN string. :func:`validate` reports
    what breaks §4.2; ``parse`` only splits. Components are not part of the NSS and are ignored.

    Raises :class:`~urnkit.URNSyntaxError` if the text is not a URN, ValueError if it is not
    a URN:NBN or its NSS does not begin with a two-letter country code.

    >>> parse("URN:NBN:fi-fe201003181510").nbn_string
    'fe201003181510'
    >>> parse("urn:nbn:hr:168:748382")
    NBN(country='hr', subnamespaces=('168',), prefix='hr:168', nbn_string='748382')
    >>> parse("urn:isbn:0451450523")
    Traceback (most recent call last):
    ...
    ValueError: not a URN:NBN (RFC 8458): the NID is 'isbn', not 'nbn'
    """
    urn = _as_nbn_urn(urn_or_text)
    prefix, nbn_string, _ = _split(urn.nss)
    country, *subnamespaces = prefix.split(":")
    if not _ISO_CC.fullmatch(country):
        raise ValueError(
            f"not a URN:NBN (RFC 8458 §4.2): the NSS {urn.nss!r} does not begin with a two-letter "
            "ISO 3166-1 country code"
        )
    return NBN(country, tuple(subnamespaces), prefix, nbn_string)


def _fields(urn: URN) -> Mapping[str, object]:
    """The fields of :func:`parse` for ``urnkit info``; none when there is no country code."""
    try:
        nbn = parse(urn)
    except ValueError:
        return {}
    return {
        "country": nbn.country,
        "subnamespaces": nbn.subnamespaces,
        "prefix": nbn.prefix,
        "nbn_string": nbn.nbn_string,
    }


def equivalence_key(key: str) -> str:
    """RFC 8458 §4.3 lexical equivalence on an RFC 8141 §3 key (``urn:nbn:<NSS>``): the prefix
    (everything before the first hyphen) folded to lower case, the NBN string kept as it is.
    A hyphen-less NSS has the prefix :func:`parse` gives it.

    >>> equivalence_key("urn:nbn:FI:Jyu-AbC")
    'urn:nbn:fi:jyu-AbC'
    """
    if key[:_KEY_START].lower() != "urn:nbn:":
        raise ValueError(f"not the RFC 8141 §3 key of a URN:NBN: {key!r}")
    prefix = _split(key[_KEY_START:])[0]
    return f"urn:nbn:{prefix.lower()}{key[_KEY_START + len(prefix) :]}"


# --- DNB's check digit ---------------------------------------------------------------------------

# Deutsche Nationalbibliothek, "Beschreibung des Algorithmus zur Berechnung der URN-Prüfziffer"
# (persistent-identifier.de/aktivitaeten/NBNPruefzifferAlgorithmus.php; in English "Check digit
# algorithm", persistent-identifier.de/english/316-check-digit-algorithm.php). Letters in either
# case. The codes are concatenated as decimal numbers, so "0" -> "1" (not "01"): DNB's example
# "urn:nbn:de:gbv:089-332175294" becomes 1112131713141317151617221434171941394432863415, whose
# product sum 4027 divided by 5 gives 805, check digit 5. No code ends in 0, so the divisor is
# never zero.
_DNB_CODES: Mapping[str, str] = {
    **{str(d): str(d + 1) for d in range(9)},
    "9": "41",
    "a": "18", "b": "14", "c": "19", "d": "15", "e": "16", "f": "21", "g": "22", "h": "23",
    "i": "24", "j": "25", "k": "42", "l": "26", "m": "27", "n": "13", "o": "28", "p": "29",
    "q": "31", "r": "12", "s": "32", "t": "33", "u": "11", "v": "34", "w": "35", "x": "36",
    "y": "37", "z": "38",
    "+": "49", ":": "17", "-": "39", "_": "43", "/": "45", ".": "47",
}  # fmt: skip


def dnb_check_digit(text_without_digit: str) -> str:
    """DNB's check digit for a whole URN without it (``urn:nbn:`` included, any case).

    Raises ValueError for an empty text or a character outside DNB's table (DNB URNs use
    letters, digits and ``: - _ . / +``).

    >>> dnb_check_digit("urn:nbn:de:gbv:089-332175294")
    '5'
    """
    try:
        digits = "".join(_DNB_CODES[char] for char in text_without_digit.lower())
    except KeyError as error:
        raise ValueError(
            f"DNB's check digit table has no code for {error.args[0]!r} in {text_without_digit!r}"
        ) from None
    if not digits:
        raise ValueError("DNB's check digit needs a URN, not an empty string")
    product_sum = sum(position * int(digit) for position, digit in enumerate(digits, 1))
    return str(product_sum // int(digits[-1]) % 10)


# --- national rules ------------------------------------------------------------------------------

NationalRule = Callable[[URN, NBN], list[Finding]]


def _dnb_check_digit_rule(urn: URN, nbn: NBN) -> list[Finding]:
    name = urn.assigned_name
    position = len(name) - 1
    try:
        expected = dnb_check_digit(name[:-1])
    except ValueError as error:
        message = f"the DNB check digit cannot be computed: {error}"
        return [Finding(CHECK_DIGIT, "warning", message, position, _NATIONAL)]
    if name[-1] == expected:
        return []
    message = (
        f'the last character "{name[-1]}" is not the DNB check digit "{expected}" that '
        f"URN:NBNs under {nbn.country.lower()} carry"
    )
    return [Finding(CHECK_DIGIT, "warning", message, position, _NATIONAL)]


# Czech National Library (CzIDLo): cz:<registrar code>-<document code>, 2 to 6 alphanumerics for
# the registrar, 6 base-36 characters for the document.
_CZ_NSS = re.compile(r"cz:[a-z0-9]{2,6}-[a-z0-9]{6}", re.IGNORECASE)


def _czech_format_rule(urn: URN, nbn: NBN) -> list[Finding]:
    if _CZ_NSS.fullmatch(urn.nss):
        return []
    message = (
        "a Czech URN:NBN is cz:<registrar code, 2 to 6 letters or digits>-<6 letters or digits>"
    )
    return [Finding(CZ_FORMAT, "warning", message, _nss_start(urn), _NATIONAL)]


# Lower-case prefix -> the national rule for URN:NBNs under it; the longest matching prefix wins.
NATIONAL_RULES: Mapping[str, NationalRule] = {
    "at": _dnb_check_digit_rule,
    "ch": _dnb_check_digit_rule,
    "cz": _czech_format_rule,
    "de": _dnb_check_digit_rule,
}


def _national_rule(prefix: str) -> NationalRule | None:
    parts = prefix.lower().split(":")
    for end in range(len(parts), 0, -1):
        rule = NATIONAL_RULES.get(":".join(parts[:end]))
        if rule is not None:
            return rule
    return None


# --- validation ----------------------------------------------------------------------------------


def _nss_start(urn: URN) -> int:
    return len(urn.nid) + len("urn::")


def _country_findings(country: str, position: int) -> list[Finding]:
    if country.lower() in _USER_ASSIGNED:
        message = (
            f'"{country}" is an ISO 3166-1 code for user assignment, not a country\'s; '
            "URN:NBNs need a national library's country code"
        )
        return [Finding(COUNTRY_USER_ASSIGNED, "warning", message, position, _SYNTAX)]
    try:
        import pycountry
    except ImportError:
        message = (
            f'the country code "{country}" was not checked against ISO 3166-1: '
            "install urnkit[checks] to check country codes"
        )
        return [Finding(COUNTRY_UNCHECKED, "warning", message, position, _SYNTAX)]
    if pycountry.countries.get(alpha_2=country.upper()) is None:
        message = f'"{country}" is not an ISO 3166-1 alpha-2 country code'
        return [Finding(COUNTRY, "error", message, position, _SYNTAX)]
    return []


def validate(urn: URN | str, *, strict: bool = False) -> list[Finding]:
    """The findings of RFC 8458 §4.2-4.3 and the national rules for a URN:NBN.

    What breaks the §4.2 ABNF (no hyphen, a malformed sub-namespace, an NBN string starting
    with "/") is an error when ``strict`` and a warning when lenient, since national resolvers
    serve such URN:NBNs. An unknown country code and an empty NBN string are errors; an r- or
    q-component (§4.2.1) and national rules are warnings. Positions index the URN's text.

    >>> validate("urn:nbn:de:gbv:089-3321752945")
    []
    >>> [(f.code, f.severity, f.position) for f in validate("urn:nbn:de:gbv:089-3321752940")]
    [('nbn.check-digit', 'warning', 28)]
    """
    urn = _as_nbn_urn(urn)
    start = _nss_start(urn)
    try:
        nbn = parse(urn)
    except ValueError:
        message = "the NSS does not begin with a two-letter ISO 3166-1 country code"
        return [Finding(COUNTRY, "error", message, start, _SYNTAX)]
    shape: Severity = "error" if strict else "warning"
    findings = _country_findings(nbn.country, start)

    position = start + len(nbn.country) + 1
    for subnamespace in nbn.subnamespaces:
        if not _SUBSPC.fullmatch(subnamespace):
            message = f'the sub-namespace "{subnamespace}" is not one or more letters and digits'
            findings.append(Finding(SUBNAMESPACE, shape, message, position, "RFC 8458 §4.2, §4.3"))
        position += len(subnamespace) + 1

    nbn_start = start + len(nbn.prefix) + 1  # after the hyphen, or the colon read as one
    if "-" not in urn.nss:
        message = (
            "the NSS has no hyphen between the prefix and the NBN string; read leniently, "
            f'the prefix is "{nbn.prefix}"'
        )
        where = nbn_start - 1 if nbn.nbn_string else start + len(urn.nss)
        findings.append(Finding(NO_HYPHEN, shape, message, where, _SYNTAX))
    if not nbn.nbn_string:
        message = "the NBN string is empty"
        findings.append(Finding(EMPTY_NBN_STRING, "error", message, start + len(urn.nss), _SYNTAX))
    elif nbn.nbn_string.startswith("/"):
        message = 'the NBN string begins with "/" (it must be an RFC 3986 path-rootless)'
        findings.append(Finding(NBN_STRING, shape, message, nbn_start, _SYNTAX))

    component_start = len(urn.assigned_name)
    if urn.r_component is not None:
        message = "URN:NBN resolvers do not support r-components"
        findings.append(
            Finding(R_COMPONENT, "warning", message, component_start, "RFC 8458 §4.2.1")
        )
        component_start += len(urn.r_component) + 2
    if urn.q_component is not None:
        message = "URN:NBN resolvers do not support q-components"
        findings.append(
            Finding(Q_COMPONENT, "warning", message, component_start, "RFC 8458 §4.2.1")
        )

    rule = _national_rule(nbn.prefix)
    if rule is not None:
        findings += rule(urn, nbn)
    return findings


register_equivalence_rule(NID, equivalence_key)
register_validator(NID, validate)
register_fields(NID, _fields)


__all__ = [
    "NATIONAL_RULES",
    "NBN",
    "NationalRule",
    "dnb_check_digit",
    "equivalence_key",
    "parse",
    "validate",
]
