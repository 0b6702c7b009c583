"""A reference for the URN grammars written from the RFCs, independently of ``urnkit.syntax``.

``urnkit`` validates with one regular expression per mode and locates errors with a character
scanner. This module does neither: :func:`parse` splits the text at its delimiters, in the order
the RFC 8141 prose gives them, and checks each piece against its ABNF rule with plain loops (no
regular expression at all); :func:`error_position` finds the longest viable prefix by asking
:func:`parse` whether the prefix plus one of a fixed set of suffixes is a URN.

The grammars (the contract urnkit implements):

* RFC 8141 §2: ``namestring = assigned-name [ rq-components ] [ "#" f-component ]`` with
  ``assigned-name = "urn" ":" NID ":" NSS`` ("urn" in any case),
  ``NID = (alphanum) 0*30(ldh) (alphanum)``, ``NSS = pchar *(pchar / "/")``,
  ``rq-components = [ "?+" r-component ] [ "?=" q-component ]``,
  ``r-component = q-component = pchar *( pchar / "/" / "?" )``, ``f-component = fragment =
  *( pchar / "/" / "?" )`` (RFC 3986 §3.5); §2.3.1: "The r-component ends with a '?=' sequence
  ... or a '#' character"; §2: a "?" after the NSS not followed by "+" or "=" is an error.
* RFC 2141 §2: ``<URN> ::= "urn:" <NID> ":" <NSS>`` ("urn:" in any case),
  ``<NID> ::= <let-num> [ 1,31<let-num-hyp> ]`` and not "urn" in any case,
  ``<NSS> ::= 1*<URN chars>`` where a URN char is one of ``A-Z a-z 0-9 ( ) + , - . : = @ ; $ _ !
  * '`` or "%" followed by two hex digits ("/", "?", "#" must be percent-encoded).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Final

from urnkit import Mode

ALPHANUM: Final = frozenset(string.ascii_letters + string.digits)
HEXDIG: Final = frozenset(string.digits + "ABCDEFabcdef")
# RFC 3986 §2.3 unreserved, §2.2 sub-delims, §3.3 pchar (its pct-encoded alternative is handled
# separately, by _is_sequence_of).
UNRESERVED: Final = ALPHANUM | frozenset("-._~")
SUB_DELIMS: Final = frozenset("!$&'()*+,;=")
PCHAR: Final = UNRESERVED | SUB_DELIMS | frozenset(":@")
# RFC 2141 §2: <trans> = <upper> | <lower> | <number> | <other>, with <other> as listed there;
# its <reserved> characters ("%", "/", "?", "#") are not literals here.
TRANS: Final = ALPHANUM | frozenset("()+,-.:=@;$_!*'")


@dataclass(frozen=True)
class Parts:
    """A URN's pieces as written; components are None when absent (the f-component may be "")."""

    scheme: str
    nid: str
    nss: str
    r_component: str | None = None
    q_component: str | None = None
    f_component: str | None = None

    @property
    def assigned_name(self) -> str:
        return f"{self.scheme}:{self.nid}:{self.nss}"

    @property
    def text(self) -> str:
        """The namestring these parts spell (RFC 8141 §2 ``namestring``)."""
        text = self.assigned_name
        if self.r_component is not None:
            text += "?+" + self.r_component
        if self.q_component is not None:
            text += "?=" + self.q_component
        if self.f_component is not None:
            text += "#" + self.f_component
        return text


def _is_sequence_of(text: str, literals: frozenset[str]) -> bool:
    """Whether ``text`` is a (possibly empty) sequence of characters from ``literals`` and
    RFC 3986 §2.1 pct-encoded triplets ("%" HEXDIG HEXDIG)."""
    i = 0
    while i < len(text):
        if text[i] in literals:
            i += 1
        elif text[i] == "%" and text[i + 1 : i + 2] in HEXDIG and text[i + 2 : i + 3] in HEXDIG:
            i += 3
        else:
            return False
    return True


def _is_rfc8141_nid(nid: str) -> bool:
    return (
        2 <= len(nid) <= 32
        and nid[0] in ALPHANUM
        and nid[-1] in ALPHANUM
        and all(ch in ALPHANUM or ch == "-" for ch in nid)
    )


def _is_rfc8141_component(component: str) -> bool:
    """r-component / q-component: pchar *( pchar / "/" / "?" ); the first unit is a pchar exactly
    when the first character is neither "/" nor "?"."""
    return (
        component != ""
        and component[0] not in "/?"
        and _is_sequence_of(component, PCHAR | frozenset("/?"))
    )


