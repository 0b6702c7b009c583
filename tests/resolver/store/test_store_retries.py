"""Writes that PostgreSQL ends for a deadlock or a serialization failure are run again
(``Store.retried``), and answered as a conflict to send again when they keep failing; on
SQLite, whose writers take turns, the same transactions simply wait for each other."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
import sqlalchemy as sa

from urnkit.resolver.domain import ConflictError
from urnkit.resolver.store import Store, Transaction, organisations
from urnkit.resolver.store.store import RETRIES

EVENT_WAIT = 60.0  # seconds a test waits for something that must happen


class _DriverError(Exception):
    """A driver's error with the SQLSTATE psycopg gives its errors."""

    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def test_transactions_locking_rows_in_opposite_orders_both_commit(store: Store) -> None:
    """Two transactions each take a row the other then wants: PostgreSQL ends one of them
    for the deadlock, and it runs again after the other commits; both renames are kept."""
    with store.transaction() as tx:
        for name in ("First", "Second"):
            tx.organisations.create(name)
    postgresql = store.engine.dialect.name == "postgresql"
    both_hold_one = threading.Barrier(2)
    attempts: Counter[str] = Counter()
    failed: list[BaseException] = []

    def rename(tx: Transaction, order: tuple[str, str], mark: str) -> None:
        attempts[mark] += 1
        for number, name in enumerate(order):
            if number == 1 and postgresql and attempts[mark] == 1:
                both_hold_one.wait(EVENT_WAIT)  # SQLite: the other waits to begin
            tx.connection.execute(
                sa.update(organisations)
                .where(organisations.c.name.startswith(name))
                .values(name=organisations.c.name + mark)
            )

    def run(order: tuple[str, str], mark: str) -> None:
        try:
            store.retried(lambda tx: rename(tx, order, mark))
        except BaseException as error:  # reported below
            failed.append(error)

    threads = [
        threading.Thread(target=run, args=(("First", "Second"), "+a")),
        threading.Thread(target=run, args=(("Second", "First"), "+b")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(EVENT_WAIT)
    assert not failed, failed
    if postgresql:  # one was ended for the deadlock, at least once, and ran again
        assert sum(attempts.values()) > 2, attempts
    else:
        assert attempts == {"+a": 1, "+b": 1}
    with store.snapshot() as tx:
        names = sorted(tx.connection.scalars(sa.select(organisations.c.name)))
    # Each name got both marks, the same transaction's first on both: a serial order.
    assert names in (["First+a+b", "Second+a+b"], ["First+b+a", "Second+b+a"]), names


def test_a_write_that_keeps_failing_is_a_conflict_to_send_again(store: Store) -> None:
    calls = []

    def deadlocked(tx: Transaction) -> None:
        calls.append(tx)
        raise sa.exc.OperationalError("UPDATE …", {}, _DriverError("40P01"))

    with pytest.raises(ConflictError, match="send it again"):
        store.retried(deadlocked)
    assert len(calls) == RETRIES


def test_other_errors_are_not_retried(store: Store) -> None:
    calls = []

    def refused(tx: Transaction) -> None:
        calls.append(tx)
        raise sa.exc.OperationalError("UPDATE …", {}, _DriverError("57014"))  # query_canceled

    with pytest.raises(sa.exc.OperationalError):
        store.retried(refused)
    assert len(calls) == 1
