"""``/healthz`` (liveness) and ``/readyz`` (readiness): a running server on each database, and
readiness over databases that are empty, outdated, current or unreachable (a house rule for
operations, not an RFC)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from urnkit.resolver.services import Services
from urnkit.resolver.services.health import Readiness
from urnkit.resolver.store import Store
from urnkit.resolver.web import create_app


def test_a_running_server_is_live_and_ready(anonymous: httpx.Client) -> None:
    live = anonymous.get("/healthz")
    assert live.status_code == 200
    assert live.headers["content-type"] == "application/json"
    assert live.headers["cache-control"] == "no-store"
    assert live.json() == {"status": "ok"}
    ready = anonymous.get("/readyz")
    assert ready.status_code == 200
    assert ready.headers["cache-control"] == "no-store"
    assert ready.json() == {"status": "ready", "database": "ok", "schema": "current"}


def test_readiness_follows_the_schema(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    services = Services(store)
    try:
        upgrade = ": run 'urnkit db upgrade' first"
        assert services.health.readiness() == Readiness(
            False, "ok", "empty", "the database has no schema" + upgrade
        )
        store.upgrade("oai")  # a migration before the latest
        assert services.health.readiness() == Readiness(
            False, "ok", "outdated", "the database has an older schema" + upgrade
        )
        store.upgrade()
        assert services.health.readiness() == Readiness(True, "ok", "current")
    finally:
        store.close()


def test_a_database_that_cannot_be_opened_is_unreachable(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'missing' / 'r.db'}")
    try:
        assert Services(store).health.readiness() == Readiness(
            False, "unreachable", "unknown", "the database file cannot be opened"
        )
    finally:
        store.close()


@pytest.mark.parametrize("upgrade", [False, True])
def test_readyz_answers_503_until_the_schema_is_current(upgrade: bool) -> None:
    services = Services(Store("sqlite://"))
    if upgrade:
        services.store.upgrade()

    async def ask() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(services))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.get("/readyz")

    answer = asyncio.run(ask())
    assert answer.status_code == (200 if upgrade else 503)
    expected = (
        {"status": "ready", "schema": "current"}
        if upgrade
        else {
            "status": "not ready",
            "schema": "empty",
            "reason": "the database has no schema: run 'urnkit db upgrade' first",
        }
    )
    assert answer.json() == expected | {"database": "ok"}
