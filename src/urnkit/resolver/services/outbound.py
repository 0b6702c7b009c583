"""The server fetches only the public internet: every outbound HTTP request (link checking,
"recheck now", harvesting, the forwarding table's health checks) goes through a client that a
:class:`FetchGuard` makes.

Its connections resolve the host's name, refuse an address that is not global
(:func:`~urnkit.resolver.domain.address_class`: loopback, private, link-local, unique-local,
shared, multicast, reserved, IPv4 inside IPv6 as its IPv4) or that is this server's own, unless
the operator allows its network (``fetch_allowed_networks``), and connect to exactly the
address that was checked: the name is not looked up a second time, so a DNS answer that
changes between the check and the connection (DNS rebinding) changes nothing. The request
keeps the name: its ``Host`` header, and with TLS the server name sent (SNI) and checked in
the certificate. A redirect is a new request, checked the same way. A refusal is a
:class:`RefusedAddressError`.

Within :func:`deadline`, every connection, read and write of the synchronous client shares
one total bound (a server sending a byte every few seconds is cut at it), and
:func:`fetch` reads an answer of at most a given size, redirects followed by hand.

>>> import ipaddress
>>> FetchGuard().refusal(ipaddress.ip_address("169.254.169.254"))
'address 169.254.169.254 is link-local; allow it with fetch_allowed_networks'
>>> FetchGuard.from_setting("127.0.0.0/8").refusal(ipaddress.ip_address("127.0.0.1")) is None
True
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address
from typing import Any
from urllib.parse import urljoin

import httpcore
import httpx

from urnkit.resolver.domain import (
    client_address,
    fetch_refusal,
    inside,
    listed_networks,
    refused_as,
)

Address = IPv4Address | IPv6Address
Range = IPv4Network | IPv6Network
MAX_REDIRECTS = 10
REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEADLINE: ContextVar[float | None] = ContextVar("urnkit_fetch_deadline", default=None)


class RefusedAddressError(Exception):
    """A connection refused by the guard; ``detail`` says which address, and why."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class FetchError(Exception):
    """An answer :func:`fetch` could not give: refused, too large, too slow (``timed_out``),
    no connection…"""

    def __init__(self, detail: str, *, timed_out: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.timed_out = timed_out


def own_address(address: Address) -> bool:
    """Whether ``address`` is one of this machine's: the kernel routes a datagram to it from
    itself (no packet is sent to learn this).

    >>> own_address(ip_address("127.0.0.1")), own_address(ip_address("192.0.2.1"))
    (True, False)
    """
    family = socket.AF_INET if address.version == 4 else socket.AF_INET6
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((str(address), 9))
            return bool(ip_address(probe.getsockname()[0]) == address)
    except OSError:  # no route to it: not this machine's
        return False


@dataclass(frozen=True, slots=True)
class FetchGuard:
    """What the server may fetch from: global addresses, and those of the ``allowed``
    networks (the ``fetch_allowed_networks`` setting)."""

    allowed: tuple[Range, ...] = ()

    @classmethod
    def from_setting(cls, text: str) -> FetchGuard:
        """The guard of a ``fetch_allowed_networks`` setting (comma-separated networks)."""
        return cls(listed_networks("fetch_allowed_networks", text))

    def refusal(self, address: Address) -> str | None:
        """Why a connection to ``address`` is refused, in words; None when it is not."""
        found = fetch_refusal(address, self.allowed)
        allowed = inside(client_address(str(address)), self.allowed)
        if found is None and not allowed and own_address(address):
            return refused_as(address, "this server's own")
        return found

    def addresses(self, host: str, found: Iterable[Any]) -> list[str]:
        """The addresses of ``found`` (``getaddrinfo``'s answers for ``host``) that may be
        connected to, in order; :class:`RefusedAddressError` when none may."""
        allowed: list[str] = []
        refusals: list[str] = []
        for *_, sockaddr in found:
            address = ip_address(str(sockaddr[0]).split("%")[0])
            refusal = self.refusal(address)
            if refusal is not None:
                refusals.append(refusal)
            elif str(address) not in allowed:
                allowed.append(str(address))
        if not allowed and refusals:
            named = "" if refusals[0].startswith(f"address {host} ") else f"{host}: "
            raise RefusedAddressError(f"refused: {named}{refusals[0]}")
        return allowed

    def client(self, timeout: float, headers: dict[str, str]) -> httpx.Client:
        """A synchronous client whose every connection this guard checks; it follows no
        redirect (:func:`fetch` does, each a checked request)."""
        return httpx.Client(transport=_GuardedTransport(self), timeout=timeout, headers=headers)

    def async_client(
        self, timeout: float, headers: dict[str, str] | None = None, connections: int = 100
    ) -> httpx.AsyncClient:
        """An asynchronous client whose every connection this guard checks, with at most
        ``connections`` open; it follows no redirect."""
        return httpx.AsyncClient(
            transport=_GuardedAsyncTransport(self, connections), timeout=timeout, headers=headers
        )


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Within the block, the synchronous guarded client's connections, reads and writes end
    ``seconds`` from now at the latest (an earlier deadline around it holds)."""
    end = time.monotonic() + seconds
    outer = _DEADLINE.get()
    token = _DEADLINE.set(end if outer is None else min(outer, end))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(timeout: float | None, late: type[Exception]) -> float | None:
    """``timeout``, or less before the deadline; past it, ``late`` is raised."""
    end = _DEADLINE.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise late("the deadline passed")
    return left if timeout is None else min(timeout, left)


def _lookup(host: str, port: int) -> list[Any]:
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise httpcore.ConnectError(f"{host}: {error}") from None


class _Stream(httpcore.NetworkStream):
    """A connection whose reads, writes and TLS handshake end by the :func:`deadline`."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self,
        ssl_context: Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(timeout, httpcore.ConnectTimeout)
        return _Stream(self.inner.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """Connections to the addresses the guard allows, by address: the name is looked up once."""

    def __init__(self, guard: FetchGuard) -> None:
        self.guard = guard
        self.inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        failure: Exception = httpcore.ConnectError(f"{host}: no address")
        for address in self.guard.addresses(host, _lookup(host, port)):
            try:
                left = _left(timeout, httpcore.ConnectTimeout)
                stream = self.inner.connect_tcp(address, port, left, local_address, socket_options)
                return _Stream(stream)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                failure = error
        raise failure

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        raise RefusedAddressError(f"refused: a Unix socket ({path})")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _AsyncBackend(httpcore.AsyncNetworkBackend):
    """:class:`_Backend` for the asynchronous client."""

    def __init__(self, guard: FetchGuard) -> None:
        self.guard = guard
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            loop = asyncio.get_running_loop()
            found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as error:
            raise httpcore.ConnectError(f"{host}: {error}") from None
        failure: Exception = httpcore.ConnectError(f"{host}: no address")
        for address in self.guard.addresses(host, found):
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                failure = error
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise RefusedAddressError(f"refused: a Unix socket ({path})")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class _GuardedTransport(httpx.HTTPTransport):
    """httpx's transport over a pool whose connections :class:`_Backend` makes (httpx takes
    no network backend of its own, so the pool it made is replaced)."""

    def __init__(self, guard: FetchGuard) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(), network_backend=_Backend(guard)
        )


class _GuardedAsyncTransport(httpx.AsyncHTTPTransport):
    """:class:`_GuardedTransport` for the asynchronous client."""

    def __init__(self, guard: FetchGuard, connections: int) -> None:
        super().__init__(trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            max_connections=connections,
            network_backend=_AsyncBackend(guard),
        )


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer :func:`fetch` read whole: its status, headers, body and the URL it came from
    (after redirects)."""

    status: int
    reason: str
    headers: httpx.Headers
    body: bytes
    url: str


def fetch(client: httpx.Client, url: str, limit: int, seconds: float) -> Answer:
    """GET ``url`` with ``client`` (a guarded one), redirects followed (at most
    :data:`MAX_REDIRECTS`, each hop checked), its body read to at most ``limit`` bytes, all
    within ``seconds``; a :class:`FetchError` says why not."""
    with deadline(seconds):
        for _ in range(MAX_REDIRECTS + 1):
            try:
                with client.stream("GET", url) as response:
                    location = response.headers.get("location")
                    if response.status_code not in REDIRECTS or location is None:
                        body = _read(response, limit)
                        return Answer(
                            response.status_code,
                            response.reason_phrase,
                            response.headers,
                            body,
                            url,
                        )
            except RefusedAddressError as refused:
                raise FetchError(refused.detail) from None
            except httpx.TimeoutException:
                raise FetchError(f"no whole answer within {seconds:g} s", timed_out=True) from None
            except (httpx.HTTPError, httpx.InvalidURL, ValueError) as error:
                raise FetchError(f"the request failed: {error}") from None
            url = urljoin(url, location)
        raise FetchError(f"more than {MAX_REDIRECTS} redirects (last to {url})")


def _read(response: httpx.Response, limit: int) -> bytes:
    """The body of ``response``, read as it comes; :class:`FetchError` as soon as it is
    longer than ``limit`` bytes (its ``Content-Length`` says so, or what came)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise FetchError(f"the answer is {int(declared):,} bytes, more than {limit:,}")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise FetchError(f"the answer is more than {limit:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
