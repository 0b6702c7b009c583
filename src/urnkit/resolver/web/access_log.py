"""The server's outermost layer: every HTTP response gets an ``X-Request-ID`` (the request's
own when it is sane, else a new one) and ``X-Content-Type-Options: nosniff``, and each request
gives one JSON line to the access log on standard error (unless ``URNKIT_ACCESS_LOG=0``).

A line holds ``time`` (when the request came, RFC 3339, UTC, milliseconds), ``request_id``,
``method``, ``path`` (as the client sent it, percent-encoded, without the query: search texts
stay out of the log), ``status``, ``duration_ms`` (until the response was sent), ``bytes``
(of the body sent) and ``client`` (the peer's address; a proxy's, behind one). It wraps the
whole application, so that the resolution redirects the front answers and the 500 of an
unexpected error are logged and carry the id too.

>>> import json
>>> line = json.loads(access_line(0.25, b"abc", "GET", b"/urn:nbn:fi-1", 302, 0.0004, 0, None))
>>> line["time"], line["request_id"], line["status"], line["duration_ms"], line["client"]
('1970-01-01T00:00:00.250Z', 'abc', 302, 0.4, None)
"""

import asyncio
import atexit
import os
import re
import sys
import time
from collections.abc import Iterable
from functools import lru_cache
from json.encoder import encode_basestring_ascii as _quoted
from random import getrandbits

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from urnkit.resolver.web.security import NOSNIFF

REQUEST_ID = b"x-request-id"
MAX_REQUEST_ID = 128  # characters of a client's X-Request-ID kept; a longer one is replaced
_SANE_ID = re.compile(rb"[!-~]{1,%d}" % MAX_REQUEST_ID).fullmatch  # visible US-ASCII


def request_id(headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The request's ``X-Request-ID`` when it is 1 to ``MAX_REQUEST_ID`` visible US-ASCII
    characters (no space, no control character), else a new one: 32 random hex digits.

    >>> request_id([(b"x-request-id", b"trace-7")])
    b'trace-7'
    >>> len(request_id([(b"x-request-id", b"a\\r\\nb")])), len(request_id([]))
    (32, 32)
    >>> request_id([(b"x-request-id", b"trace-8 ")])  # some servers leave trailing whitespace
    b'trace-8'
    """
    for name, value in headers:
        if name == REQUEST_ID:
            value = value.strip(b" \t")  # RFC 9110 §5.5: whitespace around is no part of it
            if _SANE_ID(value):
                return value
            break
    # Mersenne Twister, seeded anew in each worker process: an id names a request in the logs and
    # guards nothing, so it need not be unpredictable, and costs less than os.urandom's call.
    return b"%032x" % getrandbits(128)


@lru_cache(maxsize=4)
def _second(whole: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))


def access_line(
    started: float,
    identifier: bytes,
    method: str,
    path: bytes,
    status: int,
    seconds: float,
    size: int,
    client: tuple[str, int] | None,
) -> str:
    """The access log's JSON line of a request ``started`` at (Unix time) that took
    ``seconds``, sent ``size`` bytes of body and got ``status``. Built by hand: ``json.dumps``
    of a dict costs about three times as much."""
    whole = int(started)
    address = _quoted(client[0]) if client else "null"
    return (
        f'{{"time":"{_second(whole)}.{int((started - whole) * 1000):03d}Z",'
        f'"request_id":{_quoted(identifier.decode("ascii"))},"method":{_quoted(method)},'
        f'"path":{_quoted(path.decode("latin-1"))},"status":{status},'
        f'"duration_ms":{seconds * 1000:.3f},"bytes":{size},"client":{address}}}'
    )


class AccessLog:
    """Lines written to standard error in batches: the first line waiting asks the event loop
    to write all that are waiting ``LATENCY`` seconds later (and at exit), so that under load
    a line costs no system call of its own and none blocks the request answering. ``logging``'s own
    handler costs several times as much a line."""

    LATENCY = 0.05

    def __init__(self) -> None:
        self.pending: list[str] = []
        atexit.register(self.write)

    def add(self, line: str) -> None:
        """Write ``line`` with the others waiting, ``LATENCY`` seconds after the first."""
        if not self.pending:
            asyncio.get_running_loop().call_later(self.LATENCY, self.write)
        self.pending.append(line)

    def write(self) -> None:
        """Write the lines waiting."""
        if self.pending:
            lines, self.pending = self.pending, []
            sys.stderr.write("\n".join(lines) + "\n")
            sys.stderr.flush()


def access_logged(app: ASGIApp, writer: AccessLog | None) -> ASGIApp:
    """``app`` with the request id and ``nosniff`` on each response, and, given a
    ``writer``, its access log line."""

    async def observed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started, clock = time.time(), time.perf_counter()
        identifier = request_id(scope["headers"])
        status, size = 500, 0  # unless a response starts: the server answers 500

        async def sending(message: Message) -> None:
            nonlocal status, size
            kind = message["type"]
            if kind == "http.response.start":
                status = message["status"]
                message["headers"] = [*message["headers"], (REQUEST_ID, identifier), NOSNIFF]
            elif kind == "http.response.body":
                size += len(message.get("body", b""))
            elif kind == "http.response.pathsend":  # a file the server sends itself
                size += os.path.getsize(message["path"])
            await send(message)

        try:
            await app(scope, receive, sending)
        finally:
            if writer is not None:
                writer.add(
                    access_line(
                        started,
                        identifier,
                        scope["method"],
                        _raw_path(scope),
                        status,
                        time.perf_counter() - clock,
                        size,
                        scope.get("client"),
                    )
                )

    return observed


def _raw_path(scope: Scope) -> bytes:
    """The path as the client sent it (``raw_path``, which ASGI servers may leave out)."""
    raw: bytes | None = scope.get("raw_path")
    return raw if raw is not None else scope["path"].encode("utf-8")
