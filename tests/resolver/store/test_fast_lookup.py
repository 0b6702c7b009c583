"""Resolution's lookups on the event loop (``urnkit.resolver.store.fast_lookup``) on SQLite and
PostgreSQL: concurrent lookups each get their own key's row; PostgreSQL's survive the server
closing their connection between queries and during one, on asyncio's loop and on uvloop's
(uvicorn's)."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import uvloop
from resolver_support import fresh_database
from store_support import add_organisation, raw_sql, sample_record

from urnkit.resolver.store import Store, successions

Run = Callable[[Coroutine[Any, Any, Any]], Any]
# Each event loop a coroutine may run on: asyncio's own, and uvloop's (uvicorn's).
on_each_loop = pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])


def _resolvable(store: Store, count: int) -> list[str]:
    """``count`` active records ``urn:nbn:fi:demo-N``, the first two successors of others;
    their keys."""
    with store.transaction() as tx:
        organisation_id = add_organisation(tx)
        for n in range(count):
            tx.records.insert(sample_record(f"urn:nbn:fi:demo-{n}"), organisation_id)
        successions_of = {"urn:nbn:fi:old-1": 0, "urn:nbn:fi:old-2": 0, "urn:nbn:fi:old-3": 1}
        rows = []
        for old, successor in successions_of.items():
            predecessor_id = tx.records.insert(sample_record(old), organisation_id)
            rows.append(
                {
                    "successor_key": f"urn:nbn:fi:demo-{successor}",
                    "predecessor_id": predecessor_id,
                    "predecessor_urn": old,
                }
            )
        tx.connection.execute(successions.insert(), rows)
    return [f"urn:nbn:fi:demo-{n}" for n in range(count)]


def _lookups(store: Store, keys: list[str]) -> list[Any]:
    """The rows of ``keys`` looked up at once, each by a task of its own, in a new event loop."""
    return asyncio.run(_at_once(store, keys))


async def _at_once(store: Store, keys: list[str]) -> list[Any]:
    """The rows of ``keys`` looked up at once; TimeoutError after 10 s rather than a hang."""
    found = asyncio.gather(*(store.resolution_row_async(key) for key in keys))
    return list(await asyncio.wait_for(found, 10))


def _sorted_predecessors(row: Any) -> Any:
    if row is None or row[2] is None:
        return row
    return (row[0], row[1], "\n".join(sorted(row[2].split("\n"))), row[3])


def test_concurrent_lookups_each_get_the_row_of_their_key(store: Store) -> None:
    # On PostgreSQL the lookups of concurrent requests share queries (BatchedLookups): each
    # must still get its own key's row, missing keys None, a key asked twice twice.
    keys = _resolvable(store, 40)
    asked = [*keys, *keys[:10], "urn:nbn:fi:demo-missing", "urn:nbn:fi:demo-x\u00e4"] * 3
    expected = [store.resolution_row(key) for key in asked]
    assert expected[0] is not None
    assert expected[0][2] is not None  # predecessors are read too
    assert sorted(expected[0][2].split("\n")) == ["urn:nbn:fi:old-1", "urn:nbn:fi:old-2"]
    assert expected[40 + 10] is None
    found = _lookups(store, asked)
    assert list(map(_sorted_predecessors, found)) == list(map(_sorted_predecessors, expected))
    # A second event loop (the first one closed) gets a connection of its own.
    assert _lookups(store, keys[:3]) == expected[:3]


def test_a_failing_waiter_leaves_the_rest_of_its_batch_answered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # PostgreSQL's only: a server's protocol asks with a function to call, not a future
    # (Store.resolution_row_then); one that raises is logged, and the batch goes on.
    with fresh_database("postgresql", tmp_path) as url:
        store = Store(url)
        try:
            store.upgrade()
            keys = _resolvable(store, 2)
            expected = store.resolution_row(keys[1])

            def fail(row: Any, error: Exception | None) -> None:
                raise RuntimeError("the waiter's own failure")

            async def ask() -> Any:
                answered = asyncio.get_running_loop().create_future()
                assert store.resolution_row_then(keys[0], fail)
                assert store.resolution_row_then(keys[1], lambda *got: answered.set_result(got))
                return await asyncio.wait_for(answered, 10)

            row, error = asyncio.run(ask())
        finally:
            store.close()
    assert error is None
    assert _sorted_predecessors(row) == _sorted_predecessors(expected)
    assert "a resolution lookup's waiter failed" in caplog.text
    assert "the waiter's own failure" in caplog.text


@on_each_loop
def test_lookups_survive_the_server_closing_their_connection(tmp_path: Path, run: Run) -> None:
    # PostgreSQL's only: the lookups' connection, closed by the server (a restart, a failover,
    # an idle timeout), is replaced and the lookups asked meanwhile are answered on the new one.
    with fresh_database("postgresql", tmp_path) as url:
        store = Store(url)
        try:
            store.upgrade()
            keys = _resolvable(store, 5)
            expected = [store.resolution_row(key) for key in keys]

            async def before_and_after() -> list[list[Any]]:
                found = [await _at_once(store, keys)]
                # The server's goodbye read by the loop before the next lookup, or not yet.
                for pause in (0.2, 0):
                    raw_sql(
                        store,
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()",
                    )
                    await asyncio.sleep(pause)
                    found.append(await _at_once(store, keys))
                return found

            found = run(before_and_after())
        finally:
            store.close()
    assert found == [expected] * 3


def _fatal(code: str, message: str) -> bytes:
    """PostgreSQL's ErrorResponse message of severity FATAL (the protocol's ``E``)."""
    fields = [(b"S", "FATAL"), (b"V", "FATAL"), (b"C", code), (b"M", message)]
    body = b"".join(kind + text.encode() + b"\0" for kind, text in fields) + b"\0"
    return b"E" + struct.pack("!i", len(body) + 4) + body


class Relay:
    """A TCP relay to PostgreSQL at ``upstream`` (host, port), listening on 127.0.0.1.
    Once ``armed``, it ends the next connection to send something as PostgreSQL ends a session
    that has not read its query (``pg_terminate_backend``): the query is held (``received``
    set) until ``go`` is set, then the client gets a FATAL message and a reset together
    (``ended`` set), the query never answered."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.armed, self.received = threading.Event(), threading.Event()
        self.go, self.ended = threading.Event(), threading.Event()
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            server = socket.create_connection(self.upstream)
            self.sockets += [client, server]
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, from_client: bool) -> None:
        """Copy what ``source`` sends to ``sink``, until either ends."""
        with suppress(OSError):
            while data := source.recv(65536):
                if from_client and self.armed.is_set():
                    self.armed.clear()
                    self._end(source, sink)
                    return
                sink.sendall(data)
        for each in (source, sink):
            _closed(each)

    def _end(self, client: socket.socket, server: socket.socket) -> None:
        self.received.set()
        self.go.wait(10)
        client.sendall(_fatal("57P01", "terminating connection due to administrator command"))
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()  # with the linger of 0: a reset
        _closed(server)
        self.ended.set()

    def close(self) -> None:
        _closed(self.listener)
        for each in self.sockets:
            _closed(each)


