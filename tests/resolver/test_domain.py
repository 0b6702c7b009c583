"""The resolver's pure rules (``urnkit.resolver.domain``): properties and the RFCs' own examples.

* :func:`with_q_component`: RFC 8141 §2.3.2, a URN's q-component is copied into the locator's
  query component (appended with ``&`` to a query the locator already has; a fragment stays last).
* :func:`merge_patch`: RFC 7396, against the RFC's §2 pseudocode, its §3 example and the
  Appendix A table verbatim.
* :func:`normalize_prefix`, :func:`covers`, :func:`prefix_of`: RFC 8458 §4.2/§4.3, prefixes are
  case-insensitive and sub-namespaces nest segment by segment (``fi:demo`` covers
  ``fi:demo:x``, never ``fi:demox``).
* :func:`random_nbn_string`, :func:`sequential_nbn_string`, :func:`assigned_name`: generated
  names are well formed, carry a valid ISO/IEC 7064 MOD 37,36 check character, and carry DNB's
  check digit under de, at and ch.
* :func:`check_registrable`: only a URN:NBN's assigned name, without components, is registered.
"""

from __future__ import annotations

import copy
import json
import string
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from stdnum.iso7064 import mod_37_36

from urnkit.namespaces import nbn
from urnkit.resolver.domain import (
    BASE32,
    DNB_COUNTRIES,
    RANDOM_LENGTH,
    UnacceptableError,
    assigned_name,
    check_registrable,
    covers,
    merge_patch,
    normalize_prefix,
    prefix_of,
    random_nbn_string,
    sequential_nbn_string,
    with_q_component,
)
from urnkit.urn import URN

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789ABCDEFabcdef"
# RFC 3986 §3.3: pchar = unreserved / pct-encoded / sub-delims / ":" / "@" (the literal part).
PCHAR = ALNUM + "-._~!$&'()*+,;=:@"

# --- strategies ----------------------------------------------------------------------------------

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
_KEYS = st.sampled_from(["a", "b", "c", "d"]) | st.text(max_size=3)
json_values = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(_KEYS, json_values, max_size=5)


# --- with_q_component: RFC 8141 §2.3.2 -----------------------------------------------------------


def test_rfc8141_weather_example() -> None:
    # RFC 8141 §2.3.2: "urn:example:weather?=op=map&lat=39.56&lon=-104.85&datetime=1969-07-21
    # T02:56:15Z" resolved to an HTTP URI "might look like" "https://weatherapp.example?op=map
    # &lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z" (line breaks removed).
    urn = URN.parse(
        "urn:example:weather?=op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z"
    )
    assert urn.q_component is not None
    assert (
        with_q_component("https://weatherapp.example", urn.q_component)
        == "https://weatherapp.example?op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z"
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.org/a", "https://example.org/a?lang=fi"),
        ("https://example.org/a?x=1", "https://example.org/a?x=1&lang=fi"),
        ("https://example.org/a?x=1#top", "https://example.org/a?x=1&lang=fi#top"),
        ("https://example.org/a#top", "https://example.org/a?lang=fi#top"),
        ("https://example.org/a?", "https://example.org/a?lang=fi"),
        ("https://example.org/a?x=1&", "https://example.org/a?x=1&lang=fi"),
        # "&" in a path is a path character, not a query (RFC 3986 §3.3): the query is new.
        ("https://example.org/a&", "https://example.org/a&?lang=fi"),
        ("https://example.org/a&b=c", "https://example.org/a&b=c?lang=fi"),
        # "?" in a fragment is a fragment character (RFC 3986 §3.5).
        ("https://example.org/a#x?y", "https://example.org/a?lang=fi#x?y"),
    ],
)
def test_q_component_examples(url: str, expected: str) -> None:
    assert with_q_component(url, "lang=fi") == expected


@given(url=locators(), q_component=q_components)
@example(url="https://example.org/?", q_component="a=1")
@example(url="https://example.org/a?b&#c", q_component="a=1")
def test_q_component_is_copied_into_the_query(url: str, q_component: str) -> None:
    # RFC 8141 §2.3.2: "URN resolvers returning a URI that is a locator for a URN with a
    # q-component do this by copying the q-component from the URN to the query component of
    # the URI." The locator's own query, if any, is kept before it, joined with "&".
    result = with_q_component(url, q_component)
    before, after = urlsplit(url), urlsplit(result)
    assert (after.scheme, after.netloc, after.path) == (before.scheme, before.netloc, before.path)
    assert after.fragment == before.fragment
    assert ("#" in result) == ("#" in url)  # an empty fragment stays, too
    assert after.query.endswith(q_component)
    if not before.query:
        assert after.query == q_component
    elif before.query.endswith("&"):
        assert after.query == before.query + q_component
    else:
        assert after.query == before.query + "&" + q_component


