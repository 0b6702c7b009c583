"""URN syntax against RFC 8141 §2 and RFC 2141 §2: generated URNs, mutations of them and arbitrary
text checked against the independent reference in ``reference.py``; a table of tricky inputs with
hand-computed verdicts and error positions; the RFCs' own examples."""

from __future__ import annotations

import itertools

import pytest
import reference
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import PCHAR, Parts
from strategies import mutated, respelled, texts, urns

from urnkit import URN, Mode, URNSyntaxError, diagnose, equivalent, is_valid

MODES: tuple[Mode, ...] = ("rfc8141", "rfc2141")
PROPERTY = settings(max_examples=500, deadline=None)


def _parts_of(urn: URN) -> Parts:
    return Parts(urn.scheme, urn.nid, urn.nss, urn.r_component, urn.q_component, urn.f_component)


def _check_against_reference(text: str, mode: Mode) -> None:
    """urnkit's verdict, error position and parts for ``text`` are the reference's."""
    expected = reference.error_position(text, mode)
    diagnosis = diagnose(text, mode=mode)
    assert is_valid(text, mode=mode) is (expected is None)
    assert is_valid(text, mode=mode) is (diagnosis is None)
    if expected is None:
        assert _parts_of(URN.parse(text, mode=mode)) == reference.parse(text, mode)
        return
    assert diagnosis is not None
    assert diagnosis.position == expected
    with pytest.raises(URNSyntaxError) as raised:
        URN.parse(text, mode=mode)
    assert raised.value.position == expected
    assert raised.value.diagnosis == diagnosis
    if text.isascii() and expected <= 60:  # shown from its start: the caret column is the position
        assert str(raised.value).splitlines()[-1] == "  " + " " * expected + "^"


# --- properties -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@PROPERTY
@given(data=st.data())
def test_generated_urns_parse_to_the_generated_parts(mode: Mode, data: st.DataObject) -> None:
    parts = data.draw(urns(mode))
    text = parts.text
    assert is_valid(text, mode=mode)
    assert diagnose(text, mode=mode) is None
    urn = URN.parse(text, mode=mode)
    assert _parts_of(urn) == parts
    assert urn.assigned_name == parts.assigned_name
    assert str(urn) == text
    # The other grammar accepts some of these ("urn:ab:c" is both) and rejects the rest.
    (other,) = set(MODES) - {mode}
    _check_against_reference(text, other)


@pytest.mark.parametrize("mode", MODES)
@PROPERTY
@given(text=mutated(texts("rfc8141") | texts("rfc2141")))
def test_mutated_urns_match_the_reference(mode: Mode, text: str) -> None:
    _check_against_reference(text, mode)


# Beginnings after which arbitrary text has a fair chance of going on to be (nearly) a URN.
_PREFIXES = ("", "urn:", "URN:ab:", "urn:ab:c?+", "urn:ab:c?=", "urn:ab:c#", "urn:ab:c%")
_NEAR_URN_CHARS = st.sampled_from(sorted(PCHAR | set("%/?#")))


@pytest.mark.parametrize("mode", MODES)
@PROPERTY
@given(
    text=st.text()
    | st.tuples(st.sampled_from(_PREFIXES), st.text(_NEAR_URN_CHARS) | st.text()).map("".join)
)
def test_arbitrary_text_matches_the_reference(mode: Mode, text: str) -> None:
    _check_against_reference(text, mode)


@pytest.mark.parametrize("mode", MODES)
@PROPERTY
@given(data=st.data())
def test_respelled_urns_are_equivalent(mode: Mode, data: st.DataObject) -> None:
    # RFC 8141 §3.1 / RFC 2141 §5: case of scheme, NID and percent-encodings, and the components,
    # do not matter.
    parts = data.draw(urns(mode))
    other = data.draw(respelled(parts, mode))
    assert equivalent(parts.text, other, mode=mode)
    first, second = URN.parse(parts.text, mode=mode), URN.parse(other, mode=mode)
    assert first == second
    assert hash(first) == hash(second)


_BRUTE_FORCE_ALPHABET = "a-:%0?+=#/"
_BRUTE_FORCE_SUFFIXES = [
    "".join(chars) for n in range(4) for chars in itertools.product(_BRUTE_FORCE_ALPHABET, repeat=n)
]


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_reference_completions_suffice(mode: Mode, data: st.DataObject) -> None:
    """A check of the proof in reference.py: whenever some short suffix over a representative
    alphabet completes a prefix, the reference's fixed set of completions finds one too."""
    text = data.draw(texts(mode) | mutated(texts(mode)))
    prefix = text[: data.draw(st.integers(0, len(text)))]
    brute_force = any(
        reference.parse(prefix + suffix, mode) is not None for suffix in _BRUTE_FORCE_SUFFIXES
    )
    assert reference.is_viable(prefix, mode) or not brute_force


