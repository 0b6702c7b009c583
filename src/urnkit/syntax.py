"""URN syntax: RFC 8141 §2 and the RFC 2141 §2 legacy grammar, as pure functions over ``str``.

Two encodings of each grammar live here and are tested against each other:

* a compiled regular expression per mode, the fast path behind :func:`is_valid` and ``URN.parse``;
* a scanner per mode, :func:`diagnose`, run only for text the expression rejects, which walks the
  grammar as a deterministic automaton and reports the first character at which the text stops
  being the beginning of any valid URN, with the rule and section it breaks.

The RFC 8141 ABNF is ambiguous between r-component and q-component (both may contain ``?`` and
``=``); §2.3.1's prose decides: "The r-component ends with a '?=' sequence ... or a '#'
character". So ``urn:ex:a?+b?=c`` has r-component ``b`` and q-component ``c``, and
``urn:ex:a?+b?=`` is invalid (an empty q-component), although the bare ABNF would read ``b?=`` as
an r-component.

>>> is_valid("urn:example:a123,z456?+abc")
True
>>> diagnose("urn:example:a b").position
13
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

Mode = Literal["rfc8141", "rfc2141"]
MODES: Final[tuple[Mode, ...]] = ("rfc8141", "rfc2141")

ALPHANUM: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
HEXDIG: Final = frozenset("0123456789ABCDEFabcdef")
# RFC 3986 §3.3: pchar = unreserved / pct-encoded / sub-delims / ":" / "@" (without pct-encoded).
PCHAR: Final = ALPHANUM | frozenset("-._~!$&'()*+,;=:@")
# RFC 2141 §2: <trans> without <reserved> ("%" only as an escape; "/", "?", "#" must be encoded).
RFC2141_TRANS: Final = ALPHANUM | frozenset("()+,-.:=@;$_!*'")

_PCHAR_CLASS = r"A-Za-z0-9\-._~!$&'()*+,;=:@"
_TRANS_CLASS = r"A-Za-z0-9()+,\-.:=@;$_!*'"
_PCT = r"%[0-9A-Fa-f]{2}"
_SCHEME = r"[uU][rR][nN]:"

# Runs of literal characters, which the scanners skip in one step.
_PCHAR_RUN = re.compile(rf"[{_PCHAR_CLASS}]+").match
_TRANS_RUN = re.compile(rf"[{_TRANS_CLASS}]+").match


def _skip(run: Callable[[str, int], re.Match[str] | None], text: str, i: int) -> int:
    """The index after the run of literal characters starting at ``i``."""
    match = run(text, i)
    return match.end() if match else i


def _unrolled(first: str, rest: str, escape: str = _PCT) -> str:
    """``first (rest-character / escape)*`` as "a literal run, then (escape, literal run)*".

    The possessive quantifiers are what keeps matching linear: with plain ones, a nested
    ``(?:[c]+|%XX)*`` backtracks exponentially on a long NSS followed by an invalid character.
    """
    return rf"{first}[{rest}]*+(?:(?:{escape})[{rest}]*+)*+"


_PCHAR = rf"(?:[{_PCHAR_CLASS}]|{_PCT})"
# §2.3.1: the r-component ends at the first "?=" (or "#"), so "?" inside it may not precede "=".
_R_ESCAPE = _PCT + r"|\?(?!=)"
# The two groups of rq-components and the f-component of RFC 8141 §2; in RFC 2141 mode they are
# there but can never match, so that both modes' matches have the same five groups.
_RFC8141_PATTERN = (
    _SCHEME
    + r"(?P<nid>[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]):"
    + rf"(?P<nss>{_unrolled(_PCHAR, _PCHAR_CLASS + '/')})"
    + rf"(?:\?\+(?P<r>{_unrolled(_PCHAR, _PCHAR_CLASS + '/', _R_ESCAPE)}))?"
    + rf"(?:\?=(?P<q>{_unrolled(_PCHAR, _PCHAR_CLASS + '/?')}))?"
    + rf"(?:\#(?P<f>{_unrolled('', _PCHAR_CLASS + '/?')}))?"
)
_RFC2141_PATTERN = (
    _SCHEME
    + r"(?P<nid>(?![uU][rR][nN]:)[A-Za-z0-9][A-Za-z0-9-]{0,31}):"
    + rf"(?P<nss>{_unrolled(rf'(?:[{_TRANS_CLASS}]|{_PCT})', _TRANS_CLASS)})"
    + r"(?P<r>(?!))?(?P<q>(?!))?(?P<f>(?!))?"
)

NAMESTRING: Final[dict[Mode, re.Pattern[str]]] = {
    "rfc8141": re.compile(_RFC8141_PATTERN),
    "rfc2141": re.compile(_RFC2141_PATTERN),
}
# is_valid needs no groups: the same expressions with every capture turned into a plain group.
_FULLMATCH = {
    mode: re.compile(re.sub(r"\(\?P<\w+>", "(?:", pattern.pattern)).fullmatch
    for mode, pattern in NAMESTRING.items()
}


def is_valid(text: str, *, mode: Mode = "rfc8141") -> bool:
    """Whether ``text`` is a URN under ``mode``'s grammar, without building anything.

    >>> is_valid("URN:NBN:fi-fe201003181510"), is_valid("urn:a:b")
    (True, False)
    >>> is_valid("urn:a:b", mode="rfc2141")
    True
    """
    try:
        return _FULLMATCH[mode](text) is not None
    except KeyError:
        raise unknown_mode(mode) from None


def unknown_mode(mode: object) -> ValueError:
    """The error for a grammar name that is not one of :data:`MODES`.

    >>> unknown_mode("rfc3986")
    ValueError("unknown mode 'rfc3986'; use one of: rfc8141, rfc2141")
    """
    return ValueError(f"unknown mode {mode!r}; use one of: {', '.join(MODES)}")


_RFC8141 = "RFC 8141 §2"
_RFC2141 = "RFC 2141 §2"
_PCT_SECTION = "RFC 3986 §2.1"
_COMPONENT_SECTION = {
    "NSS": "RFC 8141 §2.2",
    "r-component": "RFC 8141 §2.3.1",
    "q-component": "RFC 8141 §2.3.2",
    "f-component": "RFC 8141 §2.3.3",
}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Where and why a text is not a URN: the first character at which it stops being the
    beginning of any valid URN (``len(text)`` when it is a valid beginning that ends too early).

    >>> d = diagnose("urn:ab-:c")
    >>> d.position, d.rule
    (7, 'NID')
    """

    position: int
    reason: str
    rule: str
    section: str


