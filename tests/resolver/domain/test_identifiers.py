"""The boundaries of a record's other identifiers (``domain/identifiers.py``): which forms of an
ISBN, ISSN and UUID are one identifier (each namespace's own equivalence), and what
``metadata.identifiers`` and ``metadata.local_id`` accept."""

from __future__ import annotations

import unicodedata
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain import (
    UnacceptableInputError,
    check_identifiers,
    identifier_key,
    identifier_keys,
    local_id,
)
from urnkit.resolver.domain.identifiers import MAX_IDENTIFIERS, MAX_LOCAL_ID

DIGITS = st.text("0123456789", min_size=1, max_size=1)


def isbn10_check(first9: str) -> str:
    # ISO 2108: weights 10 down to 2, the sum with the check digit divisible by 11 (X is 10).
    digit = -sum(w * int(c) for w, c in zip(range(10, 1, -1), first9, strict=True)) % 11
    return "X" if digit == 10 else str(digit)


def ean13_check(first12: str) -> str:
    # ISO 2108 (EAN-13): weights 1, 3, 1, 3 …, the sum with the check digit divisible by 10.
    return str(-sum((3 if i % 2 else 1) * int(c) for i, c in enumerate(first12)) % 10)


@st.composite
def hyphenated(draw: st.DrawFn, digits: str) -> str:
    """``digits`` with a hyphen after some of them (never first or last, never two)."""
    out = digits[0]
    for char in digits[1:]:
        out += ("-" if draw(st.booleans()) else "") + char
    return out


@st.composite
def isbn_forms(draw: st.DrawFn) -> tuple[str, str, str]:
    """(an ISBN-10 as a URN, its ISBN-13 as a URN, the ISBN-13): spelt in any case of "urn",
    the NID and a final X, hyphens anywhere between digits."""
    body = draw(st.text("0123456789", min_size=9, max_size=9))
    isbn10 = body + isbn10_check(body)
    isbn13 = "978" + body + ean13_check("978" + body)
    if draw(st.booleans()):
        isbn10 = isbn10.lower()  # the check character x
    urn = draw(st.sampled_from(["urn", "URN", "Urn"]))
    nid = draw(st.sampled_from(["isbn", "ISBN", "Isbn"]))
    ten = f"{urn}:{nid}:{draw(hyphenated(isbn10))}"
    thirteen = f"{urn}:{nid}:{draw(hyphenated(isbn13))}"
    return ten, thirteen, isbn13


@given(forms=isbn_forms())
def test_an_isbn10_and_its_isbn13_are_one_identifier(forms: tuple[str, str, str]) -> None:
    # RFC 8254 §4 (URN:ISBN equivalence), ISO 2108: an ISBN-10 is its ISBN-13 with prefix 978;
    # hyphens carry no meaning; "urn" and the NID are case-insensitive (RFC 8141 §3).
    ten, thirteen, isbn13 = forms
    assert identifier_key(ten) == identifier_key(thirteen) == f"urn:isbn:{isbn13}"
    check_identifiers({"identifiers": [ten, thirteen]})  # both acceptable
    assert identifier_keys({"identifiers": [ten, thirteen]}) == {f"urn:isbn:{isbn13}"}


@given(forms=isbn_forms(), other=st.text("0123456789", min_size=9, max_size=9))
def test_different_isbns_are_different_identifiers(forms: tuple[str, str, str], other: str) -> None:
    ten, _, isbn13 = forms
    other13 = "978" + other + ean13_check("978" + other)
    assert (identifier_key(ten) == identifier_key(f"urn:isbn:{other13}")) == (isbn13 == other13)


@given(forms=isbn_forms(), wrong=DIGITS)
def test_an_isbn_with_a_wrong_check_digit_is_refused_where_it_is(
    forms: tuple[str, str, str], wrong: str
) -> None:
    # ISO 2108: the check digit; the refusal names the array index (RFC 6901 pointer).
    _, thirteen, isbn13 = forms
    if wrong == isbn13[-1]:
        return
    bad = thirteen[:-1] + wrong
    with pytest.raises(UnacceptableInputError) as refused:
        check_identifiers({"identifiers": ["urn:issn:0317-8471", bad]})
    (error,) = refused.value.extensions["errors"]
    assert error["pointer"] == "/metadata/identifiers/1"
    assert "check digit" in error["message"]


