"""A ``GET /{urn}`` passes the web layer once on the way in and once on the way out (issue
31): whatever it answers (the redirect, the surrogate page, 410, the record as JSON, its
linkset, its locations, a citation, Dublin Core, an RFC 2483 request in its query, 404 with the
registered URNs nearest, 301 for a pasted URN, the TimeGate's redirect), the web layer calls
the services once and writes what they return; so do a Memento and a TimeMap. Counted by a spy
on every public method of every service: a call from outside the services (the web layer, or a
worker thread it hands a call to) is an entry; the services' calls among themselves, and those
of the worker threads they start, are not. A house rule (docs/architecture.md), walked over the
answers of RFC 8458 §4.4 and §4.5, RFC 2483 §4 and RFC 7089 §4."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine, Iterator
from contextvars import ContextVar
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from services_support import set_up

from urnkit.resolver.domain import PUBLIC, Location
from urnkit.resolver.services import Services
from urnkit.resolver.services.resolution import NEAREST
from urnkit.resolver.store import Store
from urnkit.resolver.web import create_app

ACTIVE, SURROGATE, GONE = "urn:nbn:fi:demo-1", "urn:nbn:fi:demo-2", "urn:nbn:fi:demo-3"
MISSING = "urn:nbn:fi:demo-9"  # registered nowhere; its nearest are the three above
BROWSER = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"

# (URN with its query, Accept, the status expected): every kind of answer GET /{urn} gives.
REQUESTS = [
    (ACTIVE, None, 302),  # RFC 8458 §4.4: the front's redirect
    (ACTIVE, "application/json", 200),
    (ACTIVE, "application/linkset", 200),  # RFC 9264 §4.1
    (ACTIVE, "application/linkset+json", 200),  # RFC 9264 §4.2
    (ACTIVE, "text/uri-list", 200),  # RFC 2483 §5
    (ACTIVE, "application/x-bibtex", 200),
    (ACTIVE, "text/x-bibliography; style=apa", 200),
    (ACTIVE, "application/ld+json", 200),
    (ACTIVE, "application/xml", 200),  # Dublin Core
    (ACTIVE, "text/csv, application/x-bibtex;q=0", 406),  # RFC 9110 §15.5.7
    (f"{ACTIVE}?format=ris", None, 200),
    (f"{ACTIVE}?s=linkset", None, 200),
    (f"{ACTIVE}?s=I2C", "application/json", 200),  # RFC 2483 §4
    (f"{ACTIVE}?s=I2Ls", None, 200),
    (f"{ACTIVE}?s=I2N", None, 200),  # RFC 2483 §4.7
    (f"{ACTIVE}?s=I2Ns", None, 200),  # RFC 2483 §4.8
    (SURROGATE, None, 200),  # RFC 8458 §4.5: the surrogate page
    (SURROGATE, BROWSER, 200),
    (SURROGATE, "application/json", 200),
    (GONE, None, 410),  # RFC 8458 §4.4: deactivated
    (GONE, BROWSER, 410),
    (GONE, "application/json", 410),
    (GONE, "application/x-bibtex", 200),
    (MISSING, None, 404),  # RFC 8458 §4.4: not found, the problem (RFC 9457)
    (MISSING, BROWSER, 404),  # the page with the registered URNs nearest
    (MISSING, "application/json", 404),
    (f"{MISSING}?s=I2C", None, 404),  # RFC 2483 §4
    (f"{MISSING}?s=I2C", BROWSER, 404),
    (f"{MISSING}?format=ris", BROWSER, 404),
    (f"uri-res/I2L?{MISSING}", BROWSER, 404),  # RFC 2169 §2, which shares the 404 page
    (f"{ACTIVE}.", None, 301),  # a URN pasted with the sentence's full stop
    (quote(f"{ACTIVE}\u00a0", safe=":"), BROWSER, 301),  # with a no-break space, as a PDF has it
    (f"{ACTIVE}.?s=I2L", None, 301),
    (f"uri-res/I2L?{ACTIVE}.", None, 301),
]

# (URN, Accept-Datetime, Accept, the status expected): /{urn} as its record's TimeGate.
DATED = [
    (ACTIVE, "Fri, 01 Jan 2100 00:00:00 GMT", None, 302),  # RFC 7089 §4.1.1: the last version
    (ACTIVE, "Thu, 01 Jan 1998 00:00:00 GMT", None, 302),  # §4.5.3: before it, the first
    (GONE, "Fri, 01 Jan 2100 00:00:00 GMT", BROWSER, 302),
    (MISSING, "Fri, 01 Jan 2100 00:00:00 GMT", None, 404),  # no record here: resolution's
    (MISSING, "Fri, 01 Jan 2100 00:00:00 GMT", BROWSER, 404),
    (f"{ACTIVE}.", "Fri, 01 Jan 2100 00:00:00 GMT", None, 301),
]

# Paths of RFC 7089 §4.1.2 and §5 ("{at}": the moment the record was made, 14 digits).
TIME_TRAVEL = [
    (f"memento/{{at}}/{ACTIVE}", None, 302),  # the location chosen then
    (f"memento/{{at}}/{ACTIVE}", "application/json", 200),
    (f"memento/{{at}}/{SURROGATE}", BROWSER, 200),
    (f"memento/19980101000000/{ACTIVE}", None, 302),  # to the version in force
    (f"memento/{{at}}/{MISSING}", None, 404),
    (f"timemap/link/{ACTIVE}", None, 200),
    (f"timemap/json/{ACTIVE}", None, 200),
    (f"timemap/link/{MISSING}", None, 404),
]


# Whether a call runs inside a service's method (asyncio.to_thread carries it to the thread).
_INSIDE: ContextVar[bool] = ContextVar("inside", default=False)


class EntrySpy:
    """Wraps every public method of each service in ``services``, recording as
    ``entries`` (service, method) each call made from outside the services."""

    def __init__(self, services: Services) -> None:
        self.entries: list[tuple[str, str]] = []
        for area, service in vars(services).items():
            if type(service).__module__.startswith("urnkit.resolver.services."):
                for name in dir(service):
                    method = getattr(service, name)
                    if not name.startswith("_") and callable(method):
                        setattr(service, name, self._spied(area, name, method))

    def _spied(self, area: str, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def spied(*args: Any, **kwargs: Any) -> Any:
            if _INSIDE.get():
                return method(*args, **kwargs)
            self.entries.append((area, name))
            token = _INSIDE.set(True)
            try:
                result = method(*args, **kwargs)
            finally:
                _INSIDE.reset(token)
            return _inside(result) if inspect.iscoroutine(result) else result

        return spied


async def _inside(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """What ``coroutine`` returns, awaited as a call inside the services."""
    token = _INSIDE.set(True)
    try:
        return await coroutine
    finally:
        _INSIDE.reset(token)


@pytest.fixture
def services() -> Iterator[Services]:
    """An active record with a page and a PDF, a surrogate (no location) and a deactivated
    record, on SQLite."""
    found = Services(Store("sqlite://"))
    who = set_up(found)
    page = Location("https://example.org/1", media_type="text/html")
    pdf = Location("https://example.org/1.pdf", media_type="application/pdf")
    found.records.put(who.demo, ACTIVE, [page, pdf], {"title": "One", "creators": ["Aalto, A."]})
    found.records.put(who.demo, SURROGATE, [], {"title": "Two"})
    found.records.put(who.demo, GONE, [page], {"title": "Three"})
    found.records.deactivate(who.demo, GONE, "withdrawn", [ACTIVE])
    yield found
    found.store.close()


def asked(services: Services, path: str, headers: dict[str, str]) -> httpx.Response:
    """The answer of the application over ``services`` to ``GET /{path}`` with ``headers``."""

    async def ask() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(services))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.get(f"/{path}", headers=headers)

    return asyncio.run(ask())


@pytest.mark.parametrize(("path", "accept", "status"), REQUESTS)
def test_get_urn_calls_the_services_once(
    services: Services, path: str, accept: str | None, status: int
) -> None:
    # RFC 8458 §4.4, §4.5: each answer, written from what one call of the services returned
    spy = EntrySpy(services)
    answer = asked(services, path, {} if accept is None else {"Accept": accept})
    assert answer.status_code == status, answer.text
    assert len(spy.entries) == 1, spy.entries


@pytest.mark.parametrize(("path", "moment", "accept", "status"), DATED)
def test_a_timegate_calls_the_services_once(
    services: Services, path: str, moment: str, accept: str | None, status: int
) -> None:
    # RFC 7089 §4.1.1: the versions, or resolution's answer for a URN no record here has
    spy = EntrySpy(services)
    headers = {"Accept-Datetime": moment} | ({} if accept is None else {"Accept": accept})
    answer = asked(services, path, headers)
    assert answer.status_code == status, answer.text
    assert len(spy.entries) == 1, spy.entries


def test_a_malformed_datetime_is_refused_before_the_services(services: Services) -> None:
    # RFC 7089 §4.5.3: 400, read on the way in; the services are not called
    spy = EntrySpy(services)
    answer = asked(services, ACTIVE, {"Accept-Datetime": "yesterday"})
    assert answer.status_code == 400, answer.text
    assert spy.entries == []


@pytest.mark.parametrize(("path", "accept", "status"), TIME_TRAVEL)
def test_a_memento_and_a_timemap_call_the_services_once(
    services: Services, path: str, accept: str | None, status: int
) -> None:
    # RFC 7089 §4.1.2, §5: the versions, read in one call, then written
    made = services.time_travel.versions(ACTIVE, PUBLIC).entries[0].at
    spy = EntrySpy(services)
    asked_path = path.format(at=f"{made:%Y%m%d%H%M%S}")
    answer = asked(services, asked_path, {} if accept is None else {"Accept": accept})
    assert answer.status_code == status, answer.text
    assert len(spy.entries) == 1, spy.entries


@pytest.mark.parametrize(
    ("path", "accept", "looked"),
    [
        (MISSING, BROWSER, 1),
        (f"{MISSING}?s=I2C", BROWSER, 1),
        (MISSING, None, 0),
        (MISSING, "application/json", 0),
        (f"{MISSING}?s=I2C", "application/json", 0),
    ],
)
def test_only_a_readers_404_looks_for_the_nearest(
    services: Services, path: str, accept: str | None, looked: int
) -> None:
    # RFC 8458 §4.4: the page names the registered URNs nearest, found inside the one call;
    # a client that is not shown the page costs no neighbour query
    nearest = services.resolution.nearest
    calls: list[str] = []

    def counted(text: str, limit: int = NEAREST) -> list[str]:
        calls.append(text)
        return nearest(text, limit)

    services.resolution.nearest = counted  # type: ignore[method-assign]
    spy = EntrySpy(services)
    answer = asked(services, path, {} if accept is None else {"Accept": accept})
    assert answer.status_code == 404, answer.text
    assert len(calls) == looked, calls
    assert len(spy.entries) == 1, spy.entries
    shown = [urn for urn in (ACTIVE, SURROGATE, GONE) if f'href="/{urn}"' in answer.text]
    assert shown == ([ACTIVE, SURROGATE, GONE] if looked else [])
