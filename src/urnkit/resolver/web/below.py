"""Redirects answered below the application: a server's HTTP protocol asks
:class:`KeptAnswers` for the response head of a plain ``GET`` or ``HEAD /{urn}`` before it
starts the application's task, and writes it itself (web/redirect_protocol.py, uvicorn's):
at once on SQLite (:meth:`KeptAnswers.head`), when the event loop's batch of lookups answers
on PostgreSQL (:meth:`KeptAnswers.head_then`).

An answer is given only where it is byte for byte what the application would send, the
``Date`` header aside: for a record's redirect the services give without the application
(:meth:`~urnkit.resolver.services.resolution.ResolutionService.redirect_now`: kept while the
change counter stays, or read from SQLite then and there;
:meth:`~urnkit.resolver.services.resolution.ResolutionService.redirect_then` on PostgreSQL),
its headers made as the front makes them (:class:`~urnkit.resolver.web.front.KeptHeaders`,
which keeps those of a kept redirect), and a request whose header fields are all of
:data:`SAFE_FIELDS` (none with credentials, a proxy's word, a condition or a moment of the
past), within the limits of web/limits.py, not preferring a format of the record. Counted as
the front counts (statistics, ``/metrics``) and logged as web/access_log.py logs; everything
else is the application's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from urnkit.resolver.services import Services
from urnkit.resolver.services.resolution import Resolution
from urnkit.resolver.web.access_log import REQUEST_ID, AccessLog, access_line, request_id
from urnkit.resolver.web.cross_origin import ANSWERS
from urnkit.resolver.web.deps import decoded_if_whole
from urnkit.resolver.web.front import KeptHeaders, encoded_headers, json_first
from urnkit.resolver.web.limits import MAX_HEADER_BYTES, MAX_HEADER_FIELDS
from urnkit.resolver.web.metrics import Metrics
from urnkit.resolver.web.security import NOSNIFF

# Request header fields that change nothing in the front's redirect (``Accept`` is read).
SAFE_FIELDS: Final = frozenset(
    {
        b"host",
        b"user-agent",
        b"accept",
        b"accept-encoding",
        b"accept-language",
        b"connection",
        b"x-request-id",
        b"referer",
        b"cache-control",
        b"pragma",
        b"dnt",
        b"upgrade-insecure-requests",
        b"sec-fetch-dest",
        b"sec-fetch-mode",
        b"sec-fetch-site",
        b"sec-fetch-user",
        b"sec-ch-ua",
        b"sec-ch-ua-mobile",
        b"sec-ch-ua-platform",
        b"priority",
    }
)
Request = tuple[
    str, bytes, list[tuple[bytes, bytes]], tuple[object, object], "tuple[str, int] | None"
]
"""A request as :class:`KeptAnswers` takes it: its method (``GET`` or ``HEAD``), its path
(``/urn:…``, no query), its header fields (names in lower case), the scheme and the server's
address it came by (the root path empty), and the client's address."""
# After the application's headers: web/cross_origin.py's, then web/access_log.py's.
_TAIL: Final = encoded_headers(ANSWERS) + b"%s: %%s\r\n%s: %s\r\n\r\n" % (REQUEST_ID, *NOSNIFF)


class KeptAnswers:
    """The heads of the redirects a server process keeps, for its HTTP protocol: what
    :meth:`head` gives follows the status line and the server's own headers (``Date``)."""

    def __init__(
        self, services: Services, metrics: Metrics, kept: KeptHeaders, log: AccessLog | None
    ) -> None:
        self.services, self.metrics, self.kept, self.log = services, metrics, kept, log

    @property
    def later(self) -> bool:
        """Whether lookups are batched (PostgreSQL): answers come from :meth:`head_then`."""
        return self.services.store.batched

    def head(self, request: Request) -> bytes | None:
        """The headers of the 302 the application would answer to ``request`` (see
        :data:`Request`), counted and logged; None when the application must answer."""
        started, clock = time.time(), time.perf_counter()
        host = _host(request[2])
        if host is None:
            return None
        urn = decoded_if_whole(request[1][1:].decode("latin-1"))
        try:
            found = self.services.resolution.redirect_now(urn)
        except Exception:  # the database unavailable: the application answers it (503)
            return None
        if found is None:
            return None
        return self._head(found, urn, host, request, started, clock)

    def head_then(self, request: Request, then: Callable[[bytes | None], None]) -> bool:
        """:meth:`head` where lookups are batched (:attr:`later`): ``then`` is called with
        the head on the event loop once the lookup has answered, or with None when the
        application must answer. False, and ``then`` never called, when it must at once."""
        started, clock = time.time(), time.perf_counter()
        host = _host(request[2])
        if host is None:
            return False
        urn = decoded_if_whole(request[1][1:].decode("latin-1"))

        def found(redirect: Resolution | None) -> None:
            if redirect is None:
                then(None)
                return
            then(self._head(redirect, urn, host, request, started, clock))

        return self.services.resolution.redirect_then(urn, found)

    def _head(
        self,
        found: Resolution,
        urn: str,
        host: bytes,
        request: Request,
        started: float,
        clock: float,
    ) -> bytes | None:
        """The headers of the redirect ``found`` for ``request``, whose ``Host`` is ``host``,
        begun at ``started`` (the time) and ``clock`` (``time.perf_counter()``); counted and
        logged. None if they could not be made here: the application answers the request
        with headers of its own making (web/front.py), or with its error."""
        method, path, headers, base, client = request
        try:
            head = self.kept.encoded(urn, found, str(base[0]), host, base[1])
        except Exception:
            return None
        self.services.resolution.count(found)
        self.metrics.resolved("redirect")
        identifier = request_id(headers)
        if self.log is not None:
            seconds = time.perf_counter() - clock
            self.log.add(access_line(started, identifier, method, path, 302, seconds, 0, client))
        return head + _TAIL % identifier


def _host(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The ``Host`` of a request with ``headers`` (empty if none), or None if one of them
    may change the redirect: one not of :data:`SAFE_FIELDS`, an ``Accept`` preferring a
    format of the record, or more of them than web/limits.py allows.

    >>> _host([(b"host", b"r.example"), (b"accept", b"*/*")])
    b'r.example'
    >>> _host([(b"host", b"r.example"), (b"authorization", b"Basic YTpi")]) is None
    True
    """
    host, size = b"", 0
    for name, value in headers:
        if name not in SAFE_FIELDS:
            return None
        size += len(name) + len(value)
        if name == b"host":
            host = value
        elif name == b"accept" and json_first(value) is not None:
            return None
    if len(headers) > MAX_HEADER_FIELDS or size > MAX_HEADER_BYTES:
        return None
    return host


_INSTALLED: list[KeptAnswers] = []  # the process's, once its application is made


def install(answers: KeptAnswers) -> None:
    """Make ``answers`` the process's (:func:`installed`): its application's."""
    _INSTALLED[:] = [answers]


def installed() -> KeptAnswers | None:
    """The process's kept answers, if its application installed them."""
    return _INSTALLED[0] if _INSTALLED else None
