"""Finding URNs in running text (rfc2141bis §2.5.3; RFC 2141 §2.4: a URN ends where a character
outside its repertoire appears, and that character is not part of it).

>>> [m.text for m in find_urns('See <URN:ISBN:0451450523>, or "urn:nbn:fi-fe201003181510".')]
['URN:ISBN:0451450523', 'urn:nbn:fi-fe201003181510']
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from urnkit.syntax import Mode, diagnose, is_valid
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


def _trim(candidate: str, before: str, mode: Mode) -> str:
    """Cut ``candidate`` to the URN it holds: drop trailing punctuation, unbalanced closing
    parentheses and closing wrappers, then anything past the longest valid URN."""
    while len(candidate) > 4:
        last = candidate[-1]
        if (
            last in _TRAILING
            or (last == ")" and candidate.count(")") > candidate.count("("))
            or (last in _WRAPPERS and last == before)
        ):
            candidate = candidate[:-1]
            continue
        if is_valid(candidate, mode=mode):
            return candidate
        diagnosis = diagnose(candidate, mode=mode)
        assert diagnosis is not None
        cut = diagnosis.position
        candidate = candidate[: cut if cut < len(candidate) else len(candidate) - 1]
    return ""


def find_urns(text: str, *, mode: Mode = "rfc8141") -> Iterator[URNMatch]:
    """Yield every URN in ``text``, left to right; never an invalid one.

    >>> [(m.start, m.end) for m in find_urns("(see urn:example:a123,z456).")]
    [(5, 26)]
    """
    stop = _STOP[mode]
    position = 0
    while (start := _START.search(text, position)) is not None:
        begin = start.start()
        excluded = stop.search(text, start.end())
        end = excluded.start() if excluded else len(text)
        before = text[begin - 1] if begin else ""
        found = _trim(text[begin:end], before, mode)
        if found:
            yield URNMatch(begin, begin + len(found), URN(found, mode))
            position = begin + len(found)
        else:
            position = start.end()
