"""A client that timed out learns what its batch did by sending it again with the same
``Idempotency-Key``: after the first request committed it gets the stored answer; while the
first is still being written, the retry waits for it and then gets its answer, and nothing is
written twice. On SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest
import sqlalchemy as sa
from resolver_support import wait_for
from services_support import Principals

from urnkit.resolver.domain import ConflictError, Location, Principal
from urnkit.resolver.services import Services
from urnkit.resolver.services.records import RecordService
from urnkit.resolver.store import Transaction, history

EVENT_WAIT = 60.0  # seconds a test waits for something that must happen

Items = list[tuple[str, list[Location], dict[str, Any]]]


def items(count: int, tag: str) -> Items:
    return [
        (f"urn:nbn:fi:demo-{tag}{n}", [Location(f"https://example.org/{tag}/{n}")], {"n": n})
        for n in range(count)
    ]


def history_rows(services: Services) -> int:
    with services.store.snapshot() as tx:
        return int(
            tx.connection.execute(sa.select(sa.func.count()).select_from(history)).scalar_one()
        )


def waiting_for_a_lock(services: Services) -> bool:
    """On PostgreSQL, whether a session on this database waits for a lock now; on SQLite,
    True (a writer there waits in SQLite's busy handler, which shows nowhere)."""
    if services.store.engine.dialect.name != "postgresql":
        return True
    with services.store.engine.connect() as connection:
        return bool(
            connection.scalar(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND wait_event_type = 'Lock'"
                )
            )
        )


def test_a_retry_after_the_first_committed_gets_its_answer(
    services: Services, who: Principals
) -> None:
    batch = items(20, "c")
    first = services.records.batch(who.demo, batch, "key-1")
    rows = history_rows(services)
    assert services.records.batch(who.demo, batch, "key-1") == first
    assert services.records.batch(who.demo, batch[::-1], "key-2")[1]["results"][0]["result"] == (
        "replaced"
    )
    assert history_rows(services) == rows + 20  # the retry wrote nothing; key-2 did
    with pytest.raises(ConflictError, match="different batch"):
        services.records.batch(who.demo, batch[1:], "key-1")


def test_a_retry_while_the_first_is_written_waits_for_its_answer(
    services: Services, who: Principals, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first request is held inside its transaction, after claiming its key; the retry
    waits (on PostgreSQL for the key's row, on SQLite for the write lock) and, once the
    first commits, answers as it did without writing anything."""
    batch = items(20, "w")
    writing, release = threading.Event(), threading.Event()
    write = RecordService._batch

    def held(
        self: RecordService,
        tx: Transaction,
        principal: Principal,
        found: Sequence[tuple[str, Sequence[Location], dict[str, Any]]],
    ) -> list[dict[str, str]]:
        writing.set()
        assert release.wait(EVENT_WAIT)
        return write(self, tx, principal, found)

    monkeypatch.setattr(RecordService, "_batch", held)
    answers: dict[str, Any] = {}

    def send(name: str) -> None:
        try:
            answers[name] = services.records.batch(who.demo, batch, "key-w")
        except Exception as error:  # reported by the assertions below
            answers[name] = error

    first = threading.Thread(target=send, args=("first",))
    first.start()
    assert writing.wait(EVENT_WAIT)
    writing.clear()
    retry = threading.Thread(target=send, args=("retry",))
    retry.start()

    def retry_waits() -> bool:  # PostgreSQL: the retry waits for the key's row
        if waiting_for_a_lock(services):
            return True
        assert retry.is_alive(), answers
        return False

    wait_for(retry_waits, "the retry to wait for a lock", seconds=EVENT_WAIT)
    assert "retry" not in answers
    release.set()
    first.join(EVENT_WAIT)
    retry.join(EVENT_WAIT)
    assert not writing.is_set()  # the retry never wrote
    assert answers["first"][0] == 200, answers
    assert answers["retry"] == answers["first"]
    assert {r["result"] for r in answers["first"][1]["results"]} == {"created"}
    assert history_rows(services) == 20