def describe_character(ch: str) -> str:
    """Name a character so that invisible and look-alike ones are unambiguous.

    >>> describe_character("/"), describe_character("ä"), describe_character("\\t")
    ("'/'", "U+00E4 'ä'", 'U+0009 (a control character)')
    """
    if " " < ch < "\x7f":
        return repr(ch)
    category = unicodedata.category(ch)
    if "\udc80" <= ch <= "\udcff":  # how Python's surrogateescape carries a byte that is not UTF-8
        return f"byte 0x{ord(ch) - 0xDC00:02X} (not UTF-8)"
    if category[0] in "CZ":
        kind = _KINDS.get(category, "a control character")
        return f"U+{ord(ch):04X} ({kind})"
    return f"U+{ord(ch):04X} {ch!r}"


_KINDS = {
    "Zs": "a space",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
    "Cf": "an invisible format character",
    "Cs": "a lone surrogate: a byte that was not UTF-8",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
}


def _not_allowed(text: str, i: int, where: str, rule: str, section: str) -> Diagnosis:
    ch = text[i]
    if ch > "\x7f" and unicodedata.category(ch) != "Cs":
        encoded = "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        reason = (
            f"{describe_character(ch)} is outside ASCII; URNs carry such characters "
            f"percent-encoded as UTF-8 ({encoded})"
        )
        return Diagnosis(i, reason, rule, section)
    return Diagnosis(i, f"{describe_character(ch)} is not allowed in the {where}", rule, section)


def _percent(text: str, i: int, section: str) -> Diagnosis | None:
    """Check the escape starting at ``text[i] == "%"``."""
    for j in (i + 1, i + 2):
        if j == len(text):
            return Diagnosis(
                j,
                "the text ends inside a percent-encoding: '%' needs two hex digits",
                "pct-encoded",
                section,
            )
        if text[j] not in HEXDIG:
            return Diagnosis(
                j,
                f"'%' must be followed by two hex digits; found {describe_character(text[j])}",
                "pct-encoded",
                section,
            )
    return None


def _scheme(text: str, rule: str, section: str) -> Diagnosis | None:
    if text[:4].isascii() and text[:4].lower() == "urn:":
        return None
    for i, expected in enumerate("urn:"):
        if i == len(text):
            return Diagnosis(i, 'the text ends before "urn:" is complete', rule, section)
        if text[i] not in (expected, expected.upper()):
            reason = f'a URN begins with "urn:" (in any case); found {describe_character(text[i])}'
            return Diagnosis(i, reason, rule, section)
    return None


def _diagnose_rfc8141(text: str) -> Diagnosis | None:
    found = _scheme(text, "assigned-name", _RFC8141)
    if found:
        return found
    after_nid = _rfc8141_nid(text)
    if isinstance(after_nid, Diagnosis):
        return after_nid
    return _rfc8141_nss(text, after_nid)


