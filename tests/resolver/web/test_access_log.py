"""The access log and request ids, black-box: a second ``urnkit serve`` over the ``resolver``
fixture's database (SQLite and PostgreSQL) whose standard error the tests read. Each request
gives one JSON line; ``X-Request-ID`` is the client's when sane, else made, and always sent
back; ``URNKIT_ACCESS_LOG=0`` silences the log but not the ids."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resolver_support import BROWSER, Resolver, Server, register, wait_for

MADE = re.compile(r"[0-9a-f]{32}")  # a request id the server made
FIELDS = {"time", "request_id", "method", "path", "status", "duration_ms", "bytes", "client"}


@pytest.fixture(scope="module")
def logged(resolver: Resolver) -> Iterator[Server]:
    """A server over the resolver's database, its standard error kept."""
    with Server(resolver.database_url) as server:
        yield server


def log_lines(server: Server) -> list[dict[str, Any]]:
    """The access log's lines so far (the server writes its other messages there too)."""
    return [json.loads(line) for line in server.output().splitlines() if line.startswith("{")]


def line_of(server: Server, request_id: str) -> dict[str, Any]:
    """The one line of the request ``request_id``, once the server has written it."""
    found: list[dict[str, Any]] = wait_for(
        lambda: [line for line in log_lines(server) if line["request_id"] == request_id],
        f"the line of request {request_id}",
        seconds=5,
    )
    assert len(found) == 1, found
    return found[0]


def test_each_request_gives_one_line_with_its_fields(logged: Server) -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    with httpx.Client(base_url=logged.base_url) as client:
        response = client.get("/api/v1/prefixes")
    line = line_of(logged, response.headers["x-request-id"])
    assert set(line) == FIELDS
    # RFC 3339 §5.6, in UTC ("Z"), to the millisecond.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line["time"])
    logged_at = datetime.fromisoformat(line["time"])
    assert before <= logged_at <= datetime.now(UTC)
    assert (line["method"], line["path"], line["status"]) == ("GET", "/api/v1/prefixes", 200)
    assert line["bytes"] == len(response.content) > 0
    assert 0 < line["duration_ms"] < 5000
    assert line["client"] == "127.0.0.1"


