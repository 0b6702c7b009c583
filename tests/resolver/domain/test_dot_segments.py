"""URNs with dot-segments are not registered (``domain.names.check_resolvable``): HTTP clients
remove ``.`` and ``..`` segments from a path before sending it (RFC 3986 §5.2.4), so such a URN
could never be resolved at ``/{urn}``, and ``…-1/../x`` would reach another URN. ``%2E`` counts
as ``.`` (RFC 3986 §6.2.2.2: normalizers decode it; browsers treat it as a dot).

Held against an independent oracle: the standard library's ``urljoin``, which removes dot
segments as RFC 3986 §5.2 says.
"""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain import UnacceptableError, check_resolvable, dot_segments

BASE = "http://resolver.example/"
SEGMENTS = st.one_of(
    st.sampled_from([".", "..", "%2E", "%2e", ".%2E", "%2e.", "%2E%2e", "...", "a.", ".a", ""]),
    st.text("abc.-%2Ee", min_size=1, max_size=6),
)


def kept_by_http_clients(name: str) -> bool:
    """Whether the path ``/{name}`` survives RFC 3986 §5.2's merge unchanged, ``%2E`` read
    as ``.``."""
    path = "/" + name.replace("%2E", ".").replace("%2e", ".")
    return urljoin(BASE, path) == BASE + path[1:]


@given(segments=st.lists(SEGMENTS, max_size=5))
def test_a_urn_is_resolvable_exactly_when_http_clients_keep_its_path(
    segments: list[str],
) -> None:
    # RFC 3986 §5.2.4: remove_dot_segments; §6.2.2.2: %2E is ".".
    name = "/".join(["urn:nbn:fi:test-1", *segments])
    kept = kept_by_http_clients(name)
    assert (dot_segments(name) == []) == kept
    if kept:
        check_resolvable(name)
    else:
        with pytest.raises(UnacceptableError, match=r"RFC 3986 §5\.2\.4") as refused:
            check_resolvable(name)
        assert refused.value.extensions["section"] == "RFC 3986 §5.2.4"


@pytest.mark.parametrize(
    "name",
    [
        "urn:nbn:fi:test-1/../../urn:nbn:fi:other-3",
        "urn:nbn:fi:test-1/.",
        "urn:nbn:fi:test-1/./x",
        "urn:nbn:fi:test-1/%2E%2E/x",
        "urn:nbn:fi:test-1/.%2e",
    ],
)
def test_dot_segments_are_refused_naming_the_rule(name: str) -> None:
    # RFC 3986 §5.2.4: the example points at another organisation's URN.
    with pytest.raises(UnacceptableError, match="dot-segment"):
        check_resolvable(name)


@pytest.mark.parametrize(
    "name",
    [
        "urn:nbn:fi:test-1/a.b",
        "urn:nbn:fi:test-1/...",
        "urn:nbn:fi:test-1%2F..",
        "urn:nbn:fi:test-1..",
    ],
)
def test_dots_that_are_no_segment_of_their_own_are_kept(name: str) -> None:
    # RFC 3986 §3.3: only a whole segment "." or ".." is a dot-segment; %2F is no separator.
    check_resolvable(name)
