"""A URN as pasted (urnkit.pasted; docs/resolution.md, "Pasted URNs"): what copying adds around
and inside a URN taken off, and nothing a URN is made of."""

from hypothesis import given
from hypothesis import strategies as st
from pasted_support import pasted_forms, sent
from urn_strategies import nids, nsss

from urnkit import is_valid
from urnkit.pasted import DASHES, INVISIBLE, LEADING, TRAILING, WHITESPACE, cleaned

# The examples of RFC 8141 §3.1 (lexical equivalence), verbatim: URNs with nothing to clean.
RFC_8141_EXAMPLES = (
    "urn:example:a123,z456",
    "URN:example:a123,z456",
    "urn:EXAMPLE:a123,z456",
    "urn:example:a123,z456?+abc",
    "urn:example:a123,z456?=xyz",
    "urn:example:A123,z456",
    "urn:example:a123,Z456",
    "urn:example:%D0%B0123,z456",
)


def test_the_rfc_8141_examples_are_left_as_they_are() -> None:
    # RFC 8141 §3.1
    for urn in RFC_8141_EXAMPLES:
        assert cleaned(urn) == urn


def test_what_readers_paste() -> None:
    # issue 32: each of pasted_support's forms, as pasted and as a browser sends it in a path
    urn = "urn:nbn:fi-fe2019-1234"
    for text in pasted_forms(urn):
        assert cleaned(text) == urn, repr(text)
        assert cleaned(sent(text)) == urn, sent(text)


def test_percent_encoded_characters_inside_the_urn_stay() -> None:
    # RFC 8141 §2.3: a %-encoded "." or space inside the NSS is part of it
    assert cleaned("urn:example:a%2Eb%20c") == "urn:example:a%2Eb%20c"
    assert cleaned("urn:example:a%2Fb/c") == "urn:example:a%2Fb/c"
    # at the end it is what a browser made of the pasted text
    assert cleaned("urn:example:a%2E%20") == "urn:example:a"


plain_urns = st.builds(lambda nid, nss: f"urn:{nid}:{nss}", nids(), nsss())


@given(st.text())
def test_cleaning_twice_changes_nothing(text: str) -> None:
    once = cleaned(text)
    assert cleaned(once) == once


@given(st.text())
def test_what_cleaning_leaves(text: str) -> None:
    result = cleaned(text)
    assert not set(result) & set(INVISIBLE + DASHES)
    if result:
        assert result[0] not in WHITESPACE + LEADING
        assert result[-1] not in WHITESPACE + TRAILING


@given(plain_urns)
def test_a_urn_ending_in_a_letter_or_digit_without_percent_is_kept(urn: str) -> None:
    # RFC 8141 §2: the characters of a URN are never cleaned away inside it
    urn = urn.replace("%", "") + "0"
    assert is_valid(urn)
    assert cleaned(urn) == urn


@given(
    plain_urns,
    st.text(WHITESPACE + LEADING, max_size=4),
    st.text(WHITESPACE + TRAILING, max_size=4),
    st.lists(st.tuples(st.integers(min_value=0), st.sampled_from(INVISIBLE)), max_size=4),
)
def test_pasting_around_and_inside_is_undone(
    urn: str, before: str, after: str, inserted: list[tuple[int, str]]
) -> None:
    text = urn
    for at, character in inserted:
        at %= len(text) + 1
        text = text[:at] + character + text[at:]
    assert cleaned(before + text + after) == cleaned(urn)


@given(plain_urns.filter(lambda urn: "-" in urn), st.data())
def test_dashes_in_place_of_hyphen_minus_are_undone(urn: str, data: st.DataObject) -> None:
    dashed = "".join(
        data.draw(st.sampled_from(DASHES)) if character == "-" else character for character in urn
    )
    assert cleaned(dashed) == cleaned(urn)


@given(plain_urns, st.sampled_from(INVISIBLE + DASHES + "\u00a0 "))
def test_percent_encoded_pasting_is_undone_as_the_characters_are(urn: str, added: str) -> None:
    encoded = "".join(f"%{octet:02X}" for octet in added.encode())
    assert cleaned(urn + encoded) == cleaned(urn + added)