def _parse_rfc8141(text: str) -> Parts | None:
    # Neither the NID nor the NSS may contain ":"'s successor delimiters "?" and "#", and the NID
    # contains no ":", so the delimiters can be found by plain searches, outermost first.
    nid, colon, rest = text[4:].partition(":")
    if not colon or not _is_rfc8141_nid(nid):
        return None
    # §2.3.3: the f-component runs from the first "#" to the end (it cannot contain "#").
    rest, hash_sign, fragment = rest.partition("#")
    f_component = fragment if hash_sign else None
    if f_component is not None and not _is_sequence_of(f_component, PCHAR | frozenset("/?")):
        return None
    # The NSS cannot contain "?", so the first "?" (if any) introduces the rq-components.
    nss, question_mark, rq = rest.partition("?")
    if nss == "" or nss[0] == "/" or not _is_sequence_of(nss, PCHAR | frozenset("/")):
        return None
    r_component = q_component = None
    if question_mark:
        if rq[:1] == "+":
            # §2.3.1: the r-component ends at the first "?=", which begins the q-component.
            r_component, q_mark, query = rq[1:].partition("?=")
            q_component = query if q_mark else None
        elif rq[:1] == "=":
            q_component = rq[1:]  # §2.3.2: the q-component ends only at "#", found above
        else:
            return None  # §2: a "?" not followed by "+" or "=" is a syntax error
    for component in (r_component, q_component):
        if component is not None and not _is_rfc8141_component(component):
            return None
    return Parts(text[:3], nid, nss, r_component, q_component, f_component)


def _parse_rfc2141(text: str) -> Parts | None:
    nid, colon, nss = text[4:].partition(":")
    nid_ok = (
        1 <= len(nid) <= 32
        and nid[0] in ALPHANUM
        and all(ch in ALPHANUM or ch == "-" for ch in nid)
        and nid.lower() != "urn"
    )
    if not colon or not nid_ok or nss == "" or not _is_sequence_of(nss, TRANS):
        return None
    return Parts(text[:3], nid, nss)


def parse(text: str, mode: Mode) -> Parts | None:
    """The parts of ``text`` if it is a URN under ``mode``'s grammar, else None."""
    # Nothing outside ASCII (RFC 8141 §2, RFC 2141 §2.4): checked first, so that the case-blind
    # comparison below cannot be fooled by a non-ASCII character that lower-cases to ASCII.
    if not text.isascii() or text[:4].lower() != "urn:":
        return None
    return _parse_rfc8141(text) if mode == "rfc8141" else _parse_rfc2141(text)


# Why these suffixes suffice: a prefix p is viable when p + t is a URN for some t. Take such a
# p + t and look at where p ends in its parse.
#
# 1. Inside "urn:" (len(p) < 4): p is "urn:"[:len(p)] in some case, and "urn:ab:c"[len(p):]
#    completes it, because the scheme is case-insensitive.
# 2. After "urn:" and the first k characters v of the NID, before its ":":
#    * k = 0: "ab:c".
#    * RFC 8141, v ends with a letter or digit and k >= 2: ":c".
#    * RFC 8141, k = 1 or v ends with "-": the NID of p + t goes on to a letter or digit within
#      32 characters, so k <= 31 and "b:c" gives the NID v + "b" (2 to 32 characters, first and
#      last a letter or digit).
#    * RFC 2141: ":c", unless v is "urn" in some case; then "b:c" (the NID "urnb" is allowed).
# 3. Right after the ":" that ends the NID: "c".
# 4. After the NSS has begun. If p ends inside a percent-encoding ("%" or "%" HEXDIG), "00" or
#    "0" completes the triplet (any hex digits do); otherwise nothing is added. The result ends
#    at a unit boundary of the NSS or of a component and is a URN itself unless, under RFC 8141,
#    it ends with
#    * the "?" right after the NSS: "+c" completes it (that "?" begins "?+" or "?=");
#    * "?+" or "?=" with nothing after it: "c" completes it (r- and q-components are non-empty).
#    Neither follows a completed percent-encoding (which ends in a hex digit), so the suffix is
#    one of "", "0", "00", "+c", "c". Any other end is valid: a non-empty NSS, r-component or
#    q-component may end after any unit, an f-component may be empty, and a "?" that ends an
#    r-component either belongs to it or begins "?=", so "…?" is a valid r-component either way
#    (it has no "?=" inside, as the r-component of p + t has none).
# So p is viable exactly when p + s is a URN for one of these s:
_SHORT_URN: Final = "urn:ab:c"
_COMPLETIONS: Final = (*(_SHORT_URN[i:] for i in range(len(_SHORT_URN) + 1)), "0", "00", "+c")


def is_viable(prefix: str, mode: Mode) -> bool:
    """Whether some text appended to ``prefix`` makes a URN under ``mode``."""
    return any(parse(prefix + suffix, mode) is not None for suffix in _COMPLETIONS)


def error_position(text: str, mode: Mode) -> int | None:
    """None for a URN; otherwise the largest k such that ``text[:k]`` is viable: the first
    character at which ``text`` stops being the beginning of a URN, or ``len(text)`` when it is
    one that ends too early."""
    if parse(text, mode) is not None:
        return None
    k = 0
    while k < len(text) and is_viable(text[: k + 1], mode):
        k += 1
    return k