def _rfc8141_nid(text: str) -> Diagnosis | int:
    """Why the NID after ``urn:`` is not one, or the index after its ``:``."""
    n = len(text)
    i, count, last_hyphen = 4, 0, False
    while True:  # NID = (alphanum) 0*30(ldh) (alphanum)
        if i == n:
            return Diagnosis(
                n, "the text ends inside the NID; ':' and an NSS must follow", "NID", _RFC8141
            )
        ch = text[i]
        if ch in ALPHANUM:
            if count == 32:
                return Diagnosis(i, "the NID is longer than 32 characters", "NID", _RFC8141)
            count, last_hyphen = count + 1, False
        elif ch == "-":
            if count == 0:
                return Diagnosis(
                    i, "the NID must begin with a letter or digit, not '-'", "NID", _RFC8141
                )
            if count >= 31:
                return Diagnosis(
                    i,
                    "a '-' here leaves no room for the NID's last letter or digit within 32 "
                    "characters",
                    "NID",
                    _RFC8141,
                )
            count, last_hyphen = count + 1, True
        elif ch == ":":
            if count == 0:
                return Diagnosis(i, "the NID is empty", "NID", _RFC8141)
            if count == 1:
                return Diagnosis(
                    i,
                    "the NID must have at least 2 characters (alphanum 0*30(ldh) alphanum)",
                    "NID",
                    _RFC8141,
                )
            if last_hyphen:
                return Diagnosis(
                    i,
                    "the NID must end with a letter or digit, not '-'",
                    "NID",
                    "RFC 8141 §2, Appendix B",
                )
            return i + 1
        else:
            return _not_allowed(
                text, i, "NID (letters, digits and '-' only)", "NID", "RFC 8141 §2.1"
            )
        i += 1


def _rfc8141_nss(text: str, i: int) -> Diagnosis | None:
    """Why the NSS from ``i`` and the components after it are not an NSS and components."""
    n = len(text)
    part, empty = "NSS", True
    while i < n:
        ch = text[i]
        if ch in PCHAR:
            i, empty = _skip(_PCHAR_RUN, text, i), False
        elif ch == "%":
            found = _percent(text, i, _PCT_SECTION)
            if found:
                return found
            i, empty = i + 3, False
        elif ch in "/?#" and empty and part != "f-component":
            reason = f"the {part} must begin with a pchar; found {describe_character(ch)}"
            return Diagnosis(i, reason, part, _COMPONENT_SECTION[part])
        elif ch == "/":
            i += 1
        elif ch == "?":
            if part == "NSS":
                if i + 1 == n:
                    return Diagnosis(
                        n,
                        "a '?' after the NSS must be followed by '+' (r-component) or '=' "
                        "(q-component)",
                        "rq-components",
                        _RFC8141,
                    )
                if text[i + 1] not in "+=":
                    reason = (
                        "a '?' after the NSS must be followed by '+' (r-component) or '=' "
                        f"(q-component); found {describe_character(text[i + 1])}"
                    )
                    return Diagnosis(i + 1, reason, "rq-components", _RFC8141)
                part = "r-component" if text[i + 1] == "+" else "q-component"
                i, empty = i + 2, True
            elif part == "r-component" and text.startswith("?=", i):
                part, i, empty = "q-component", i + 2, True
            else:
                i += 1
        elif ch == "#" and part != "f-component":
            part, i, empty = "f-component", i + 1, False
        else:
            return _not_allowed(text, i, part, part, _COMPONENT_SECTION[part])
    if empty and part != "f-component":
        return Diagnosis(
            n,
            f"the text ends where the {part} needs at least one character",
            part,
            _COMPONENT_SECTION[part],
        )
    return None


def _diagnose_rfc2141(text: str) -> Diagnosis | None:
    found = _scheme(text, "URN", _RFC2141)  # RFC 2141 §2 names the whole rule <URN>
    if found:
        return found
    n = len(text)
    i = 4
    while True:  # <NID> ::= <let-num> [ 1,31<let-num-hyp> ]
        if i == n:
            return Diagnosis(
                n, "the text ends inside the NID; ':' and an NSS must follow", "NID", _RFC2141
            )
        ch = text[i]
        if ch in ALPHANUM or (ch == "-" and i > 4):
            if i - 4 == 32:
                return Diagnosis(i, "the NID is longer than 32 characters", "NID", _RFC2141)
        elif ch == "-":
            return Diagnosis(
                i, "the NID must begin with a letter or digit, not '-'", "NID", _RFC2141
            )
        elif ch == ":":
            if i == 4:
                return Diagnosis(i, "the NID is empty", "NID", _RFC2141)
            if text[4:i].lower() == "urn":
                return Diagnosis(
                    i, 'the NID "urn" is reserved and MUST NOT be used', "NID", _RFC2141
                )
            i += 1
            break
        else:
            return _not_allowed(text, i, "NID (letters, digits and '-' only)", "NID", _RFC2141)
        i += 1
    if i == n:
        return Diagnosis(
            n, "the text ends where the NSS needs at least one character", "NSS", _RFC2141
        )
    while i < n:
        ch = text[i]
        if ch in RFC2141_TRANS:
            i = _skip(_TRANS_RUN, text, i)
        elif ch == "%":
            found = _percent(text, i, "RFC 2141 §2.3.1")
            if found:
                return found
            i += 3
        elif ch in "/?#":
            reason = f"{ch!r} is reserved in RFC 2141 and must be percent-encoded in the NSS"
            return Diagnosis(i, reason, "NSS", "RFC 2141 §2.3.2")
        elif ch in "&~":
            reason = f"{ch!r} is not in the RFC 2141 NSS repertoire"
            return Diagnosis(i, reason, "NSS", "RFC 2141 §2.4")
        else:
            return _not_allowed(text, i, "NSS", "NSS", "RFC 2141 §2.4")
    return None


