"""Link checking: is each location URL still there? Broken links are left out of resolution.

A check asks ``HEAD`` first; when that gives anything but 2xx (servers that refuse or mishandle
HEAD answer 405, 501, 403, even 404) it asks ``GET``, streamed, and reads no byte of the body:
GET's answer is the verdict. A HEAD that timed out is not retried (a GET would wait as long
again on a host that did not answer). Redirects are followed by hand, at most
:data:`MAX_REDIRECTS`, each hop through the same politeness as the first request. What an answer
means is :func:`~urnkit.resolver.domain.link_verdict`; how verdicts add up to "broken" is
:func:`~urnkit.resolver.domain.next_link_state` (404/410 at once, other failures after three
in a row). Every connection goes through a :class:`~urnkit.resolver.services.outbound.FetchGuard`:
a URL, or a redirect, to an address the server does not fetch from (loopback, private …, unless
``fetch_allowed_networks`` allows it) is ``refused``, which is not a failure: the link is not
known to be broken, and resolution keeps it.

Politeness: at most one request at a time to a host (its name and port, the scope of a
robots.txt and of a crawler's queue), and ``per_host_interval`` seconds from the end of one
request to the start of the next; at most ``concurrency`` requests in flight in all. Each
request has ``timeout`` seconds to connect and answer with its headers.

Sharing one database: a round of checks runs in one process at a time (the database's
``links`` lock: a PostgreSQL advisory lock, or a file lock beside an SQLite database), so the
politeness above holds across server processes, machines and ``urnkit links check`` runs; the
server's job skips its round while another process runs one, the command waits. Within a
round, URLs are taken batch by batch, oldest check first, with a conditional UPDATE of
``links.checked`` (``tx.links.claim``): each is taken once, even by checkers running at once.

>>> check = asyncio.run(check_url("ftp://example.org/x"))
>>> check.verdict, check.detail
('failed', "not a usable http(s) URL: 'ftp://example.org/x'")
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from http import HTTPStatus
from importlib.metadata import version
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from urnkit.resolver.domain import (
    LinkCheck,
    UnavailableError,
    Verdict,
    link_verdict,
    next_link_state,
)
from urnkit.resolver.services.outbound import FetchGuard, RefusedAddressError
from urnkit.resolver.store import Store, now

MAX_REDIRECTS = 10
USER_AGENT = f"urnkit/{version('urnkit')} (link checker of a URN:NBN resolver)"
REDIRECTS = frozenset({301, 302, 303, 307, 308})
log = logging.getLogger("urnkit.links")


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How a round of checks behaves (the flags of ``urnkit links check``).

    >>> CheckOptions().per_host_interval
    1.0
    """

    concurrency: int = 10  # requests in flight at most
    per_host_interval: float = 1.0  # seconds between requests to one host
    timeout: float = 10.0  # seconds for a request to connect and answer with its headers
    older_than: float = 0.0  # check URLs last checked at least this many seconds ago


@dataclass(slots=True)
class Summary:
    """What a round of checks found: URLs checked, how many are ok, broken, failing (failed,
    not broken yet), refused (not fetched: not the public internet), how many turned broken or
    ok, and records whose resolution changed."""

    checked: int = 0
    ok: int = 0
    broken: int = 0
    failing: int = 0
    refused: int = 0
    newly_broken: int = 0
    recovered: int = 0
    rerouted: int = 0
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        """The summary in words.

        >>> Summary(checked=3, ok=2, broken=1, newly_broken=1).line()[:44]
        '3 URLs checked: 2 ok, 1 broken (1 newly), 0 '
        """
        seconds = time.monotonic() - self.started
        return (
            f"{self.checked:,} URLs checked: {self.ok:,} ok, {self.broken:,} broken "
            f"({self.newly_broken:,} newly), {self.failing:,} failing, {self.refused:,} "
            f"refused, {self.recovered:,} recovered; resolution changed for "
            f"{self.rerouted:,} records ({seconds:.1f} s)"
        )


class HostGate:
    """At most one request at a time to each host, and ``interval`` seconds from the end of one
    to the start of the next; requests wait their turn in order."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._locks: dict[str, asyncio.Lock] = {}
        self._free_at: dict[str, float] = {}

    @staticmethod
    def host(url: str) -> str:
        """The host a URL's request goes to: its name and port.

        >>> HostGate.host("https://Example.org/x"), HostGate.host("http://example.org:8080/")
        ('example.org:443', 'example.org:8080')
        """
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        return f"{(parts.hostname or '').lower()}:{port}"

    @asynccontextmanager
    async def turn(self, url: str) -> AsyncIterator[None]:
        """Hold the turn of ``url``'s host for one request."""
        key = self.host(url)
        loop = asyncio.get_running_loop()
        async with self._locks.setdefault(key, asyncio.Lock()):
            wait = self._free_at.get(key, 0.0) - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            try:
                yield
            finally:
                self._free_at[key] = loop.time() + self.interval


