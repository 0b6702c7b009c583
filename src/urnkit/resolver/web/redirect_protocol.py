"""uvicorn's HTTP protocol (httptools), answering records' redirects itself (web/below.py):
what ``urnkit serve`` runs on uvicorn. On SQLite (kept, or read then and there) before it
builds an ASGI scope or a task; on PostgreSQL, whose lookups are batched, it builds the
request's cycle as uvicorn does but starts no task: the redirect is written when the batch
answers, and only a request it does not end in a redirect is then handed to the application.
Only a request that comes alone (no response of the connection pending, none queued behind
it), over HTTP/1.1 kept alive, for ``/urn:…`` without a query, is offered; every other, and
every one :class:`~urnkit.resolver.web.below.KeptAnswers` declines, goes the normal way.
"""

from __future__ import annotations

from functools import partial

from uvicorn._types import ASGI3Application
from uvicorn.protocols.http.httptools_impl import (
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)

from urnkit.resolver.web.below import KeptAnswers, Request, installed

_FOUND = STATUS_LINE[302]
_METHODS = (b"GET", b"HEAD")
# The server's own headers (Date, Server) as written, for the list uvicorn holds now (it
# makes a new one when the second changes).
_SERVER: list[tuple[list[tuple[bytes, bytes]] | None, bytes]] = [(None, b"")]


class ResolutionProtocol(HttpToolsProtocol):
    """:class:`HttpToolsProtocol`, writing a record's redirect itself."""

    answered = False  # whether the message being read was answered here
    later: KeptAnswers | None = None  # what answers it once its cycle is made, if anything

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.answered = False

    def on_headers_complete(self) -> None:
        self._unset_keepalive_if_required()  # a request queued behind one answered here
        if self._answer():
            self.answered = True
            self.server_state.total_requests += 1
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )
            return
        try:
            super().on_headers_complete()
        finally:
            self.later = None

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: ASGI3Application) -> None:
        """Start the application on ``cycle``, unless its redirect is to come from a batch of
        lookups (:meth:`_answer` set :attr:`later`): then it is written when the batch answers
        (:meth:`_write_later`), and the application starts only if it gives none."""
        answers, self.later = self.later, None
        if answers is not None and cycle is self.cycle:
            then = partial(self._write_later, cycle, app)
            if answers.head_then(self._request(cycle.scope["method"]), then):
                return
        super()._start_asgi_task(cycle, app)

    def _write_later(
        self, cycle: RequestResponseCycle, app: ASGI3Application, head: bytes | None
    ) -> None:
        """Write the redirect of ``cycle``'s request, whose head is ``head``, and end its
        response as uvicorn does; start the application on it if ``head`` is None."""
        if head is None:
            super()._start_asgi_task(cycle, app)
            return
        if cycle.disconnected:
            return
        self.transport.write(_FOUND + _server_headers(self.server_state.default_headers) + head)
        cycle.response_started = cycle.response_complete = True
        cycle.message_event.set()
        if not cycle.keep_alive:
            self.transport.close()
        cycle.on_response()

    def on_body(self, body: bytes) -> None:
        if not self.answered:
            super().on_body(body)

    def on_message_complete(self) -> None:
        if not self.answered:
            super().on_message_complete()

    def _answer(self) -> bool:
        """Write the redirect of this request, if it is one web/below.py may answer."""
        answers = installed()
        url = self.url
        if (
            answers is None
            or url[:5].lower() != b"/urn:"
            or b"?" in url
            or b"#" in url
            or self.root_path
            or self.limit_concurrency is not None
            or self.pipeline
            or (self.cycle is not None and not self.cycle.response_complete)
            or self.flow.write_paused
            or self.parser.get_http_version() != "1.1"
            or not self.parser.should_keep_alive()
            or self.parser.should_upgrade()
        ):
            return False
        method = self.parser.get_method()
        if method not in _METHODS:
            return False
        if answers.later:
            self.later = answers
            return False
        head = answers.head(self._request(method.decode("ascii")))
        if head is None:
            return False
        self.transport.write(_FOUND + _server_headers(self.server_state.default_headers) + head)
        return True

    def _request(self, method: str) -> Request:
        """The request being read, its method ``method``, as web/below.py takes it."""
        return (method, self.url, self.headers, (self.scheme, self.server), self.client)


def _server_headers(defaults: list[tuple[bytes, bytes]]) -> bytes:
    """The server's own headers (``defaults``: uvicorn's ``Date``, ``Server``) as written,
    made again only when uvicorn makes a new list (when the second changes)."""
    server = _SERVER[0]
    if server[0] is not defaults:
        written = b"".join(name + b": " + value + b"\r\n" for name, value in defaults)
        server = _SERVER[0] = defaults, written
    return server[1]
