"""Building URNs from native Unicode strings (RFC 8141 §2.2, rfc2141bis §2.2), decoding, and
display for humans (RFC 8141 §4.4, rfc2141bis §4)."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from urn_strategies import PCHAR, nids, upper_percent, urns

import urnkit
from urnkit import URN, URNSyntaxError, decode, display, encode_nss, is_valid

# --- Building (RFC 8141 §2.2) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("native", "nss"),
    [
        ("a123,z456", "a123,z456"),  # pchar stays literal (rfc2141bis §2.5.2: MUST NOT encode)
        ("-._~!$&'()*+,;=:@", "-._~!$&'()*+,;=:@"),  # every non-alphanumeric pchar
        ("1/406/47452/2", "1/406/47452/2"),  # RFC 8141 §2.2: "/" is allowed inside the NSS
        ("/a", "%2Fa"),  # NSS = pchar *(pchar / "/"): a leading "/" is encoded
        ("a?b#c", "a%3Fb%23c"),  # RFC 8141 §2.2: "?" and "#" are not in the NSS
        ("[a]", "%5Ba%5D"),  # RFC 8141 §2.2: "[" and "]" neither
        ("100%", "100%25"),  # rfc2141bis §2.5.2: a literal "%" is "%25"
        ("%41", "%2541"),  # ... even where it looks like an escape
        ('a b"<>\\^`{|}', "a%20b%22%3C%3E%5C%5E%60%7B%7C%7D"),  # rfc2141bis §2.5.3 excluded
        ("\x00\x1f\x7f", "%00%1F%7F"),  # control characters
        ("M\u00fcller", "M%C3%BCller"),  # RFC 8141 §2.2: UTF-8, then percent-encoded
        ("\u20ac", "%E2%82%AC"),  # three octets
        ("\U0001f600", "%F0%9F%98%80"),  # four octets
        ("\u0430123,z456", "%D0%B0123,z456"),  # RFC 8141 §3.2 sixth example
    ],
)
def test_encode_nss(native: str, nss: str) -> None:
    assert encode_nss(native) == nss
    assert decode(nss) == native


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        # the docstring's own example
        (
            ("example", "M\u00fcller 1/2", None, "lang=fi", None),
            "urn:example:M%C3%BCller%201/2?=lang=fi",
        ),
        # RFC 8141 §2.3.1: a "?=" inside an r-component would end it, so its "?" is encoded;
        # a "?" followed by anything else may stay
        (("ex", "a", "x?=y?z", None, None), "urn:ex:a?+x%3F=y?z"),
        (("ex", "a", "?=y", None, None), "urn:ex:a?+%3F=y"),
        (("ex", "a", "x?", "=y", None), "urn:ex:a?+x??==y"),
        # RFC 8141 §2: r- and q-components begin with a pchar: a leading "/" or "?" is encoded
        (("ex", "a", "/r", "?q", None), "urn:ex:a?+%2Fr?=%3Fq"),
        # RFC 8141 §2.3.2: "?=", "?+", "/" and "?" are data inside a q-component
        (("ex", "a", None, "x?=y?+z/w", None), "urn:ex:a?=x?=y?+z/w"),
        # RFC 8141 §2.3.3: f-component = fragment, which may begin with "/" or "?" or be empty
        (("ex", "a", None, None, "/?x"), "urn:ex:a#/?x"),
        (("ex", "a", None, None, ""), "urn:ex:a#"),
        # "#" and "%" are never literal in any part
        (("ex", "#%", "#%", "#%", "#%"), "urn:ex:%23%25?+%23%25?=%23%25#%23%25"),
        # non-ASCII in components: RFC 8141 §2.3.1-§2.3.3 "MUST be percent-encoded"
        (("ex", "a", "\u00e4", "\u00f6", "\u00fc"), "urn:ex:a?+%C3%A4?=%C3%B6#%C3%BC"),
    ],
)
def test_build(arguments: tuple[str, str, str | None, str | None, str | None], text: str) -> None:
    nid, nss, r, q, f = arguments
    urn = URN.build(nid, nss, r, q, f)
    assert str(urn) == text
    assert (urn.r_component is None) is (r is None)
    assert (urn.q_component is None) is (q is None)
    assert (urn.f_component is None) is (f is None)


@pytest.mark.parametrize(
    "arguments",
    [
        ("a", "x", None, None, None),  # RFC 8141 §2: NID of two characters at least
        ("ab-", "x", None, None, None),  # ... not ending in "-"
        ("\u00e4b", "x", None, None, None),  # RFC 8141 §2.1: no encoding for the NID
        ("ex", "", None, None, None),  # the NSS is never empty
        ("ex", "a", "", None, None),  # nor the r-component
        ("ex", "a", None, "", None),  # nor the q-component
    ],
)
def test_build_refuses_what_cannot_be_a_urn(
    arguments: tuple[str, str, str | None, str | None, str | None],
) -> None:
    with pytest.raises(URNSyntaxError):
        URN.build(*arguments)


_non_empty = st.text(min_size=1)


@given(
    nids(),
    _non_empty,
    st.none() | _non_empty,
    st.none() | _non_empty,
    st.none() | st.text(),
)
def test_build_always_gives_a_urn_whose_parts_decode_to_the_input(
    nid: str, nss: str, r: str | None, q: str | None, f: str | None
) -> None:
    # RFC 8141 §2.2 / rfc2141bis §2.2: any native name translates into a valid URN.
    urn = URN.build(nid, nss, r_component=r, q_component=q, f_component=f)
    text = str(urn)
    assert is_valid(text)
    assert text.isascii()
    parsed = URN.parse(text)
    assert parsed.nid == nid
    assert decode(parsed.nss) == nss
    for native, written in (
        (r, parsed.r_component),
        (q, parsed.q_component),
        (f, parsed.f_component),
    ):
        assert (written is None) is (native is None)
        if native is not None and written is not None:
            assert decode(written) == native
    # RFC 3986 §2.1: producers SHOULD use upper-case hex digits.
    assert upper_percent(text) == text


@given(st.text(alphabet=PCHAR + "/", min_size=1).filter(lambda s: s[0] != "/"))
def test_pchar_is_never_encoded(native: str) -> None:
    # rfc2141bis §2.5.2: "a character MUST NOT be percent-encoded if [it] is not a reserved
    # character"; RFC 8141 §2.2 keeps "/" literal after the first character.
    assert encode_nss(native) == native
    built = URN.build("ex", native, native, native, native)
    assert str(built) == f"urn:ex:{native}?+{native}?={native}#{native}"


# --- encode_nss and decode ----------------------------------------------------------------------


@given(st.text())
def test_decode_inverts_encode_nss(native: str) -> None:
    encoded = encode_nss(native)
    assert decode(encoded) == native
    assert encoded.isascii()
    if native:
        assert is_valid(f"urn:example:{encoded}")


def test_decode() -> None:
    assert decode("a%2Fb%c3%a4%41") == "a/b\u00e4A"  # hex digits in either case
    assert decode("no escapes/here") == "no escapes/here"
    assert decode("%25C3%25A4") == "%C3%A4"  # decoded once only


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("%FF", 0),
        ("ab%41%FF", 5),  # the position of the first octet that is not UTF-8
        ("x%C3", 1),  # truncated sequence
        ("%C0%80", 0),  # overlong encoding of NUL
        ("%ED%A0%80", 0),  # a surrogate
    ],
)
def test_decode_rejects_octets_that_are_not_utf8(text: str, position: int) -> None:
    with pytest.raises(ValueError, match=f"position {position}\\b"):
        decode(text)


# --- Display (RFC 8141 §4.4, rfc2141bis §4) -----------------------------------------------------


def _pct(text: str) -> str:
    return "".join(f"%{octet:02X}" for octet in text.encode("utf-8"))


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("urn:example:M%C3%BCller", "urn:example:M\u00fcller"),
        ("urn:example:m%c3%bcller", "urn:example:m\u00fcller"),  # lower-case hex is decoded
        ("urn:example:%E2%82%AC%F0%9F%98%80", "urn:example:\u20ac\U0001f600"),
        ("urn:example:%D0%B0123,z456", "urn:example:\u0430123,z456"),  # RFC 8141 §3.2
        # every part of the URN is displayed, components included (RFC 8141 §4.4)
        ("URN:EX:%C3%A4?+%C3%A4?=%C3%A4#%C3%A4", "URN:EX:\u00e4?+\u00e4?=\u00e4#\u00e4"),
        # escapes of ASCII characters stay: they may be delimiters (rfc2141bis §4 Note)
        ("urn:ex:a%2Fb%3F%23%25%41%2f%20", "urn:ex:a%2Fb%3F%23%25%41%2f%20"),
        ("urn:ex:%C3%A4%2F%C3%B6", "urn:ex:\u00e4%2F\u00f6"),
        ("urn:ex:%25C3%25A4", "urn:ex:%25C3%25A4"),  # "%25" is a literal "%", not an escape
    ],
)
def test_display(text: str, shown: str) -> None:
    assert display(text) == shown
    assert urnkit.display(text) == shown
    assert URN.parse(text).display() == shown


@pytest.mark.parametrize(
    "octets",
    [
        "%C0%80",  # overlong NUL
        "%C1%BF",  # overlong "?"
        "%E0%80%AF",  # overlong "/"
        "%F0%80%80%AF",  # overlong "/"
        "%ED%A0%80",  # surrogate U+D800
        "%ED%BF%BF",  # surrogate U+DFFF
        "%C3",  # truncated
        "%E2%82",  # truncated
        "%F0%9F%98",  # truncated
        "%80",  # stray continuation byte
        "%BF%BF",  # stray continuation bytes
        "%F4%90%80%80",  # beyond U+10FFFF
        "%F5%80%80%80",  # not a lead byte
        "%FE",
        "%FF",
        "%C3%41",  # a lead byte followed by an ASCII escape
        "%C3%C3",  # a lead byte followed by a lead byte
    ],
)
def test_display_keeps_invalid_utf8_encoded(octets: str) -> None:
    text = f"urn:ex:a{octets}b"
    assert display(text) == text


def test_display_decodes_the_valid_parts_around_invalid_octets() -> None:
    assert display("urn:ex:%C3%C3%A4%80%C3%B6%E2%82") == "urn:ex:%C3\u00e4%80\u00f6%E2%82"


@pytest.mark.parametrize(
    "character",
    [
        "\x85",  # C1 control NEXT LINE
        "\x9b",  # C1 control CSI
        "\u00a0",  # NO-BREAK SPACE
        "\u00ad",  # SOFT HYPHEN
        "\u034f",  # COMBINING GRAPHEME JOINER
        "\u061c",  # ARABIC LETTER MARK
        "\u115f",  # HANGUL CHOSEONG FILLER
        "\u1680",  # OGHAM SPACE MARK
        "\u180e",  # MONGOLIAN VOWEL SEPARATOR
        "\u2000",  # EN QUAD
        "\u200b",  # ZERO WIDTH SPACE
        "\u200d",  # ZERO WIDTH JOINER
        "\u200e",  # LEFT-TO-RIGHT MARK
        "\u2028",  # LINE SEPARATOR
        "\u2029",  # PARAGRAPH SEPARATOR
        "\u202e",  # RIGHT-TO-LEFT OVERRIDE
        "\u202f",  # NARROW NO-BREAK SPACE
        "\u2060",  # WORD JOINER
        "\u2066",  # LEFT-TO-RIGHT ISOLATE
        "\u3000",  # IDEOGRAPHIC SPACE
        "\u3164",  # HANGUL FILLER
        "\ue000",  # private use
        "\ufe00",  # VARIATION SELECTOR-1
        "\ufe0f",  # VARIATION SELECTOR-16
        "\ufeff",  # ZERO WIDTH NO-BREAK SPACE (BOM)
        "\uffa0",  # HALFWIDTH HANGUL FILLER
        "\ufff9",  # INTERLINEAR ANNOTATION ANCHOR
        "\uffff",  # noncharacter
        "\U0001d173",  # MUSICAL SYMBOL BEGIN BEAM
        "\U000e0001",  # LANGUAGE TAG
        "\U000e0041",  # TAG LATIN CAPITAL LETTER A
        "\U000e0100",  # VARIATION SELECTOR-17
        "\U000f0000",  # supplementary private use
        "\U0010fffd",  # supplementary private use
        "\u0378",  # unassigned
    ],
)
def test_display_keeps_controls_and_invisible_characters_encoded(character: str) -> None:
    # RFC 8141 §4.4 allows decoding for humans; decoding an invisible character would show two
    # different URNs the same way.
    text = f"urn:ex:a{_pct(character)}b"
    assert display(text) == text
    # ... while a visible character next to it is still shown
    assert display(f"urn:ex:{_pct(character)}%C3%A4") == f"urn:ex:{_pct(character)}\u00e4"


# Letters that Unicode marks Default_Ignorable_Code_Point: they render as nothing.
_INVISIBLE_LETTERS = {"\u115f", "\u1160", "\u3164", "\uffa0"}
_letters = st.characters(categories=["Lu", "Ll", "Lt", "Lm", "Lo"], min_codepoint=0x80).filter(
    lambda ch: (
        ch not in _INVISIBLE_LETTERS
        and not any(c < "\x80" for c in unicodedata.normalize("NFKC", ch))
    )
)


@pytest.mark.parametrize(
    "escaped",
    [
        "%EF%BC%8F",  # U+FF0F FULLWIDTH SOLIDUS: NFKC "/"
        "%EF%BC%83",  # U+FF03 FULLWIDTH NUMBER SIGN: NFKC "#"
        "%EF%BC%9F",  # U+FF1F FULLWIDTH QUESTION MARK: NFKC "?"
        "%E2%88%95",  # U+2215 DIVISION SLASH
        "%E2%81%84",  # U+2044 FRACTION SLASH
        "%E2%88%B6",  # U+2236 RATIO, a ":" look-alike
        "%E2%A0%80",  # U+2800 BRAILLE PATTERN BLANK renders as nothing
        "%C2%AA",  # U+00AA FEMININE ORDINAL INDICATOR: NFKC "a"
        "%EF%BD%81",  # U+FF41 FULLWIDTH LATIN SMALL LETTER A: NFKC "a"
    ],
)
def test_display_keeps_look_alikes_of_ascii_encoded(escaped: str) -> None:
    # RFC 8141 §4.4: display for humans must not make one URN look like another.
    assert display(f"urn:ex:a{escaped}b%C3%A4") == f"urn:ex:a{escaped}b\u00e4"


@given(st.text(_letters, min_size=1))
def test_display_shows_encoded_non_ascii_letters_as_themselves(letters: str) -> None:
    assert display(encode_nss(letters)) == letters
    assert URN.build("example", letters).display() == f"urn:example:{letters}"


@given(st.text(st.one_of(_letters, st.sampled_from(PCHAR)), min_size=1).map(lambda s: "x" + s))
def test_display_of_a_built_urn_is_the_native_name(native: str) -> None:
    assert URN.build("example", native).display() == f"urn:example:{native}"


_ASCII_ESCAPE = re.compile(r"%[0-7][0-9A-Fa-f]")


def _reencode(text: str) -> str:
    return "".join(ch if ch.isascii() else _pct(ch) for ch in text)


_octet_escapes = st.tuples(st.integers(0, 255), st.booleans()).map(
    lambda pair: f"%{pair[0]:02x}" if pair[1] else f"%{pair[0]:02X}"
)
_char_escapes = st.characters(codec="utf-8").map(_pct)
_escape_soup = st.lists(
    st.one_of(_octet_escapes, _char_escapes, st.sampled_from(PCHAR + "/?#%"))
).map("".join)


@given(_escape_soup)
def test_display_never_changes_ascii_escapes_and_loses_nothing(text: str) -> None:
    shown = display(text)
    # ASCII escapes come out exactly as they went in, in order (RFC 8141 §4.4, rfc2141bis §4).
    assert _ASCII_ESCAPE.findall(shown) == _ASCII_ESCAPE.findall(text)
    # Only non-ASCII characters were decoded, so encoding them again gives the input back.
    assert upper_percent(_reencode(shown)) == upper_percent(text)
    # And each decoded character is visible: no control, format, separator, private-use,
    # surrogate or unassigned character, and no variation selector.
    for ch in shown:
        if not ch.isascii():
            assert unicodedata.category(ch)[0] not in "CZ", repr(ch)
            assert not "\ufe00" <= ch <= "\ufe0f"  # variation selectors
            assert not "\U000e0000" <= ch <= "\U000e0fff"  # tags, more variation selectors


@given(urns())
def test_display_of_any_urn_decodes_only_non_ascii_escapes(text: str) -> None:
    # The strategy's escapes are of random octets: those of ASCII characters never change.
    shown = display(text)
    assert _ASCII_ESCAPE.findall(shown) == _ASCII_ESCAPE.findall(text)
    assert upper_percent(_reencode(shown)) == upper_percent(text)