@given(url=locators())
def test_no_q_component_leaves_the_locator_alone(url: str) -> None:
    assert with_q_component(url, "") == url


# --- merge_patch: RFC 7396 -----------------------------------------------------------------------


def rfc7396_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 §2's pseudocode, transcribed line by line (on a copy of the target)."""
    if isinstance(patch, dict):
        # "if Target is not an Object: Target = {} # Ignore the contents and set it to an empty
        # Object"
        target = dict(target) if isinstance(target, dict) else {}
        for name, value in patch.items():
            if value is None:
                if name in target:
                    del target[name]
            else:
                target[name] = rfc7396_merge_patch(target.get(name), value)
        return target
    return patch


# RFC 7396 Appendix A, "Example Test Cases": ORIGINAL, PATCH, RESULT, verbatim.
RFC7396_APPENDIX_A = [
    ('{"a":"b"}', '{"a":"c"}', '{"a":"c"}'),
    ('{"a":"b"}', '{"b":"c"}', '{"a":"b","b":"c"}'),
    ('{"a":"b"}', '{"a":null}', "{}"),
    ('{"a":"b","b":"c"}', '{"a":null}', '{"b":"c"}'),
    ('{"a":["b"]}', '{"a":"c"}', '{"a":"c"}'),
    ('{"a":"c"}', '{"a":["b"]}', '{"a":["b"]}'),
    ('{"a": {"b": "c"}}', '{"a": {"b": "d", "c": null}}', '{"a": {"b": "d"}}'),
    ('{"a": [{"b":"c"}]}', '{"a": [1]}', '{"a": [1]}'),
    ('["a","b"]', '["c","d"]', '["c","d"]'),
    ('{"a":"b"}', '["c"]', '["c"]'),
    ('{"a":"foo"}', "null", "null"),
    ('{"a":"foo"}', '"bar"', '"bar"'),
    ('{"e":null}', '{"a":1}', '{"e":null,"a":1}'),
    ("[1,2]", '{"a":"b","c":null}', '{"a":"b"}'),
    ("{}", '{"a":{"bb":{"ccc":null}}}', '{"a":{"bb":{}}}'),
]


@pytest.mark.parametrize(("original", "patch", "result"), RFC7396_APPENDIX_A)
def test_rfc7396_appendix_a(original: str, patch: str, result: str) -> None:
    target, patch_value = json.loads(original), json.loads(patch)
    assert merge_patch(target, patch_value) == json.loads(result)
    assert target == json.loads(original)  # the target is not changed in place
    assert patch_value == json.loads(patch)


def test_rfc7396_section_3_example() -> None:
    # RFC 7396 §3: the blog post example.
    target = {
        "title": "Goodbye!",
        "author": {"givenName": "John", "familyName": "Doe"},
        "tags": ["example", "sample"],
        "content": "This will be unchanged",
    }
    patch = {
        "title": "Hello!",
        "phoneNumber": "+01-123-456-7890",
        "author": {"familyName": None},
        "tags": ["example"],
    }
    assert merge_patch(target, patch) == {
        "title": "Hello!",
        "author": {"givenName": "John"},
        "tags": ["example"],
        "content": "This will be unchanged",
        "phoneNumber": "+01-123-456-7890",
    }


@given(target=json_values, patch=json_values)
def test_merge_patch_is_rfc7396_section_2(target: Any, patch: Any) -> None:
    target_before, patch_before = copy.deepcopy(target), copy.deepcopy(patch)
    assert merge_patch(target, patch) == rfc7396_merge_patch(target, patch)
    assert target == target_before  # neither argument is changed in place
    assert patch == patch_before


@given(target=json_objects, data=st.data())
def test_null_removes_a_member(target: dict[str, Any], data: st.DataObject) -> None:
    # RFC 7396 §1: "null values in the merge patch are given special meaning to indicate the
    # removal of existing values in the target."
    name = data.draw(st.sampled_from(sorted(target)) if target else _KEYS)
    result = merge_patch(target, {name: None})
    assert name not in result
    assert result == {k: v for k, v in target.items() if k != name}


