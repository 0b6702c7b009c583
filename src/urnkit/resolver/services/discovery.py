"""Resolver discovery through DNS NAPTR records: the DDDS algorithm of RFC 3402, with the
DNS database of RFC 3403 and the URN application of RFC 3404.

The first well-known rule (RFC 3404 §2) turns a URN into its namespace identifier; the NAPTR
records at ``<nid>.urn.arpa`` (the root domain is a setting) hold rules, each a substitution
expression applied to the whole URN (the Application Unique String) or a replacement domain.
A rule without flags leads to the next domain to ask; a rule with the terminal flag ``U`` gives
the URI. This module takes the first rule that applies, in order and preference (RFC 3403 §4.1),
and follows at most :data:`MAX_STEPS` rules within :data:`TIME_LIMIT` seconds.

>>> rule = Rule(100, 10, "u", "http+N2L", "!^(urn:nbn:xx-.*)$!https://r.example/\\\\1!", ".")
>>> discover("urn:nbn:xx-1", "urn.arpa", lambda name: [rule] if name == "nbn.urn.arpa" else [])
'https://r.example/urn:nbn:xx-1'
"""

from __future__ import annotations

import ipaddress
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from urnkit.urn import URN

MAX_STEPS = 10  # NAPTR lookups for one URN: a loop or a long chain ends here
TIME_LIMIT = 2.0  # seconds for the whole discovery of one URN (all lookups together)
_NOT_DELIMITERS = frozenset("123456789i\\")  # RFC 3402 §3.2: POS-DIGIT, the flag "i"; and "\"
# RFC 3404 §4.4: a service field is a protocol and resolution services, "+"-separated; these
# resolution services name the URL or the resource ("I2L"-style answers are not locations).
RESOLUTION_SERVICES = frozenset({"n2l", "n2r"})
WEB_PROTOCOLS = frozenset({"http", "https"})
# RFC 6116 §2.4.2 (ENUM) style: "E2U+" followed by an enumservice naming the web.
E2U_WEB_SERVICES = frozenset({"http", "https", "web:http", "web:https"})


@dataclass(frozen=True, slots=True)
class Substitution:
    """An RFC 3402 §3.2 substitution expression: ``delim ere delim repl delim *flags``.

    >>> Substitution.parse("!^urn:cid:(.+)@(.*)$!\\\\2!i").apply("URN:CID:x@example.com")
    'example.com'
    """

    pattern: re.Pattern[str]
    replacement: tuple[str | int, ...]  # literal text and group numbers (backrefs)

    @classmethod
    def parse(cls, text: str) -> Substitution:
        """The expression in ``text``; :class:`ValueError` saying what is wrong and where."""
        if not text:
            raise ValueError("an empty substitution expression (RFC 3402 §3.2)")
        delimiter = text[0]
        if delimiter in _NOT_DELIMITERS:
            raise ValueError(
                f"position 0: {delimiter!r} cannot be the delimiter: not a digit 1-9, the flag "
                "'i' or a backslash (RFC 3402 §3.2)"
            )
        ere_end = _field_end(text, 1, delimiter)
        repl_end = _field_end(text, ere_end + 1, delimiter)
        flags = text[repl_end + 1 :]
        if flags.strip("i"):
            raise ValueError(
                f"position {repl_end + 1}: flags {flags!r}: the only flag is 'i' (RFC 3402 §3.2)"
            )
        ere = text[1:ere_end].replace("\\" + delimiter, re.escape(delimiter))
        try:
            pattern = re.compile(ere, re.IGNORECASE if flags else 0)
        except re.error as error:
            raise ValueError(f"position {1 + (error.pos or 0)}: the ERE: {error.msg}") from None
        replacement = _replacement(text, ere_end + 1, repl_end, delimiter)
        for part in replacement:
            if isinstance(part, int) and part > pattern.groups:
                raise ValueError(
                    f"the replacement refers to \\{part}, but the ERE has {pattern.groups} "
                    "group(s) (RFC 3402 §3.2)"
                )
        return cls(pattern, replacement)

    def apply(self, string: str) -> str | None:
        """The replacement with the groups the ERE matched in ``string``; None if it does not
        match (the rule then does not apply)."""
        match = self.pattern.search(string)
        if match is None:
            return None
        return "".join(
            part if isinstance(part, str) else match[part] or "" for part in self.replacement
        )


def _field_end(text: str, start: int, delimiter: str) -> int:
    """The index of the delimiter ending the field at ``start`` (a backslash escapes)."""
    index = start
    while index < len(text):
        if text[index] == "\\":
            index += 2
        elif text[index] == delimiter:
            return index
        else:
            index += 1
    raise ValueError(
        f"position {len(text)}: the expression ends before its delimiter {delimiter!r} "
        "(RFC 3402 §3.2: delim ere delim repl delim flags)"
    )


def _replacement(text: str, start: int, end: int, delimiter: str) -> tuple[str | int, ...]:
    """The ``repl`` field: ``\\N`` is group N, an escaped delimiter is the delimiter, the rest
    is literal."""
    parts: list[str | int] = []
    literal: list[str] = []
    index = start
    while index < end:
        char, following = text[index], text[index + 1 : index + 2]
        if char == "\\" and following in "123456789" and following:
            parts.extend(["".join(literal), int(following)])
            literal = []
            index += 2
        elif char == "\\" and following == delimiter:
            literal.append(delimiter)
            index += 2
        else:
            literal.append(char)
            index += 1
    parts.append("".join(literal))
    return tuple(part for part in parts if part != "")


