"""How a server lives through an outage (store/outages.py): one log line when it begins, one
when it ends with the refusals counted, and an outage of SQLite's write lock ended only by a
write; under a running server in test_database_outages.py."""

from __future__ import annotations

import logging
import sqlite3

import pytest

from urnkit.resolver.domain import NotFoundError, UnavailableError
from urnkit.resolver.store.outages import Outages

LOCKED = sqlite3.OperationalError("database is locked")
UNOPENED = sqlite3.OperationalError("unable to open database file")


def _refused(outages: Outages, error: Exception, *, writes: bool = False) -> UnavailableError:
    with pytest.raises(UnavailableError) as raised, outages.guarding(writes=writes):
        raise error
    assert raised.value.__cause__ is error
    return raised.value


def _log(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records]


def test_one_line_when_an_outage_begins_and_one_when_it_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "urnkit.resolver.database")
    outages = Outages("sqlite:////srv/u.db", logged=True)
    refusal = _refused(outages, UNOPENED)
    assert refusal.status == 503
    assert refusal.retry_after == 5  # RFC 9110 §10.2.3
    assert refusal.reason == "the database file cannot be opened"
    for _ in range(3):
        _refused(outages, UNOPENED)
    assert _log(caplog) == [
        "database unavailable, answering 503 until it is back: cannot open the SQLite file "
        "/srv/u.db: check that its directory exists and that this user may write there"
    ]
    with outages.guarding():
        pass  # the database answered
    with outages.guarding():
        pass
    assert len(_log(caplog)) == 2
    assert _log(caplog)[1].startswith("database reachable again after ")
    assert _log(caplog)[1].endswith(" s, 4 requests refused")
    assert outages.since is None


def test_a_refusal_of_the_service_is_an_answer_of_the_database() -> None:
    outages = Outages("sqlite:////srv/u.db")
    _refused(outages, UNOPENED)
    with pytest.raises(NotFoundError), outages.guarding():
        raise NotFoundError("no such URN")
    assert outages.since is None


def test_a_locked_database_is_back_with_a_write_not_a_read() -> None:
    outages = Outages("sqlite:////srv/u.db")
    _refused(outages, LOCKED, writes=True)
    with outages.guarding():  # a read: readers wait for no writer
        pass
    assert outages.since is not None
    with outages.guarding(writes=True):
        pass
    assert outages.since is None


def test_an_inner_refusal_is_counted_once() -> None:
    outages = Outages("sqlite:////srv/u.db")
    with pytest.raises(UnavailableError) as raised, outages.guarding(), outages.guarding():
        raise UNOPENED
    assert raised.value.__cause__ is UNOPENED
    assert outages.refused == 1


def test_a_command_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    outages = Outages("sqlite:////srv/u.db")  # not logged: the command says it in its words
    _refused(outages, UNOPENED)
    with outages.guarding():
        pass
    assert _log(caplog) == []
