"""Reading RFC 2483 answers as a client does: the test URN's four locations, and ``Link``
headers (RFC 8288) parsed by :func:`parse_links` (``services/test_rfc2483.py``,
``test_negotiation.py``)."""

from __future__ import annotations

import re
from typing import Any

import httpx


def locations(unique: str) -> list[dict[str, Any]]:
    """Four locations of a test's own: HTML, two PDFs, one of no recorded media type."""
    base = f"https://example.org/{unique}"
    return [
        {"url": f"{base}/page", "priority": 1, "media_type": "text/html", "label": "Page"},
        {"url": f"{base}/a.pdf", "priority": 2, "media_type": "application/pdf"},
        {"url": f"https://mirror.example.net/{unique}.pdf", "priority": 3,
         "media_type": "application/pdf"},
        {"url": f"{base}/any", "priority": 4},
    ]  # fmt: skip


def urls(unique: str) -> list[str]:
    return [location["url"] for location in locations(unique)]


# RFC 8288 §3: link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param ), link-param =
# token BWS [ "=" BWS ( token / quoted-string ) ]; link-values are separated by commas.
_TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_PARAM = re.compile(rf"\s*;\s*({_TOKEN})\s*(?:=\s*({_TOKEN}|{_QUOTED}))?")
_LINK = re.compile(rf"\s*<([^>]*)>((?:\s*;\s*{_TOKEN}\s*(?:=\s*(?:{_TOKEN}|{_QUOTED}))?)*)\s*")


def parse_links(value: str) -> list[tuple[str, dict[str, str]]]:
    """The links of a ``Link`` header value (RFC 8288 §3): (URI, parameters), in order;
    AssertionError where the value breaks the grammar."""
    found, position = [], 0
    while position < len(value):
        match = _LINK.match(value, position)
        assert match is not None, f"not a link-value at {position}: {value[position:]!r}"
        parameters = {
            name.lower(): re.sub(r"\\(.)", r"\1", raw[1:-1]) if raw.startswith('"') else raw
            for name, raw in _PARAM.findall(match[2])
        }
        found.append((match[1], parameters))
        position = match.end()
        if position < len(value):
            assert value[position] == ",", f"expected ',' at {position}: {value!r}"
            position += 1
    return found


def links(response: httpx.Response) -> list[tuple[str, str]]:
    """The (URI, rel) of every link of the response's Link headers, in order."""
    value = ", ".join(response.headers.get_list("link"))
    return [(uri, parameters["rel"]) for uri, parameters in parse_links(value)]


def rel(response: httpx.Response, relation: str) -> list[str]:
    """The URIs of the response's links with ``relation``."""
    return [uri for uri, found in links(response) if found == relation]
