"""Validity under RFC 8141 and RFC 2141 side by side, and why they differ (RFC 8141 Appendix B)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from urn_strategies import rfc2141_urns, urns

from urnkit import Explanation, diagnose, explain

# One reason each, with the words that must name it and the RFC 8141 appendix it comes from.
SINGLE_DIFFERENCES = [
    # RFC 8141 §2: NID = (alphanum) 0*30(ldh) (alphanum); RFC 2141 §2 allowed one character.
    ("urn:a:b", "rfc2141", ["one-character NID", "at least 2"]),
    ("URN:X:a%2c", "rfc2141", ["one-character NID"]),
    # RFC 8141 Appendix B.1: "Disallows '-' at the end of the NID."
    ("urn:ab-:c", "rfc2141", ["'-' at the end of the NID", "Appendix B.1"]),
    ("urn:a-:c", "rfc2141", ["'-' at the end of the NID"]),
    ("urn:a---:c", "rfc2141", ["'-' at the end of the NID"]),
    # RFC 2141 §2: the NID "urn" is reserved; RFC 8141's ABNF admits it.
    ("urn:urn:x", "rfc8141", ['"urn"', "RFC 2141 §2"]),
    ("URN:uRn:x", "rfc8141", ['"urn"']),
    # RFC 8141 Appendix B.1: "Allows the '/', '~', and '&' characters in the NSS."
    ("urn:example:1/406/47452/2", "rfc8141", ["'/', '~' and '&'", "Appendix B.1"]),
    ("urn:example:a~b", "rfc8141", ["'/', '~' and '&'"]),
    ("urn:example:a&b", "rfc8141", ["'/', '~' and '&'"]),
    ("urn:example:a/b~c&d", "rfc8141", ["'/', '~' and '&'"]),
    # RFC 8141 Appendix B.2: "Allows what are now called r-components, q-components, and
    # f-components."
    ("urn:example:a?+r", "rfc8141", ["r-components", "Appendix B.2"]),
    ("urn:example:a?=q", "rfc8141", ["q-components", "Appendix B.2"]),
    ("urn:example:a#f", "rfc8141", ["f-components", "Appendix B.2"]),
    ("urn:example:a#", "rfc8141", ["f-components"]),  # an empty f-component is one too
]


@pytest.mark.parametrize(("text", "valid_under", "words"), SINGLE_DIFFERENCES)
def test_each_difference_is_named(text: str, valid_under: str, words: list[str]) -> None:
    explanation = explain(text)
    assert isinstance(explanation, Explanation)
    assert explanation.text == text
    assert explanation.valid("rfc8141") is (valid_under == "rfc8141")
    assert explanation.valid("rfc2141") is (valid_under == "rfc2141")
    (reason,) = explanation.differences
    for word in words:
        assert word in reason
    assert f"differs: {reason}" in str(explanation)


def test_several_differences_are_all_named() -> None:
    explanation = explain("urn:urn:a/b?+r?=q#f")
    assert explanation.valid("rfc8141")
    assert not explanation.valid("rfc2141")
    reasons = explanation.differences
    assert len(reasons) == 5
    for words in ('"urn"', "'/', '~' and '&'", "r-components", "q-components", "f-components"):
        assert sum(words in reason for reason in reasons) == 1, words


def test_the_reasons_name_only_what_the_text_has() -> None:
    (reason,) = explain("urn:example:a?=q").differences
    assert "r-components" not in reason
    assert "f-components" not in reason
    reasons = explain("urn:example:a~b#").differences
    assert len(reasons) == 2
    assert not any("q-components" in reason or '"urn"' in reason for reason in reasons)


@pytest.mark.parametrize(
    "text",
    [
        "urn:example:a123,z456",  # valid under both
        "URN:ISBN:0451450523",
        "urn:example:a%2Fb",  # an encoded "/" is fine under both
        "urn:a:b/c",  # invalid under both, for different reasons
        "urn:ab-:c?+r",
        "urn:example:a b",
        "not a urn",
        "",
    ],
)
def test_identical_verdicts_give_no_differences(text: str) -> None:
    explanation = explain(text)
    assert explanation.valid("rfc8141") is explanation.valid("rfc2141")
    assert explanation.differences == ()
    assert "differs" not in str(explanation)


def test_the_verdicts_are_those_of_diagnose() -> None:
    explanation = explain("urn:a:b/c")
    assert explanation.rfc8141 == diagnose("urn:a:b/c")
    assert explanation.rfc2141 == diagnose("urn:a:b/c", mode="rfc2141")
    assert explanation.rfc8141 is not None
    assert explanation.rfc8141.position == 5
    assert explanation.rfc2141 is not None
    assert explanation.rfc2141.position == 7


def test_str_shows_both_verdicts() -> None:
    lines = str(explain("urn:example:a~b")).splitlines()
    assert lines[0] == "urn:example:a~b"
    assert lines[1] == "  RFC 8141: valid"
    assert lines[2].startswith("  RFC 2141: invalid at position 13: ")
    assert lines[3].startswith("  differs: ")
    assert len(lines) == 4
    assert str(explain("urn:ex:ok")).splitlines() == [
        "urn:ex:ok",
        "  RFC 8141: valid",
        "  RFC 2141: valid",
    ]


_grammar_soup = st.lists(
    st.sampled_from(["urn", "URN", ":", "a", "B", "0", "-", "/", "~", "&", "?+", "?=", "#", "%2c"])
).map("".join)


@given(st.one_of(urns(), rfc2141_urns(), _grammar_soup))
def test_differences_exist_exactly_when_the_verdicts_differ(text: str) -> None:
    explanation = explain(text)
    assert explanation.valid("rfc8141") is (diagnose(text) is None)
    assert explanation.valid("rfc2141") is (diagnose(text, mode="rfc2141") is None)
    differ = explanation.valid("rfc8141") is not explanation.valid("rfc2141")
    assert bool(explanation.differences) is differ
    assert all("RFC" in reason for reason in explanation.differences)
