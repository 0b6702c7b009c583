"""Request body limits and the bearer token of a write, against a running server (both
databases): a body over its endpoint's limit is answered 413 (RFC 9110 §15.5.14) without being
read, whether it says its length or is chunked; a write without a live token 401 before any of
its body is read.

A 50 MB body is sent from a generator that counts what it yields: had the server read it all,
the count would reach 50 MB (the kernel's socket buffers hold a few MB at most).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from resolver_support import Resolver, assert_problem

from urnkit.resolver.services.records import MAX_BATCH_LOCATIONS
from urnkit.resolver.web.limits import BATCH_BODY, RECORD_BODY, SMALL_BODY

HUGE = 50 * 1024 * 1024
CHUNK = 256 * 1024
# What the socket buffers between client and server may have taken beyond what the server
# read (a few MB on loopback): a server that read it all would have taken all 50 MB.
BUFFERED = 10 * 1024 * 1024


class Source:
    """A body of ``size`` bytes of JSON whitespace, yielded in chunks, counting what was taken."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.sent = 0

    def __iter__(self) -> Iterator[bytes]:
        while self.sent < self.size:
            chunk = b" " * min(CHUNK, self.size - self.sent)
            self.sent += len(chunk)
            yield chunk


def send_huge(
    resolver: Resolver, method: str, path: str, token: str | None, *, say_length: bool
) -> tuple[httpx.Response, float, int]:
    """The answer to a 50 MB body streamed to ``path``, the seconds it took, the bytes taken."""
    source = Source(HUGE)
    headers = {"Content-Type": "application/json"}
    if say_length:
        headers["Content-Length"] = str(HUGE)
    with resolver.client(token) as client:
        started = time.monotonic()
        response = client.request(method, path, content=source, headers=headers, timeout=20)
        took = time.monotonic() - started
    print(f"{method} {path}: {response.status_code} in {took * 1000:.0f} ms, {source.sent:,} B")
    return response, took, source.sent


WRITES = [
    ("PUT", "/api/v1/urns/urn:nbn:fi:test-huge"),
    ("PATCH", "/api/v1/urns/urn:nbn:fi:test-huge"),
    ("POST", "/api/v1/urns/urn:nbn:fi:test-huge/deactivate"),
    ("POST", "/api/v1/urns:batch"),
    ("POST", "/api/v1/organisations"),
]


@pytest.mark.parametrize("say_length", [True, False], ids=["content-length", "chunked"])
@pytest.mark.parametrize(("method", "path"), WRITES)
def test_a_huge_body_is_refused_unread(
    resolver: Resolver, method: str, path: str, say_length: bool
) -> None:
    # RFC 9110 §15.5.14: 413 Content Too Large, answered before the body is read.
    response, took, sent = send_huge(
        resolver, method, path, resolver.admin_token, say_length=say_length
    )
    limit = assert_problem(response, 413)["limit"]
    assert limit == (
        BATCH_BODY if path.endswith(":batch") else RECORD_BODY if "/urns/" in path else SMALL_BODY
    )
    assert response.headers["connection"] == "close"
    assert took < 1
    # Read no further than the limit (at once, when the length was said).
    assert sent < (0 if say_length else limit) + BUFFERED


@pytest.mark.parametrize("say_length", [True, False], ids=["content-length", "chunked"])
@pytest.mark.parametrize("token", [None, "not-a-token"])
@pytest.mark.parametrize(("method", "path"), WRITES)
def test_a_write_without_a_live_token_is_refused_before_its_body(
    resolver: Resolver, method: str, path: str, token: str | None, say_length: bool
) -> None:
    # RFC 6750 §3.1: 401 with WWW-Authenticate, before any of the body is read.
    response, took, sent = send_huge(resolver, method, path, token, say_length=say_length)
    assert_problem(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"
    assert took < 1
    assert sent < BUFFERED


def test_the_public_oai_form_is_limited_too(resolver: Resolver) -> None:
    # RFC 9110 §15.5.14: OAI-PMH's POST takes no token; its body is limited all the same.
    response, took, sent = send_huge(resolver, "POST", "/oai", None, say_length=False)
    assert assert_problem(response, 413)["limit"] == SMALL_BODY
    assert took < 1
    assert sent < SMALL_BODY + BUFFERED


def padded(body: object, size: int) -> bytes:
    """``body`` as JSON, followed by whitespace up to ``size`` bytes."""
    text = json.dumps(body).encode()
    return text + b" " * (size - len(text))


def chunks(content: bytes, cuts: list[int]) -> Iterator[bytes]:
    """``content`` cut at ``cuts`` (sent as a chunked body)."""
    start = 0
    for cut in [*sorted(cuts), len(content)]:
        yield content[start:cut]
        start = cut


@settings(max_examples=12, deadline=None)
@given(
    extra=st.integers(-3, 3),
    cuts=st.lists(st.integers(0, SMALL_BODY), max_size=4),
    chunked=st.booleans(),
)
def test_a_body_is_taken_up_to_its_limit_exactly(
    resolver: Resolver, extra: int, cuts: list[int], chunked: bool
) -> None:
    # RFC 9110 §15.5.14: a body of the limit's length is read; one byte more is refused,
    # however the body is cut into chunks.
    content = padded({"name": "Padded Library"}, SMALL_BODY + extra)
    body = chunks(content, cuts) if chunked else content
    with resolver.client(resolver.admin_token) as client:
        response = client.post(
            "/api/v1/organisations", content=body, headers={"Content-Type": "application/json"}
        )
    if extra > 0:
        assert_problem(response, 413)
    else:  # created, or already there from an earlier example
        assert response.status_code in (201, 409), response.text


def test_a_record_at_its_limit_is_stored(resolver: Resolver, api: httpx.Client) -> None:
    # The record limit holds the largest record the schema allows: 100 locations at their
    # longest fields.
    location = {
        "url": "https://example.org/" + "a" * 3980,
        "label": "l" * 1000,
        "media_type": "m/" + "t" * 253,
        "priority": 1_000_000,
    }
    body = {"locations": [location] * 100, "metadata": {"title": "Long"}}
    response = api.put(
        "/api/v1/urns/urn:nbn:fi:test-longest",
        content=padded(body, RECORD_BODY),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code in (200, 201), response.text


def test_a_batch_of_sixteen_megabytes_is_taken(api: httpx.Client, unique: str) -> None:
    # The batch limit is the batch's own, not the record's.
    body = {"records": [{"urn": f"urn:nbn:fi:test-{unique}", "locations": []}]}
    response = api.post(
        "/api/v1/urns:batch",
        content=padded(body, BATCH_BODY),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["count"] == 1


def test_a_batch_holds_a_bounded_number_of_locations(api: httpx.Client, unique: str) -> None:
    # One location more than MAX_BATCH_LOCATIONS, in records of 100: refused, nothing stored.
    per_record = 100
    count = MAX_BATCH_LOCATIONS // per_record + 1
    records = [
        {
            "urn": f"urn:nbn:fi:test-{unique}x{n}",
            "locations": [{"url": f"https://example.org/{k}"} for k in range(per_record)],
        }
        for n in range(count)
    ]
    response = api.post("/api/v1/urns:batch", json={"records": records})
    problem = assert_problem(response, 422)
    assert problem["limit"] == MAX_BATCH_LOCATIONS
    assert api.get(f"/api/v1/urns/urn:nbn:fi:test-{unique}x0").status_code == 404
