"""URN:NBN names (``urnkit.resolver.domain.names``): properties and the RFCs' own examples.

* :func:`normalize_prefix`, :func:`covers`, :func:`prefix_of`: RFC 8458 §4.2/§4.3, prefixes are
  case-insensitive and sub-namespaces nest segment by segment (``fi:demo`` covers
  ``fi:demo:x``, never ``fi:demox``).
* :func:`random_nbn_string`, :func:`sequential_nbn_string`, :func:`assigned_name`: generated
  names are well formed, carry a valid ISO/IEC 7064 MOD 37,36 check character, and carry DNB's
  check digit under de, at and ch.
* :func:`check_registrable`: only a URN:NBN's assigned name, without components, is registered.
"""

from __future__ import annotations

import string

import pytest
from domain_strategies import (
    f_components,
    narrow_prefixes,
    nbn_strings,
    prefixes,
    q_components,
    r_components,
    subspcs,
)
from hypothesis import given
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
    normalize_prefix,
    prefix_of,
    random_nbn_string,
    sequential_nbn_string,
)
from urnkit.urn import URN

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


# (by index: each process of a parallel run draws samples of its own, under the same names)
@pytest.mark.parametrize("sample", range(50))
def test_random_string_shape_and_check_character(sample: int) -> None:
    text = _SAMPLES[sample]
    assert len(text) == RANDOM_LENGTH + 1
    assert set(text[:-1]) <= set(BASE32)  # Crockford's base 32, lower case: no i, l, o, u
    assert text == text.lower()
    assert mod_37_36.is_valid(text.upper())
    assert text[-1] == mod_37_36.calc_check_digit(text[:-1].upper()).lower()


@pytest.mark.parametrize("sample", range(50))
def test_random_string_every_single_character_change_is_detected(sample: int) -> None:
    text = _SAMPLES[sample]
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
