"""Hypothesis strategies for URNs, built straight from the ABNF of RFC 8141 §2 and RFC 2141 §2.

:func:`urns` draws the parts of a valid namestring (``Parts``, whose ``.text`` is the string),
with the edge cases weighted up: percent-encodings in any case, "?" and "?+"/"?=" inside
components, "/" inside the NSS, NIDs of the shortest and longest lengths, "URN:" in any case,
empty f-components. :func:`mutated` turns a text into a probably invalid one, :func:`respelled`
into a URN-equivalent one.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st
from reference import ALPHANUM, HEXDIG, PCHAR, TRANS, Parts

from urnkit import Mode

# RFC 3986 §2.1: "%" HEXDIG HEXDIG, hex digits in either case.
_ALPHANUM = sorted(ALPHANUM)

# Characters and short strings that tend to break URNs, or parsers of URNs: delimiters, broken
# percent-encodings, characters outside the repertoires, whitespace and control characters, and
# non-ASCII characters that a Unicode-aware parser could mistake for ASCII (case folding:
# KELVIN SIGN folds to "k", LATIN SMALL LETTER LONG S to "s", dotless and dotted I to "i"; \d
# and str.isdigit(): ARABIC-INDIC DIGIT ONE, SUPERSCRIPT TWO; fullwidth forms), and lone
# surrogates (U+DCFF is how Python's surrogateescape carries the byte 0xFF).
INTERESTING: tuple[str, ...] = (
    *" \t\n\r\x00\x1f\x7f\x85\xa0",
    *"\u00e4\u00e9\u0661\u00b2\u212a\u017f\u0131\u0130\uff55\uff1a\u200b\U0001f600",
    *"\udcff\ud800",
    *'%?#/-:+=[]"<>\\^`{|}~&',
    "%g",
    "%4",
    "%%",
    "%00",
    "?+",
    "?=",
    "urn:",
)


# RFC 3986 §2.1: "%" HEXDIG HEXDIG, hex digits in either case.
_PCT_ENCODED = st.tuples(*[st.sampled_from(sorted(HEXDIG))] * 2).map(lambda d: "%" + "".join(d))


def _run_of(literals: frozenset[str]) -> st.SearchStrategy[str]:
    """One to six characters from ``literals`` (drawn as one run: much faster than one by one)."""
    return st.text(alphabet=sorted(literals), min_size=1, max_size=6)


def _units(unit: st.SearchStrategy[str], *, min_size: int = 0) -> st.SearchStrategy[str]:
    return st.lists(unit, min_size=min_size, max_size=8).map("".join)


# RFC 3986 §3.3 pchar: a run of literal pchars or a percent-encoded triplet.
_PCHAR = _run_of(PCHAR) | _PCT_ENCODED

# "urn", each letter in either case.
_SCHEME = st.tuples(*(st.sampled_from((ch, ch.upper())) for ch in "urn")).map("".join)

# ``_LDH[n]``: ``n`` letters, digits and hyphens; in half of the draws mostly hyphens.
_LDH = [
    st.text(alphabet=sorted(ALPHANUM | {"-"}), min_size=n, max_size=n)
    | st.text(alphabet="-a9Z", min_size=n, max_size=n)
    for n in range(32)
]

# NID = (alphanum) 0*30(ldh) (alphanum): 2 to 32 characters, the extremes weighted up.
_RFC8141_NID = st.tuples(
    st.sampled_from(_ALPHANUM),
    (st.sampled_from((0, 30)) | st.integers(0, 30)).flatmap(_LDH.__getitem__),
    st.sampled_from(_ALPHANUM),
).map("".join)

# <NID> ::= <let-num> [ 1,31<let-num-hyp> ]: 1 to 32 characters (the extremes weighted up),
# never "urn".
_RFC2141_NID = (
    st.tuples(
        st.sampled_from(_ALPHANUM),
        (st.sampled_from((0, 31)) | st.integers(0, 31)).flatmap(_LDH.__getitem__),
    )
    .map("".join)
    .filter(lambda nid: nid.lower() != "urn")
)

# NSS = pchar *(pchar / "/").
_NSS = st.tuples(_PCHAR, _units(_PCHAR | st.just("/"))).map("".join)

# A unit of r-, q- or f-components (pchar / "/" / "?"), or a run of them that looks like a
# delimiter: "?+", "?=", "??".
_COMPONENT_UNIT = _PCHAR | st.sampled_from(("/", "?", "?+", "?=", "??"))

# q-component = pchar *( pchar / "/" / "?" ): it may contain "?+" and "?=" (§2.3.2: it ends only
# at "#").
_Q_COMPONENT = st.tuples(_PCHAR, _units(_COMPONENT_UNIT)).map("".join)

# r-component = pchar *( pchar / "/" / "?" ) without "?=" inside (§2.3.1: "The r-component ends
# with a '?=' sequence"). Each "?=" drawn becomes "?+=", so "?+" inside is common.
_R_COMPONENT = _Q_COMPONENT.map(lambda s: s.replace("?=", "?+="))

# f-component = fragment = *( pchar / "/" / "?" ) (RFC 3986 §3.5), often empty.
_F_COMPONENT = st.just("") | _units(_COMPONENT_UNIT)

_COMPONENTS = st.tuples(*(st.none() | c for c in (_R_COMPONENT, _Q_COMPONENT, _F_COMPONENT)))

_URNS: dict[Mode, st.SearchStrategy[Parts]] = {
    "rfc8141": st.tuples(_SCHEME, _RFC8141_NID, _NSS, _COMPONENTS).map(
        lambda t: Parts(*t[:3], *t[3])
    ),
    # <NSS> ::= 1*<URN chars>, <URN chars> ::= <trans> | "%" <hex> <hex>
    "rfc2141": st.tuples(
        _SCHEME, _RFC2141_NID, _units(_run_of(TRANS) | _PCT_ENCODED, min_size=1)
    ).map(lambda t: Parts(*t)),
}
_TEXTS = {mode: strategy.map(lambda parts: parts.text) for mode, strategy in _URNS.items()}


def urns(mode: Mode) -> st.SearchStrategy[Parts]:
    """The parts of a valid URN under ``mode``; ``.text`` is the namestring."""
    return _URNS[mode]


def texts(mode: Mode) -> st.SearchStrategy[str]:
    """Valid namestrings under ``mode``."""
    return _TEXTS[mode]


_EDITS = st.sampled_from(("insert", "replace", "delete", "truncate"))
_INTERESTING = st.sampled_from(INTERESTING)


@st.composite
def mutated(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> str:
    """A text from ``texts`` after one to three edits: insert or replace a character (or short
    string) from :data:`INTERESTING`, delete a character, or truncate."""
    text = draw(texts)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text)))
        edit = draw(_EDITS)
        if edit == "insert":
            text = text[:i] + draw(_INTERESTING) + text[i:]
        elif edit == "replace":
            text = text[:i] + draw(_INTERESTING) + text[i + 1 :]
        elif edit == "delete":
            text = text[:i] + text[i + 1 :]
        else:
            text = text[:i]
    return text


def _recase(draw: st.DrawFn, text: str) -> str:
    return "".join(ch.swapcase() if draw(st.booleans()) else ch for ch in text)


@st.composite
def respelled(draw: st.DrawFn, parts: Parts, mode: Mode) -> str:
    """A URN that RFC 8141 §3 (RFC 2141 §5 for "rfc2141") says is equivalent to ``parts``: the
    scheme, the NID and the hex digits of the NSS's percent-encodings in any case, and (RFC 8141)
    any r-, q- and f-components instead of the original ones."""
    nss = parts.nss.split("%")
    nss = nss[:1] + [_recase(draw, piece[:2]) + piece[2:] for piece in nss[1:]]
    respelling = replace(
        parts, scheme=_recase(draw, parts.scheme), nid=_recase(draw, parts.nid), nss="%".join(nss)
    )
    if mode == "rfc8141":
        r, q, f = draw(_COMPONENTS)
        respelling = replace(respelling, r_component=r, q_component=q, f_component=f)
    return respelling.text
