"""From native Unicode strings to URN parts and back, and URNs for human eyes.

RFC 8141 §2.2 (and rfc2141bis §2.2): a name with characters outside a part's repertoire is
translated by encoding it as UTF-8 and percent-encoding every octet outside the repertoire.
RFC 8141 §4.4 (rfc2141bis §4): an application may display percent-encoded non-ASCII characters
as the characters themselves, for humans only.

>>> encode_nss("Müller/2024")
'M%C3%BCller/2024'
>>> decode("M%C3%BCller/2024")
'Müller/2024'
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from urnkit.syntax import PCHAR

Part = Literal["NSS", "r-component", "q-component", "f-component"]

# Characters each part may hold literally anywhere (RFC 8141 §2); "%" is never literal in a
# native string, so it is always encoded.
_REPERTOIRE: dict[Part, frozenset[str]] = {
    "NSS": PCHAR | {"/"},
    "r-component": PCHAR | {"/", "?"},
    "q-component": PCHAR | {"/", "?"},
    "f-component": PCHAR | {"/", "?"},
}


def _escape(ch: str) -> str:
    return "".join(f"%{octet:02X}" for octet in ch.encode("utf-8"))


def encode_part(native: str, part: Part) -> str:
    """Percent-encode a native string so that it is exactly one ``part`` of a URN.

    Besides the repertoire, the grammar's positional rules are kept: the NSS, r-component and
    q-component begin with a pchar (a leading "/" or "?" is encoded), and a "?" that would end an
    r-component by forming "?=" is encoded (RFC 8141 §2.3.1).

    >>> encode_part("?=x", "r-component"), encode_part("/a b", "NSS")
    ('%3F=x', '%2Fa%20b')
    """
    allowed = _REPERTOIRE[part]
    out = []
    for i, ch in enumerate(native):
        literal = ch in allowed
        leading = i == 0 and part != "f-component" and ch in "/?"
        if leading or (part == "r-component" and native.startswith("?=", i)):
            literal = False
        out.append(ch if literal else _escape(ch))
    return "".join(out)


def encode_nss(native: str) -> str:
    """Encode a native name as an NSS (RFC 8141 §2.2).

    >>> encode_nss("a#b?c%d")
    'a%23b%3Fc%25d'
    """
    return encode_part(native, "NSS")


_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def decode(text: str) -> str:
    """Undo percent-encoding: every ``%XX`` run is read as UTF-8 octets.

    Raises ValueError (naming the position) when the octets are not UTF-8.

    >>> decode("a%2Fb%C3%A4")
    'a/bä'
    """

    def octets(match: re.Match[str]) -> str:
        raw = bytes.fromhex(match.group().replace("%", ""))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            position = match.start() + 3 * error.start
            raise ValueError(
                f"the percent-encoded octets at position {position} are not UTF-8: {match.group()}"
            ) from None

    return _ESCAPES.sub(octets, text)


# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt, Unicode 15.1) that
# are not already in general category Cf: characters that render as nothing.
_DEFAULT_IGNORABLE = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


# Characters that render blank though Unicode does not call them ignorable (BRAILLE PATTERN
# BLANK, MUSICAL SYMBOL NULL NOTEHEAD), and look-alikes of the delimiters "/", ":", "?" that have
# no compatibility mapping to them (FRACTION SLASH, DIVISION SLASH, BIG SOLIDUS, BOX DRAWINGS
# LIGHT DIAGONAL, RATIO, MODIFIER LETTER COLON, ARMENIAN FULL STOP, HEBREW PUNCTUATION SOF PASUQ,
# COMBINING LONG SOLIDUS OVERLAY, COMBINING REVERSE SOLIDUS OVERLAY, REVERSED QUESTION MARK).
_MISLEADING = frozenset(
    "\u2800\U0001d159\u2044\u2215\u29f8\u2571\u2236\ua789\u0589\u05c3\u0338\u20e5\u2e2e"
)


def _displayable(ch: str) -> bool:
    """Non-ASCII and visible, and not mistakable for ASCII: no control, format, separator,
    unassigned or default-ignorable character, nothing whose compatibility form (NFKC) holds
    ASCII (the fullwidth solidus, the feminine ordinal "a", …), no known blank or delimiter
    look-alike."""
    if ch < "\x80" or unicodedata.category(ch)[0] in "CZ" or ch in _MISLEADING:
        return False
    if any(c < "\x80" for c in unicodedata.normalize("NFKC", ch)):
        return False
    code = ord(ch)
    return not any(low <= code <= high for low, high in _DEFAULT_IGNORABLE)


def _display_run(run: str) -> str:
    """Decode the well-formed UTF-8 sequences of displayable characters in a run of escapes."""
    octets = bytes.fromhex(run.replace("%", ""))
    out, i = [], 0
    while i < len(octets):
        lead = octets[i]
        size = (
            2
            if 0xC2 <= lead <= 0xDF
            else 3
            if 0xE0 <= lead <= 0xEF
            else 4
            if 0xF0 <= lead <= 0xF4
            else 0
        )
        if size:
            try:
                ch = octets[i : i + size].decode("utf-8")
            except UnicodeDecodeError:
                ch = ""
            if len(ch) == 1 and _displayable(ch):
                out.append(ch)
                i += size
                continue
        out.append(run[3 * i : 3 * i + 3])
        i += 1
    return "".join(out)


def display(text: str) -> str:
    """A URN for human eyes (RFC 8141 §4.4): percent-encoded UTF-8 of visible non-ASCII
    characters shown as the characters. Escapes of ASCII characters (they may be delimiters with
    meaning), invalid UTF-8, control or invisible characters and look-alikes of ASCII stay encoded.

    >>> display("urn:example:M%C3%BCller%2F%E2%80%8B%FF")
    'urn:example:Müller%2F%E2%80%8B%FF'
    """
    return _ESCAPES.sub(lambda match: _display_run(match.group()), text)
