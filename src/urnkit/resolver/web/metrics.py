"""``GET /metrics``: the server's counters in the Prometheus text exposition format.

Requests (by route and status class) and resolutions (by outcome) are counted in plain dicts;
they become Prometheus metrics only when scraped (:meth:`Metrics.collect`), together with the
records by status, read from the database then, and prometheus_client's process, platform and
garbage-collector metrics. Resolution, the hot path, costs one dict increment (its outcome):
its requests are counted from their outcomes, not by the request middleware (~2 µs a request;
passing a resolution through costs it ~0.5 µs). Each server process counts for itself: with
``--workers N`` a scrape reaches one of them.

>>> from urnkit.resolver.services import Services
>>> from urnkit.resolver.store import Store
>>> services = Services(Store("sqlite://"))
>>> services.store.upgrade()
>>> metrics = Metrics(services)
>>> metrics.resolved("redirect")
>>> print(metrics.exposition().decode())  # doctest: +ELLIPSIS
# HELP ...
urnkit_resolutions_total{outcome="redirect"} 1.0
...
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from urnkit.resolver.services import Services

Outcome = Literal["redirect", "surrogate", "gone", "choices", "not_found", "invalid", "error"]
RESOLUTION_ROUTE = "/{urn:path}"
# The status class of each outcome's response (GET /{urn}, web/routes/resolve.py).
_STATUS_CLASS: dict[str, str] = {
    "redirect": "3xx",
    "surrogate": "2xx",
    "gone": "4xx",
    "choices": "3xx",
    "not_found": "4xx",
    "invalid": "4xx",
    "error": "5xx",
}


class Metrics(Collector):
    """The counters of one server process and the collector that exposes them."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.requests: dict[tuple[str, str], int] = {}
        self.resolutions: dict[str, int] = {}
        self.registry = CollectorRegistry()
        for standard in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            self.registry.register(standard)
        self.registry.register(self)

    def resolved(self, outcome: Outcome) -> None:
        """Count one resolution's outcome."""
        self.resolutions[outcome] = self.resolutions.get(outcome, 0) + 1

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """``app``, counting each HTTP request it answers by route template and status class
        (``2xx`` …); a request no route took is counted under the route ``other``. Paths
        beginning with ``/urn:`` are resolutions, which count themselves (:meth:`resolved`)."""
        requests = self.requests

        async def counted(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or scope["path"][1:5].lower() == "urn:":
                await app(scope, receive, send)
                return
            status = 500  # unless a response starts

            async def watched(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = message["status"]
                await send(message)

            try:
                await app(scope, receive, watched)
            finally:
                slot = (getattr(scope.get("route"), "path", "other"), f"{status // 100}xx")
                requests[slot] = requests.get(slot, 0) + 1

        return counted

    def collect(self) -> Iterator[Metric]:
        """The metrics as a scrape sees them (prometheus_client calls this)."""
        requests = CounterMetricFamily(
            "urnkit_http_requests",
            "HTTP requests answered, by route template and status class",
            labels=["route", "status"],
        )
        answered = dict(self.requests)
        for outcome, count in list(self.resolutions.items()):
            slot = (RESOLUTION_ROUTE, _STATUS_CLASS[outcome])
            answered[slot] = answered.get(slot, 0) + count
        for (route, status), count in sorted(answered.items()):
            requests.add_metric([route, status], count)
        yield requests
        resolutions = CounterMetricFamily(
            "urnkit_resolutions",
            "Resolutions (GET /{urn}) by outcome: redirect, surrogate, gone, not_found, invalid, "
            "error",
            labels=["outcome"],
        )
        for outcome, count in sorted(self.resolutions.items()):
            resolutions.add_metric([outcome], count)
        yield resolutions
        records = GaugeMetricFamily(
            "urnkit_records", "Registered URNs by status (read at scrape time)", labels=["status"]
        )
        for status, count in sorted(self.services.overview.record_counts().items()):
            records.add_metric([status], count)
        yield records

    def exposition(self) -> bytes:
        """Every metric in the Prometheus text format (see ``CONTENT_TYPE_LATEST``)."""
        return generate_latest(self.registry)