@given(target=json_objects)
def test_empty_patch_is_identity_on_objects(target: dict[str, Any]) -> None:
    assert merge_patch(target, {}) == target


@given(target=json_values)
def test_empty_patch_makes_a_non_object_an_empty_object(target: Any) -> None:
    # RFC 7396 §2: "if Target is not an Object: Target = {}".
    if not isinstance(target, dict):
        assert merge_patch(target, {}) == {}


@given(target=json_values, patch=json_values)
def test_applying_a_patch_twice_is_applying_it_once(target: Any, patch: Any) -> None:
    once = merge_patch(target, patch)
    assert merge_patch(once, patch) == once


@given(target=json_values, patch=json_values.filter(lambda v: not isinstance(v, dict)))
def test_non_object_patch_replaces_the_target(target: Any, patch: Any) -> None:
    # RFC 7396 §2: "if Patch is an Object: ... else: return Patch".
    assert merge_patch(target, patch) == patch


@given(target=json_values, patch=json_objects)
def test_object_patch_gives_an_object_without_its_nulls(target: Any, patch: dict[str, Any]) -> None:
    result = merge_patch(target, patch)
    assert isinstance(result, dict)
    for name, value in patch.items():
        assert (name in result) == (value is not None)


# --- prefixes: RFC 8458 §4.2, §4.3 ---------------------------------------------------------------


@given(prefix=prefixes)
def test_normalize_prefix_folds_case(prefix: str) -> None:
    # RFC 8458 §4.2: "The entire prefix is case insensitive"; §4.3 step 2: "convert all
    # characters in the prefix (country code and its optional sub-divisions) to a single case".
    normalized = normalize_prefix(prefix)
    assert normalized == prefix.lower()
    assert normalize_prefix(prefix.upper()) == normalized
    assert normalize_prefix(prefix.swapcase()) == normalized
    assert normalize_prefix(normalized) == normalized


@pytest.mark.parametrize(
    "prefix",
    [
        "",
        "f",
        "fin",
        "f1",
        "fi-demo",  # RFC 8458 §4.3: sub-namespaces "MUST NOT contain any colons or hyphens"
        "fi:de-mo",
        "fi:",
        "fi::demo",
        ":demo",
        "fi:de mo",
        "fi:dem\u00f6",  # non-ASCII letters are not ALPHA (RFC 5234 B.1)
        "f\u0131",  # LATIN SMALL LETTER DOTLESS I
        "fi:\u212a",  # KELVIN SIGN, which case-folds to "k"
        "fi:\u0661",  # ARABIC-INDIC DIGIT ONE, which str.isdigit() accepts
        "fi:demo.x",
        "fi:demo/x",
    ],
)
def test_normalize_prefix_rejects_what_is_not_a_prefix(prefix: str) -> None:
    with pytest.raises(UnacceptableError):
        normalize_prefix(prefix)


def test_covers_examples() -> None:
    assert covers("fi:demo", "fi:demo")
    assert covers("fi:demo", "fi:demo:x")
    assert covers("fi:demo", "fi:demo:x:y")
    assert covers("fi", "fi:demo")
    assert not covers("fi:demo", "fi:demox")  # a sibling, not a sub-namespace
    assert not covers("fi:demo", "fi:dem")
    assert not covers("fi:demo", "fi")
    assert not covers("fi:demo:x", "fi:demo")
    assert not covers("fi", "fin")


@given(delegated=narrow_prefixes, prefix=narrow_prefixes)
def test_covers_is_segment_wise(delegated: str, prefix: str) -> None:
    # RFC 8458 §4.3: a sub-namespace is "indicated by a delimiting colon character (:)"; a
    # delegated prefix covers itself and the sub-namespaces below it, segment by segment.
    delegated, prefix = normalize_prefix(delegated), normalize_prefix(prefix)
    ours, theirs = delegated.split(":"), prefix.split(":")
    assert covers(delegated, prefix) == (theirs[: len(ours)] == ours)


@given(delegated=prefixes, tail=subspcs, extra=subspcs)
def test_covers_sub_namespaces_and_not_siblings(delegated: str, tail: str, extra: str) -> None:
    delegated = normalize_prefix(delegated)
    assert covers(delegated, delegated)
    assert covers(delegated, normalize_prefix(f"{delegated}:{tail}"))
    assert covers(delegated, normalize_prefix(f"{delegated}:{tail}:{extra}"))
    if ":" in delegated:  # a sibling sub-namespace: fi:demo vs fi:demox
        assert not covers(delegated, normalize_prefix(delegated + extra))
    assert not covers(normalize_prefix(f"{delegated}:{tail}"), delegated)


