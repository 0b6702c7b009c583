"""Redirects answered below the application (web/below.py, uvicorn's protocol in
web/redirect_protocol.py), black-box against ``urnkit serve`` on SQLite (read then and there)
and PostgreSQL (written when a batch of lookups answers), one worker: the bytes are the
application's (``Date`` aside), kept or not; a change is seen by the very next request; only a
record's redirect is answered there; requests sent together are answered in order; and the
statistics, ``/metrics`` and the access log count these answers as the application's. The
server runs with a spy on ``KeptAnswers._head``, which makes every answer given there, that
writes ``answered below`` for each, so that each test knows which path answered; and the
headers of URNs holding ``test-failing-headers`` fail to be made there."""

from __future__ import annotations

import json
import re
import socket
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from resolver_support import (
    BROWSER,
    DATABASES,
    Server,
    fresh_database,
    set_up_resolver,
    statistics_interval,
    wait_for,
)

SPIED = """
import sys
from urnkit.resolver.web import below
from urnkit.cli import main
given = below.KeptAnswers._head
def head(self, *args):
    answer = given(self, *args)
    if answer is not None:
        print("answered below", file=sys.stderr, flush=True)
    return answer
below.KeptAnswers._head = head
encoded = below.KeptHeaders.encoded
def failing(self, urn, *args):
    if "test-failing-headers" in urn:
        raise RuntimeError("headers that cannot be made below")
    return encoded(self, urn, *args)
below.KeptHeaders.encoded = failing
sys.exit(main(sys.argv[1:]))
"""
BELOW = "answered below"


class Served:
    """The spied server and a registrant's client."""

    def __init__(self, server: Server, tokens: dict[str, str]) -> None:
        self.server = server
        self.api = httpx.Client(
            base_url=server.base_url,
            headers={"Authorization": f"Bearer {tokens['registrant_token']}"},
            timeout=30,
        )

    def below(self) -> int:
        """How many answers were given below the application so far."""
        return self.server.output().count(BELOW)

    def put(self, urn: str, url: str) -> None:
        body = {"locations": [{"url": url}], "metadata": {"title": urn}}
        response = self.api.put(f"/api/v1/urns/{urn}", json=body)
        assert response.status_code in (200, 201), response.text

    def raw(self, method: str, urn: str, *headers: str) -> bytes:
        """The whole response to ``method /urn`` with ``headers``, as the server wrote it."""
        request = [f"{method} /{urn} HTTP/1.1", f"Host: 127.0.0.1:{self.server.port}", *headers]
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as sock:
            sock.sendall(("\r\n".join(request) + "\r\n\r\n").encode("latin-1"))
            answer = b""
            while b"\r\n\r\n" not in answer:
                chunk = sock.recv(65536)
                assert chunk, answer
                answer += chunk
        return answer


