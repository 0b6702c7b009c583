"""A database outage under a running ``urnkit serve``, on each database: what needs the
database is answered 503 with ``Retry-After`` as an RFC 9457 problem (RFC 9110 §15.6.4), the
log has one line when the outage begins and one when it ends and no traceback, ``/readyz``
says why, the service resumes by itself, and the server stops cleanly afterwards.

PostgreSQL: the test's own database refuses connections (``ALLOW_CONNECTIONS false``, its
sessions ended), then takes them again; the shared server is left alone. SQLite: another
process holds the write lock past the busy timeout (``?timeout=1`` in the URL).
"""

from __future__ import annotations

import signal
import sqlite3
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from pathlib import Path

import httpx
import sqlalchemy as sa
from resolver_support import (
    BROWSER,
    PG_URL,
    PROBLEM,
    Server,
    assert_problem,
    fresh_database,
    register,
    set_up_resolver,
    wait_for,
)

URN = "URN:NBN:fi:test-outage-1"


def _ready(server: Server) -> httpx.Response | None:
    """``/readyz``'s answer if it says the server is ready, else None."""
    answer = httpx.get(server.base_url + "/readyz", timeout=30)
    return answer if answer.json()["status"] == "ready" else None


def _assert_unavailable(response: httpx.Response, media_type: str = PROBLEM) -> None:
    # RFC 9110 §10.2.3: Retry-After tells the client when to ask again.
    assert response.status_code == 503, response.text
    assert response.headers["content-type"].startswith(media_type)
    assert response.headers["retry-after"] == "5"
    if media_type == PROBLEM:
        problem = assert_problem(response, 503)
        assert problem["title"] == "Service Unavailable"
        assert problem["detail"].startswith("the database is unavailable (")


def _record(token: str) -> dict[str, object]:
    return {"locations": [{"url": f"https://example.org/{token}"}], "metadata": {}}


@contextmanager
def _refused_connections(url: str) -> Iterator[None]:
    """The PostgreSQL database of ``url`` refuses new connections and its sessions are ended,
    for the block; the connections are let in again after it."""
    name = sa.make_url(url).database
    admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(sa.text(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false'))
            connection.execute(
                sa.text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"
                ),
                {"name": name},
            )
        yield
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true'))
        admin.dispose()


def _at_once(base_url: str, headers: dict[str, str]) -> list[httpx.Response]:
    """Four writers and two readers, five requests each, at once."""

    def requests(number: int) -> list[httpx.Response]:
        with httpx.Client(base_url=base_url, headers=headers, timeout=30) as client:
            urn = f"{URN}-{number}"
            if number < 4:
                return [client.put(f"/api/v1/urns/{urn}", json=_record("x")) for _ in range(5)]
            return [client.get("/" + urn) for _ in range(5)]

    with ThreadPoolExecutor(6) as pool:
        return [answer for answers in pool.map(requests, range(6)) for answer in answers]


def _stops_cleanly(server: Server) -> str:
    """SIGTERM the server; what it wrote, once it has exited as a stopped server does (uvicorn
    raises the signal again once it has shut down)."""
    assert server.process is not None
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=30) in (0, -signal.SIGTERM), server.output()
    output = server.output()
    assert "Application shutdown failed" not in output
    assert "Traceback" not in output, output
    return output


def _lines(output: str, words: str) -> list[str]:
    return [line for line in output.splitlines() if words in line]


