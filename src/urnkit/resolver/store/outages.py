"""Outages of the database as a server lives through them: a failure of the database
(:mod:`~urnkit.resolver.store.failures`) is raised as
:class:`~urnkit.resolver.domain.UnavailableError` (answered 503, try again later), and a server
logs one line when an outage begins and one when the database answers again.

>>> import sqlite3
>>> outages = Outages("sqlite:///u.db")
>>> with outages.guarding():
...     raise sqlite3.OperationalError("database is locked")
Traceback (most recent call last):
...
urnkit.resolver.domain.UnavailableError: the database is unavailable (the database is locked); \
try again later
>>> outages.refused
1
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import URL

from urnkit.resolver.domain import UnavailableError
from urnkit.resolver.store.failures import database_failure

log = logging.getLogger("urnkit.resolver.database")


class Outages:
    """The outages of the database at ``url``: ``since`` (``time.monotonic()``) the current one
    began, None while there is none, and how many requests it ``refused``; logged if ``logged``
    (a server; a command says it in its own words), naming it by ``name`` (``primary``,
    ``standby 1`` …) if it is one of several."""

    def __init__(self, url: str | URL, *, logged: bool = False, name: str = "") -> None:
        self.url = url
        self.logged = logged
        self.name = name
        self.since: float | None = None
        self.refused = 0
        self._writes_only = False  # the current outage is a lock: it ends with a write
        self._lock = threading.Lock()

    @property
    def down(self) -> bool:
        """Whether an outage is on that stops reads too (not a lock's)."""
        return self.since is not None and not self._writes_only

    @contextmanager
    def guarding(self, *, writes: bool = False) -> Iterator[None]:
        """Run the block (a transaction that ``writes``, or one that only reads): a failure of
        the database in it is raised as :class:`~urnkit.resolver.domain.UnavailableError`;
        anything else, or nothing, means that the database answered."""
        try:
            yield
        except UnavailableError:  # an inner block's, counted there
            raise
        except Exception as error:
            unavailable = self.unavailable(error)
            if unavailable is None:
                self.answered(wrote=writes)
                raise
            raise unavailable from error
        self.answered(wrote=writes)

    def unavailable(self, error: BaseException) -> UnavailableError | None:
        """The refusal for ``error`` if it is a failure of the database (counted, the outage
        begun if none was on), or None."""
        failure = database_failure(error, self.url)
        if failure is None:
            return None
        with self._lock:
            began = self.since is None
            if began:
                self.since, self.refused = time.monotonic(), 0
                self._writes_only = failure.writes_only
            self.refused += 1
        if began and self.logged:
            answer = {"": "answering 503", "primary": "writes answered 503"}.get(
                self.name, "reads go to the others"
            )
            log.warning("%s unavailable, %s until it is back: %s", self._named, answer, failure)
        return UnavailableError(failure.reason)

    def answered(self, *, wrote: bool = False) -> None:
        """The database answered (a transaction that ``wrote``, or a read): the end of the
        outage, if one is on (of a lock, only if it wrote)."""
        if self.since is None:  # the common case, without the lock
            return
        with self._lock:
            if self.since is None or (self._writes_only and not wrote):
                return
            lasted, refused, self.since = time.monotonic() - self.since, self.refused, None
        if self.logged:
            log.warning(
                "%s reachable again after %.1f s, %d requests refused", self._named, lasted, refused
            )

    @property
    def _named(self) -> str:
        return f"database ({self.name})" if self.name else "database"