_DIAGNOSE = {"rfc8141": _diagnose_rfc8141, "rfc2141": _diagnose_rfc2141}


def diagnose(text: str, *, mode: Mode = "rfc8141") -> Diagnosis | None:
    """Explain why ``text`` is not a URN under ``mode``, or return None when it is one.

    >>> diagnose("urn:example:a?b").reason
    "a '?' after the NSS must be followed by '+' (r-component) or '=' (q-component); found 'b'"
    >>> diagnose("urn:example:ok") is None
    True
    """
    if mode not in _DIAGNOSE:
        raise unknown_mode(mode)
    return _DIAGNOSE[mode](text)


_CONTEXT = 60  # characters shown on each side of the caret in an error message


def _visible(ch: str) -> str:
    """One visible character per input character, so the caret lines up under it."""
    if ch < " ":
        return chr(0x2400 + ord(ch))  # the Control Pictures block: U+2409 for a tab, …
    if ch == "\x7f":
        return "\u2421"
    if unicodedata.category(ch) in ("Cf", "Cs", "Zl", "Zp", "Mn", "Me") or ch in "\u00a0\u3000":
        return "\ufffd"
    return ch


def caret_lines(text: str, position: int) -> str:
    """Two lines: ``text`` (control characters made visible, long text cut to a window) and a
    caret under ``position``.

    >>> print(caret_lines("urn:a:b c", 7))
    urn:a:b c
           ^
    """
    start = max(0, position - _CONTEXT)
    end = min(len(text), position + _CONTEXT)
    head = "…" if start else ""
    shown = (
        head + "".join(_visible(ch) for ch in text[start:end]) + ("…" if end < len(text) else "")
    )
    pad = len(head) + sum(
        2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in shown[len(head) : len(head) + position - start]
    )
    return f"{shown}\n{' ' * pad}^"


class URNSyntaxError(ValueError):
    """A text that is not a URN, with where (``position``), why (``reason``) and which rule.

    >>> try:
    ...     diagnose_or_raise("urn:example:a b")
    ... except URNSyntaxError as e:
    ...     print(e)
    not a URN at position 13: U+0020 (a space) is not allowed in the NSS [NSS, RFC 8141 §2.2]
      urn:example:a b
                   ^
    """

    args: tuple[str, Diagnosis]

    def __init__(self, text: str, diagnosis: Diagnosis) -> None:
        super().__init__(text, diagnosis)

    @property
    def text(self) -> str:
        """The text that is not a URN."""
        return self.args[0]

    @property
    def diagnosis(self) -> Diagnosis:
        """The position, reason, rule and section as one value."""
        return self.args[1]

    @property
    def position(self) -> int:
        """The first index at which the text stops being the beginning of any valid URN."""
        return self.args[1].position

    @property
    def reason(self) -> str:
        """Why the text is not a URN there."""
        return self.args[1].reason

    @property
    def rule(self) -> str:
        """The ABNF rule that the text breaks."""
        return self.args[1].rule

    @property
    def section(self) -> str:
        """The RFC section that states the rule."""
        return self.args[1].section

    def __str__(self) -> str:
        lines = caret_lines(self.text, self.position).replace("\n", "\n  ")
        return (
            f"not a URN at position {self.position}: {self.reason} [{self.rule}, {self.section}]\n"
            f"  {lines}"
        )


def diagnose_or_raise(text: str, *, mode: Mode = "rfc8141") -> None:
    """Raise :class:`URNSyntaxError` for a text that is not a URN under ``mode``.

    >>> diagnose_or_raise("urn:example:fine")
    """
    diagnosis = diagnose(text, mode=mode)
    if diagnosis is not None:
        raise URNSyntaxError(text, diagnosis)