@pytest.fixture(scope="module", params=DATABASES)
def served(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("below")
    with fresh_database(request.param, directory) as url:
        tokens = set_up_resolver(url)
        with statistics_interval(1), Server(url, urnkit=(sys.executable, "-c", SPIED)) as server:
            made = Served(server, tokens)
            yield made
            made.api.close()


def without_date(response: bytes) -> bytes:
    return re.sub(rb"\r\ndate: [^\r]*", b"", response)


# A header field outside below.SAFE_FIELDS that changes nothing in the answer: the request
# goes to the application.
TO_THE_APPLICATION = "X-Note: by the application"


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("kept", [False, True])
def test_the_answer_below_is_the_applications_to_the_byte(
    served: Served, method: str, kept: bool
) -> None:
    # RFC 8458 §4.4: the redirect, whichever path gives it; RFC 9110 §6.6.1: Date may differ.
    # Not kept: the first request of the URN, read from the database below the application.
    urn = f"urn:nbn:fi:test-bytes-{method.lower()}-{kept}"
    served.put(urn, "https://example.org/bytes")
    headers = ("Accept: " + BROWSER, "X-Request-ID: trace-1", "User-Agent: test")
    if kept:
        served.raw(method, urn, *headers)
    before = served.below()
    below = served.raw(method, urn, *headers)
    assert served.below() == before + 1
    application = served.raw(method, urn, *headers, TO_THE_APPLICATION)
    assert served.below() == before + 1
    assert without_date(below) == without_date(application)
    assert below.startswith(b"HTTP/1.1 302 Found\r\n")
    assert b"\r\nlocation: https://example.org/bytes\r\n" in below
    assert b"\r\nx-request-id: trace-1\r\nx-content-type-options: nosniff\r\n" in below


def test_only_a_records_redirect_is_answered_below(served: Served) -> None:
    # RFC 8458 §4.5: a surrogate page; §4.1: gone; RFC 8141 §2: not a URN; not registered.
    urn = "urn:nbn:fi:test-only"
    served.put(urn, "https://example.org/only")
    response = served.api.post(f"/api/v1/urns/{urn}/deactivate", json={})
    assert response.status_code == 200, response.text
    before = served.below()
    assert served.raw("GET", urn).startswith(b"HTTP/1.1 410 ")
    assert served.raw("GET", "urn:nbn:fi:test-never-registered").startswith(b"HTTP/1.1 404 ")
    assert served.raw("GET", "urn:a").startswith(b"HTTP/1.1 400 ")
    assert served.below() == before


def test_requests_it_may_not_answer_go_to_the_application(served: Served) -> None:
    # RFC 9110 §11.6.2: a request with credentials; RFC 7089 §2.1.1: Accept-Datetime;
    # RFC 9110 §12.5.1: a client preferring the record as JSON.
    urn = "urn:nbn:fi:test-others"
    served.put(urn, "https://example.org/others")
    served.raw("GET", urn)
    before = served.below()
    for headers in (
        ("Authorization: Bearer nothing",),
        ("Accept-Datetime: Thu, 01 Jan 2026 00:00:00 GMT",),
        ("Accept: application/json",),
        ("X-Forwarded-For: 192.0.2.1",),
        ("Cookie: a=b",),
    ):
        served.raw("GET", urn, *headers)
    served.raw("GET", urn + "?s=I2L")
    assert served.below() == before


def test_a_change_is_seen_by_the_very_next_request(served: Served) -> None:
    # RFC 8458 §4.2: resolution leads where the record leads now; §4.1: gone once deactivated.
    urn = "urn:nbn:fi:test-change"
    served.put(urn, "https://example.org/before")
    served.raw("GET", urn)
    before = served.below()
    assert b"location: https://example.org/before\r\n" in served.raw("GET", urn)
    assert served.below() == before + 1
    served.put(urn, "https://example.org/after")
    assert b"location: https://example.org/after\r\n" in served.raw("GET", urn)
    assert b"location: https://example.org/after\r\n" in served.raw("GET", urn)
    assert served.below() == before + 3
    response = served.api.post(f"/api/v1/urns/{urn}/deactivate", json={})
    assert response.status_code == 200, response.text
    assert served.raw("GET", urn).startswith(b"HTTP/1.1 410 ")


def resolutions(served: Served) -> float:
    """``urnkit_resolutions_total{outcome="redirect"}`` as ``/metrics`` gives it."""
    text = httpx.get(served.server.base_url + "/metrics").text
    found = re.search(r'^urnkit_resolutions_total\{outcome="redirect"\} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


def counted(served: Served, prefix: str) -> int:
    """The resolutions of URNs under ``prefix`` (their own) the statistics hold."""
    counts = served.api.get("/api/v1/statistics").json()["counts"]
    return sum(day["resolutions"] for day in counts if day["prefix"] == prefix)


def logged(served: Served, request_ids: str) -> list[dict[str, Any]]:
    """The access log's lines so far of the requests whose ``X-Request-ID`` begins so."""
    lines = [json.loads(line) for line in served.server.output().splitlines() if line[:1] == "{"]
    return [line for line in lines if line["request_id"].startswith(request_ids)]


def test_answers_below_are_counted_and_logged(served: Served) -> None:
    # RFC 8458 §4.4: every resolution counts, whichever path answers it. The URN's prefix is
    # this test's alone: its statistics hold this test's resolutions and nothing else.
    prefix = "fi:test:counted"
    urn = f"urn:nbn:{prefix}-1"
    served.put(urn, "https://example.org/counted")
    served.raw("GET", urn)
    metrics, below = resolutions(served), served.below()
    for number in range(5):
        served.raw("GET", urn, f"X-Request-ID: counted-{number}")
    assert served.below() == below + 5
    assert resolutions(served) == metrics + 5
    wait_for(lambda: counted(served, prefix) >= 6, f"the statistics of {prefix} flushed")
    assert counted(served, prefix) == 6
    wait_for(lambda: len(logged(served, "counted-")) >= 5, "the access log's batch written")
    assert [
        (line["method"], line["path"], line["status"], line["bytes"])
        for line in logged(served, "counted-")
    ] == [("GET", f"/{urn}", 302, 0)] * 5
    assert all(line["client"] == "127.0.0.1" for line in logged(served, "counted-"))


def test_requests_sent_together_are_answered_in_order(served: Served) -> None:
    # RFC 9112 §9.3.2: a server answers pipelined requests in the order they came. The first
    # is answered below (on PostgreSQL when its batch answers); the two behind it wait for it.
    first, second = "urn:nbn:fi:test-together-1", "urn:nbn:fi:test-together-2"
    served.put(first, "https://example.org/together-1")
    served.put(second, "https://example.org/together-2")
    host = f"Host: 127.0.0.1:{served.server.port}"
    requests = [
        f"GET /{first} HTTP/1.1\r\n{host}\r\n\r\n",
        f"GET /urn:nbn:fi:test-together-never HTTP/1.1\r\n{host}\r\n\r\n",
        f"GET /{second} HTTP/1.1\r\n{host}\r\nConnection: close\r\n\r\n",
    ]
    before = served.below()
    with socket.create_connection(("127.0.0.1", served.server.port), timeout=10) as sock:
        sock.sendall("".join(requests).encode("ascii"))
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    statuses = re.findall(rb"HTTP/1.1 (\d+) [A-Z]", answer)
    locations = re.findall(rb"^location: (\S+)\r$", answer, re.M)
    assert statuses == [b"302", b"404", b"302"]
    assert locations == [b"https://example.org/together-1", b"https://example.org/together-2"]
    assert served.below() == before + 1


def test_a_client_gone_before_its_answer_leaves_the_server_answering(served: Served) -> None:
    # The connection closes while its lookup is on its way (on PostgreSQL, in a batch).
    urn = "urn:nbn:fi:test-gone-client"
    served.put(urn, "https://example.org/gone-client")
    request = f"GET /{urn} HTTP/1.1\r\nHost: 127.0.0.1:{served.server.port}\r\n\r\n"
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", served.server.port), timeout=10) as sock:
            sock.sendall(request.encode("ascii"))
    assert b"location: https://example.org/gone-client\r\n" in served.raw("GET", urn)
    assert "Traceback" not in served.server.output()


def test_headers_that_fail_below_leave_the_answer_to_the_application(served: Served) -> None:
    # RFC 8458 §4.4: the client still gets its redirect, counted once, from the application,
    # in /metrics and in the statistics of its prefix (this test's alone).
    prefix = "fi:test:failhead"
    urn, later = f"urn:nbn:{prefix}-test-failing-headers-1", f"urn:nbn:{prefix}-later"
    served.put(urn, "https://example.org/failing-headers")
    served.put(later, "https://example.org/later")
    metrics, before = resolutions(served), served.below()
    answer = served.raw("GET", urn)
    assert answer.startswith(b"HTTP/1.1 302 Found\r\n")
    assert b"\r\nlocation: https://example.org/failing-headers\r\n" in answer
    assert served.below() == before
    assert resolutions(served) == metrics + 1
    # A resolution counted after it: once a flush holds this one, it holds the one before.
    served.raw("GET", later)
    assert served.below() == before + 1
    wait_for(lambda: counted(served, prefix) >= 2, f"the statistics of {prefix} flushed")
    assert counted(served, prefix) == 2
