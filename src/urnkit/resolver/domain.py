"""Records, locations, principals and the pure rules of the resolver: no I/O here.

RFC 8458 §4.1: a URN:NBN, once assigned, "MUST NOT be reused"; records therefore have a status
(``reserved``, ``active``, ``deactivated``) and are never deleted. §4.3: sub-namespaces are
delegated by the national library; a registrant writes only under the prefixes delegated to it.

>>> prefix_of("URN:NBN:FI:Demo-123")
'fi:demo'
>>> covers("fi:demo", "fi:demo:sub")
True
>>> with_q_component("https://example.org/a?x=1#top", "lang=fi")
'https://example.org/a?x=1&lang=fi#top'
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from urnkit.findings import Finding, is_acceptable
from urnkit.namespaces import nbn, validate
from urnkit.syntax import URNSyntaxError
from urnkit.urn import URN

Status = Literal["reserved", "active", "deactivated"]
Role = Literal["admin", "registrant"]
Generator = Literal["sequential", "random"]
STATUSES: tuple[Status, ...] = ("reserved", "active", "deactivated")
ROLES: tuple[Role, ...] = ("admin", "registrant")
GENERATORS: tuple[Generator, ...] = ("sequential", "random")


class ResolverError(Exception):
    """Base of the service's refusals, each type with its RFC 9457 problem: ``status`` (the
    HTTP status code), ``problem_type`` (a URI) and ``title`` (its short summary).

    >>> NotFoundError("no such URN").status
    404
    """

    status = 400
    problem_type = "about:blank"
    title = "Error"

    def __init__(self, detail: str, **extensions: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extensions = extensions

    def __str__(self) -> str:
        return self.detail  # which a caller may have made more precise since


class InvalidURNError(ResolverError):
    """The text is not a URN (RFC 8141 §2); carries the position, rule and section."""

    status = 400
    title = "Not a URN"

    @classmethod
    def from_syntax_error(cls, error: URNSyntaxError) -> InvalidURNError:
        """The problem for a syntax error, with where and why."""
        return cls(
            error.reason,
            input=error.args[0],
            position=error.position,
            rule=error.rule,
            section=error.section,
            explanation=str(error),
        )


class UnacceptableError(ResolverError):
    """Well-formed input that breaks a rule (RFC 8458, a namespace rule, a field's type)."""

    status = 422
    title = "Unacceptable"


class UnauthenticatedError(ResolverError):
    """No token, or a token that is unknown or revoked."""

    status = 401
    title = "Unauthenticated"


class ForbiddenError(ResolverError):
    """A valid token acting outside its organisation's delegated prefixes or its role."""

    status = 403
    title = "Forbidden"


class NotFoundError(ResolverError):
    """Nothing is registered under this name."""

    status = 404
    title = "Not found"


class ConflictError(ResolverError):
    """The request contradicts what is stored (e.g. writing to a deactivated URN)."""

    status = 409
    title = "Conflict"


class NotAcceptableError(ResolverError):
    """Nothing the service could answer is of a media type the request's ``Accept`` takes."""

    status = 406
    title = "Not acceptable"


@dataclass(frozen=True, slots=True)
class Location:
    """Where a resource can be found: lower ``priority`` numbers are tried first.

    >>> Location("https://example.org/x", priority=2, media_type="application/pdf").priority
    2
    """

    url: str
    priority: int = 1
    label: str | None = None
    media_type: str | None = None


@dataclass(frozen=True, slots=True)
class Record:
    """A registered URN: never deleted, its ``key`` unique forever (RFC 8458 §4.1)."""

    urn: str
    key: str
    prefix: str
    status: Status
    owner: str
    created: datetime
    updated: datetime
    locations: tuple[Location, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    successors: tuple[str, ...] = ()
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the organisation a token belongs to and the token's role."""

    organisation: str
    role: Role
    token_id: int


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One change to a record, appended and never altered."""

    at: datetime
    action: str
    actor: str
    record: Mapping[str, Any]


def parse_urn(text: str) -> URN:
    """The URN in ``text`` or :class:`InvalidURNError` saying where and why it is not one.

    >>> parse_urn("urn:nbn:fi-x").nid
    'nbn'
    """
    try:
        return URN.parse(text)
    except URNSyntaxError as error:
        raise InvalidURNError.from_syntax_error(error) from None


def normalize_prefix(prefix: str) -> str:
    """A delegated prefix in its stored form: country and sub-namespaces, lower case
    (RFC 8458 §4.3, "The entire prefix is case insensitive").

    >>> normalize_prefix("FI:Demo")
    'fi:demo'
    >>> normalize_prefix("fi-demo")
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: not a URN:NBN prefix: 'fi-demo' (RFC 8458 §4.2: ...)
    """
    country, *subnamespaces = prefix.split(":")
    if (
        len(country) != 2
        or not country.isascii()
        or not country.isalpha()
        or not all(part.isascii() and part.isalnum() for part in subnamespaces)
    ):
        raise UnacceptableError(
            f"not a URN:NBN prefix: {prefix!r} (RFC 8458 §4.2: a two-letter country code, then "
            "':'-separated sub-namespaces of letters and digits)"
        )
    return prefix.lower()


def prefix_of(urn: URN | str) -> str:
    """The normalized prefix of a URN:NBN; :class:`UnacceptableError` for other namespaces.

    >>> prefix_of("urn:nbn:de:gbv:089-3321752945")
    'de:gbv:089'
    """
    parsed = urn if isinstance(urn, URN) else parse_urn(urn)
    if parsed.nid.lower() != nbn.NID:
        raise UnacceptableError(
            f"this service registers URN:NBNs (RFC 8458) only; the NID is {parsed.nid!r}"
        )
    try:
        return nbn.parse(parsed).prefix.lower()
    except ValueError as error:
        raise UnacceptableError(str(error)) from None


def covers(delegated: str, prefix: str) -> bool:
    """Whether a delegated prefix covers ``prefix``: itself or one of its sub-namespaces.

    >>> covers("fi:demo", "fi:demo"), covers("fi:demo", "fi:demox"), covers("fi", "fi:demo")
    (True, False, True)
    """
    return prefix == delegated or prefix.startswith(delegated + ":")


def check_registrable(urn: URN) -> list[Finding]:
    """The warnings of a URN fit to register; :class:`UnacceptableError` with the findings when an
    error is among them (RFC 8458 §4.2 read strictly: new URN:NBNs have their hyphen).

    >>> check_registrable(URN.parse("urn:nbn:fi-fe2010"))
    []
    """
    prefix_of(urn)  # URN:NBNs only (RFC 8458)
    if urn.r_component is not None or urn.q_component is not None or urn.f_component is not None:
        raise UnacceptableError(
            "register the assigned name alone, without r-, q- or f-components (RFC 8141 §2)",
            urn=str(urn),
        )
    findings = validate(str(urn), strict=True)
    if not is_acceptable(findings):
        errors = [f for f in findings if f.severity == "error"]
        raise UnacceptableError(
            "; ".join(f"{f.message} (position {f.position}, {f.section})" for f in errors),
            findings=[_finding_json(f) for f in findings],
        )
    return findings


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "severity": finding.severity,
        "message": finding.message,
        "position": finding.position,
        "section": finding.section,
    }


def with_q_component(url: str, q_component: str) -> str:
    """The locator with a URN's q-component appended to its query (RFC 8141 §2.3.2).

    The q-component becomes the query when the locator has none and is appended after ``&``
    when it has one; a fragment stays last.

    >>> with_q_component("https://example.org/a", "lang=fi")
    'https://example.org/a?lang=fi'
    """
    if not q_component:
        return url
    base, hash_mark, fragment = url.partition("#")
    _, question_mark, query = base.partition("?")
    if not question_mark:
        joiner = "?"
    elif not query or query.endswith("&"):  # an empty query, or one ending in its separator
        joiner = ""
    else:
        joiner = "&"
    return f"{base}{joiner}{q_component}{hash_mark}{fragment}"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON merge patch: ``null`` removes a member, objects merge, the rest replaces.

    >>> merge_patch({"a": 1, "b": {"c": 2}}, {"a": None, "b": {"d": 3}})
    {'b': {'c': 2, 'd': 3}}
    """
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = merge_patch(result.get(name), value)
    return result


# --- generation ----------------------------------------------------------------------------------

# Douglas Crockford's base-32 alphabet, lower case: digits and letters without i, l, o, u.
BASE32 = "0123456789abcdefghjkmnpqrstvwxyz"
RANDOM_LENGTH = 10  # 50 bits: a collision needs ~2^25 URNs in one prefix, and is retried then
DNB_COUNTRIES = frozenset({"de", "at", "ch"})  # where DNB's check digit is the national rule


def random_nbn_string() -> str:
    """Ten random base-32 characters and an ISO/IEC 7064 MOD 37,36 check character, which
    catches every single wrong character and most (not all) swaps of neighbours.

    >>> s = random_nbn_string()
    >>> len(s), set(s[:-1]) <= set(BASE32)
    (11, True)
    """
    from stdnum.iso7064 import mod_37_36

    body = "".join(secrets.choice(BASE32) for _ in range(RANDOM_LENGTH))
    return body + mod_37_36.calc_check_digit(body.upper()).lower()


def sequential_nbn_string(value: int) -> str:
    """The NBN string for the ``value``-th sequential URN of a prefix.

    >>> sequential_nbn_string(42)
    '42'
    """
    return str(value)


def assigned_name(prefix: str, nbn_string: str) -> str:
    """The URN:NBN for ``nbn_string`` in ``prefix``, with DNB's check digit under de/at/ch.

    >>> assigned_name("fi:demo", "7")
    'urn:nbn:fi:demo-7'
    >>> assigned_name("de:gbv:089", "332175294")
    'urn:nbn:de:gbv:089-3321752945'
    """
    text = f"urn:nbn:{prefix}-{nbn_string}"
    if prefix.split(":")[0] in DNB_COUNTRIES:
        text += nbn.dnb_check_digit(text)
    return text


# --- link checking -------------------------------------------------------------------------------

LinkStatus = Literal["ok", "broken"]
Verdict = Literal["ok", "gone", "failed"]
FAILURES_TO_BREAK = 3
"""Consecutive failed checks (timeouts, refused connections, 5xx …) that make a link broken: one
bad minute of a repository does not reroute resolution; a 404 or 410 does at once."""


def link_verdict(http_status: int) -> Verdict:
    """What an HTTP answer says of a link: ``ok`` (2xx; or 401/403: the resource is there behind
    access control, as legal deposit copies often are), ``gone`` (404, 410: broken at once), or
    ``failed`` (anything else: broken after :data:`FAILURES_TO_BREAK` in a row).

    >>> link_verdict(200), link_verdict(403), link_verdict(410), link_verdict(503)
    ('ok', 'ok', 'gone', 'failed')
    """
    if 200 <= http_status < 300 or http_status in (401, 403):
        return "ok"
    return "gone" if http_status in (404, 410) else "failed"


@dataclass(frozen=True, slots=True)
class LinkCheck:
    """One check of a location URL: the verdict, the final HTTP status if any answer came, and
    what happened in words (``"GET 200 OK (HEAD: 405)"``, ``"timed out after 10 s"``)."""

    url: str
    verdict: Verdict
    http_status: int | None
    detail: str
    at: datetime


@dataclass(frozen=True, slots=True)
class LinkState:
    """What link checking knows of a URL: ``broken`` links are left out of resolution.
    ``failures`` counts consecutive failed checks, ``since`` is when the status last changed,
    ``checked`` when the URL was last taken for checking (None: not yet)."""

    url: str
    status: LinkStatus
    http_status: int | None
    detail: str | None
    failures: int
    since: datetime
    checked: datetime | None


@dataclass(frozen=True, slots=True)
class BrokenLink:
    """A location of a record whose link is broken, for its owner's report."""

    owner: str
    urn: str
    link: LinkState


def next_link_state(previous: LinkState | None, check: LinkCheck) -> LinkState:
    """A URL's state after ``check``: ok at once on an answer that is ok; broken at once when
    gone; broken after :data:`FAILURES_TO_BREAK` consecutive failures, else as it was.

    >>> from datetime import UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> state = None
    >>> for _ in range(FAILURES_TO_BREAK):
    ...     state = next_link_state(state, LinkCheck("https://x.example/", "failed", 503, "", t))
    ...     print(state.status, state.failures)
    ok 1
    ok 2
    broken 3
    """
    failures = 0 if check.verdict == "ok" else (previous.failures if previous else 0) + 1
    status: LinkStatus
    if check.verdict == "ok":
        status = "ok"
    elif check.verdict == "gone" or failures >= FAILURES_TO_BREAK:
        status = "broken"
    else:
        status = previous.status if previous else "ok"
    since = previous.since if previous is not None and previous.status == status else check.at
    return LinkState(check.url, status, check.http_status, check.detail, failures, since, check.at)


@dataclass(frozen=True, slots=True)
class HarvestSource:
    """An OAI-PMH repository whose records register URN:NBN -> URL mappings
    (:mod:`urnkit.resolver.oai_harvest`): only under ``organisation``'s delegated prefixes, only
    location URLs that fully match ``url_pattern``. ``next_from`` is the datestamp the next
    incremental harvest asks ``from=``, in the repository's ``granularity``."""

    id: int
    name: str
    base_url: str
    organisation: str
    url_pattern: str
    set_spec: str | None = None
    granularity: str | None = None
    next_from: str | None = None
    harvested: datetime | None = None
    created: datetime | None = None