# --- curated inputs ---------------------------------------------------------------------------

# (text, error position under RFC 8141, under RFC 2141); None means "a URN". Positions are the
# first character at which the text stops being the beginning of a URN (len(text) if it is one
# that ends too early), worked out by hand from the grammars.
CASES: list[tuple[str, int | None, int | None]] = [
    # RFC 8141 §2, RFC 2141 §2: "urn" ":" with "urn" in any case
    ("", 0, 0),
    ("ur", 2, 2),
    ("urn", 3, 3),
    ("urn:", 4, 4),
    ("urx:ab:c", 2, 2),
    ("URN:AB:C", None, None),
    ("uRn:ab:c", None, None),
    (" urn:ab:c", 0, 0),
    ("\uff55rn:ab:c", 0, 0),  # FULLWIDTH LATIN SMALL LETTER U
    ("urn\uff1aab:c", 3, 3),  # FULLWIDTH COLON
    ("urn/ab:c", 3, 3),
    # RFC 8141 §2: NID = (alphanum) 0*30(ldh) (alphanum);
    # RFC 2141 §2: <NID> ::= <let-num> [ 1,31<let-num-hyp> ]
    ("urn::ab", 4, 4),
    ("urn:-ab:c", 4, 4),
    ("urn:a:b", 5, None),
    ("urn:a1:b", None, None),
    ("urn:1a:b", None, None),
    ("urn:a-b:c", None, None),
    ("urn:ab-:c", 7, None),
    ("urn:ab", 6, 6),
    ("urn:ab-", 7, 7),
    ("urn:ab:", 7, 7),
    ("urn:a_b:c", 5, 5),
    ("urn:a.b:c", 5, 5),
    ("urn:a%41:c", 5, 5),
    ("urn:" + "a" * 32 + ":c", None, None),
    ("urn:" + "a" * 33 + ":c", 36, 36),
    ("urn:" + "a" * 30 + "-b:c", None, None),
    ("urn:" + "a" * 31 + "-:c", 35, None),  # "-" as the 32nd character
    ("urn:" + "a" * 31 + "-b:c", 35, 36),
    # RFC 8141 §2.1: no characters outside ASCII in NIDs (nor Unicode digits or case folding)
    ("urn:a\u0661:b", 5, 5),  # ARABIC-INDIC DIGIT ONE
    ("urn:a\u00b2:b", 5, 5),  # SUPERSCRIPT TWO
    ("urn:a\u212a:b", 5, 5),  # KELVIN SIGN, which case-folds to "k"
    ("urn:\u0131d:b", 4, 4),  # LATIN SMALL LETTER DOTLESS I, which upper-cases to "I"
    ("urn:a\u00e4:b", 5, 5),
    # RFC 2141 §2 (and draft-ietf-urnbis-rfc2141bis §2.1): the NID "urn" is reserved
    ("urn:urn:x", None, 7),
    ("URN:UrN:x", None, 7),
    ("urn:urn", 7, 7),
    ("urn:urnx:y", None, None),
    ("urn:urn-:x", 8, None),
    # RFC 8141 §2.2: NSS = pchar *(pchar / "/"); RFC 2141 §2: "/" must be encoded, no "&" or "~"
    ("urn:ab:/c", 7, 7),
    ("urn:ab:c/", None, 8),
    ("urn:ab:c//d", None, 8),
    ("urn:ab::", None, None),
    ("urn:ab:a&b~c/d", None, 8),
    ("urn:ab:a~", None, 8),
    ("urn:ab:a(b)+c,d-e.f:g=h@i;j$k_l!m*n'o", None, None),
    ("urn:ab:c[", 8, 8),
    ("urn:ab:c]", 8, 8),
    ('urn:ab:c"', 8, 8),
    ("urn:ab:c<>", 8, 8),
    ("urn:ab:c\\", 8, 8),
    ("urn:ab:c^", 8, 8),
    ("urn:ab:c`", 8, 8),
    ("urn:ab:c{|}", 8, 8),
    ("urn:ab:#", 7, 7),
    ("urn:ab:?+r", 7, 7),
    # RFC 3986 §2.1 (RFC 8141 §2), RFC 2141 §2: "%" HEXDIG HEXDIG
    ("urn:ab:%zz", 8, 8),
    ("urn:ab:%4", 9, 9),
    ("urn:ab:%4g", 9, 9),
    ("urn:ab:c%", 9, 9),
    ("urn:ab:%%41", 8, 8),
    ("urn:ab:%\u0661\u0661", 8, 8),  # not hex digits, although \d would match them
    ("urn:ab:%c3%A4%Ff", None, None),
    # RFC 8141 §2 and §2.2, RFC 2141 §2: nothing outside ASCII, no spaces or control characters
    ("urn:ab:\u00e4", 7, 7),
    ("urn:ab:\u0661", 7, 7),
    ("urn:ab:c\u212a", 8, 8),
    ("urn:ab:c\u00a0", 8, 8),
    ("urn:ab:c\u200b", 8, 8),
    ("urn:ab:c d", 8, 8),
    ("urn:ab:c\td", 8, 8),
    ("urn:ab:c\n", 8, 8),  # a trailing newline, which "$" in a regular expression lets through
    ("urn:ab:c\r\n", 8, 8),
    ("urn:ab:c\x00", 8, 8),
    ("urn:ab:c\x7f", 8, 8),
    ("urn:ab:c\udcff", 8, 8),  # a lone surrogate (surrogateescape's byte 0xFF)
    # RFC 8141 §2: a "?" after the NSS not followed by "+" or "=" is a syntax error
    ("urn:ab:c?", 9, 8),
    ("urn:ab:c?x", 9, 8),
    ("urn:ab:c?#", 9, 8),
    ("urn:ab:c??=x", 9, 8),
    # RFC 8141 §2.3.1: r-component = pchar *( pchar / "/" / "?" )
    ("urn:ab:c?+", 10, 8),
    ("urn:ab:c?+?=x", 10, 8),
    ("urn:ab:c?+/a", 10, 8),
    ("urn:ab:c?+#", 10, 8),
    ("urn:ab:c?+a?", None, 8),
    ("urn:ab:c?+a?+b", None, 8),
    ("urn:ab:c?+a/b", None, 8),
    ("urn:ab:c?+a b", 11, 8),
    # RFC 8141 §2.3.1: "The r-component ends with a '?=' sequence", so it has no "?=" inside
    ("urn:ab:c?+a?=", 13, 8),
    ("urn:ab:c?+a?=?", 13, 8),
    ("urn:ab:c?+a?=b?+c", None, 8),
    ("urn:ab:c?+a??=b", None, 8),
    # RFC 8141 §2.3.2: q-component = pchar *( pchar / "/" / "?" ), ending only at "#"
    ("urn:ab:c?=", 10, 8),
    ("urn:ab:c?=?+x", 10, 8),
    ("urn:ab:c?=/a", 10, 8),
    ("urn:ab:c?=a?=b", None, 8),
    ("urn:ab:c?=a?+b", None, 8),
    ("urn:ab:c?=a?+", None, 8),
    ("urn:ab:c?=a%2", 13, 8),
    # RFC 8141 §2.3.3: f-component = fragment = *( pchar / "/" / "?" )
    ("urn:ab:c#", None, 8),
    ("urn:ab:c##", 9, 8),
    ("urn:ab:c#a#", 10, 8),
    ("urn:ab:c#/?", None, 8),
    ("urn:ab:c#?+a?=b", None, 8),
    ("urn:ab:c#%4", 11, 8),
    ("urn:ab:c#f ", 10, 8),
    ("urn:ab:c?+r?=q#f", None, 8),
    ("urn:ab:c?+r#f?=q", None, 8),
    ("urn:ab:c?=q?+r#", None, 8),
]


