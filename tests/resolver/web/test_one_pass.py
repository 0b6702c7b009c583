"""A ``GET /{urn}`` passes the web layer once on the way in and once on the way out (issue
31): whatever it answers (the redirect, the surrogate page, 410, the record as JSON, its
linkset, its locations, a citation, Dublin Core, an RFC 2483 request in its query), the web
layer calls the services once and writes what they return. Counted by a spy on every public
method of every service: a call from outside the services (the web layer, or a worker thread
it hands a call to) is an entry; the services' calls among themselves, and those of the worker
threads they start, are not. A house rule (docs/architecture.md), walked over the answers of
RFC 8458 §4.4 and §4.5."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine, Iterator
from contextvars import ContextVar
from typing import Any

import httpx
import pytest
from services_support import set_up

from urnkit.resolver.domain import Location
from urnkit.resolver.services import Services
from urnkit.resolver.store import Store
from urnkit.resolver.web import create_app

ACTIVE, SURROGATE, GONE = "urn:nbn:fi:demo-1", "urn:nbn:fi:demo-2", "urn:nbn:fi:demo-3"
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


@pytest.mark.parametrize(("path", "accept", "status"), REQUESTS)
def test_get_urn_calls_the_services_once(
    services: Services, path: str, accept: str | None, status: int
) -> None:
    # RFC 8458 §4.4, §4.5: each answer, written from what one call of the services returned
    spy = EntrySpy(services)
    headers = {} if accept is None else {"Accept": accept}

    async def ask() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(services))
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.get(f"/{path}", headers=headers)

    answer = asyncio.run(ask())
    assert answer.status_code == status, answer.text
    assert len(spy.entries) == 1, spy.entries
