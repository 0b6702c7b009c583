"""URN:DOI (the DOI Foundation's URN namespace registration, 2023): validate, compare, parse.

The NSS is a DOI name: the prefix, the directory indicator "10", a dot and the registrant code,
then "/" and the suffix (``10.1000/182``; ISO 26324, ANSI/NISO Z39.84). DOI names are
case-insensitive for ASCII characters (DOI Handbook §2.4; the DOI registration of info:doi:
"All DOIs are converted to upper case upon registration"), so URN-equivalence folds the NSS to
upper case. Upper case because the RFC 8141 §3 key already writes percent-encodings with
upper-case hex digits: folding up leaves every "%xx" as §3 made it, so the rule only merges.
Non-ASCII characters are percent-encoded in a URN and are not folded.

>>> from urnkit.urn import URN
>>> URN.parse("urn:doi:10.1000/abc") == URN.parse("urn:doi:10.1000/ABC")
True
>>> [(f.code, f.position) for f in validate("urn:doi:11.1000/182")]
[('doi.prefix', 8)]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from urnkit.findings import Finding
from urnkit.namespaces import register_fields, register_validator
from urnkit.namespaces._common import as_urn, key_nss, nss_start
from urnkit.urn import URN, register_equivalence_rule

NID = "doi"
PREFIX = "doi.prefix"
SUFFIX = "doi.suffix"
_SECTION = "DOI URN namespace registration (2023); ISO 26324"
_DIRECTORY = "10."
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass(frozen=True, slots=True)
class DOI:
    """A URN:DOI's fields, as written: the DOI name, its prefix (``10.<registrant>``), the
    registrant code and the suffix.

    >>> parse("urn:doi:10.1000/182")
    DOI(doi='10.1000/182', prefix='10.1000', registrant='1000', suffix='182')
    """

    doi: str
    prefix: str
    registrant: str
    suffix: str


def parse(urn_or_text: URN | str) -> DOI:
    """Split a URN:DOI's DOI name at its first "/" into prefix and suffix.

    Raises :class:`~urnkit.URNSyntaxError` if the text is not a URN, ValueError if it is not a
    URN:DOI or its NSS is not ``10.<registrant>/<suffix>`` with both parts non-empty.

    >>> parse("urn:doi:10.1038/nphys1170").suffix
    'nphys1170'
    """
    nss = as_urn(urn_or_text, NID).nss
    prefix, slash, suffix = nss.partition("/")
    registrant = prefix[len(_DIRECTORY) :]
    if not prefix.startswith(_DIRECTORY) or not registrant or not slash or not suffix:
        raise ValueError(f"not a DOI name, 10.<registrant>/<suffix>: {nss!r}")
    return DOI(nss, prefix, registrant, suffix)


def _fields(urn: URN) -> Mapping[str, object]:
    try:
        doi = parse(urn)
    except ValueError:
        return {}
    return {
        "doi": doi.doi,
        "prefix": doi.prefix,
        "registrant": doi.registrant,
        "suffix": doi.suffix,
    }


def equivalence_key(key: str) -> str:
    """DOI names are case-insensitive for ASCII: the NSS of an RFC 8141 §3 key in upper case.

    >>> equivalence_key("urn:doi:10.1000/abc%C3%A9")
    'urn:doi:10.1000/ABC%C3%A9'
    """
    return f"urn:{NID}:{key_nss(key, NID).translate(_UPPER)}"


def validate(urn: URN | str, *, strict: bool = False) -> list[Finding]:
    """The findings for a URN:DOI, each an error and at most one: ``doi.prefix`` (the NSS does
    not start with "10." and a registrant code) and ``doi.suffix`` (no "/" or nothing after
    it). ``strict`` changes nothing.

    >>> validate("urn:doi:10.1000/182")
    []
    >>> [(f.code, f.position) for f in validate("urn:doi:10.1000")]
    [('doi.suffix', 15)]
    """
    urn = as_urn(urn, NID)
    nss, start = urn.nss, nss_start(urn)
    prefix, slash, suffix = nss.partition("/")
    if not prefix.startswith(_DIRECTORY):
        message = 'a DOI name starts with the directory indicator "10." (10.<registrant>/<suffix>)'
        return [Finding(PREFIX, "error", message, start, _SECTION)]
    if len(prefix) == len(_DIRECTORY):
        message = 'a DOI name has a registrant code after "10."'
        return [Finding(PREFIX, "error", message, start + len(prefix), _SECTION)]
    if not slash or not suffix:
        message = 'a DOI name has a suffix after its prefix and a "/"'
        return [Finding(SUFFIX, "error", message, start + len(nss), _SECTION)]
    return []


register_equivalence_rule(NID, equivalence_key)
register_validator(NID, validate)
register_fields(NID, _fields)

__all__ = ["DOI", "PREFIX", "SUFFIX", "equivalence_key", "parse", "validate"]
