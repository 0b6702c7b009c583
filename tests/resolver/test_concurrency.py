"""Two server processes on one database, many clients at once: generation and idempotent batches.

Acceptance point of the resolver issue: "2 server processes on one PostgreSQL, 100 concurrent
generation requests → 100 distinct, persisted URNs." The same runs on one SQLite file (WAL)
shared by two processes. Requests are sent all at once, alternately to each server; what is
persisted is read back through the API (paged) and straight from the database.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from resolver_support import (
    DATABASES,
    Resolver,
    Server,
    fresh_database,
    set_up_resolver,
    wait_for,
)

from urnkit.resolver.store import history, idempotency_keys, locations, records

REQUESTS = 100
RANDOM_URN = re.compile(r"urn:nbn:fi:other-[0-9a-hjkmnp-tv-z]{10}[0-9a-z]")


@dataclass(frozen=True)
class Cluster:
    """Two ``urnkit serve`` processes over one database, and its credentials."""

    servers: tuple[Resolver, Resolver]
    database_url: str
    processes: tuple[Server, Server]

    def urls(self, count: int) -> list[str]:
        """``count`` base URLs, alternating between the two servers."""
        return [self.servers[n % 2].base_url for n in range(count)]

    def assert_no_errors_logged(self) -> None:
        """Neither server logged an exception (a 5xx the answers did not show, or a retry)."""
        for process in self.processes:
            assert "Traceback" not in process.output(), process.output()[-5000:]


@pytest.fixture(scope="module", params=DATABASES)
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """Two server processes sharing one fresh database of each kind."""
    directory: Path = tmp_path_factory.mktemp(f"cluster-{request.param}")
    with fresh_database(request.param, directory) as url:
        set_up = set_up_resolver(url)
        with Server(url) as first, Server(url) as second:
            yield Cluster(
                (Resolver(first.base_url, url, **set_up), Resolver(second.base_url, url, **set_up)),
                url,
                (first, second),
            )


async def _send_at_once(
    method: str, path: str, token: str, requests: Sequence[tuple[str, dict[str, Any]]]
) -> list[httpx.Response]:
    """A request to each (base URL, httpx options) of ``requests``, all in flight together."""
    limits = httpx.Limits(max_connections=len(requests), max_keepalive_connections=0)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=60, limits=limits) as client:
        sent = (client.request(method, base + path, **options) for base, options in requests)
        return list(await asyncio.gather(*sent))


def send_at_once(
    method: str, urls: Sequence[str], path: str, token: str, **options: Any
) -> list[httpx.Response]:
    """The same request to each base URL in ``urls``, all in flight together."""
    return asyncio.run(_send_at_once(method, path, token, [(url, options) for url in urls]))


def listed(resolver: Resolver, prefix: str) -> dict[str, str]:
    """Every record under ``prefix`` as the API lists it, page by page: status by URN."""
    found: dict[str, str] = {}
    cursor: str | None = None
    with resolver.client() as api:
        while True:
            params: dict[str, str | int] = {"prefix": prefix, "limit": 37}
            if cursor is not None:
                params["cursor"] = cursor
            page = api.get("/api/v1/urns", params=params)
            assert page.status_code == 200, page.text
            for record in page.json()["records"]:
                assert record["urn"] not in found, f"{record['urn']} listed twice"
                found[record["urn"]] = record["status"]
            cursor = page.json()["next_cursor"]
            if cursor is None:
                return found


def stored(database_url: str, urns: Sequence[str]) -> tuple[int, int]:
    """How many of ``urns`` the database holds, and how many history rows they have."""
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as connection:
            ids = connection.scalars(sa.select(records.c.id).where(records.c.urn.in_(urns))).all()
            entries = connection.scalar(
                sa.select(sa.func.count()).select_from(history).where(history.c.record_id.in_(ids))
            )
    finally:
        engine.dispose()
    return len(ids), int(entries or 0)


# What a server process may open at most for API requests (store/engine.py: 10 pooled, 30 more).
POOL_AT_MOST = 40


def room_for_servers(database_url: str) -> int:
    """How many connections the servers on ``database_url`` may have in all now: those they
    hold and those the PostgreSQL server still takes."""
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as connection:
            room = connection.scalar(
                sa.text(
                    "SELECT current_setting('max_connections')::int"
                    " - current_setting('superuser_reserved_connections')::int"
                    " - count(*) FILTER (WHERE datname IS DISTINCT FROM current_database())"
                    " - 1 FROM pg_stat_activity WHERE backend_type = 'client backend'"
                )
            )
    finally:
        engine.dispose()
    return int(room)


def generate_concurrently(cluster: Cluster, prefix: str, token: str) -> list[str]:
    """:data:`REQUESTS` generation requests at once, half to each server: the URNs made, after
    checking every answer is a 201 naming one URN. On PostgreSQL the burst waits until the
    server has room for both servers' pools at their fullest: other tests' servers share it,
    and a server refused a connection answers 503, as it should."""
    if cluster.database_url.startswith("postgresql"):
        wait_for(
            lambda: room_for_servers(cluster.database_url) >= 2 * POOL_AT_MOST,
            "room on the PostgreSQL server for both servers' pools",
        )
    answers = send_at_once("POST", cluster.urls(REQUESTS), f"/api/v1/prefixes/{prefix}/urns", token)
    problems = [f"{a.status_code} {a.text}" for a in answers if a.status_code != 201]
    assert not problems, f"{len(problems)} of {REQUESTS} requests failed:\n" + "\n".join(problems)
    urns = []
    for answer in answers:
        body = answer.json()
        assert body["urns"] == [body["urn"]], body
        urns.append(body["urn"])
    return urns


def check_persisted(cluster: Cluster, prefix: str, urns: Sequence[str]) -> None:
    """Every URN is listed by both servers as reserved, and stored once with one history row."""
    for server in cluster.servers:
        statuses = listed(server, prefix)
        missing = set(urns) - set(statuses)
        assert not missing, f"{server.base_url} does not list {sorted(missing)}"
        assert {statuses[urn] for urn in urns} == {"reserved"}
    assert stored(cluster.database_url, urns) == (len(urns), len(urns))
    with cluster.servers[1].client() as api:
        history_of = api.get(f"/api/v1/urns/{urns[0]}/history")
        assert history_of.status_code == 200, history_of.text
        assert [e["action"] for e in history_of.json()["entries"]] == ["reserved"]


def test_sequential_generation_from_two_servers_gives_distinct_persisted_urns(
    cluster: Cluster,
) -> None:
    """100 requests at once on ``fi:test`` (sequential): 100 distinct URNs with consecutive
    numbers (none lost, none given twice), all persisted."""
    urns = generate_concurrently(cluster, "fi:test", cluster.servers[0].registrant_token)
    assert len(set(urns)) == REQUESTS, sorted(urns)
    numbers = sorted(int(urn.removeprefix("urn:nbn:fi:test-")) for urn in urns)
    assert numbers == list(range(numbers[0], numbers[0] + REQUESTS)), numbers
    check_persisted(cluster, "fi:test", urns)
    cluster.assert_no_errors_logged()


def test_random_generation_from_two_servers_gives_distinct_persisted_urns(
    cluster: Cluster,
) -> None:
    """100 requests at once on ``fi:other`` (random generator): 100 distinct, well-formed URNs,
    all persisted."""
    urns = generate_concurrently(cluster, "fi:other", cluster.servers[0].other_token)
    assert len(set(urns)) == REQUESTS, sorted(urns)
    malformed = [urn for urn in urns if not RANDOM_URN.fullmatch(urn)]
    assert not malformed, malformed
    check_persisted(cluster, "fi:other", urns)
    cluster.assert_no_errors_logged()


def test_count_generation_from_two_servers_never_overlaps(cluster: Cluster) -> None:
    """20 requests at once for 25 URNs each: 500 distinct URNs, each request's numbers a run of
    its own."""
    token = cluster.servers[0].registrant_token
    answers = send_at_once(
        "POST", cluster.urls(20), "/api/v1/prefixes/fi:test/urns", token, params={"count": 25}
    )
    assert [a.status_code for a in answers] == [201] * 20, [a.text for a in answers]
    runs = [[int(u.removeprefix("urn:nbn:fi:test-")) for u in a.json()["urns"]] for a in answers]
    for run in runs:
        assert run == list(range(run[0], run[0] + 25)), run
    urns = [f"urn:nbn:fi:test-{n}" for run in runs for n in run]
    assert len(set(urns)) == 500
    assert stored(cluster.database_url, urns) == (500, 500)
    cluster.assert_no_errors_logged()


def test_same_idempotency_key_from_two_servers_at_once_has_one_effect(
    cluster: Cluster, unique: str
) -> None:
    """The same batch with the same Idempotency-Key, 20 times at once across both servers: one
    write (each record created once, one history row each), 20 identical answers."""
    urns = [f"urn:nbn:fi:test-k{unique}{n}" for n in range(50)]
    items = [
        {"urn": urn, "locations": [{"url": f"https://example.org/{urn}"}], "metadata": {"n": n}}
        for n, urn in enumerate(urns)
    ]
    batch = {"records": items}
    answers = send_at_once(
        "POST",
        cluster.urls(20),
        "/api/v1/urns:batch",
        cluster.servers[0].registrant_token,
        json=batch,
        headers={"Idempotency-Key": f"key-{unique}"},
    )
    assert [a.status_code for a in answers] == [200] * 20, [a.text for a in answers]
    bodies = [a.json() for a in answers]
    assert all(body == bodies[0] for body in bodies), bodies
    assert bodies[0]["count"] == 50
    assert {r["result"] for r in bodies[0]["results"]} == {"created"}
    assert stored(cluster.database_url, urns) == (50, 50)  # one history row: nothing replaced
    engine = sa.create_engine(cluster.database_url)
    try:
        with engine.connect() as connection:
            keys = connection.scalar(
                sa.select(sa.func.count())
                .select_from(idempotency_keys)
                .where(idempotency_keys.c.key == f"key-{unique}")
            )
    finally:
        engine.dispose()
    assert keys == 1
    # A later retry still gets the first answer; the same key with another batch is refused.
    with cluster.servers[1].client(cluster.servers[1].registrant_token) as api:
        retry = api.post(
            "/api/v1/urns:batch", json=batch, headers={"Idempotency-Key": f"key-{unique}"}
        )
        assert (retry.status_code, retry.json()) == (200, bodies[0])
        other = {"records": items[:1]}
        clash = api.post(
            "/api/v1/urns:batch", json=other, headers={"Idempotency-Key": f"key-{unique}"}
        )
        assert clash.status_code == 409, clash.text
    assert stored(cluster.database_url, urns) == (50, 50)
    cluster.assert_no_errors_logged()


def final_writers(database_url: str, urns: Sequence[str]) -> set[tuple[int, str]]:
    """The (``metadata.batch``, location URL) each of ``urns`` holds now, as a set."""
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                sa.select(records.c.metadata, locations.c.url)
                .join(locations, locations.c.record_id == records.c.id)
                .where(records.c.urn.in_(urns))
            ).all()
    finally:
        engine.dispose()
    assert len(rows) == len(urns)
    return {(metadata["batch"], url.rpartition("#")[2]) for metadata, url in rows}


def test_batches_sharing_records_in_opposite_orders_do_not_deadlock(
    cluster: Cluster, unique: str
) -> None:
    """Six batches of the same 100 URNs, every other one in reverse order, at once across both
    servers, twice (creating the records, then replacing them): every batch succeeds (no
    deadlock between two transactions locking the same rows in opposite orders), each record
    is created by one batch only and has one history entry per batch, and the records end as
    some serial order of the batches leaves them: all as the last batch wrote them."""
    urns = [f"urn:nbn:fi:test-o{unique}{n}" for n in range(100)]
    bodies = []
    for batch in range(6):
        items = [
            {
                "urn": urn,
                "locations": [{"url": f"https://example.org/{urn}#{batch}"}],
                "metadata": {"batch": batch},
            }
            for urn in urns
        ]
        bodies.append({"records": items if batch % 2 == 0 else items[::-1]})
    requests = [(url, {"json": body}) for url, body in zip(cluster.urls(6), bodies, strict=True)]
    token = cluster.servers[0].registrant_token
    for creating in (True, False):
        answers = asyncio.run(_send_at_once("POST", "/api/v1/urns:batch", token, requests))
        assert [a.status_code for a in answers] == [200] * 6, [a.text[:300] for a in answers]
        created: dict[str, int] = dict.fromkeys(urns, 0)
        for answer in answers:
            for result in answer.json()["results"]:
                created[result["urn"]] += result["result"] == "created"
        assert set(created.values()) == {1 if creating else 0}
        [(last, url_batch)] = final_writers(cluster.database_url, urns)
        assert url_batch == str(last)
    assert stored(cluster.database_url, urns) == (100, 100 * 12)
    cluster.assert_no_errors_logged()
