"""Finding URNs in running text (rfc2141bis §2.5.3; RFC 2141 §2: "An URN ends when an
octet/character from the excluded character set ... is encountered")."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st
from urn_strategies import ALNUM, rfc2141_urns, urns

from urnkit import URN, Mode, URNMatch, find_urns, is_valid


def found(text: str, mode: Mode = "rfc8141") -> list[str]:
    """The URNs found, checking that each sits at its offsets."""
    matches = list(find_urns(text, mode=mode))
    for match in matches:
        assert text[match.start : match.end] == str(match.urn) == match.text
    return [match.text for match in matches]


# --- Realistic prose -----------------------------------------------------------------------------


def test_a_library_catalogue_record() -> None:
    record = (
        "L\u00f6nnrot, Elias. Kalevala / Elias L\u00f6nnrot. \u2013 Helsinki : SKS, 2010. "
        "\u2013 1 online resource. Persistent identifier: URN:NBN:fi-fe201003181510. Print "
        "edition: urn:isbn:978-951-1-21262-2; see also urn:nbn:de:101:1-201102223456 "
        "(Deutsche Nationalbibliothek) and <urn:oclc:record:1045678>."
    )
    matches = list(find_urns(record))
    assert [m.text for m in matches] == [
        "URN:NBN:fi-fe201003181510",
        "urn:isbn:978-951-1-21262-2",
        "urn:nbn:de:101:1-201102223456",
        "urn:oclc:record:1045678",
    ]
    for match in matches:
        assert record[match.start : match.end] == match.text
    assert matches[0].start == record.index("URN:NBN")
    assert matches[0].urn.nid == "NBN"


def test_html() -> None:
    html = (
        '<p>Read <a href="urn:ietf:rfc:8141">RFC 8141</a>, '
        "<a href='urn:ietf:rfc:2141'>RFC 2141</a> or\n"
        "<urn:isbn:0451450523>.</p>"
    )
    assert found(html) == ["urn:ietf:rfc:8141", "urn:ietf:rfc:2141", "urn:isbn:0451450523"]


def test_markdown() -> None:
    markdown = (
        "See [the book](urn:isbn:0451450523) and [part 2](urn:example:a(2)), "
        "*urn:example:em*, **urn:example:strong**, _urn:example:under_, `urn:example:code` "
        'and [linked](urn:example:t "a title").'
    )
    assert found(markdown) == [
        "urn:isbn:0451450523",
        "urn:example:a(2)",  # a balanced ")" belongs to the URN
        "urn:example:em",
        "urn:example:strong",
        "urn:example:under",
        "urn:example:code",
        "urn:example:t",
    ]


def test_csv_line() -> None:
    # Quoted fields: '"' is excluded (rfc2141bis §2.5.3), so each URN ends at its quote.
    assert found('1,"urn:isbn:0451450523","The Last Unicorn",urn:ex:x, 3') == [
        "urn:isbn:0451450523",
        "urn:ex:x",  # a "," before a space is punctuation
    ]
    # An unquoted field: "," is a pchar (the NSS of RFC 8141 §3.2's urn:example:a123,z456), so
    # the URN goes on to the next excluded character.
    assert found("2,urn:isbn:0451450524,Title\n") == ["urn:isbn:0451450524,Title"]
    assert found("urn:example:a123,z456\turn:example:b") == [
        "urn:example:a123,z456",
        "urn:example:b",
    ]


def test_a_sentence_ending_in_a_urn() -> None:
    text = "The identifier is urn:example:a123,z456."
    matches = list(find_urns(text))
    assert [(m.start, m.end, m.text) for m in matches] == [(18, 39, "urn:example:a123,z456")]
    assert found("Cite urn:example:a; or urn:example:b: both work!") == [
        "urn:example:a",
        "urn:example:b",
    ]
    assert found("Last: urn:example:c...") == ["urn:example:c"]


def test_a_question_ending_in_a_urn() -> None:
    assert found("Have you tried urn:example:foo?") == ["urn:example:foo"]
    assert found("Or urn:example:foo?+CCResolve:cc=uk?") == ["urn:example:foo?+CCResolve:cc=uk"]
    assert found("Is it urn:example:weather?=op=map?") == ["urn:example:weather?=op=map"]


def test_components_belong_to_the_urn() -> None:
    # RFC 8141 §2: "?+", "?=" and "#" are part of the URN, not sentence punctuation.
    assert found("x urn:example:foo-bar?+r?=q#somepart y") == ["urn:example:foo-bar?+r?=q#somepart"]
    assert found("x urn:example:a#, y") == ["urn:example:a#"]


def test_a_urn_inside_a_url_path() -> None:
    # The N2L resolver URL of RFC 8458's example: "urn.fi" is not "urn:", while the path segment
    # after "/" is a URN of its own, and urnkit reports it.
    text = "Available at http://urn.fi/URN:NBN:fi-fe201003181510."
    matches = list(find_urns(text))
    assert [(m.start, m.end, m.text) for m in matches] == [(27, 52, "URN:NBN:fi-fe201003181510")]


def test_urn_glued_to_a_word_or_scheme_is_not_found() -> None:
    for text in ("xurn:ab:c", "Xurn:ab:c", "9urn:ab:c", "a.urn:ab:c", "a-urn:ab:c", "a+urn:ab:c"):
        assert found(text) == [], text
    assert found("xurn:ab:c urn:ab:c") == ["urn:ab:c"]


@pytest.mark.parametrize("scheme", ["urn", "URN", "Urn", "uRN", "urN"])
def test_any_case_of_the_scheme(scheme: str) -> None:
    # RFC 8141 §3: the scheme is case-insensitive.
    assert found(f"({scheme}:example:a)") == [f"{scheme}:example:a"]


def test_delimiters_around_urns() -> None:
    text = (
        '<urn:ex:angle> [urn:ex:square] {urn:ex:curly} (urn:ex:round) "urn:ex:dq" '
        "'urn:ex:sq' |urn:ex:pipe| `urn:ex:tick`"
    )
    assert found(text) == [
        "urn:ex:angle",
        "urn:ex:square",
        "urn:ex:curly",
        "urn:ex:round",
        "urn:ex:dq",
        "urn:ex:sq",
        "urn:ex:pipe",
        "urn:ex:tick",
    ]


def test_line_ends_and_whitespace_end_urns() -> None:
    text = "urn:ex:a\nURN:EX:b\r\nurn:ex:c\turn:ex:d\u00a0urn:ex:e\u2028urn:ex:f"
    assert found(text) == ["urn:ex:a", "URN:EX:b", "urn:ex:c", "urn:ex:d", "urn:ex:e", "urn:ex:f"]


def test_non_ascii_ends_a_urn() -> None:
    # rfc2141bis §2.5.3: %x80-FF is excluded; RFC 8141 §2 requires it percent-encoded.
    assert found("urn:example:M\u00fcller") == ["urn:example:M"]
    assert found("urn:example:\u00e4") == []  # the NSS would be empty
    assert found("\u201curn:example:a\u201d") == ["urn:example:a"]  # typographic quotes


def test_invalid_candidates_yield_their_longest_valid_urn_or_nothing() -> None:
    assert found("urn:a:b urn:ab-:c urn:example: urn::x urn:") == []
    assert found("urn:ex:a%2 urn:ex:b%zz urn:ex:c%") == ["urn:ex:a", "urn:ex:b", "urn:ex:c"]
    assert found("urn:ex:a?b") == ["urn:ex:a"]
    # a second "urn:" inside a rejected candidate is still found
    assert found("urn:a:urn:ex:b") == ["urn:ex:b"]


def test_rfc2141_mode() -> None:
    text = "urn:a:b urn:ab-:c urn:ex:d/e urn:ex:f?+r urn:ex:g~h urn:urn:i urn:ex:j#k"
    # RFC 2141 §2: one-character NIDs and a final "-" are allowed, the NID "urn" is not, and
    # "/", "?", "#", "~", "&" are not URN characters.
    assert found(text, mode="rfc2141") == [
        "urn:a:b",
        "urn:ab-:c",
        "urn:ex:d",
        "urn:ex:f",
        "urn:ex:g",
        "urn:ex:j",
    ]
    assert found(text) == [
        "urn:ex:d/e",
        "urn:ex:f?+r",
        "urn:ex:g~h",
        "urn:urn:i",
        "urn:ex:j#k",
    ]
    for match in find_urns(text, mode="rfc2141"):
        assert is_valid(match.text, mode="rfc2141")
        assert str(match.urn.normalize()) == match.text.lower()


def test_matches_are_urnmatch_values() -> None:
    (match,) = find_urns("see urn:example:a.")
    assert match == URNMatch(4, 17, URN.parse("urn:example:a"))
    assert isinstance(match.urn, URN)
    assert match.urn.nss == "a"


# --- Properties ---------------------------------------------------------------------------------


def _check_matches(text: str, mode: Mode) -> list[URNMatch]:
    matches = list(find_urns(text, mode=mode))
    previous_end = 0
    for match in matches:
        assert previous_end <= match.start < match.end <= len(text)
        assert text[match.start : match.end] == str(match.urn)
        assert is_valid(str(match.urn), mode=mode)
        # a URN never begins glued to a preceding letter or digit
        assert match.start == 0 or text[match.start - 1] not in ALNUM
        previous_end = match.end
    return matches


@given(st.text())
def test_arbitrary_text_yields_only_valid_urns_at_their_offsets(text: str) -> None:
    _check_matches(text, "rfc8141")
    _check_matches(text, "rfc2141")


_urnish = st.lists(
    st.sampled_from([*"urnURN:-/?#%+=.,;!()'*_<>\"[] \n\u00e4", "2F", "ex", "urn:"])
).map("".join)


@given(_urnish)
def test_urn_like_text_yields_only_valid_urns_at_their_offsets(text: str) -> None:
    _check_matches(text, "rfc8141")
    _check_matches(text, "rfc2141")


_prose = st.lists(
    st.sampled_from([*string.ascii_letters, *" .,;:!?()[]<>\"'*_-/#%\n\u00e4\u2014", "urn:"]),
    max_size=20,
).map("".join)


@given(st.lists(st.one_of(urns(), rfc2141_urns(), _prose), max_size=8))
def test_urns_mixed_with_prose_yield_only_valid_urns_at_their_offsets(pieces: list[str]) -> None:
    text = "".join(pieces)
    _check_matches(text, "rfc8141")
    _check_matches(text, "rfc2141")


def _ends_alphanumeric(text: str) -> st.SearchStrategy[str]:
    """A URN that ends in a letter or digit, so no trailing punctuation can be trimmed off it."""
    return st.sampled_from(ALNUM).map(lambda last: text + last)


@pytest.mark.parametrize(("mode", "urn_texts"), [("rfc8141", urns()), ("rfc2141", rfc2141_urns())])
def test_urns_separated_by_spaces_are_all_found(
    mode: Mode, urn_texts: st.SearchStrategy[str]
) -> None:
    pieces = st.lists(st.tuples(_prose, urn_texts.flatmap(_ends_alphanumeric)), max_size=6)

    @given(pieces, _prose)
    def check(pairs: list[tuple[str, str]], tail: str) -> None:
        text, expected = "", []
        for prose, urn in pairs:
            text += prose + " "
            expected.append((len(text), len(text) + len(urn), urn))
            text += urn + " "
        text += tail
        matches = _check_matches(text, mode)
        spans = {(m.start, m.end, m.text) for m in matches}
        assert set(expected) <= spans

    check()