@pytest.mark.parametrize(("text", "rfc8141", "rfc2141"), CASES)
def test_curated_verdicts_and_positions(
    text: str, rfc8141: int | None, rfc2141: int | None
) -> None:
    for mode, expected in zip(MODES, (rfc8141, rfc2141), strict=True):
        assert is_valid(text, mode=mode) is (expected is None), mode
        diagnosis = diagnose(text, mode=mode)
        assert (None if diagnosis is None else diagnosis.position) == expected, mode
        assert reference.error_position(text, mode) == expected, mode  # the reference, too


# Rule names of RFC 8141 §2, RFC 3986 §2.1 and RFC 2141 §2 that a diagnosis may cite.
RULES = {
    "namestring",
    "assigned-name",
    "NID",
    "NSS",
    "rq-components",
    "r-component",
    "q-component",
    "f-component",
    "pct-encoded",
    "URN",
}
INVALID: list[tuple[str, Mode, int]] = [
    (text, mode, position)
    for text, *positions in CASES
    for mode, position in zip(MODES, positions, strict=True)
    if position is not None
]


@pytest.mark.parametrize(("text", "mode", "position"), INVALID)
def test_syntax_error_attributes(text: str, mode: Mode, position: int) -> None:
    with pytest.raises(URNSyntaxError) as raised:
        URN.parse(text, mode=mode)
    error = raised.value
    assert isinstance(error, ValueError)
    assert error.position == position
    assert error.reason.strip()
    assert error.rule in RULES
    assert error.section.startswith("RFC ")
    assert error.diagnosis == diagnose(text, mode=mode)
    message = str(error)
    assert f"position {position}" in message
    if text.isascii():  # one column per character: the caret sits under the position
        assert message.splitlines()[-1] == "  " + " " * position + "^"


