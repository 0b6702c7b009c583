"""A URN as pasted: what copying it from a PDF, an e-mail or a web page adds to it, taken off.

Copied text brings the whitespace and punctuation around the URN, the marks of its line breaks
(soft hyphens, typographic hyphens) and invisible characters; none of them can stand in a URN
literally (RFC 8141 §2), so a resolver that finds nothing under the text as given may try
:func:`cleaned` (docs/resolution.md, "Pasted URNs", gives the reason for each rule). Their
percent-encoded forms, as a browser sends them in a path (``%C2%A0``, ``%E2%80%90``), are
cleaned as the characters are.

>>> cleaned(" urn:nbn:fi\u2010fe2019\u00ad1234.\\n")
'urn:nbn:fi-fe20191234'
>>> cleaned("<URN:NBN:de:101-1>)."), cleaned("urn:nbn:cz:nk-1%C2%A0")
('URN:NBN:de:101-1', 'urn:nbn:cz:nk-1')
"""

import re
from collections.abc import Iterator

# Invisible characters: zero width space, non-joiner and joiner, word joiner, byte order mark,
# and the soft hyphen (a place where a line may break, shown only when it does).
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
# Hyphens and dashes typesetting puts where the text had "-": hyphen, non-breaking hyphen,
# figure dash, en dash, em dash, horizontal bar, minus sign, small and fullwidth hyphen-minus.
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
# Whitespace around a pasted URN: space, tab, CR, LF, no-break space (and its narrow form).
WHITESPACE = " \t\r\n\u00a0\u202f"
# What ends a sentence or closes a bracket or quotation around a URN, and a trailing slash.
TRAILING = ".,;:!?)]}>\"'\u00bb\u201d\u2019/"
# What opens a bracket or quotation before a URN (RFC 3986 Appendix C: <URN> or "URN").
LEADING = "(<[{\"'\u00ab\u201c\u2018"

_ENCODED = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_CLEANED_ANYWHERE = frozenset(INVISIBLE + DASHES)
_CLEANED_AT_ENDS = frozenset(WHITESPACE + TRAILING + LEADING)
_TAKEN_AT_ENDS = _CLEANED_AT_ENDS | frozenset(INVISIBLE)  # a dash stays, as "-"


def cleaned(text: str) -> str:
    """``text`` without what pasting added around and inside a URN: invisible characters
    removed, Unicode hyphens and dashes made ``-``, then whitespace, opening brackets and
    quotes taken off its start and whitespace, sentence punctuation, closing brackets and
    quotes and slashes off its end. The result of a text with nothing to clean is the text.

    >>> cleaned("urn:nbn:fi-1"), cleaned("urn:nbn:fi-1%E2%80%8B/"), cleaned("urn:x:a%2Fb")
    ('urn:nbn:fi-1', 'urn:nbn:fi-1', 'urn:x:a%2Fb')
    """
    while (once := _cleaned_once(text)) != text:  # what is taken off may uncover more
        text = once
    return text


def _cleaned_once(text: str) -> str:
    text = _ENCODED.sub(_decoded_if_cleaned, text)
    text = "".join(_replaced(character) for character in text)
    start, end = 0, len(text)
    while start < end and text[start] in WHITESPACE + LEADING:
        start += 1
    while end > start and text[end - 1] in WHITESPACE + TRAILING:
        end -= 1
    return text[start:end]


def _replaced(character: str) -> str:
    if character in INVISIBLE:
        return ""
    return "-" if character in DASHES else character


def _decoded_if_cleaned(match: re.Match[str]) -> str:
    """A run of percent-encoded octets with each UTF-8 character cleaning acts on decoded:
    invisible characters and dashes anywhere, whitespace and punctuation only in the part of
    the run that touches an end of the text; the rest left as the URN has it (``%2E``
    inside it is part of it)."""
    pieces = _characters(match.group())
    decoded = [character in _CLEANED_ANYWHERE for character, _ in pieces]
    if match.end() == len(match.string):
        _decode_at_end(pieces, decoded, reversed(range(len(pieces))))
    if match.start() == 0:
        _decode_at_end(pieces, decoded, iter(range(len(pieces))))
    return "".join(
        character if keep else encoded
        for (character, encoded), keep in zip(pieces, decoded, strict=True)
    )


def _decode_at_end(
    pieces: list[tuple[str, str]], decoded: list[bool], order: Iterator[int]
) -> None:
    for index in order:
        if pieces[index][0] not in _TAKEN_AT_ENDS:
            return
        decoded[index] = True


def _characters(run: str) -> list[tuple[str, str]]:
    """The UTF-8 characters of a run of percent-encoded octets, each with its encoded text;
    an octet that begins none, as U+FFFD."""
    octets = bytes.fromhex(run.replace("%", ""))
    pieces: list[tuple[str, str]] = []
    start = 0
    while start < len(octets):
        for size in (1, 2, 3, 4):
            try:
                character = octets[start : start + size].decode("utf-8")
            except UnicodeDecodeError:
                continue
            break
        else:
            character, size = "\ufffd", 1
        pieces.append((character, run[start * 3 : (start + size) * 3]))
        start += size
    return pieces
