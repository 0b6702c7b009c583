"""Hypothesis strategies for the URN value object, encoding, display and find tests.

Every text these strategies make is a valid URN by construction from the RFC 8141 §2 ABNF (or
the RFC 2141 §2 grammar), independently of urnkit's own grammar, so the tests can compare the
library against the RFCs rather than against itself.
"""

from __future__ import annotations

import re
import string

from hypothesis import strategies as st
from reference import Parts

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789ABCDEFabcdef"
# RFC 3986 §3.3: pchar = unreserved / pct-encoded / sub-delims / ":" / "@" (literal part).
PCHAR = ALNUM + "-._~!$&'()*+,;=:@"
# RFC 2141 §2.2: <trans> without "%" and without the <reserved> characters "/", "?", "#".
RFC2141_TRANS = ALNUM + "()+,-.:=@;$_!*'"

PCT_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")


def recase(draw: st.DrawFn, text: str) -> str:
    """``text`` with the case of each letter chosen at random."""
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(ch.swapcase() if flip else ch for ch, flip in zip(text, flips, strict=True))


def schemes() -> st.SearchStrategy[str]:
    """ "urn" in any case (RFC 8141 §3: the scheme is case-insensitive)."""
    return st.tuples(*(st.sampled_from([ch, ch.upper()]) for ch in "urn")).map("".join)


def nids() -> st.SearchStrategy[str]:
    """RFC 8141 §2: NID = (alphanum) 0*30(ldh) (alphanum)."""
    return st.tuples(
        st.sampled_from(ALNUM), st.text(ALNUM + "-", max_size=30), st.sampled_from(ALNUM)
    ).map("".join)


def rfc2141_nids() -> st.SearchStrategy[str]:
    """RFC 2141 §2: <NID> ::= <let-num> [ 1,31<let-num-hyp> ], and never "urn"."""
    return (
        st.tuples(st.sampled_from(ALNUM), st.text(ALNUM + "-", max_size=31))
        .map("".join)
        .filter(lambda nid: nid.lower() != "urn")
    )


def pct_encoded() -> st.SearchStrategy[str]:
    """RFC 3986 §2.1: "%" HEXDIG HEXDIG, hex digits in either case."""
    return st.tuples(st.just("%"), st.sampled_from(HEX), st.sampled_from(HEX)).map("".join)


def _units(literals: str, *, min_size: int, max_size: int = 12) -> st.SearchStrategy[str]:
    unit = st.one_of(st.sampled_from(literals), pct_encoded())
    return st.lists(unit, min_size=min_size, max_size=max_size).map("".join)


def _pchar_first(rest: str) -> st.SearchStrategy[str]:
    """pchar *(pchar / rest...): the shape of the NSS, r-component and q-component."""
    return st.tuples(_units(PCHAR, min_size=1, max_size=1), _units(PCHAR + rest, min_size=0)).map(
        "".join
    )


def nsss() -> st.SearchStrategy[str]:
    """RFC 8141 §2: NSS = pchar *(pchar / "/")."""
    return _pchar_first("/")


def r_components() -> st.SearchStrategy[str]:
    """RFC 8141 §2: r-component = pchar *( pchar / "/" / "?" ), ending at the first "?="
    (§2.3.1), so a "?" inside it is never followed by "="."""
    return _pchar_first("/?").map(lambda r: r.replace("?=", "?%3D"))


def q_components() -> st.SearchStrategy[str]:
    """RFC 8141 §2: q-component = pchar *( pchar / "/" / "?" )."""
    return _pchar_first("/?")


def f_components() -> st.SearchStrategy[str]:
    """RFC 8141 §2: f-component = fragment = *( pchar / "/" / "?" ) (RFC 3986 §3.5)."""
    return _units(PCHAR + "/?", min_size=0)


def urn_parts() -> st.SearchStrategy[Parts]:
    """Any RFC 8141 URN, with or without each component."""
    return st.builds(
        Parts,
        schemes(),
        nids(),
        nsss(),
        st.none() | r_components(),
        st.none() | q_components(),
        st.none() | f_components(),
    )


def urns() -> st.SearchStrategy[str]:
    """Any RFC 8141 URN text."""
    return urn_parts().map(lambda parts: parts.text)


def rfc2141_urns() -> st.SearchStrategy[str]:
    """Any RFC 2141 URN text: ``urn:<NID>:<NSS>`` with <NSS> ::= 1*<URN chars>."""
    return st.builds(
        lambda scheme, nid, nss: f"{scheme}:{nid}:{nss}",
        schemes(),
        rfc2141_nids(),
        _units(RFC2141_TRANS, min_size=1),
    )


def upper_percent(text: str) -> str:
    """RFC 3986 §6.2.2.1: every percent-encoding with upper-case hex digits."""
    return PCT_ENCODED.sub(lambda match: match.group().upper(), text)
