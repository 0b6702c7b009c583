"""One interpretation of the path, against a running server (both databases): the routes of
``/api/v1/urns…`` match the raw path the URN is taken from, so a percent-encoded route word is
no route word, ``%2F`` stays in the URN (RFC 8141 §3: ``%2F`` and ``/`` differ), and no request
acts on another record than the one its raw path names. Resolution takes the URN from the raw
path too.
"""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from resolver_support import Resolver, assert_problem, register

SUFFIXES = {"history": "GET", "deactivate": "POST"}


def encoded(word: str, positions: set[int], upper: bool) -> str:
    """``word`` with the characters at ``positions`` percent-encoded (hex digits in ``upper``
    case or not).

    >>> encoded("history", {6}, True), encoded("history", {0, 1}, False)
    ('histor%79', '%68%69story')
    """
    return "".join(
        (f"%{ord(c):02X}" if upper else f"%{ord(c):02x}") if n in positions else c
        for n, c in enumerate(word)
    )


def status_of(api: httpx.Client, urn: str) -> str:
    response = api.get(f"/api/v1/urns/{urn}")
    assert response.status_code == 200, response.text
    status: str = response.json()["status"]
    return status


@pytest.mark.parametrize("word", SUFFIXES)
@pytest.mark.parametrize("position", ["first", "last"])
def test_a_percent_encoded_route_word_is_part_of_the_urn(
    api: httpx.Client, unique: str, word: str, position: str
) -> None:
    # RFC 8141 §3: the URN is the raw path's; a percent-encoded route word belongs to it.
    urn = f"urn:nbn:fi:test-{unique}"
    spelled = encoded(word, {0 if position == "first" else len(word) - 1}, upper=True)
    named = f"{urn}/{spelled}"  # the URN the raw path names
    register(api, urn)
    register(api, named)
    register(api, f"{urn}/d")  # what the decoded path's suffix, cut from the raw one, named
    method = SUFFIXES[word]
    body = {"note": "no"} if method == "POST" else None
    response = api.request(method, f"/api/v1/urns/{named}", json=body)
    if method == "GET":  # the record the raw path names, not the history of another
        assert response.status_code == 200, response.text
        assert response.json()["urn"] == named
    else:  # POST is not a method of /api/v1/urns/{urn}
        assert_problem(response, 405)
    for other in (urn, named, f"{urn}/d"):
        assert status_of(api, other) == "active"


@pytest.mark.parametrize("word", SUFFIXES)
def test_an_encoded_slash_before_a_route_word_stays_in_the_urn(
    api: httpx.Client, unique: str, word: str
) -> None:
    # RFC 8141 §3: "%2F" and "/" differ; "…%2Fhistory" is a URN of its own, not a route.
    urn = f"urn:nbn:fi:test-{unique}"
    named = f"{urn}%2F{word}"
    register(api, urn)
    register(api, named)
    assert api.get(f"/api/v1/urns/{named}").json()["urn"] == named
    response = api.post(f"/api/v1/urns/{named}", json={"note": "no"})
    assert_problem(response, 405)
    assert status_of(api, urn) == "active"
    assert status_of(api, named) == "active"
    # Sent unencoded, the route word is one: the history of the URN, its deactivation.
    assert api.get(f"/api/v1/urns/{urn}/history").json()["urn"] == urn
    assert api.post(f"/api/v1/urns/{urn}/deactivate", json={}).json()["status"] == "deactivated"
    assert status_of(api, named) == "active"


@pytest.mark.parametrize("prefix", ["/api/v1/urn%73/", "/api%2Fv1/urns/", "/api/v1/%75rns/"])
def test_an_encoded_route_prefix_reaches_no_record(
    api: httpx.Client, unique: str, prefix: str
) -> None:
    # RFC 3986 §2.1: an encoded "s" or "/" in the route's own words makes no route of it.
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/kept"}])
    assert api.put(prefix + urn, json={"locations": []}).status_code in (404, 405)
    assert api.post(prefix + urn + "/deactivate", json={}).status_code in (404, 405)
    assert (
        api.get(f"/api/v1/urns/{urn}").json()["locations"][0]["url"] == "https://example.org/kept"
    )
    assert status_of(api, urn) == "active"


@settings(max_examples=15, deadline=None)
@given(
    positions=st.sets(st.integers(0, len("deactivate") - 1), min_size=1),
    upper=st.booleans(),
    slash=st.booleans(),
)
def test_no_spelling_of_deactivate_acts_on_another_record(
    resolver: Resolver, positions: set[int], upper: bool, slash: bool
) -> None:
    # RFC 8141 §3: however the suffix is percent-encoded, what a POST acts on is the URN of the
    # raw path: none here (405), and the records around it stay active.
    urn = "urn:nbn:fi:test-pathspelling"
    around = [urn, *(f"{urn}/{'deactivate'[:n]}" for n in range(1, 11))]
    spelled = encoded("deactivate", positions, upper)
    with resolver.client(resolver.registrant_token) as api:
        for other in around:
            api.put(f"/api/v1/urns/{other}", json={"locations": []})
        separator = "%2F" if slash else "/"
        response = api.post(f"/api/v1/urns/{urn}{separator}{spelled}", json={})
        assert_problem(response, 405)
        for other in around:
            assert status_of(api, other) == "active"


def test_resolution_takes_the_urn_from_the_raw_path(api: httpx.Client, unique: str) -> None:
    # RFC 8141 §3: "/" and "%2F" in an NSS are different URNs; resolution keeps them apart.
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, f"{urn}/d", [{"url": "https://example.org/slash"}])
    anonymous = httpx.Client(base_url=str(api.base_url), timeout=30)
    with anonymous:
        assert anonymous.get(f"/{urn}/d").headers["location"] == "https://example.org/slash"
        assert_problem(anonymous.get(f"/{urn}%2Fd"), 404)
        assert_problem(anonymous.get(f"/{urn}%2Fd", headers={"Accept": "application/json"}), 404)
        # An encoded "u" of "urn:" is no URN (RFC 8141 §2: the scheme is "urn").
        assert anonymous.get(f"/%75rn:nbn:fi:test-{unique}/d").status_code in (400, 404)