# The ABNF rule each of these breaks is unambiguous: the offending character can only belong to it.
@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("urx:ab:c", "assigned-name"),  # RFC 8141 §2
        ("urn:ab-:c", "NID"),  # RFC 8141 §2
        ("urn:a\u212a:b", "NID"),  # RFC 8141 §2.1
        ("urn:ab:/c", "NSS"),  # RFC 8141 §2.2
        ("urn:ab:c d", "NSS"),  # RFC 8141 §2.2
        ("urn:ab:c?x", "rq-components"),  # RFC 8141 §2
        ("urn:ab:c?+?=x", "r-component"),  # RFC 8141 §2.3.1
        ("urn:ab:c?=?+x", "q-component"),  # RFC 8141 §2.3.2
        ("urn:ab:c##", "f-component"),  # RFC 8141 §2.3.3
        ("urn:ab:%zz", "pct-encoded"),  # RFC 3986 §2.1
    ],
)
def test_syntax_error_rule(text: str, rule: str) -> None:
    diagnosis = diagnose(text)
    assert diagnosis is not None
    assert diagnosis.rule == rule


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("urx:ab:c", "URN"),  # RFC 2141 §2: <URN> ::= "urn:" <NID> ":" <NSS>
        ("urn:-a:c", "NID"),  # RFC 2141 §2: <NID> ::= <let-num> [ 1,31<let-num-hyp> ]
        ("urn:ab:c/d", "NSS"),  # RFC 2141 §2.3.2: "/" is reserved
    ],
)
def test_rfc2141_syntax_error_rule(text: str, rule: str) -> None:
    diagnosis = diagnose(text, mode="rfc2141")
    assert diagnosis is not None
    assert diagnosis.rule == rule


# RFC 8141 URNs whose parts the grammar decides in a way that is easy to get wrong.
@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("URN:AB:C", Parts("URN", "AB", "C")),  # RFC 8141 §2, §2.1: kept as written
        ("urn:urn:x", Parts("urn", "urn", "x")),  # RFC 8141 §2: no reserved NID in the ABNF
        ("urn:ab::", Parts("urn", "ab", ":")),  # RFC 8141 §2.2
        ("urn:ab:%00", Parts("urn", "ab", "%00")),  # RFC 3986 §2.1: any octet, even 0
        ("urn:ab:c/?+r", Parts("urn", "ab", "c/", "r")),  # RFC 8141 §2.2
        ("urn:ab:c?+a?", Parts("urn", "ab", "c", "a?")),  # RFC 8141 §2.3.1
        ("urn:ab:c?+a?+b", Parts("urn", "ab", "c", "a?+b")),  # RFC 8141 §2.3.1
        ("urn:ab:c?+a??=b", Parts("urn", "ab", "c", "a?", "b")),  # RFC 8141 §2.3.1
        ("urn:ab:c?+a?=b?+c", Parts("urn", "ab", "c", "a", "b?+c")),  # RFC 8141 §2.3.1
        ("urn:ab:c?=a?=b", Parts("urn", "ab", "c", None, "a?=b")),  # RFC 8141 §2.3.2
        ("urn:ab:c?=q?+r#", Parts("urn", "ab", "c", None, "q?+r", "")),  # RFC 8141 §2.3.2
        ("urn:ab:c#", Parts("urn", "ab", "c", None, None, "")),  # RFC 8141 §2.3.3
        ("urn:ab:c?+r#f?=q", Parts("urn", "ab", "c", "r", None, "f?=q")),  # RFC 8141 §2.3.3
    ],
)
def test_curated_parts(text: str, parts: Parts) -> None:
    urn = URN.parse(text)
    assert _parts_of(urn) == parts
    assert urn.assigned_name == parts.assigned_name
    assert str(urn) == text


