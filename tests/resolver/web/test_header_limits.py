"""Request header limits, against running servers (uvicorn and granian, both databases): more
than ``MAX_HEADER_FIELDS`` header fields, or more than ``MAX_HEADER_BYTES`` of names and
values, are answered ``431 Request Header Fields Too Large`` (RFC 6585 §5) and the connection
closed; up to the limits, the request is answered as usual. Requests are written field by
field (``http.client``), so that each carries exactly the fields counted here."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from resolver_support import Resolver, Server

from urnkit.resolver.web.limits import MAX_HEADER_BYTES, MAX_HEADER_FIELDS


@dataclass(frozen=True)
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


def ask(base_url: str, fields: Sequence[tuple[str, str]], path: str = "/api/v1/prefixes") -> Answer:
    """``GET path`` carrying exactly ``fields`` (``Host`` among them if wanted) and no other."""
    url = urlsplit(base_url)
    connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    try:
        connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        for name, value in fields:
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return Answer(response.status, response.headers, response.read())
    finally:
        connection.close()


def fields_of(count: int, size: int = 0) -> list[tuple[str, str]]:
    """``Host`` and more fields, ``count`` in all, whose names and values make ``size``
    bytes (at least what ``count`` short fields take)."""
    fields = [("Host", "resolver.example")] + [(f"x-{n:03d}", "1") for n in range(count - 1)]
    used = sum(len(name) + len(value) for name, value in fields)
    if size > used:
        fields[-1] = (fields[-1][0], "1" * (size - used + 1))
    assert sum(len(name) + len(value) for name, value in fields) == max(size, used)
    return fields


def assert_refused(answer: Answer) -> None:
    assert answer.status == 431
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.headers["connection"] == "close"
    assert answer.headers["cache-control"] == "no-store"
    problem = json.loads(answer.body)
    assert problem["status"] == 431
    assert problem["title"] == "Request Header Fields Too Large"
    assert f"at most {MAX_HEADER_FIELDS} header fields" in problem["detail"]


@pytest.fixture(scope="module")
def granian(resolver: Resolver) -> Iterator[str]:
    """``urnkit serve --server granian`` over the resolver's database."""
    with Server(resolver.database_url, "--server", "granian") as server:
        yield server.base_url


def test_up_to_the_limits_a_request_is_answered(resolver: Resolver, granian: str) -> None:
    for base_url in (resolver.base_url, granian):
        assert ask(base_url, fields_of(MAX_HEADER_FIELDS)).status == 200
        assert ask(base_url, fields_of(2, MAX_HEADER_BYTES)).status == 200


def test_one_field_too_many_is_431(resolver: Resolver, granian: str) -> None:
    # RFC 6585 §5: the server is unwilling to process the request's header fields.
    assert_refused(ask(resolver.base_url, fields_of(MAX_HEADER_FIELDS + 1)))
    # granian refuses it itself, before the application: 431 without a body.
    assert ask(granian, fields_of(MAX_HEADER_FIELDS + 1)).status == 431


@pytest.mark.parametrize("count", [2, MAX_HEADER_FIELDS])
def test_one_byte_too_many_is_431(resolver: Resolver, granian: str, count: int) -> None:
    for base_url in (resolver.base_url, granian):
        assert_refused(ask(base_url, fields_of(count, MAX_HEADER_BYTES + 1)))


def test_thousands_of_fields_are_refused_at_once(resolver: Resolver, granian: str) -> None:
    for base_url in (resolver.base_url, granian):
        started = time.monotonic()
        answer = ask(base_url, fields_of(5000), path="/urn:nbn:fi:test-1")
        print(f"{base_url}: 5,000 fields, {answer.status} in {time.monotonic() - started:.3f} s")
        assert answer.status == 431
        # Then the server answers the next as ever.
        assert ask(base_url, fields_of(3)).status == 200