def _closed(each: socket.socket) -> None:
    """Close ``each``, waking a thread that waits on it."""
    with suppress(OSError):
        each.shutdown(socket.SHUT_RDWR)
    each.close()


@contextmanager
def _relayed(url: str) -> Iterator[tuple[Relay, Store]]:
    """A :class:`Relay` to the database of ``url`` and a store connecting through it."""
    parsed = sa.make_url(url)
    relay = Relay((parsed.host or "127.0.0.1", parsed.port or 5432))
    store = Store(parsed.set(host="127.0.0.1", port=relay.port).render_as_string(False))
    try:
        yield relay, store
    finally:
        store.close()
        relay.close()


@on_each_loop
def test_a_lookup_survives_the_server_ending_its_connection_mid_query(
    tmp_path: Path, run: Run
) -> None:
    # PostgreSQL's only. A session ended before it read its query sends its FATAL message,
    # then a reset. uvloop calls a reader once more when its socket has an error, and watches
    # the socket no longer: that call must read on to the reset, or the query waits forever.
    with fresh_database("postgresql", tmp_path) as url, _relayed(url) as (relay, relayed):
        store = Store(url)
        try:
            store.upgrade()
            key = _resolvable(store, 1)[0]
            expected = store.resolution_row(key)
        finally:
            store.close()

        async def ended_mid_query() -> Any:
            assert await relayed.resolution_row_async(key) == expected  # connected
            relay.armed.set()
            lookup = asyncio.ensure_future(relayed.resolution_row_async(key))
            assert await asyncio.to_thread(relay.received.wait, 10)
            relay.go.set()
            # The loop's thread waits here: the message and the reset are both there when
            # the loop next looks at the socket.
            assert relay.ended.wait(10)
            return await asyncio.wait_for(lookup, 10)

        assert run(ended_mid_query()) == expected