def test_prefix_of_rfc8458_examples() -> None:
    # RFC 8458 §4.3, "Examples".
    assert prefix_of("URN:NBN:fi-fe201003181510") == "fi"
    assert prefix_of("urn:nbn:ch:bel-9039") == "ch:bel"
    assert prefix_of("urn:nbn:se:uu:diva-3475") == "se:uu:diva"


@given(prefix=prefixes, nbn_string=nbn_strings, scheme=st.sampled_from(["urn:nbn", "URN:NBN"]))
def test_prefix_of_is_the_normalized_prefix(prefix: str, nbn_string: str, scheme: str) -> None:
    assert prefix_of(f"{scheme}:{prefix}-{nbn_string}") == normalize_prefix(prefix)
    assert prefix_of(URN.parse(f"{scheme}:{prefix}-{nbn_string}")) == normalize_prefix(prefix)


@pytest.mark.parametrize("text", ["urn:isbn:0451450523", "urn:example:nbn:fi-1", "urn:nbn:1-x"])
def test_prefix_of_refuses_what_is_not_a_urn_nbn(text: str) -> None:
    with pytest.raises(UnacceptableError):
        prefix_of(text)


# --- generated NBN strings -----------------------------------------------------------------------

# ISO/IEC 7064 MOD 37,36, a hybrid system: the body and the check character are both one of
# 36 letters and digits (the pure system MOD 37-2 is the one with a 37th check character, "*").
_ALPHABET = string.digits + string.ascii_lowercase
_SAMPLES = [random_nbn_string() for _ in range(200)]


@pytest.mark.parametrize("text", _SAMPLES[:50])
def test_random_string_shape_and_check_character(text: str) -> None:
    assert len(text) == RANDOM_LENGTH + 1
    assert set(text[:-1]) <= set(BASE32)  # Crockford's base 32, lower case: no i, l, o, u
    assert text == text.lower()
    assert mod_37_36.is_valid(text.upper())
    assert text[-1] == mod_37_36.calc_check_digit(text[:-1].upper()).lower()


@pytest.mark.parametrize("text", _SAMPLES[:50])
def test_random_string_every_single_character_change_is_detected(text: str) -> None:
    for position, original in enumerate(text):
        for replacement in _ALPHABET.replace(original, ""):
            changed = text[:position] + replacement + text[position + 1 :]
            assert not mod_37_36.is_valid(changed.upper()), (text, changed)


def test_random_strings_fit_every_prefix() -> None:
    # The check character is a letter or digit, so DNB's check digit (de, at, ch), whose table
    # has codes for letters and digits, can always follow it.
    for text in _SAMPLES:
        assert text[-1] in _ALPHABET
        for prefix in ("fi:demo", "de:demo"):
            assert check_registrable(URN.parse(assigned_name(prefix, text))) == []


def test_random_strings_do_not_repeat() -> None:
    assert len(set(_SAMPLES)) == len(_SAMPLES)


@given(value=st.integers(1, 10**15))
def test_sequential_strings(value: int) -> None:
    text = sequential_nbn_string(value)
    assert text == str(value)
    assert int(text) == value  # distinct values give distinct strings
    assert sequential_nbn_string(value + 1) != text


# --- assigned_name and DNB's check digit ---------------------------------------------------------


def test_dnb_worked_example() -> None:
    # Deutsche Nationalbibliothek, "Check digit algorithm" (persistent-identifier.de): the
    # worked example urn:nbn:de:gbv:089-332175294 has the check digit 5.
    assert nbn.dnb_check_digit("urn:nbn:de:gbv:089-332175294") == "5"
    assert assigned_name("de:gbv:089", "332175294") == "urn:nbn:de:gbv:089-3321752945"


def test_rfc8458_swiss_example_carries_dnb_check_digit() -> None:
    # RFC 8458 §4.3's example "urn:nbn:ch:bel-9039" is a Swiss URN:NBN: its last digit is DNB's.
    assert assigned_name("ch:bel", "903") == "urn:nbn:ch:bel-9039"


def test_assigned_name_outside_dnb_countries() -> None:
    assert assigned_name("fi:demo", "7") == "urn:nbn:fi:demo-7"
    assert assigned_name("fi", "fe201003181510") == "urn:nbn:fi-fe201003181510"  # RFC 8458 §4.3


