"""Finding URNs in running text (rfc2141bis §2.5.3; RFC 2141 §2.4: a URN ends where a character
outside its repertoire appears, and that character is not part of it).

>>> [m.text for m in find_urns('See <URN:ISBN:0451450523>, or "urn:nbn:fi-fe201003181510".')]
['URN:ISBN:0451450523', 'urn:nbn:fi-fe201003181510']
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from urnkit.syntax import NAMESTRING, Mode
from urnkit.urn import URN

# "urn:" not glued to a preceding word or scheme name (RFC 3986 scheme characters).
_START = re.compile(r"(?<![A-Za-z0-9+.\-])[uU][rR][nN]:")
# The first character no part of a URN may hold literally: the URN ends before it.
_STOP: dict[Mode, re.Pattern[str]] = {
    "rfc8141": re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/?#%]"),
    "rfc2141": re.compile(r"[^A-Za-z0-9()+,\-.:=@;$_!*'%]"),
}
# Punctuation that ends a sentence or clause rather than the URN it follows.
_TRAILING = ".,;:!?"
_WRAPPERS = "'*_"  # marks that may enclose a URN on both sides: 'urn:…', *urn:…*, _urn:…_


@dataclass(frozen=True, slots=True)
class URNMatch:
    """One URN found in a text: ``text[start:end] == str(urn)``."""

    start: int
    end: int
    urn: URN

    @property
    def text(self) -> str:
        """The URN as it stands in the text."""
        return str(self.urn)


def _urn_end(text: str, begin: int, end: int, mode: Mode) -> int:
    """Where the URN that starts at ``begin`` ends, at ``end`` at the latest: the longest valid
    URN there, less trailing punctuation, unbalanced closing parentheses and a closing wrapper;
    ``begin`` when there is none."""
    before = text[begin - 1] if begin else ""
    while (match := NAMESTRING[mode].match(text, begin, end)) is not None:
        end = match.end()
        last = text[end - 1]
        if (
            last in _TRAILING
            or (last == ")" and text.count(")", begin, end) > text.count("(", begin, end))
            or (last in _WRAPPERS and last == before)
        ):
            end -= 1
        else:
            return end
    return begin


def find_urns(text: str, *, mode: Mode = "rfc8141") -> Iterator[URNMatch]:
    """Yield every URN in ``text``, left to right; never an invalid one. Time is linear in the
    length of the text.

    >>> [(m.start, m.end) for m in find_urns("(see urn:example:a123,z456).")]
    [(5, 26)]
    """
    stop = _STOP[mode]
    position = run_end = 0
    while (start := _START.search(text, position)) is not None:
        begin = start.start()
        if begin >= run_end:  # a new run of URN characters: find where it stops
            excluded = stop.search(text, start.end())
            run_end = excluded.start() if excluded else len(text)
        end = _urn_end(text, begin, run_end, mode)
        if end > begin:
            yield URNMatch(begin, end, URN(text[begin:end], mode))
            position = end
        else:
            position = start.end()
