"""The floor of a Python HTTP server on this machine, an anchor of
``benchmarks/resolve_bench.py``: every request answered with the same 302, with the headers
the Go anchor sends, and no other work (no lookup, no log, no urnkit code). What a request
costs here is what the server, its event loop and the kernel cost, which any Python
resolver built on that server pays before it looks anything up.

* ``app``: an ASGI application, for uvicorn (httptools, uvloop), as ``urnkit serve`` runs.
* ``rsgi``: an RSGI application, for granian's own interface (no ASGI messages).
"""

from __future__ import annotations

from typing import Any

LOCATION = "https://example.org/bench/1"
_ASGI_HEADERS = [
    (b"location", LOCATION.encode()),
    (b"cache-control", b"max-age=300"),
    (b"content-length", b"0"),
]
_START = {"type": "http.response.start", "status": 302, "headers": _ASGI_HEADERS}
_BODY = {"type": "http.response.body", "body": b""}
_RSGI_HEADERS = [(name.decode(), value.decode()) for name, value in _ASGI_HEADERS]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The 302, whatever the request (uvicorn runs it with ``--lifespan off``)."""
    await send(_START)
    await send(_BODY)


async def rsgi(scope: Any, protocol: Any) -> None:
    """The 302, whatever the request, through granian's RSGI protocol object."""
    protocol.response_empty(302, _RSGI_HEADERS)