@given(prefix=prefixes, nbn_string=nbn_strings)
def test_assigned_name_with_and_without_check_digit(prefix: str, nbn_string: str) -> None:
    prefix = normalize_prefix(prefix)
    name = assigned_name(prefix, nbn_string)
    plain = f"urn:nbn:{prefix}-{nbn_string}"
    if prefix.split(":")[0] in DNB_COUNTRIES:
        assert name[:-1] == plain
        assert name[-1] == nbn.dnb_check_digit(plain)
    else:
        assert name == plain
    assert prefix_of(name) == prefix
    # urnkit's own validator agrees: no national-rule finding about the check digit.
    assert nbn.CHECK_DIGIT not in [finding.code for finding in nbn.validate(name)]


@given(
    country=st.sampled_from(sorted(DNB_COUNTRIES)),
    subspaces=st.lists(subspcs, max_size=2),
    value=st.integers(1, 10**12),
)
def test_sequential_names_under_dnb_countries_validate(
    country: str, subspaces: list[str], value: int
) -> None:
    prefix = normalize_prefix(":".join([country, *subspaces]))
    name = assigned_name(prefix, sequential_nbn_string(value))
    assert check_registrable(URN.parse(name)) == []


# --- check_registrable ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "URN:NBN:fi-fe201003181510",  # RFC 8458 §4.3's examples
        "urn:nbn:ch:bel-9039",
        "urn:nbn:se:uu:diva-3475",
        "urn:nbn:de:gbv:089-3321752945",
        "urn:nbn:fi:demo-a-b-c",  # RFC 8458 §4.2: "Within the NBN string, a hyphen MAY be used"
    ],
)
def test_registrable_examples(text: str) -> None:
    assert check_registrable(URN.parse(text)) == []


def test_warnings_are_returned_not_raised() -> None:
    # A wrong DNB check digit is a national rule, reported as a warning (urnkit.namespaces.nbn).
    findings = check_registrable(URN.parse("urn:nbn:de:gbv:089-3321752940"))
    assert [finding.code for finding in findings] == [nbn.CHECK_DIGIT]
    assert all(finding.severity == "warning" for finding in findings)


@given(
    prefix=st.lists(subspcs, max_size=2).map(lambda subs: ":".join(["fi", *subs])),
    nbn_string=nbn_strings,
    components=st.tuples(
        st.none() | r_components, st.none() | q_components, st.none() | f_components
    ).filter(lambda c: c != (None, None, None)),
)
def test_components_are_refused(
    prefix: str, nbn_string: str, components: tuple[str | None, str | None, str | None]
) -> None:
    # RFC 8141 §2: the r-, q- and f-components are not part of the assigned name; RFC 8458
    # §4.2.1: URN:NBN resolvers support neither r- nor q-components. Only the name is registered.
    r, q, f = components
    text = f"urn:nbn:{prefix}-{nbn_string}"
    text += ("" if r is None else "?+" + r) + ("" if q is None else "?=" + q)
    text += "" if f is None else "#" + f
    urn = URN.parse(text)
    with pytest.raises(UnacceptableError, match="r-, q- or f-components"):
        check_registrable(urn)
    check_registrable(URN.parse(urn.assigned_name))  # the name alone is fine


@pytest.mark.parametrize(
    "text",
    [
        "urn:isbn:0451450523",  # RFC 8458: this service registers URN:NBNs only
        "urn:example:fi-1",
        "urn:nbn:hr:168:748382",  # RFC 8458 §4.2 read strictly: no hyphen
        "urn:nbn:fi-",  # an empty NBN string
        "urn:nbn:jj-1",  # not an ISO 3166-1 alpha-2 code
        "urn:nbn:fi:de_mo-1",  # RFC 8458 §4.2: subspc = 1*(ALPHA / DIGIT)
        "urn:nbn:fi-/x",  # RFC 8458 §4.2: nbn-string = path-rootless
        "urn:nbn:1i-1",  # iso-cc = 2ALPHA
    ],
)
def test_unfit_names_are_refused(text: str) -> None:
    with pytest.raises(UnacceptableError):
        check_registrable(URN.parse(text))


def test_refusal_carries_the_findings() -> None:
    with pytest.raises(UnacceptableError) as raised:
        check_registrable(URN.parse("urn:nbn:hr:168:748382"))
    codes = [finding["code"] for finding in raised.value.extensions["findings"]]
    assert nbn.NO_HYPHEN in codes