def test_resolutions_the_front_answers_are_logged(
    logged: Server, api: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/logged"}])
    with httpx.Client(base_url=logged.base_url) as client:
        # RFC 8458 §4.4: the redirect, in a case the front matches as equivalent (RFC 8141 §3).
        redirect = client.head(f"/URN:NBN:fi:test-{unique}", headers={"Accept": BROWSER})
        missing = client.get(f"/urn:nbn:fi:test-{unique}-none", headers={"Accept": BROWSER})
    assert redirect.status_code == 302
    line = line_of(logged, redirect.headers["x-request-id"])
    assert (line["method"], line["path"], line["status"], line["bytes"]) == (
        "HEAD",
        f"/URN:NBN:fi:test-{unique}",
        302,
        0,
    )
    assert line_of(logged, missing.headers["x-request-id"])["status"] == 404


def test_the_path_is_logged_as_sent_without_the_query(logged: Server) -> None:
    with httpx.Client(base_url=logged.base_url) as client:
        response = client.get("/search?q=private+words", headers={"Accept": BROWSER})
        encoded = client.get("/urn:nbn:fi:test-%22%0A%C3%A4", headers={"Accept": BROWSER})
    assert line_of(logged, response.headers["x-request-id"])["path"] == "/search"
    # Percent-encoded as the client sent it: no quote or line break reaches the log.
    line = line_of(logged, encoded.headers["x-request-id"])
    assert line["path"] == "/urn:nbn:fi:test-%22%0A%C3%A4"


def test_a_sane_request_id_is_echoed_and_logged(logged: Server) -> None:
    with httpx.Client(base_url=logged.base_url) as client:
        for sent in ("trace-1f2e", "a" * 128, '"quoted\\id"'):
            response = client.get("/healthz", headers={"X-Request-ID": sent})
            assert response.headers["x-request-id"] == sent
            assert line_of(logged, sent)["path"] == "/healthz"


def test_a_request_id_is_made_when_none_is_sent(logged: Server) -> None:
    with httpx.Client(base_url=logged.base_url) as client:
        first, second = client.get("/healthz"), client.get("/healthz")
    made = first.headers["x-request-id"], second.headers["x-request-id"]
    assert all(MADE.fullmatch(identifier) for identifier in made)
    assert made[0] != made[1]


@pytest.mark.parametrize(
    "hostile",
    [b"a" * 129, b"x" * 10_000, b"tab\tinside", b"space inside", b"caf\xc3\xa9", b"\xff"],
)
def test_an_unfit_request_id_is_replaced(logged: Server, hostile: bytes) -> None:
    answer = raw_request(logged, b"X-Request-ID: " + hostile)
    identifier = answer["x-request-id"]
    assert MADE.fullmatch(identifier), identifier
    assert line_of(logged, identifier)["status"] == 200


@pytest.mark.parametrize("hostile", [b"a\rInjected: 1", b"a\nInjected: 1", b"a\x00b"])
def test_a_request_id_with_line_breaks_never_reaches_the_log(
    logged: Server, hostile: bytes
) -> None:
    # RFC 9110 §5.5: CR, LF and NUL are invalid in a field value; the server refuses the
    # request (400) or replaces the id: either way no line of the log holds it.
    answer = raw_request(logged, b"X-Request-ID: " + hostile)
    if answer["status"] != "400":
        assert MADE.fullmatch(answer["x-request-id"])
    assert not any("Injected" in json.dumps(line) for line in log_lines(logged))
    assert not any(line.startswith("Injected") for line in logged.output().splitlines())


def raw_request(server: Server, header: bytes) -> dict[str, str]:
    """``GET /healthz`` with ``header`` exactly as given (no client library would send the
    hostile ones); the status and the response's headers."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(
            b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
            + header
            + b"\r\n\r\n"
        )
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    head = received.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    answer = {"status": head[0].split()[1]}
    for field in head[1:]:
        name, _, value = field.partition(":")
        answer[name.strip().lower()] = value.strip()
    return answer


# Field values a client library can send: visible ASCII, space, tab and obs-text (RFC 9110 §5.5).
FIELD_VALUES = st.binary(max_size=300).map(
    lambda value: bytes(byte for byte in value if byte in b"\t" or 0x20 <= byte != 0x7F)
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sent=FIELD_VALUES)
def test_the_request_id_is_the_sent_one_exactly_when_sane(logged: Server, sent: bytes) -> None:
    # Whitespace around a field value is no part of it (RFC 9110 §5.5): uvicorn with httptools
    # leaves trailing whitespace, which the app drops.
    value = sent.strip(b" \t")
    answer = raw_request(logged, b"X-Request-ID: " + sent)
    sane = re.fullmatch(rb"[!-~]{1,128}", value) is not None
    assert (answer["x-request-id"] == value.decode("latin-1")) is sane
    if not sane:
        assert MADE.fullmatch(answer["x-request-id"])


def test_the_log_can_be_turned_off_but_ids_stay(resolver: Resolver) -> None:
    with Server(resolver.database_url, env={"URNKIT_ACCESS_LOG": "0"}) as quiet:
        with httpx.Client(base_url=quiet.base_url) as client:
            response = client.get("/healthz", headers={"X-Request-ID": "quiet-1"})
            client.get("/api/v1/prefixes")
        assert response.headers["x-request-id"] == "quiet-1"
        assert quiet.process is not None
        quiet.process.terminate()  # a server stopping writes every line still waiting
        quiet.process.wait(timeout=10)
        assert log_lines(quiet) == []


def test_lines_waiting_are_written_when_the_server_stops(resolver: Resolver) -> None:
    with Server(resolver.database_url) as server:
        assert server.process is not None
        with httpx.Client(base_url=server.base_url) as client:
            for number in range(20):
                client.get("/healthz", headers={"X-Request-ID": f"last-{number}"})
        server.process.terminate()  # at once: the last lines still wait to be written
        server.process.wait(timeout=10)
        written = {line["request_id"] for line in log_lines(server)}
        assert {f"last-{number}" for number in range(20)} <= written
