"""URN:NBN names: parsing, delegated prefixes, what may be registered, and new names.

RFC 8458 §4.3: sub-namespaces are delegated by the national library; a registrant writes only
under the prefixes delegated to it.

>>> prefix_of("URN:NBN:FI:Demo-123")
'fi:demo'
>>> covers("fi:demo", "fi:demo:sub")
True
"""

from __future__ import annotations

import re
import secrets
from dataclasses import asdict
from typing import Literal

from urnkit.findings import Finding, is_acceptable
from urnkit.namespaces import nbn, validate
from urnkit.resolver.domain.errors import InvalidURNError, UnacceptableError
from urnkit.syntax import URNSyntaxError
from urnkit.urn import URN

Generator = Literal["sequential", "random"]
GENERATORS: tuple[Generator, ...] = ("sequential", "random")
# Douglas Crockford's base-32 alphabet, lower case: digits and letters without i, l, o, u.
BASE32 = "0123456789abcdefghjkmnpqrstvwxyz"
RANDOM_LENGTH = 10  # 50 bits: a collision needs ~2^25 URNs in one prefix, and is retried then
# A percent-encoded control character: %00 to %1F and %7F, hex digits in either case.
_ENCODED_CONTROL = re.compile(r"%(?:[01][0-9A-Fa-f]|7[Ff])")
DNB_COUNTRIES = frozenset({"de", "at", "ch"})  # where DNB's check digit is the national rule


def parse_urn(text: str) -> URN:
    """The URN in ``text`` or :class:`InvalidURNError` saying where and why it is not one.

    >>> parse_urn("urn:nbn:fi-x").nid
    'nbn'
    """
    try:
        return URN.parse(text)
    except URNSyntaxError as error:
        raise InvalidURNError.from_syntax_error(error) from None


# The grammars of the API's inputs as ECMA-262 regular expressions for /openapi.json. Each
# admits exactly the texts of its grammar; what the grammar cannot say (the NID "urn", a URN's
# namespace, ISO 3166-1's list of countries) the service refuses with a problem.
# RFC 8141 §2: assigned-name = "urn" ":" NID ":" NSS; NID = (alphanum) 0*30(ldh) (alphanum);
# NSS = pchar *(pchar / "/"); pchar (RFC 3986 §3.3) = unreserved / pct-encoded / sub-delims
# / ":" / "@".
_PCHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})"
ASSIGNED_NAME_PATTERN = (
    rf"^[Uu][Rr][Nn]:[A-Za-z0-9][A-Za-z0-9-]{{0,30}}[A-Za-z0-9]:{_PCHAR}(?:{_PCHAR}|/)*$"
)
# RFC 8458 §4.2: a prefix is a two-letter country code and ":"-separated sub-namespaces of
# letters and digits (normalize_prefix); a country code alone is two letters.
PREFIX_PATTERN = r"^[A-Za-z]{2}(?::[A-Za-z0-9]+)*$"
COUNTRY_PATTERN = r"^[A-Za-z]{2}$"


def normalize_prefix(prefix: str) -> str:
    """A delegated prefix in its stored form: country and sub-namespaces, lower case
    (RFC 8458 §4.3, "The entire prefix is case insensitive").

    >>> normalize_prefix("FI:Demo")
    'fi:demo'
    >>> normalize_prefix("fi-demo")
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: not a URN:NBN prefix: 'fi-demo' (RFC 8458 §4.2: ...)
    """
    country, *subnamespaces = prefix.split(":")
    if (
        len(country) != 2
        or not country.isascii()
        or not country.isalpha()
        or not all(part.isascii() and part.isalnum() for part in subnamespaces)
    ):
        raise UnacceptableError(
            f"not a URN:NBN prefix: {prefix!r} (RFC 8458 §4.2: a two-letter country code, then "
            "':'-separated sub-namespaces of letters and digits)"
        )
    return prefix.lower()


def prefix_of(urn: URN | str) -> str:
    """The normalized prefix of a URN:NBN; :class:`UnacceptableError` for other namespaces.

    >>> prefix_of("urn:nbn:de:gbv:089-3321752945")
    'de:gbv:089'
    """
    parsed = urn if isinstance(urn, URN) else parse_urn(urn)
    if parsed.nid.lower() != nbn.NID:
        raise UnacceptableError(
            f"this service registers URN:NBNs (RFC 8458) only; the NID is {parsed.nid!r}"
        )
    try:
        return nbn.parse(parsed).prefix.lower()
    except ValueError as error:
        raise UnacceptableError(str(error)) from None


def covers(delegated: str, prefix: str) -> bool:
    """Whether a delegated prefix covers ``prefix``: itself or one of its sub-namespaces.

    >>> covers("fi:demo", "fi:demo"), covers("fi:demo", "fi:demox"), covers("fi", "fi:demo")
    (True, False, True)
    """
    return prefix == delegated or prefix.startswith(delegated + ":")


def dot_segments(name: str) -> list[str]:
    """The path segments of ``name`` (between ``/``) that are dot-segments, ``.`` or ``..``,
    also percent-encoded (``%2E``, ``.%2e`` …): RFC 3986 §6.2.2.2 normalizers decode ``%2E``
    to ``.``, and browsers treat it as one.

    >>> dot_segments("urn:nbn:fi-1/../x/%2e/a.b/...")
    ['..', '%2e']
    """
    return [
        segment
        for segment in name.split("/")[1:]
        if segment.replace("%2E", ".").replace("%2e", ".") in (".", "..")
    ]