@st.composite
def issn_forms(draw: st.DrawFn) -> tuple[str, str]:
    """(an ISSN as a URN, hyphen optional, x or X; its canonical NNNN-NNNC form)."""
    body = draw(st.text("0123456789", min_size=7, max_size=7))
    # ISO 3297: weights 8 down to 2, the sum with the check digit divisible by 11 (X is 10).
    digit = -sum(w * int(c) for w, c in zip(range(8, 1, -1), body, strict=True)) % 11
    check = "X" if digit == 10 else str(digit)
    canonical = f"{body[:4]}-{body[4:]}{check}"
    spelt = canonical.replace("-", "") if draw(st.booleans()) else canonical
    if draw(st.booleans()):
        spelt = spelt.lower()
    return f"{draw(st.sampled_from(['urn', 'URN']))}:{draw(st.sampled_from(['issn', 'ISSN']))}:" + (
        spelt
    ), canonical


@given(forms=issn_forms())
def test_an_issn_is_one_identifier_with_or_without_its_hyphen(forms: tuple[str, str]) -> None:
    # RFC 3044 §2 (URN:ISSN): the hyphen is optional and the check character X case-blind.
    spelt, canonical = forms
    check_identifiers({"identifiers": [spelt]})
    assert identifier_key(spelt) == f"urn:issn:{canonical}"


@given(value=st.uuids(), upper=st.booleans())
def test_a_uuid_is_one_identifier_in_either_case(value: uuid.UUID, upper: bool) -> None:
    # RFC 9562 §4: a UUID's hexadecimal digits are case-insensitive.
    text = str(value).upper() if upper else str(value)
    check_identifiers({"identifiers": [f"urn:uuid:{text}"]})
    assert identifier_key(f"URN:UUID:{text}") == f"urn:uuid:{value}"


def test_what_identifiers_refuses_is_named_by_its_place() -> None:
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"identifiers": "urn:isbn:9780451450524"}, "/metadata/identifiers", "array"),
        ({"identifiers": [7]}, "/metadata/identifiers/0", "string"),
        ({"identifiers": ["not a urn"]}, "/metadata/identifiers/0", "not an acceptable URN"),
        ({"identifiers": ["urn:nbn:fi:test-1"]}, "/metadata/identifiers/0", "URN:NBN"),
        ({"identifiers": ["urn:uuid:1234"]}, "/metadata/identifiers/0", "not an acceptable"),
        (
            {"identifiers": ["urn:isbn:9780451450524"] * (MAX_IDENTIFIERS + 1)},
            "/metadata/identifiers",
            f"at most {MAX_IDENTIFIERS}",
        ),
        ({"local_id": 17}, "/metadata/local_id", "string"),
        ({"local_id": "urn:isbn:9780451450524"}, "/metadata/local_id", "identifiers"),
    ]
    for metadata, pointer, reason in cases:
        with pytest.raises(UnacceptableInputError) as refused:
            check_identifiers(metadata)
        (error,) = refused.value.extensions["errors"]
        assert (error["pointer"], reason in error["message"]) == (pointer, True), metadata


@given(
    text=st.text(
        st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=MAX_LOCAL_ID
    ).filter(lambda t: t[:4].lower() != "urn:")
)
def test_a_local_id_is_any_text_of_1_to_255_characters_without_control_characters(
    text: str,
) -> None:
    check_identifiers({"local_id": text})
    assert local_id({"local_id": text}) == text
    assert identifier_key(text) is None or text.lower().startswith("urn:")


@given(
    before=st.text(max_size=10),
    control=st.sampled_from([chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))]),
    after=st.text(max_size=10),
)
def test_a_local_id_with_a_control_character_is_refused_at_its_position(
    before: str, control: str, after: str
) -> None:
    text = before + control + after
    with pytest.raises(UnacceptableInputError) as refused:
        check_identifiers({"local_id": text})
    position = next(i for i, c in enumerate(text) if unicodedata.category(c) == "Cc")
    assert f"a control character at position {position}" in str(refused.value)
    assert local_id({"local_id": text}) is None


@pytest.mark.parametrize("length", [0, MAX_LOCAL_ID + 1])
def test_a_local_id_outside_its_length_is_refused(length: int) -> None:
    with pytest.raises(UnacceptableInputError, match="local id has 1 to 255"):
        check_identifiers({"local_id": "x" * length})
