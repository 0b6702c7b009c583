"""uvicorn's HTTP protocol (httptools), answering records' redirects itself (web/below.py:
kept, or read from SQLite then and there) before it builds an ASGI scope or a task: what
``urnkit serve`` runs on uvicorn. Only a request that comes alone (no response of the
connection pending, none queued behind it), over HTTP/1.1 kept alive, for ``/urn:…`` without
a query, is offered; every other, and every one
:class:`~urnkit.resolver.web.below.KeptAnswers` declines, goes the normal way.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from urnkit.resolver.web.below import installed

_FOUND = STATUS_LINE[302]
_METHODS = (b"GET", b"HEAD")
# The server's own headers (Date, Server) as written, for the list uvicorn holds now (it
# makes a new one when the second changes).
_SERVER: list[tuple[list[tuple[bytes, bytes]] | None, bytes]] = [(None, b"")]


class ResolutionProtocol(HttpToolsProtocol):
    """:class:`HttpToolsProtocol`, writing a record's redirect itself."""

    answered = False  # whether the message being read was answered here

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
        super().on_headers_complete()

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
        base = (self.scheme, self.server)
        head = answers.head(method.decode("ascii"), url, self.headers, base, self.client)
        if head is None:
            return False
        defaults, server = self.server_state.default_headers, _SERVER[0]
        if server[0] is not defaults:
            written = b"".join(name + b": " + value + b"\r\n" for name, value in defaults)
            server = _SERVER[0] = defaults, written
        self.transport.write(_FOUND + server[1] + head)
        return True
