"""The requests of RFC 2483 §4 (I2L, I2Ls, I2R, I2Rs, I2C, I2Cs, I2N, I2Ns, I=I; RFC 2483
calls them URI resolution services) over the resolver's records, and the pieces of their
answers: which request is named, content negotiation, ``text/uri-list`` (RFC 2483 §5) and
``Link`` headers (RFC 8288).

A request is named by RFC 2169's path, ``/uri-res/{name}?{urn}`` (RFC 2169's N2L… spellings
are aliases), or on ``/{urn}`` by the directive ``s=`` (draft-ietf-urnbis-rfc2141bis-urn-03
§2.3.1), in the HTTP query or in the r-component (``?+s=I2Ls``, RFC 8141 §2.3.1).

>>> request_name("N2Ls"), request_name("i2ls")
('I2Ls', None)
>>> requested("s=I2Ls&c=ToC"), requested("+s=I2C?=lang=fi")
('I2Ls', 'I2C')
>>> uri_list([("https://example.org/a", "priority 1")])
'# priority 1\\r\\nhttps://example.org/a\\r\\n'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import quote, unquote

from werkzeug.datastructures import MIMEAccept
from werkzeug.http import parse_accept_header

from urnkit.resolver.domain import InvalidURNError, Location, parse_urn
from urnkit.resolver.domain.descriptions import Description

# RFC 2483 §4.1-§4.9, in the order of the IANA table of rfc2141bis §9.2.2.
REQUESTS = ("I2L", "I2Ls", "I2R", "I2Rs", "I2C", "I2Cs", "I2N", "I2Ns", "I=I")
# RFC 2169 §3 names the same requests N2…, as URNs were their only input then.
ALIASES = {"N" + name[1:]: name for name in REQUESTS[:-1]} | {"N=N": "I=I"}
_NAMES = {name: name for name in REQUESTS} | ALIASES
_KEYWORD = re.compile(r"[A-Za-z](?:-?[A-Za-z0-9])*")  # rfc2141bis §2.3: keywd
MAX_HOPS = 32  # successors followed by I2N, and URNs listed by I2Ns
# Not RFC 2483's: the record's signposts as a linkset (RFC 9264), at /{urn}?s=linkset only.
LINKSET_SERVICE = "linkset"
# What percent-encoding leaves of a URL in a Link header: RFC 3986's reserved and unreserved
# characters and "%" (as Starlette's RedirectResponse does for Location). A URL of only those
# is taken as it is: matching costs a third of quote(), and resolution gives a Link header.
_URI_SAFE = ":/%#?=@[]!$&'()*+,;~"
_PLAIN_URI = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")


def request_name(name: str) -> str | None:
    """The RFC 2483 name of a request named by its name or an RFC 2169 alias (case-sensitive,
    as directives are: rfc2141bis §2.3); None for any other name.

    >>> request_name("I=I"), request_name("N=N"), request_name("L2R")
    ('I=I', 'I=I', None)
    """
    return _NAMES.get(name)


def directives(query: str) -> dict[str, str]:
    """The ``keywd=value`` directives of a query (rfc2141bis §2.3), values percent-decoded; a
    keyword given twice is ignored ("MUST ignore all query directives therein using the
    offending <keywd>"), and so is what is no directive.

    >>> directives("s=I2L&c=ToC&s=I2R&x")
    {'c': 'ToC'}
    """
    found: dict[str, str] = {}
    repeated: set[str] = set()
    for directive in query.split("&"):
        keyword, equals, value = directive.partition("=")
        if equals and _KEYWORD.fullmatch(keyword):
            if keyword in found:
                repeated.add(keyword)
            found[keyword] = unquote(value)
    return {keyword: value for keyword, value in found.items() if keyword not in repeated}


def requested(query: str) -> str | None:
    """The request an HTTP query on ``/{urn}`` names with ``s=``: in an r-component (``+…``,
    up to ``?=``, RFC 8141 §2.3.1) or as a directive of a plain query (rfc2141bis §2.3.1): one
    of RFC 2483's, or this resolver's own :data:`LINKSET_SERVICE`. None for none, and for a
    value no request has: the default answer then ("MUST gracefully fall back"). A
    q-component (``=…``) names none: it belongs to the resource (RFC 8141 §2.3.2).

    >>> requested("=s=I2L"), requested("s=I2X"), requested("+s=N2C"), requested("s=linkset")
    (None, None, 'I2C', 'linkset')
    """
    if query[:1] == "=":
        return None
    if query[:1] == "+":
        query = query[1:].partition("?=")[0]
    value = directives(query).get("s")
    if value == LINKSET_SERVICE:
        return value
    return None if value is None else request_name(value)


def accept_header(value: str | None) -> MIMEAccept:
    """An ``Accept`` header parsed (RFC 9110 §12.5.1); none, or one of nothing but malformed
    entries (which a server may ignore), accepts anything.

    >>> accept_header("text/html;q=0.5, application/json").best
    'application/json'
    >>> accept_header("text/html;q=high").best
    '*/*'
    """
    parsed = parse_accept_header(value or "", MIMEAccept)
    return parsed if parsed else parse_accept_header("*/*", MIMEAccept)


def quality(accept: MIMEAccept, media_type: str | None) -> float:
    """The quality ``accept`` gives ``media_type``; a type not known (None) only ``*/*``'s.

    >>> quality(accept_header("application/pdf, */*;q=0.1"), None)
    0.1
    """
    if media_type is None:
        return max((q for value, q in accept if value == "*/*"), default=0)
    try:
        return float(accept.quality(media_type))
    except ValueError:  # a stored media type that is no type/subtype
        return quality(accept, None)


def negotiate(accept: MIMEAccept, offered: Sequence[str]) -> str | None:
    """The type of ``offered`` that ``accept`` prefers: the highest quality, then the most
    specific range, then the first offered; None when it accepts none.

    >>> negotiate(accept_header("text/html,*/*;q=0.8"), ["application/json", "text/html"])
    'text/html'
    """
    return accept.best_match(offered)


def uri_list(entries: Iterable[tuple[str | None, str | None]]) -> str:
    """A ``text/uri-list`` (RFC 2483 §5): each (URI, comment) as a ``#`` comment line, if any,
    then the URI, if any; lines end in CRLF.

    >>> uri_list([(None, "urn:nbn:fi-1"), ("https://example.org/", None)])
    '# urn:nbn:fi-1\\r\\nhttps://example.org/\\r\\n'
    """
    lines = []
    for uri, comment in entries:
        if comment is not None:
            lines.append("# " + " ".join(comment.split()))  # a comment holds no line break
        if uri is not None:
            lines.append(uri)
    return "".join(line + "\r\n" for line in lines)


def location_comment(location: Location) -> str:
    """What a ``text/uri-list`` comment says of a location.

    >>> location_comment(Location("https://example.org/", 2, "PDF", "application/pdf"))
    'priority 2, application/pdf, PDF'
    """
    parts = [f"priority {location.priority}", location.media_type, location.label]
    return ", ".join(part for part in parts if part)


def uri_reference(uri: str) -> str:
    """``uri`` percent-encoded where it holds what a URI may not (UTF-8 first), fit for a
    ``Location`` or ``Link`` header.

    >>> uri_reference("https://example.org/ä b?q=1")
    'https://example.org/%C3%A4%20b?q=1'
    """
    return uri if _PLAIN_URI.fullmatch(uri) else quote(uri, _URI_SAFE)


def link_header(links: Iterable[tuple[str, str]]) -> str:
    """A ``Link`` header value (RFC 8288 §3): each (URI, relation) as ``<URI>; rel="…"``, the
    URI percent-encoded where it holds what a URI may not, separated by commas.

    >>> link_header([("https://example.org/ä b", "alternate"), ("/urn:nbn:fi-2", "next")])
    '<https://example.org/%C3%A4%20b>; rel="alternate", </urn:nbn:fi-2>; rel="next"'
    """
    return ", ".join([f'<{uri_reference(uri)}>; rel="{rel}"' for uri, rel in links])


def ranked(description: Description, accept: MIMEAccept) -> list[Location]:
    """The usable locations ``accept`` takes, preferred first: by the quality it gives
    their media types, then by priority (I2R, I2Rs)."""
    scored = [(quality(accept, loc.media_type), n, loc) for n, loc in enumerate(description.usable)]
    return [loc for q, _, loc in sorted(scored, key=lambda s: (-s[0], s[1])) if q > 0]


def equivalent(query: str) -> bool:
    """Whether the two URNs of an I=I query (RFC 2483 §4.9), ``{urn}&{urn}``, are
    equivalent: RFC 8141 §3 and their namespace's rules (``URN.__eq__``). The URNs are
    separated by the one ``&`` followed by ``urn:`` (in any case).

    >>> equivalent("URN:NBN:FI-1&urn:nbn:fi-1")
    True
    """
    starts = [m.start() for m in re.finditer(r"&(?=[uU][rR][nN]:)", query)]
    if len(starts) != 1:
        raise InvalidURNError(
            "I=I compares two URNs, sent as /uri-res/I=I?{urn}&{urn}: the query holds one "
            f"'&' followed by 'urn:', not {len(starts)}",
            input=query,
        )
    first, second = query[: starts[0]], query[starts[0] + 1 :]
    return parse_urn(first) == parse_urn(second)
