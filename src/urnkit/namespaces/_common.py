"""What the common-namespace modules (uuid, isbn, issn, oid, ietf, example, doi) share.

>>> nss_start(URN.parse("URN:ISBN:0451450523"))
9
>>> key_nss("urn:isbn:0451450523", "isbn")
'0451450523'
"""

from __future__ import annotations

from urnkit.findings import Finding
from urnkit.urn import URN

CHECKS_EXTRA = "urnkit[checks]"


def as_urn(urn_or_text: URN | str, nid: str) -> URN:
    """``urn_or_text`` as a URN with the NID ``nid`` (lower case).

    Raises :class:`~urnkit.URNSyntaxError` if the text is not a URN, ValueError if its NID is
    another.

    >>> as_urn("urn:example:a", "isbn")
    Traceback (most recent call last):
    ...
    ValueError: not a URN:ISBN: the NID is 'example', not 'isbn'
    """
    urn = urn_or_text if isinstance(urn_or_text, URN) else URN.parse(urn_or_text)
    if urn.nid.lower() != nid:
        raise ValueError(f"not a URN:{nid.upper()}: the NID is {urn.nid!r}, not {nid!r}")
    return urn


def nss_start(urn: URN) -> int:
    """Where the NSS starts in the URN's text: after ``urn:<NID>:``."""
    return len(urn.nid) + len("urn::")


def key_nss(key: str, nid: str) -> str:
    """The NSS of an RFC 8141 §3 key ``urn:<nid>:<NSS>``; ValueError for another NID's key."""
    head = f"urn:{nid}:"
    if not key.startswith(head):
        raise ValueError(f"not the RFC 8141 §3 key of a URN:{nid.upper()}: {key!r}")
    return key[len(head) :]


def unchecked(nid: str, what: str, section: str) -> Finding:
    """The warning that ``what`` was not checked because python-stdnum is not installed."""
    message = f"the {what} was not checked: install {CHECKS_EXTRA} (python-stdnum) to check it"
    return Finding(f"{nid}.check-unchecked", "warning", message, None, section)


def first_mismatch(text: str, pattern: str) -> int | None:
    """Index of the first character of ``text`` that breaks a fixed-width ``pattern`` (``x`` a
    hex digit, ``9`` a decimal digit, ``C`` a decimal digit or X in either case, any other
    character itself), ``len(text)`` if ``text`` stops short, None if it matches.

    >>> first_mismatch("12a4", "9999"), first_mismatch("12", "9999"), first_mismatch("1234", "9999")
    (2, 2, None)
    """
    for index, (char, want) in enumerate(zip(text, pattern, strict=False)):
        if want == "x":
            ok = char in "0123456789abcdefABCDEF"
        elif want == "9":
            ok = char in "0123456789"
        elif want == "C":
            ok = char in "0123456789Xx"
        else:
            ok = char == want
        if not ok:
            return index
    if len(text) == len(pattern):
        return None
    return min(len(text), len(pattern))


__all__ = ["CHECKS_EXTRA", "as_urn", "first_mismatch", "key_nss", "nss_start", "unchecked"]
