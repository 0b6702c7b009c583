"""A server process filling its kept redirects (``KeptRedirects``, ``KeptHeaders``, answered
below the application) with the answers of many URNs rarely walks Python's oldest
generation (``web/app.py``, ``OLDEST_COLLECTED_AFTER``): with Python's default it walked
every redirect kept so far each time a quarter as many again had grown old. A busy resolver
fills them often: after its start, and again after each change to a record's redirect."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from resolver_support import fresh_database, urnkit_here

from urnkit.resolver.web import below
from urnkit.resolver.web.app import OLDEST_COLLECTED_AFTER, app_from_environment

URNS = 4_000
# Python's default thresholds but the youngest generation's, made as small as the number of
# URNs is, so that thousands of requests do what a million do with the default's 700.
PYTHONS = (20, 10, 10)


@pytest.fixture
def resolver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``URNKIT_DATABASE_URL`` a SQLite database of ``URNS`` records; the collector's
    thresholds and frozen objects restored afterwards."""
    saved = gc.get_threshold()
    with fresh_database("sqlite", tmp_path) as url:
        flag = ("--database-url", url)
        urnkit_here("db", "upgrade", *flag)
        urnkit_here("admin", "create-org", "Library", *flag)
        urnkit_here("admin", "delegate", "Library", "fi:lib", *flag)
        rows = tmp_path / "rows.ndjson"
        lines = (
            {"urn": f"urn:nbn:fi:lib-{n}", "locations": [{"url": f"https://a.example/{n}"}]}
            for n in range(URNS)
        )
        rows.write_text("".join(json.dumps(line) + "\n" for line in lines))
        urnkit_here("import", str(rows), *flag)
        monkeypatch.setenv("URNKIT_DATABASE_URL", url)
        monkeypatch.setenv("URNKIT_ACCESS_LOG", "0")
        try:
            yield
        finally:
            gc.set_threshold(*saved)
            gc.unfreeze()


def _oldest_collections(thresholds: tuple[int, int, int] | None = None) -> int:
    """How often a new server process, the collector's ``thresholds`` set after it started
    (None: as it set them), collected the oldest generation while it answered every URN
    once below the application, after a first collection of it (as a server long running
    has had: Python counts what grows old against what that one left)."""
    gc.set_threshold(*PYTHONS)
    app_from_environment()
    answers = below.installed()
    assert answers is not None
    if thresholds is not None:
        gc.set_threshold(*thresholds)
    collected = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            collected.append(info)

    async def ask() -> None:
        base = ("http", ("127.0.0.1", 80))
        for n in range(URNS):
            path = f"/urn:nbn:fi:lib-{n}".encode()
            assert answers.head(("GET", path, [(b"host", b"r.example")], base, None))

    gc.collect()
    gc.callbacks.append(seen)
    try:
        asyncio.run(ask())
    finally:
        gc.callbacks.remove(seen)
        answers.services.store.close()
    return len(collected)


@pytest.mark.usefixtures("resolver")
def test_filling_the_kept_redirects_rarely_collects_the_oldest_generation() -> None:
    assert gc.get_threshold()[2] != OLDEST_COLLECTED_AFTER
    ours = _oldest_collections()
    assert gc.get_threshold() == (*PYTHONS[:2], OLDEST_COLLECTED_AFTER)
    pythons = _oldest_collections(PYTHONS)  # the same requests, as Python collects
    assert ours <= 1
    assert pythons >= 3 * max(ours, 1)
