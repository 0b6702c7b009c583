"""Hypothesis strategies for the resolver's domain tests: locators and URN components (RFC 3986,
RFC 8141), URN:NBN prefixes and NBN strings (RFC 8458), JSON values (RFC 8259)."""

from __future__ import annotations

import string

from hypothesis import strategies as st

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789ABCDEFabcdef"
# RFC 3986 §3.3: pchar = unreserved / pct-encoded / sub-delims / ":" / "@" (the literal part).
PCHAR = ALNUM + "-._~!$&'()*+,;=:@"

_PCT_ENCODED = st.tuples(st.sampled_from(HEX), st.sampled_from(HEX)).map(lambda d: "%" + "".join(d))


def _pchars(extra: str, *, min_size: int, max_size: int = 10) -> st.SearchStrategy[str]:
    """Runs of RFC 3986 pchars (literal or percent-encoded) and the ``extra`` characters."""
    unit = st.sampled_from(PCHAR + extra) | _PCT_ENCODED
    return st.lists(unit, min_size=min_size, max_size=max_size).map("".join)


# RFC 8141 §2: q-component = pchar *( pchar / "/" / "?" ).
q_components = st.tuples(_pchars("", min_size=1, max_size=1), _pchars("/?", min_size=0)).map(
    "".join
)
# RFC 8141 §2: r-component has the same shape, but ends at the first "?=" (§2.3.1).
r_components = q_components.map(lambda r: r.replace("?=", "?%3D"))
# RFC 3986 §3.5: fragment = *( pchar / "/" / "?" ).
f_components = _pchars("/?", min_size=0)

# Locators: an http(s) or ftp URL with a host, a path of pchars ("&" and "=" included: they are
# legal in a path and must not be mistaken for a query), an optional query and an optional
# fragment (RFC 3986 §3).
_HOSTS = st.sampled_from(["example.org", "weatherapp.example", "127.0.0.1:8080", "a.b.example"])
# Path segments ending in "&" or "=" are weighted up: they look like a query but are not one.
_SEGMENTS = _pchars("", min_size=0) | st.sampled_from(["&", "a&", "b=c&", "="])
_PATHS = st.lists(_SEGMENTS, max_size=4).map(lambda segs: "".join("/" + s for s in segs))
_QUERIES = st.none() | _pchars("/?", min_size=0)
_FRAGMENTS = st.none() | f_components


@st.composite
def locators(draw: st.DrawFn) -> str:
    """An absolute URL with optional query and fragment."""
    url = f"{draw(st.sampled_from(['http', 'https', 'ftp']))}://{draw(_HOSTS)}{draw(_PATHS)}"
    query, fragment = draw(_QUERIES), draw(_FRAGMENTS)
    if query is not None:
        url += "?" + query
    if fragment is not None:
        url += "#" + fragment
    return url


# RFC 8458 §4.2: prefix = iso-cc *( ":" subspc ), iso-cc = 2ALPHA, subspc = 1*(ALPHA / DIGIT).
countries = st.text(string.ascii_letters, min_size=2, max_size=2)
subspcs = st.text(ALNUM, min_size=1, max_size=6)
prefixes = st.tuples(countries, st.lists(subspcs, max_size=3)).map(
    lambda t: ":".join([t[0], *t[1]])
)
# Prefixes over a tiny alphabet, so that pairs often share segments (for ``covers``).
_NARROW_SEGMENT = st.sampled_from(["a", "b", "ab", "A", "ba"])
narrow_prefixes = st.tuples(
    st.sampled_from(["fi", "FI", "de"]), st.lists(_NARROW_SEGMENT, max_size=3)
).map(lambda t: ":".join([t[0], *t[1]]))
# NBN strings of letters and digits (and hyphens inside, RFC 8458 §4.2): the characters DNB's
# check digit table has codes for.
nbn_strings = st.tuples(
    st.text(ALNUM, min_size=1, max_size=12), st.text(ALNUM + "-", max_size=6)
).map(lambda parts: parts[0] + parts[1])

# JSON values (RFC 8259): no NaN, which is not JSON and never equals itself.
_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
)
json_keys = st.sampled_from(["a", "b", "c", "d"]) | st.text(max_size=3)
json_values = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(json_keys, inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(json_keys, json_values, max_size=5)
