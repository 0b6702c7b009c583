"""Resolution from PostgreSQL standbys, and when the primary is lost (issue 35), against a
primary and its synchronous streaming standby of the test's own (``replication_support``)
and a running ``urnkit serve`` whose ``database_url`` names both hosts
(``target_session_attrs=read-write``) and whose ``replica_urls`` names the standby.

The module's cluster pair and server are made once; the tests run in order, the last one
losing the primary and promoting the standby.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from replication_support import Replication, replication
from resolver_support import (
    BROWSER,
    LEAST_HASHING,
    Server,
    assert_problem,
    register,
    set_up_resolver,
    wait_for,
)

from urnkit.resolver.domain import NotFoundError, parse_urn
from urnkit.resolver.services import Services
from urnkit.resolver.services.accounts import ADMIN, AccountService
from urnkit.resolver.store import Store

READ_ONLY = "The service is read-only for now"


@dataclass(frozen=True)
class Replicated:
    """The running server over the pair, its URLs and a registrant's token."""

    pair: Replication
    server: Server
    primary_url: str
    standby_url: str
    token: str

    def api(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.server.base_url, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def replicated() -> Iterator[Replicated]:
    with replication() as pair:
        primary_url, standby_url = pair.primary.url("urnkit"), pair.standby.url("urnkit")
        tokens = set_up_resolver(primary_url)
        hosts = f"host=127.0.0.1:{pair.primary.port}&host=127.0.0.1:{pair.standby.port}"
        url = f"postgresql+psycopg://postgres@/urnkit?{hosts}&target_session_attrs=read-write"
        env = {
            "URNKIT_REPLICA_URLS": standby_url,
            "URNKIT_REPLICA_MAX_LAG": "1",
            "URNKIT_STATISTICS_INTERVAL": "3600",  # no write but the test's
        }
        with Server(url, env=env) as server:
            yield Replicated(pair, server, primary_url, standby_url, tokens["registrant_token"])


def _readiness(replicated: Replicated) -> dict[str, object]:
    answer = httpx.get(replicated.server.base_url + "/readyz", timeout=30)
    assert answer.headers["cache-control"] == "no-store"
    found: dict[str, object] = answer.json()
    return found


def _state(replicated: Replicated, name: str) -> object:
    databases = _readiness(replicated)["databases"]
    assert isinstance(databases, list)
    return next(d["state"] for d in databases if d["name"] == name)


def test_the_reads_that_may_be_old_come_from_the_standby(replicated: Replicated) -> None:
    """Replay paused on the standby, a record registered on the primary is missing from what
    reads from the standby and there in what must see the writes."""
    urn = "URN:NBN:fi:test-standby-reads"
    store = Store(
        replicated.primary_url, replica_urls=[replicated.standby_url], replica_max_lag=3600
    )
    services = Services(store)
    replicated.pair.standby.execute("SELECT pg_wal_replay_pause()")
    try:
        with replicated.api() as api:
            register(api, urn, [{"url": "https://example.org/standby-reads"}])
        # From the standby: resolution (its lookup, and the service's answer), search.
        assert store.resolution_row(parse_urn(urn).equivalence_key()) is None
        with pytest.raises(NotFoundError):
            services.resolution.resolve(urn, None)
        assert services.overview.search("urn", urn) == ([], None)
        # From the primary: the owner's API.
        assert services.records.get(urn).urn == urn
    finally:
        replicated.pair.standby.execute("SELECT pg_wal_replay_resume()")
        store.close()
    replicated.pair.wait_until_replayed()
    # The running server's resolution reads the standby: its batched lookup is seen there.
    wait_for(lambda: _state(replicated, "standby 1") == "ok", "the standby caught up")
    with replicated.api() as api:
        assert api.get("/" + urn).headers["location"] == "https://example.org/standby-reads"
    lookups = (
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE query LIKE '%string_to_array%' AND pid <> pg_backend_pid()"
    )
    assert replicated.pair.standby.execute(lookups) == 1
    assert replicated.pair.primary.execute(lookups) == 0
    standby = Store(replicated.standby_url)
    try:
        assert Services(standby).resolution.resolve(urn, None).kind == "redirect"
    finally:
        standby.close()


def test_a_lagging_standby_is_skipped_then_taken_back(replicated: Replicated) -> None:
    urn = "URN:NBN:fi:test-lagging"
    replicated.pair.standby.execute("SELECT pg_wal_replay_pause()")
    try:
        with replicated.api() as api:
            register(api, urn, [{"url": "https://example.org/lagging"}])
            wait_for(lambda: _state(replicated, "standby 1") == "lagging", "the standby lagging")
            # Skipped for the primary: the new record resolves.
            assert api.get("/" + urn).status_code == 302
            metrics = api.get("/metrics").text
            assert 'urnkit_database_lagging{database="standby 1"} 1.0' in metrics
            lag = re.search(r'replay_lag_seconds\{database="standby 1"\} ([0-9.e+]+)', metrics)
            assert lag is not None
            assert float(lag[1]) > 1
    finally:
        replicated.pair.standby.execute("SELECT pg_wal_replay_resume()")
    wait_for(lambda: _state(replicated, "standby 1") == "ok", "the standby taken back")
    assert _readiness(replicated)["read_only"] is False


def _signed_in(replicated: Replicated) -> httpx.Client:
    """A client signed in to the staff pages (its one-time password unchanged)."""
    name = "replication-staff"
    store = Store(replicated.primary_url)
    try:
        accounts = AccountService(store, LEAST_HASHING)
        _, password = accounts.create(ADMIN, "Test Library", name, "registrant")
    finally:
        store.close()
    client = httpx.Client(base_url=replicated.server.base_url, timeout=30)
    form = client.get("/staff/sign-in")
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', form.text)
    assert csrf is not None
    fields = {"username": name, "password": password, "csrf": csrf[1]}
    assert client.post("/staff/sign-in", data=fields).status_code == 303
    return client


def _writing(replicated: Replicated, acknowledged: list[str], stop: threading.Event) -> None:
    """Register URNs one after another until one is refused; those acknowledged (201)."""
    with replicated.api() as api:
        for n in range(10_000):
            urn = f"URN:NBN:fi:test-acknowledged-{n}"
            record = {"locations": [{"url": f"https://example.org/{n}"}], "metadata": {}}
            answer = api.put(f"/api/v1/urns/{urn}", json=record)
            if answer.status_code != 201:
                return
            acknowledged.append(urn)
            if stop.is_set() and len(acknowledged) > 5:
                return


def test_losing_the_primary_stops_writes_not_resolution_and_promotion_resumes_them(
    replicated: Replicated,
) -> None:
    urn = "URN:NBN:fi:test-primary-lost"
    with replicated.api() as api:
        register(api, urn, [{"url": "https://example.org/lost"}])
    staff = _signed_in(replicated)
    acknowledged: list[str] = []
    enough = threading.Event()
    writer = threading.Thread(target=_writing, args=(replicated, acknowledged, enough))
    writer.start()
    wait_for(lambda: len(acknowledged) >= 5, "some writes acknowledged")
    replicated.pair.primary.stop("immediate")  # as if its machine were lost, mid-writes
    enough.set()
    writer.join()
    with replicated.api() as api:
        _reads_go_on_writes_wait(replicated, api, staff, urn)
        assert replicated.pair.standby.execute("SELECT pg_promote()") is True
        moved = {"locations": [{"url": "https://example.org/promoted"}], "metadata": {}}
        wait_for(
            lambda: api.put(f"/api/v1/urns/{urn}", json=moved).status_code == 200,
            "a write through the same server after the promotion",
        )
        # RFC 8458 §4.4: resolution redirects to the location just written.
        assert api.get("/" + urn).headers["location"] == "https://example.org/promoted"
        for written in acknowledged:  # synchronous commit: none acknowledged is lost
            assert api.get(f"/api/v1/urns/{written}").status_code == 200, written
    wait_for(lambda: _readiness(replicated)["read_only"] is False, "writable again")
    assert READ_ONLY not in staff.get("/staff/password").text
    staff.close()


def _reads_go_on_writes_wait(
    replicated: Replicated, api: httpx.Client, staff: httpx.Client, urn: str
) -> None:
    """With no primary: resolution, pages and the owner's reads from the standby; a write
    503 with Retry-After (RFC 9110 §10.2.3); the staff pages and /readyz say read-only."""
    assert api.get("/" + urn).headers["location"] == "https://example.org/lost"
    assert api.get("/" + urn, headers={"Accept": BROWSER}).status_code == 302
    assert api.get(f"/{urn}?s=I2C", headers={"Accept": BROWSER}).status_code == 200
    assert api.get(f"/api/v1/urns/{urn}").json()["urn"] == urn
    record = {"locations": [{"url": "https://example.org/refused"}], "metadata": {}}
    refused = api.put(f"/api/v1/urns/{urn}", json=record)
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "5"
    assert assert_problem(refused, 503)["detail"].startswith("the database is unavailable")
    wait_for(lambda: _readiness(replicated)["read_only"] is True, "/readyz saying read-only")
    ready = _readiness(replicated)
    assert ready["status"] == "ready"
    databases = ready["databases"]
    assert isinstance(databases, list)
    assert {"name": "primary", "state": "unreachable"} in databases
    assert READ_ONLY in staff.get("/staff/password").text