def check_resolvable(urn: URN | str) -> None:
    """:class:`UnacceptableError` unless ``urn`` can be resolved at ``/{urn}``: an NSS with
    dot-segments cannot, for HTTP clients remove them before sending the request
    (RFC 3986 §5.2.4), and ``…-1/../x`` would reach another URN.

    >>> check_resolvable("urn:nbn:fi-1/a.b")
    >>> check_resolvable("urn:nbn:fi-1/../fi-2")
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: urn:nbn:fi-1/../fi-2 cannot be resolved: ...
    """
    found = dot_segments(str(urn))
    if found:
        raise UnacceptableError(
            f"{urn} cannot be resolved: its NSS holds the dot-segment "
            f"{' and '.join(repr(s) for s in found)}, which HTTP clients remove from a path "
            "before sending it (RFC 3986 §5.2.4; %2E is '.', §6.2.2.2)",
            rule="dot-segments",
            section="RFC 3986 §5.2.4",
        )


def check_no_encoded_controls(urn: URN) -> None:
    """:class:`UnacceptableError` if the NSS of ``urn`` holds a percent-encoded control
    character (``%00``-``%1F``, ``%7F``), naming the first and its position. RFC 8141 §2's
    pct-encoded allows any octet; this resolver registers no name that decodes to a line break,
    a NUL or an escape, which would turn up in the pages, logs and files that show it.

    >>> check_no_encoded_controls(URN.parse("urn:nbn:fi-a%20b"))
    >>> check_no_encoded_controls(URN.parse("urn:nbn:fi-a%0Ab"))
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: urn:nbn:fi-a%0Ab: its NSS holds %0A at position ...
    """
    found = _ENCODED_CONTROL.search(urn.nss)
    if found is not None:
        position = len(urn.assigned_name) - len(urn.nss) + found.start()
        raise UnacceptableError(
            f"{urn.assigned_name}: its NSS holds {found[0]} at position {position}, a "
            "percent-encoded control character (%00 to %1F, %7F), which RFC 8141 §2 allows "
            "but this resolver does not register",
            rule="no-encoded-controls",
            section="RFC 8141 §2",
            position=position,
        )


def check_rewritable(urn: URN) -> None:
    """:class:`UnacceptableError` unless a write may name a registered record by ``urn``: its
    assigned name alone, resolvable (:func:`check_resolvable`). The rules that came after a
    record may have been stored (:func:`check_registrable`'s) are not applied.

    >>> check_rewritable(URN.parse("urn:nbn:fi-old%0Aname"))
    >>> check_rewritable(URN.parse("urn:nbn:fi-1?+r"))
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: register the assigned name alone, ...
    """
    check_resolvable(urn.assigned_name)
    if urn.r_component is not None or urn.q_component is not None or urn.f_component is not None:
        raise UnacceptableError(
            "register the assigned name alone, without r-, q- or f-components (RFC 8141 §2)",
            urn=str(urn),
        )


def check_registrable(urn: URN) -> list[Finding]:
    """The warnings of a URN fit to register; :class:`UnacceptableError` with the findings when an
    error is among them (RFC 8458 §4.2 read strictly: new URN:NBNs have their hyphen), or when
    it cannot be resolved (:func:`check_resolvable`) or holds a percent-encoded control
    character (:func:`check_no_encoded_controls`).

    >>> check_registrable(URN.parse("urn:nbn:fi-fe2010"))
    []
    """
    prefix_of(urn)  # URN:NBNs only (RFC 8458)
    check_rewritable(urn)
    check_no_encoded_controls(urn)
    findings = validate(str(urn), strict=True)
    if not is_acceptable(findings):
        errors = [f for f in findings if f.severity == "error"]
        raise UnacceptableError(
            "; ".join(f"{f.message} (position {f.position}, {f.section})" for f in errors),
            findings=[asdict(f) for f in findings],
        )
    return findings


def random_nbn_string() -> str:
    """Ten random base-32 characters and an ISO/IEC 7064 MOD 37,36 check character, which
    catches every single wrong character and most (not all) swaps of neighbours.

    >>> s = random_nbn_string()
    >>> len(s), set(s[:-1]) <= set(BASE32)
    (11, True)
    """
    from stdnum.iso7064 import mod_37_36

    body = "".join(secrets.choice(BASE32) for _ in range(RANDOM_LENGTH))
    return body + mod_37_36.calc_check_digit(body.upper()).lower()


def sequential_nbn_string(value: int) -> str:
    """The NBN string for the ``value``-th sequential URN of a prefix.

    >>> sequential_nbn_string(42)
    '42'
    """
    return str(value)


def assigned_name(prefix: str, nbn_string: str) -> str:
    """The URN:NBN for ``nbn_string`` in ``prefix``, with DNB's check digit under de/at/ch.

    >>> assigned_name("fi:demo", "7")
    'urn:nbn:fi:demo-7'
    >>> assigned_name("de:gbv:089", "332175294")
    'urn:nbn:de:gbv:089-3321752945'
    """
    text = f"urn:nbn:{prefix}-{nbn_string}"
    if prefix.split(":")[0] in DNB_COUNTRIES:
        text += nbn.dnb_check_digit(text)
    return text
