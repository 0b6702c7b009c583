"""No one's long work blocks anyone else's writes: while an export reads its pages (``urnkit
export``, the staff pages' CSV) or a link-check round waits for a slow site, other writes
go through at once, on SQLite and PostgreSQL. On SQLite a writer would otherwise wait for the
database's one write lock (and fail after its busy timeout); on PostgreSQL a transaction held
open across the fetches would hold its row locks for as long."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import sqlalchemy as sa
from services_support import LOCAL, Principals

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.services import Services
from urnkit.resolver.services.link_checker import CheckOptions, Summary, check_round

PROMPT = 10.0  # seconds a write here may take; SQLite's writers give up after 30
EVENT_WAIT = 60.0  # seconds a test waits for something that must happen


def write_promptly(write: Callable[[], object]) -> None:
    """Run ``write`` in a thread of its own; it must end, without error, within
    :data:`PROMPT` seconds."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            write()
        except BaseException as error:  # reported below
            failed.append(error)

    writer = threading.Thread(target=run)
    writer.start()
    writer.join(PROMPT)
    assert not writer.is_alive(), f"the write took more than {PROMPT} s"
    assert not failed, failed


def other_write(
    services: Services, who: Principals, number: int, url: str = "https://example.org/w"
) -> Callable[[], object]:
    """Another organisation's registration (a location at ``url``) through the API's
    service."""
    urn = f"urn:nbn:fi:demox-w{number}"
    return lambda: services.records.put(who.other, urn, [Location(url)], {})


def open_transactions(services: Services) -> int:
    """On PostgreSQL, how many sessions on this database are inside a transaction and idle,
    waiting for their client; on SQLite 0 (a write lock held would show in the writes)."""
    if services.store.engine.dialect.name != "postgresql":
        return 0
    with services.store.engine.connect() as connection:
        return int(
            connection.scalar(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()"
                )
            )
        )


def register(services: Services, who: Principals, count: int, url: str) -> None:
    """``count`` records of Demo Library, each at ``url`` + its number, in batches."""
    for first in range(0, count, 1_000):
        items = [
            (f"urn:nbn:fi:demo-{n}", [Location(f"{url}{n}")], {"title": f"Record {n}"})
            for n in range(first, min(first + 1_000, count))
        ]
        assert services.records.batch(who.demo, items)[0] == 200


def test_writes_go_through_while_an_export_reads(services: Services, who: Principals) -> None:
    """``urnkit export`` and the staff pages' export read page by page, each page in a short
    read-only transaction: between two pages another organisation's write, and the
    exporting organisation's own, go through at once, and the export goes on to the end."""
    register(services, who, 2_500, "https://example.org/e/")
    exports: list[tuple[str, Iterator[Record]]] = [
        ("export", services.transfer.export_records(page=1_000)),
        ("staff export", services.overview.held_export(who.demo, page=1_000)),
    ]
    for number, (name, export) in enumerate(exports):
        first = next(export)
        write_promptly(other_write(services, who, number))
        own = [Location("https://example.org/changed")]
        write_promptly(partial(services.records.put, who.demo, first.urn, own, {}))
        assert open_transactions(services) == 0, name
        assert 1 + sum(1 for _ in export) >= 2_500, name


@contextmanager
def held_site() -> Iterator[tuple[str, threading.Event, threading.Event]]:
    """An HTTP server on 127.0.0.1 that answers every request with 200 only once released:
    its base URL, an event set when a request has arrived, and the event that releases them."""
    arrived, release = threading.Event(), threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:  # the checker's first request; GET only if HEAD fails
            arrived.set()
            release.wait(EVENT_WAIT)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", arrived, release
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def test_writes_go_through_while_a_link_check_round_waits(
    services: Services, who: Principals
) -> None:
    """A link-check round holds no transaction while it fetches: while every check waits for
    a slow site, another organisation's write and a write of a record being checked go
    through at once; the round then stores what it found, in short transactions."""
    with held_site() as (base, arrived, release):
        register(services, who, 30, f"{base}/")
        summaries: list[Summary | None] = []
        options = CheckOptions(per_host_interval=0.0, timeout=EVENT_WAIT, concurrency=10)
        checking = check_round(services.store, options, LOCAL)
        round_ = threading.Thread(target=lambda: summaries.append(asyncio.run(checking)))
        round_.start()
        try:
            assert arrived.wait(EVENT_WAIT), "the round sent no request"
            write_promptly(other_write(services, who, 0, f"{base}/other"))
            checked = [Location(f"{base}/0"), Location(f"{base}/more")]
            write_promptly(lambda: services.records.put(who.demo, "urn:nbn:fi:demo-0", checked, {}))
            assert open_transactions(services) == 0
        finally:
            release.set()
            round_.join(EVENT_WAIT)
        assert not round_.is_alive()
    assert summaries[0] is not None
    assert summaries[0].checked == 30
    assert summaries[0].ok == 30