@dataclass(frozen=True, slots=True)
class Rule:
    """One NAPTR record (RFC 3403 §4.1): lower ``order`` first, then lower ``preference``."""

    order: int
    preference: int
    flags: str
    services: str
    regexp: str
    replacement: str  # a domain name; "." when the regexp is used instead


def is_resolution_service(services: str) -> bool:
    """Whether a rule's services field names a URN resolution service over the web.

    >>> is_resolution_service("http+N2L+N2C"), is_resolution_service("z3950+N2L")
    (True, False)
    >>> is_resolution_service("E2U+web:https"), is_resolution_service("")
    (True, False)
    """
    protocol, *rest = services.lower().split("+")
    if protocol == "e2u":
        return bool(E2U_WEB_SERVICES.intersection(rest))
    return protocol in WEB_PROTOCOLS and bool(RESOLUTION_SERVICES.intersection(rest))


def _web_uri(text: str) -> bool:
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return (
        parts.scheme.lower() in WEB_PROTOCOLS
        and bool(parts.hostname)
        and text.isprintable()
        and " " not in text
    )


def _outcome(rule: Rule, string: str) -> tuple[str, str] | None:
    """("uri", URI) for a terminal rule that applies, ("domain", name) for a non-terminal one,
    None when the rule does not apply to ``string`` or is of a kind not followed here."""
    flags = rule.flags.lower()
    if flags not in ("", "u"):  # "s", "a", "p" need protocols this resolver does not speak
        return None
    if flags == "u" and not is_resolution_service(rule.services):
        return None
    if rule.regexp:
        try:
            result = Substitution.parse(rule.regexp).apply(string)
        except ValueError:  # a broken record is skipped like one that does not match
            return None
    else:
        result = rule.replacement.rstrip(".") or None
    if result is None:
        return None
    if flags == "u":
        return ("uri", result) if _web_uri(result) else None
    return "domain", result.rstrip(".").lower()


def discover(
    urn: str,
    root: str,
    lookup: Callable[[str], Sequence[Rule]],
    *,
    max_steps: int = MAX_STEPS,
) -> str | None:
    """The URI the DDDS rules lead ``urn`` to, or None (no rules, none applies, a loop, or
    more than ``max_steps`` lookups). ``lookup`` gives the NAPTR records of a domain name.

    >>> discover("urn:x-y:1", "urn.arpa", lambda name: [])
    """
    domain = f"{URN.parse(urn).nid.lower()}.{root.strip('.').lower()}"  # RFC 3404 §2
    seen = set()
    for _ in range(max_steps):
        if domain in seen:
            return None
        seen.add(domain)
        for rule in sorted(lookup(domain), key=lambda r: (r.order, r.preference)):
            outcome = _outcome(rule, urn)  # RFC 3402 §3.2: always on the original string
            if outcome is not None:
                break
        else:
            return None
        kind, value = outcome
        if kind == "uri":
            return value
        domain = value
    return None


class Discovery:
    """:func:`discover` over DNS: the NAPTR records asked of ``nameserver`` (``host:port``, or
    the system's resolver when None), under ``root``, within :data:`TIME_LIMIT` seconds.

    >>> Discovery("127.0.0.1:5353").port
    5353
    """

    def __init__(self, nameserver: str | None = None, root: str = "urn.arpa") -> None:
        import dns.resolver

        self.root = root
        self.resolver = dns.resolver.Resolver(configure=nameserver is None)
        self.port = 53
        if nameserver is not None:
            host, self.port = parse_nameserver(nameserver)
            self.resolver.nameservers = [host]
            self.resolver.port = self.port
        # Answers are kept for their TTL, as every DNS resolver keeps them.
        self.resolver.cache = dns.resolver.LRUCache(10_000)

    def uri(self, urn: str) -> str | None:
        """The URI discovered for ``urn``; None also when DNS fails or the time runs out."""
        import dns.exception
        import dns.resolver

        deadline = time.monotonic() + TIME_LIMIT

        def lookup(name: str) -> list[Rule]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise dns.exception.Timeout
            try:
                answer = self.resolver.resolve(
                    name, "NAPTR", lifetime=left, raise_on_no_answer=False, search=False
                )
            except dns.resolver.NXDOMAIN:
                return []
            return [
                Rule(
                    record.order,
                    record.preference,
                    record.flags.decode(errors="replace"),
                    record.service.decode(errors="replace"),
                    record.regexp.decode(errors="replace"),
                    record.replacement.to_text(),
                )
                for record in answer.rrset or ()
            ]

        try:
            return discover(urn, self.root, lookup)
        except dns.exception.DNSException:
            return None


def parse_nameserver(text: str) -> tuple[str, int]:
    """``address:port`` (``[v6]:port``; port 53 when left out) as (address, port).

    >>> parse_nameserver("127.0.0.1:5353"), parse_nameserver("[::1]")
    (('127.0.0.1', 5353), ('::1', 53))
    """
    host, port = text, "53"
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest:
            port = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    try:
        ipaddress.ip_address(host)
        number = int(port)
    except ValueError:
        number = -1
    if not 0 < number < 65536:
        raise ValueError(
            f"a DNS nameserver is an IP address and a port (127.0.0.1:53, [::1]:53), not {text!r}"
        )
    return host, number
