"""The patterns the resolver's /openapi.json publishes for a URN, a prefix and a country admit
exactly what the service's parsers do (ECMA-262 regular expressions, which Python's ``re``
reads alike for these). Here, beside the ABNF strategies of tests/, not under tests/resolver/."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from urn_strategies import nsss, urns

from urnkit import is_valid
from urnkit.resolver.domain import (
    ASSIGNED_NAME_PATTERN,
    COUNTRY_PATTERN,
    PREFIX_PATTERN,
    UnacceptableError,
    normalize_prefix,
)
from urnkit.resolver.services import Services
from urnkit.resolver.store import Store
from urnkit.resolver.web import create_app


def _assigned_name(urn: str) -> str:
    """``urn`` without its r-, q- and f-components (RFC 8141 §2: assigned-name)."""
    return re.split(r"\?\+|\?=|#", urn, maxsplit=1)[0]


# RFC 8141 §2: every assigned-name the library's parser accepts matches the pattern.
@given(urns())
def test_every_assigned_name_matches_the_urn_pattern(urn: str) -> None:
    assert re.fullmatch(ASSIGNED_NAME_PATTERN, _assigned_name(urn))


# RFC 8141 §2: and what the parser refuses, the pattern refuses.
@given(st.text(alphabet="urnURN:abc-0/%?#.~ é", max_size=20) | nsss())
def test_the_urn_pattern_agrees_with_the_parser(text: str) -> None:
    if "?" in text or "#" in text:  # components: not an assigned-name, whatever else
        assert re.fullmatch(ASSIGNED_NAME_PATTERN, text) is None
        return
    assert bool(re.fullmatch(ASSIGNED_NAME_PATTERN, text)) == is_valid(text)


# RFC 8458 §4.2: the prefix pattern and normalize_prefix agree.
@given(st.text(alphabet="fiFIse:0-9aé ", max_size=12))
def test_the_prefix_pattern_agrees_with_normalize_prefix(text: str) -> None:
    try:
        normalize_prefix(text)
        accepted = True
    except UnacceptableError:
        accepted = False
    assert bool(re.fullmatch(PREFIX_PATTERN, text)) == accepted


@pytest.mark.parametrize(
    ("text", "matches"), [("se", True), ("FI", True), ("s", False), ("se1", False), ("fi:x", False)]
)
def test_the_country_pattern(text: str, matches: bool) -> None:
    assert bool(re.fullmatch(COUNTRY_PATTERN, text)) is matches


def test_the_document_publishes_the_patterns() -> None:
    document = create_app(Services(Store("sqlite://"))).openapi()
    parameters = {
        (path, parameter["name"]): parameter["schema"].get("pattern")
        for path, item in document["paths"].items()
        for operation in item.values()
        for parameter in operation.get("parameters", [])
    }
    assert parameters["/api/v1/urns/{urn}", "urn"] == ASSIGNED_NAME_PATTERN
    assert parameters["/api/v1/prefixes/{prefix}/urns", "prefix"] == PREFIX_PATTERN
    assert parameters["/api/v1/forwarding/{country}", "country"] == COUNTRY_PATTERN
    delegate = document["components"]["schemas"]["DelegateIn"]["properties"]["prefix"]
    assert delegate["pattern"] == PREFIX_PATTERN
