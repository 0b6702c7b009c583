"""The URN value object: parsed once, immutable, equal and hashed by URN-equivalence.

>>> u = URN.parse("URN:EXAMPLE:a123%2cz456?=xyz")
>>> u.nid, u.nss, u.q_component
('EXAMPLE', 'a123%2cz456', 'xyz')
>>> u == URN.parse("urn:example:a123%2Cz456"), str(u.normalize())
(True, 'urn:example:a123%2Cz456?=xyz')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NoReturn

from urnkit.encoding import display, encode_part
from urnkit.syntax import NAMESTRING, Mode, URNSyntaxError, diagnose, unknown_mode

EquivalenceRule = Callable[[str], str]

# Lower-case NID -> a namespace's extra equivalence rule (RFC 8141 §3, last paragraph).
_equivalence_rules: dict[str, EquivalenceRule] = {}


def register_equivalence_rule(nid: str, rule: EquivalenceRule) -> None:
    """Add a URN namespace's own equivalence rule for ``nid`` (any case).

    The rule receives the RFC 8141 §3 key of a URN in that namespace (``urn:<nid>:<NSS>`` with
    lower-case scheme and NID and upper-case percent-encoding) and returns the key to compare.
    Because it sees only the §3 key, URNs that §3 calls equivalent always get one key: a rule can
    merge URNs, never split them, as §3 demands.

    >>> register_equivalence_rule("x-caseless", str.lower)
    >>> URN.parse("urn:X-CASELESS:AbC") == URN.parse("urn:x-caseless:abc")
    True
    >>> del _equivalence_rules["x-caseless"]  # tidy up after the example
    """
    key = nid.lower()
    if key in _equivalence_rules and _equivalence_rules[key] != rule:
        raise ValueError(f"an equivalence rule for the NID {nid!r} is registered already")
    _equivalence_rules[key] = rule


_PCT_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")


def _upper_percent(part: str) -> str:
    """RFC 3986 §6.2.2.1 case normalization of percent-encodings: hex digits to upper case."""
    if "%" not in part:
        return part
    return _PCT_ENCODED.sub(lambda match: match.group().upper(), part)


def _component(value: str | None) -> str | None:
    return None if value is None else _upper_percent(value)


class URN:
    """A URN (RFC 8141 §2): ``urn:<NID>:<NSS>`` with optional r-, q- and f-components.

    Attributes are the text's own slices: ``str(URN.parse(s)) == s``. Components are None when
    absent; only the f-component can be present and empty (``""``).

    >>> URN.parse("urn:example:foo-bar-baz-qux?+CCResolve:cc=uk").r_component
    'CCResolve:cc=uk'
    """

    __slots__ = ("_match", "_mode")

    _mode: Mode
    _match: re.Match[str]  # groups 1 to 5: NID, NSS, r-, q-, f-component (syntax.NAMESTRING)

    def __new__(cls, text: str, mode: Mode = "rfc8141") -> URN:
        try:
            match = NAMESTRING[mode].fullmatch(text)
        except KeyError:
            raise unknown_mode(mode) from None
        if match is None:
            cls._reject(text, mode)
        self = object.__new__(cls)
        # Slot descriptors set directly: the hot path skips the guarding __setattr__.
        _SET_MATCH(self, match)
        _SET_MODE(self, mode)
        return self

    @staticmethod
    def _reject(text: str, mode: Mode) -> NoReturn:
        if not isinstance(text, str):
            raise TypeError(f"a URN is parsed from str, not {type(text).__name__}")
        diagnosis = diagnose(text, mode=mode)
        if diagnosis is None:  # the expression and the scanner encode one grammar
            raise AssertionError(f"syntax expression and scanner disagree on {text!r}")
        raise URNSyntaxError(text, diagnosis)

    @property
    def scheme(self) -> str:
        """The scheme as written: "urn" in any case."""
        return self._match.string[:3]

    @property
    def nid(self) -> str:
        """The namespace identifier as written (RFC 8141 §2.1)."""
        return self._match[1]

    @property
    def nss(self) -> str:
        """The namespace-specific string as written (RFC 8141 §2.2)."""
        return self._match[2]

    @property
    def r_component(self) -> str | None:
        """The r-component without its "?+", or None (RFC 8141 §2.3.1)."""
        return self._match[3]

    @property
    def q_component(self) -> str | None:
        """The q-component without its "?=", or None (RFC 8141 §2.3.2)."""
        return self._match[4]

    @property
    def f_component(self) -> str | None:
        """The f-component without its "#", or None; "" when present and empty (RFC 8141 §2.3.3)."""
        return self._match[5]

    @classmethod
    def parse(cls, text: str, *, mode: Mode = "rfc8141") -> URN:
        """Parse ``text``; raise :class:`URNSyntaxError` (position, reason, rule) if it is not a
        URN under ``mode`` ("rfc8141", or "rfc2141" for the legacy grammar without components).

        >>> URN.parse("urn:isbn:0451450523").nss
        '0451450523'
        """
        return cls(text, mode)

    @classmethod
    def build(
        cls,
        nid: str,
        nss: str,
        r_component: str | None = None,
        q_component: str | None = None,
        f_component: str | None = None,
    ) -> URN:
        """Build a URN from native Unicode strings, percent-encoding each part as UTF-8 where
        its repertoire requires (RFC 8141 §2.2). The NID is never encoded: it must be valid.

        >>> str(URN.build("example", "Müller 1/2", q_component="lang=fi"))
        'urn:example:M%C3%BCller%201/2?=lang=fi'
        """
        text = f"urn:{nid}:{encode_part(nss, 'NSS')}"
        if r_component is not None:
            text += "?+" + encode_part(r_component, "r-component")
        if q_component is not None:
            text += "?=" + encode_part(q_component, "q-component")
        if f_component is not None:
            text += "#" + encode_part(f_component, "f-component")
        return cls(text)

    @property
    def assigned_name(self) -> str:
        """``urn:<NID>:<NSS>`` as written, without components (RFC 8141 §2)."""
        return self._match.string[: self._match.end(2)]

    def normalize(self) -> URN:
        """RFC 8141 §3 case normalization: lower-case scheme and NID, upper-case hex digits in
        every percent-encoding; components kept, nothing decoded.

        >>> str(URN.parse("URN:Example:a%2fb#c%3a").normalize())
        'urn:example:a%2Fb#c%3A'
        """
        text = f"urn:{self.nid.lower()}:{_upper_percent(self.nss)}"
        r, q, f = (
            _component(self.r_component),
            _component(self.q_component),
            _component(self.f_component),
        )
        if r is not None:
            text += "?+" + r
        if q is not None:
            text += "?=" + q
        if f is not None:
            text += "#" + f
        return URN(text, self._mode)

    def equivalence_key(self) -> str:
        """The string two URNs share exactly when they are URN-equivalent: the normalized
        assigned-name (RFC 8141 §3), passed through the namespace's own rule if one is registered.

        >>> URN.parse("URN:example:a%2c?+r").equivalence_key()
        'urn:example:a%2C'
        """
        nid = self.nid.lower()
        key = f"urn:{nid}:{_upper_percent(self.nss)}"
        rule = _equivalence_rules.get(nid)
        return key if rule is None else rule(key)

    def display(self) -> str:
        """The URN for humans (RFC 8141 §4.4): visible non-ASCII characters decoded.

        >>> URN.parse("urn:example:M%C3%BCller").display()
        'urn:example:Müller'
        """
        return display(self._match.string)

    def __str__(self) -> str:
        return self._match.string

    def __repr__(self) -> str:
        return f"URN({self._match.string!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, URN):
            return NotImplemented
        return self.equivalence_key() == other.equivalence_key()

    def __hash__(self) -> int:
        return hash(self.equivalence_key())

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"URN is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"URN is immutable; cannot delete {name!r}")

    def __reduce__(self) -> tuple[type[URN], tuple[str, Mode]]:
        return (URN, (self._match.string, self._mode))


def _slot_setter(name: str) -> Callable[[URN, Any], None]:
    setter: Callable[[URN, Any], None] = vars(URN)[name].__set__
    return setter


_SET_MATCH = _slot_setter("_match")
_SET_MODE = _slot_setter("_mode")


def equivalent(a: str | URN, b: str | URN, *, mode: Mode = "rfc8141") -> bool:
    """Whether two URNs are URN-equivalent (RFC 8141 §3; RFC 2141 §5 in "rfc2141" mode).

    Raises :class:`URNSyntaxError` if either is not a URN.

    >>> equivalent("URN:foo:a123,456", "urn:FOO:a123,456")
    True
    """
    first = a if isinstance(a, URN) else URN(a, mode)
    second = b if isinstance(b, URN) else URN(b, mode)
    return first == second


__all__ = ["URN", "equivalent", "register_equivalence_rule"]
