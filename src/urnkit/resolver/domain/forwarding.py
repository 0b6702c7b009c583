"""Forwarding to national resolvers: the rules of the country table (no SQL, no HTTP).

RFC 8458 §4.4: the country code that begins a URN:NBN's prefix leads to the national resolver
that can resolve it. A URN:NBN this service does not hold, under a prefix not delegated here,
is forwarded (``302 Found``) to its country's resolver, whose URL template has a ``{urn}`` that
the URN fills: in a path it is put as it is (a URN is a valid path), in a query it is
percent-encoded as a query value (``&``, ``=``, ``+`` and ``%`` would change its meaning there).

>>> forward_url("https://urn.fi/{urn}", "URN:NBN:fi-fe2010")
'https://urn.fi/URN:NBN:fi-fe2010'
>>> forward_url("https://urn.kb.se/resolve?urn={urn}", "urn:nbn:se:kb-a&b%2F")
'https://urn.kb.se/resolve?urn=urn:nbn:se:kb-a%26b%252F'
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from urllib.parse import quote, urlsplit

from urnkit.namespaces import nbn
from urnkit.resolver.domain import UnacceptableError

Health = Literal["unknown", "up", "down"]
PLACEHOLDER = "{urn}"
MAX_TEMPLATE = 2000
_QUERY_SAFE = ":/@!$'()*,;"  # what stays as it is in a query value: no "&", "=", "+", "%"
_LOOPBACK_NAMES = frozenset({"localhost"})


@dataclass(frozen=True, slots=True)
class Forwarding:
    """A country's national resolver, and what the last health check found of it."""

    country: str
    url_template: str
    health: Health = "unknown"
    checked: datetime | None = None
    detail: str | None = None
    note: str | None = None


def normalize_country(code: str) -> str:
    """An ISO 3166-1 alpha-2 country code as URN:NBN prefixes begin with it, lower case
    (RFC 8458 §4.2); checked against ISO 3166-1 when pycountry is installed.

    >>> normalize_country("FI")
    'fi'
    >>> normalize_country("xx")
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: 'xx' is not a country code: "xx" is an ISO 3166-1 ...
    """
    if len(code) != 2 or not code.isascii() or not code.isalpha():
        raise UnacceptableError(
            f"{code!r} is not a country code: two letters, ISO 3166-1 alpha-2 (RFC 8458 §4.2)"
        )
    errors = [
        finding
        for finding in nbn._country_findings(code, 0)
        if finding.code != nbn.COUNTRY_UNCHECKED  # no pycountry: accepted, as the core does
    ]
    if errors:
        raise UnacceptableError(f"{code!r} is not a country code: {errors[0].message}")
    return code.lower()


def check_template(template: str) -> str:
    """A resolver URL template fit to store: an absolute ``https`` URL (``http`` only on a
    loopback host, for a resolver on the same machine) with one ``{urn}``, in its path or query.

    >>> check_template("http://urn.example/{urn}")
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: 'http://urn.example/{urn}': the URL must be https ...
    """
    if template.count(PLACEHOLDER) != 1:
        raise UnacceptableError(
            f"{template!r}: the template holds {{urn}} exactly once, where the URN goes"
        )
    sample = template.replace(PLACEHOLDER, "urn:nbn:fi-1")
    if "{" in sample or "}" in sample or not sample.isprintable() or " " in sample:
        raise UnacceptableError(f"{template!r}: no braces but {{urn}}, no spaces")
    if len(template) > MAX_TEMPLATE:
        raise UnacceptableError(f"a template has at most {MAX_TEMPLATE} characters")
    try:
        parts = urlsplit(sample)
        host = parts.hostname
    except ValueError as error:
        raise UnacceptableError(f"{template!r}: not a URL: {error}") from None
    if not host or not parts.netloc or "urn:nbn:fi-1" in parts.netloc:
        raise UnacceptableError(f"{template!r}: not an absolute URL with a host")
    if "urn:nbn:fi-1" in parts.fragment:
        raise UnacceptableError(f"{template!r}: {{urn}} goes in the path or the query")
    if parts.scheme != "https" and not (parts.scheme == "http" and _loopback(host)):
        raise UnacceptableError(
            f"{template!r}: the URL must be https (http only on a loopback host)"
        )
    return template


def _loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def forward_url(template: str, assigned_name: str) -> str:
    """The template with the URN filled in: as it is in a path, encoded in a query."""
    before, _, after = template.partition(PLACEHOLDER)
    in_query = "?" in before
    return before + (quote(assigned_name, safe=_QUERY_SAFE) if in_query else assigned_name) + after