class _NoAnswerError(Exception):
    """A request that got no usable answer: timed out, refused, too many redirects …"""

    def __init__(
        self,
        detail: str,
        http_status: int | None = None,
        *,
        timed_out: bool = False,
        refused: bool = False,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.http_status = http_status
        self.timed_out = timed_out
        self.refused = refused  # by the fetch guard: not fetched at all

    def check(self, url: str, detail: str | None = None) -> LinkCheck:
        """The check of ``url`` this gives: refused, or failed; ``detail`` if given."""
        verdict: Verdict = "refused" if self.refused else "failed"
        return LinkCheck(url, verdict, self.http_status, detail or self.detail, now())


class Checker:
    """Checks URLs: one HTTP client, one :class:`HostGate` and one bound on requests in flight.
    Use it as ``async with Checker(options, guard) as checker: await checker.check(url)``;
    ``guard`` says what it may connect to."""

    def __init__(self, options: CheckOptions, guard: FetchGuard) -> None:
        self.options = options
        self.gate = HostGate(options.per_host_interval)
        self._slots = asyncio.Semaphore(options.concurrency)
        self._client = guard.async_client(
            options.timeout, {"User-Agent": USER_AGENT}, options.concurrency
        )

    async def __aenter__(self) -> Checker:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._client.aclose()

    async def check(self, url: str) -> LinkCheck:
        """Check ``url``: HEAD, then GET unless HEAD said 2xx, timed out or was refused."""
        if not _usable(url):
            return LinkCheck(url, "failed", None, f"not a usable http(s) URL: {url!r}", now())
        try:
            status, hops, final = await self._follow("HEAD", url)
            if 200 <= status < 300:
                return LinkCheck(url, "ok", status, _said("HEAD", status, hops, final), now())
            head = f"HEAD: {status}"
        except _NoAnswerError as failure:
            if failure.refused or failure.timed_out:
                return failure.check(url)
            head = f"HEAD: {failure.detail}"
        try:
            status, hops, final = await self._follow("GET", url)
        except _NoAnswerError as failure:
            return failure.check(url, f"GET: {failure.detail} ({head})")
        detail = f"{_said('GET', status, hops, final)} ({head})"
        return LinkCheck(url, link_verdict(status), status, detail, now())

    async def _follow(self, method: str, url: str) -> tuple[int, int, str]:
        """The final status of ``method`` on ``url``, redirects followed; the number of
        redirects and the final URL with it. Raises :class:`_NoAnswerError`."""
        for hops in range(MAX_REDIRECTS + 1):
            try:
                status, location = await self._request(method, url)
            except _NoAnswerError as failure:
                if not (hops and failure.refused):
                    raise
                detail = f"{failure.detail} (redirected to {url})"
                raise _NoAnswerError(detail, refused=True) from None
            if status not in REDIRECTS or location is None:
                return status, hops, url
            url = urljoin(url, location)
            if not _usable(url):
                raise _NoAnswerError(f"redirected to {url!r}, not a usable http(s) URL", status)
        raise _NoAnswerError(f"more than {MAX_REDIRECTS} redirects (last to {url})", status)

    async def _request(self, method: str, url: str) -> tuple[int, str | None]:
        """One request in its host's turn and a slot: the status and any Location header. The
        body is never read: the response is closed once its headers are in."""
        timeout = self.options.timeout
        async with self.gate.turn(url), self._slots:
            try:
                async with asyncio.timeout(timeout):
                    response = await self._client.send(
                        self._client.build_request(method, url), stream=True
                    )
                    await response.aclose()
            except (TimeoutError, httpx.TimeoutException):
                raise _NoAnswerError(f"no answer within {timeout:g} s", timed_out=True) from None
            except RefusedAddressError as refusal:
                raise _NoAnswerError(refusal.detail, refused=True) from None
            # ValueError: a host that is not valid IDNA, and other URLs httpx cannot send.
            except (httpx.HTTPError, httpx.InvalidURL, ValueError) as error:
                raise _NoAnswerError(f"{type(error).__name__}: {error}".rstrip(": ")) from None
        return response.status_code, response.headers.get("location")


def _usable(url: str) -> bool:
    """Whether ``url`` is an http(s) URL with a host and a valid port.

    >>> _usable("https://example.org/"), _usable("ftp://example.org/"), _usable("http://x:99999/")
    (True, False, False)
    """
    try:
        parts = urlsplit(url)
        return (
            parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and parts.port != 0
        )
    except ValueError:  # a port out of range, a malformed IPv6 address
        return False


def _said(method: str, status: int, hops: int, final: str) -> str:
    """An answer in words: ``GET 200 OK``, with the redirects that led to it.

    >>> _said("HEAD", 200, 2, "https://example.org/b")
    'HEAD 200 OK after 2 redirects (to https://example.org/b)'
    """
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    said = f"{method} {status} {phrase}".rstrip()
    if hops:
        said += f" after {hops} redirect{'s' if hops > 1 else ''} (to {final})"
    return said


async def check_url(
    url: str, options: CheckOptions | None = None, guard: FetchGuard | None = None
) -> LinkCheck:
    """Check one URL with a checker of its own (nothing is stored), connecting where ``guard``
    allows (by default: the public internet)."""
    async with Checker(options or CheckOptions(), guard or FetchGuard()) as checker:
        return await checker.check(url)


def record_checks(store: Store, checks: list[LinkCheck], summary: Summary) -> None:
    """Store ``checks`` in one transaction: each URL's new state and the check itself; the
    resolution targets of records whose link changed status are recomputed in it, so
    resolution skips a broken link (or takes a recovered one back) from the commit on."""
    with store.transaction() as tx:
        # Locked: a check of the same URL stored meanwhile (urnkit links check --older-than 0
        # beside a server's round) counts after this one, not instead of it.
        before = tx.links.states((check.url for check in checks), for_update=True)
        states = [next_link_state(before.get(check.url), check) for check in checks]
        tx.links.save_checks(states, checks)
        changed = set()
        for state in states:
            was = before.get(state.url)
            if was is None or was.status != state.status:
                changed.add(state.url)
                summary.newly_broken += state.status == "broken"
                summary.recovered += was is not None and state.status == "ok"
        summary.rerouted += tx.links.refresh_targets(changed)
    for state in states:
        summary.checked += 1
        summary.ok += state.status == "ok" and state.failures == 0
        summary.failing += state.status == "ok" and state.failures > 0
        summary.broken += state.status == "broken"
        summary.refused += state.status == "refused"


async def check_round(
    store: Store,
    options: CheckOptions,
    guard: FetchGuard,
    progress: Callable[[Summary], None] | None = None,
    stop: threading.Event | None = None,
    *,
    wait: bool = True,
) -> Summary | None:
    """Check every http(s) location URL of ``store`` last checked ``options.older_than``
    seconds ago or earlier (or never), batch by batch, connecting where ``guard`` allows, and
    store what was found.

    One round runs at a time on a database, in whichever process holds its ``links`` lock
    (:meth:`~urnkit.resolver.store.Store.lock`), so that politeness holds across processes and
    machines: a round waits for the lock, or with ``wait=False`` returns None at once."""
    with store.lock("links", wait=wait) as held:
        return await _check_round(store, options, guard, progress, stop) if held else None


async def _check_round(
    store: Store,
    options: CheckOptions,
    guard: FetchGuard,
    progress: Callable[[Summary], None] | None,
    stop: threading.Event | None,
) -> Summary:
    summary = Summary()
    due = now() - timedelta(seconds=options.older_than)
    batch = max(100, options.concurrency * 20)

    def seed() -> None:
        with store.transaction() as tx:
            tx.links.seed()

    def claim() -> list[str]:
        with store.transaction() as tx:
            return tx.links.claim(due, batch)

    await asyncio.to_thread(seed)
    async with Checker(options, guard) as checker:
        while stop is None or not stop.is_set():
            urls = await asyncio.to_thread(claim)
            if not urls:
                break
            checks = await asyncio.gather(*(checker.check(url) for url in urls))
            await asyncio.to_thread(record_checks, store, list(checks), summary)
            if progress is not None:
                progress(summary)
    return summary


def _check_periodically(
    store: Store, interval: float, guard: FetchGuard, stop: threading.Event
) -> None:
    """Run a round of checks every ``interval`` seconds, of URLs checked ``interval`` seconds
    ago or earlier, until ``stop`` is set. A failing round is logged and the next one tried."""
    options = CheckOptions(older_than=interval)
    while not stop.is_set():
        try:
            summary = asyncio.run(check_round(store, options, guard, stop=stop, wait=False))
            if summary is not None and summary.checked:
                log.info("link check: %s", summary.line())
        except UnavailableError:  # the store logs the outage
            pass
        except Exception:
            log.exception("link check round failed; the next one starts in %s s", interval)
        stop.wait(interval)


@contextmanager
def periodic_checks(store: Store, interval: float, guard: FetchGuard) -> Iterator[None]:
    """Check links every ``interval`` seconds in a thread (with an event loop of its own, so
    the checks never delay resolution's), while the block runs."""
    stop = threading.Event()
    worker = threading.Thread(
        target=_check_periodically,
        args=(store, interval, guard, stop),
        name="urnkit-links",
        daemon=True,
    )
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join(timeout=10)  # a daemon: a check still running dies with the process


def with_periodic_checks(
    lifespan: Callable[[Any], AbstractAsyncContextManager[Any]],
    store: Store,
    interval: float,
    guard: FetchGuard,
) -> Callable[[Any], AbstractAsyncContextManager[Any]]:
    """An ASGI app's lifespan that also checks links every ``interval`` seconds (the server's
    job, ``URNKIT_LINK_CHECK_INTERVAL``) around ``lifespan``, connecting where ``guard``
    allows."""

    @asynccontextmanager
    async def checking(app: Any) -> AsyncIterator[Any]:
        with periodic_checks(store, interval, guard):
            async with lifespan(app) as state:
                yield state

    return checking