def test_postgresql_refusing_connections_is_503_then_recovery(tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        tokens = set_up_resolver(url)
        with Server(url) as server:
            headers = {"Authorization": f"Bearer {tokens['registrant_token']}"}
            with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as api:
                register(api, URN, [{"url": "https://example.org/before"}])
                assert api.get("/" + URN).status_code == 302
                with _refused_connections(url):
                    _assert_unavailable(api.get("/" + URN))  # the front's fast path
                    for answer in _at_once(server.base_url, headers):
                        _assert_unavailable(answer)
                    _assert_unavailable(api.put(f"/api/v1/urns/{URN}", json=_record("x")))
                    page = api.get("/prefixes", headers={"Accept": BROWSER})
                    _assert_unavailable(page, "text/html")
                    ready = api.get("/readyz")
                    assert ready.status_code == 503
                    assert ready.json() == {
                        "status": "not ready",
                        "database": "unreachable",
                        "schema": "unknown",
                        "reason": "the database does not accept connections",
                    }
                    output = server.output()
                    began = _lines(output, "database unavailable")
                    assert len(began) == 1, output
                    assert "ALLOW_CONNECTIONS true" in began[0]  # what to do
                    assert "Traceback" not in output, output
                ready = wait_for(lambda: _ready(server), "/readyz to say ready again")
                assert ready.status_code == 200
                assert api.get("/" + URN).status_code == 302
                assert api.put(f"/api/v1/urns/{URN}", json=_record("after")).status_code == 200
                assert api.get("/prefixes", headers={"Accept": BROWSER}).status_code == 200
            output = _stops_cleanly(server)
    assert len(_lines(output, "database unavailable")) == 1, output
    ended = _lines(output, "database reachable again after ")
    assert len(ended) == 1, output
    assert "requests refused" in ended[0]


def test_sqlite_locked_past_its_wait_is_503_then_recovery(tmp_path: Path) -> None:
    with fresh_database("sqlite", tmp_path) as plain:
        url = plain + "?timeout=1"  # the busy timeout, in seconds
        tokens = set_up_resolver(url)
        # No flush of the resolution counts while the lock is held: they would be refused too.
        with Server(url, env={"URNKIT_STATISTICS_INTERVAL": "3600"}) as server:
            headers = {"Authorization": f"Bearer {tokens['registrant_token']}"}
            with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as api:
                register(api, URN, [{"url": "https://example.org/before"}])
                path = sa.make_url(url).database
                assert path is not None
                with closing(sqlite3.connect(path, isolation_level=None)) as holder:
                    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
                    _assert_unavailable(api.put(f"/api/v1/urns/{URN}", json=_record("x")))
                    _assert_unavailable(
                        api.put(
                            f"/api/v1/urns/{URN}",
                            json=_record("y"),
                            headers={"Accept": BROWSER},
                        ),
                        "text/html",
                    )
                    output = server.output()
                    began = _lines(output, "database unavailable")
                    assert len(began) == 1, output
                    assert "locked by another writer" in began[0]
                    assert "Traceback" not in output, output
                    # Readers wait for no writer (WAL): resolution and readiness go on.
                    assert api.get("/" + URN).status_code == 302
                    assert api.get("/readyz").status_code == 200
                    holder.execute("ROLLBACK")
                assert api.put(f"/api/v1/urns/{URN}", json=_record("after")).status_code == 200
            output = _stops_cleanly(server)
    ended = _lines(output, "database reachable again after ")
    assert len(ended) == 1, output
    assert "2 requests refused" in ended[0]


def test_postgresql_dropped_under_the_server_is_503_and_a_clean_stop(tmp_path: Path) -> None:
    with fresh_database("postgresql", tmp_path) as url:
        tokens = set_up_resolver(url)
        headers = {"Authorization": f"Bearer {tokens['registrant_token']}"}
        # The resolution below stays counted, unflushed, until the server stops.
        env = {"URNKIT_STATISTICS_INTERVAL": "3600"}
        with (
            Server(url, env=env) as server,
            httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as client,
        ):
            register(client, URN, [{"url": "https://example.org/1"}])
            assert client.get("/" + URN).status_code == 302
            admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
            with admin.connect() as connection:
                name = sa.make_url(url).database
                connection.execute(sa.text(f'DROP DATABASE "{name}" WITH (FORCE)'))
            admin.dispose()
            _assert_unavailable(client.get("/" + URN))
            assert client.get("/readyz").json()["reason"] == "the database does not exist"
            # Stopped while the database is still away: the counted resolution is lost, said
            # in one line, and the process stops cleanly all the same.
            output = _stops_cleanly(server)
    assert len(_lines(output, "database unavailable")) == 1, output
    assert "create it: createdb -h 127.0.0.1 -p 5432" in output
    assert len(_lines(output, "the resolutions counted since the last flush are lost")) == 1