# --- the RFCs' own examples -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        # RFC 8141 §1
        ("urn:example:foo", Parts("urn", "example", "foo")),
        # RFC 8141 §2.2
        ("urn:example:1/406/47452/2", Parts("urn", "example", "1/406/47452/2")),
        # RFC 8141 §2.3.1
        (
            "urn:example:foo-bar-baz-qux?+CCResolve:cc=uk",
            Parts("urn", "example", "foo-bar-baz-qux", "CCResolve:cc=uk"),
        ),
        # RFC 8141 §2.3.2 (the example is broken across two lines there)
        (
            "urn:example:weather?=op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z",
            Parts(
                "urn",
                "example",
                "weather",
                None,
                "op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z",
            ),
        ),
        # RFC 8141 §2.3.3
        (
            "urn:example:foo-bar-baz-qux#somepart",
            Parts("urn", "example", "foo-bar-baz-qux", None, None, "somepart"),
        ),
        # RFC 8141 §3.2
        ("urn:example:a123,z456?+abc", Parts("urn", "example", "a123,z456", "abc")),
        ("urn:example:a123,z456?=xyz", Parts("urn", "example", "a123,z456", None, "xyz")),
        ("urn:example:a123,z456#789", Parts("urn", "example", "a123,z456", None, None, "789")),
        # RFC 8141 §5: the NSS is "apple:pear:plum:cherry" as a whole
        ("urn:example:apple:pear:plum:cherry", Parts("urn", "example", "apple:pear:plum:cherry")),
    ],
)
def test_rfc8141_examples_parse(text: str, parts: Parts) -> None:
    urn = URN.parse(text)
    assert _parts_of(urn) == parts
    assert str(urn) == text


# RFC 8141 §3.2, each URN with a label for its equivalence class. The RFC states: the first six
# are equivalent; "/foo", "/bar", "/baz" are equivalent neither to each other nor to the first
# six; the two "%2C" ones only to each other; "A123" and "Z456" and the Cyrillic one not to the
# first three. Pairs the RFC does not mention are not equivalent by the §3.1 procedure.
RFC8141_CLASSES = {
    "urn:example:a123,z456": "a123,z456",
    "URN:example:a123,z456": "a123,z456",
    "urn:EXAMPLE:a123,z456": "a123,z456",
    "urn:example:a123,z456?+abc": "a123,z456",
    "urn:example:a123,z456?=xyz": "a123,z456",
    "urn:example:a123,z456#789": "a123,z456",
    "urn:example:a123,z456/foo": "/foo",
    "urn:example:a123,z456/bar": "/bar",
    "urn:example:a123,z456/baz": "/baz",
    "urn:example:a123%2Cz456": "%2C",
    "URN:EXAMPLE:a123%2cz456": "%2C",
    "urn:example:A123,z456": "A123",
    "urn:example:a123,Z456": "Z456",
    "urn:example:%D0%B0123,z456": "cyrillic a",
}
# RFC 2141 §6: "URNs 1, 2, and 3 are all lexically equivalent. URN 4 is not lexically equivalent
# any of the other URNs of the above set. URNs 5 and 6 are only lexically equivalent to each
# other."
RFC2141_CLASSES = {
    "URN:foo:a123,456": "1-3",
    "urn:foo:a123,456": "1-3",
    "urn:FOO:a123,456": "1-3",
    "urn:foo:A123,456": "4",
    "urn:foo:a123%2C456": "5-6",
    "URN:FOO:a123%2c456": "5-6",
}
EQUIVALENCE_PAIRS = [
    (a, b, mode, classes[a] == classes[b])
    for mode, classes in (("rfc8141", RFC8141_CLASSES), ("rfc2141", RFC2141_CLASSES))
    for a, b in itertools.combinations(classes, 2)
]


@pytest.mark.parametrize(("a", "b", "mode", "same"), EQUIVALENCE_PAIRS)
def test_rfc_equivalence_examples(a: str, b: str, mode: Mode, same: bool) -> None:
    assert equivalent(a, b, mode=mode) is same
    first, second = URN.parse(a, mode=mode), URN.parse(b, mode=mode)
    assert (first == second) is same
    if same:
        assert hash(first) == hash(second)


@pytest.mark.parametrize("mode", MODES)
def test_long_invalid_input_is_rejected_without_backtracking(mode: Mode) -> None:
    # RFC 8141 §2 / RFC 2141 §2: a long NSS of literal runs and escapes followed by a character
    # outside every part. An expression with nested, non-possessive repetition backtracks
    # exponentially here and never returns; the unrolled, possessive one is linear.
    text = "urn:example:" + "a%41" * 5_000 + " "
    assert not is_valid(text, mode=mode)
    diagnosis = diagnose(text, mode=mode)
    assert diagnosis is not None
    assert diagnosis.position == len(text) - 1
