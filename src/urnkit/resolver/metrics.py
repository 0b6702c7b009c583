"""``GET /metrics``: the server's counters in the Prometheus text exposition format.

Requests (by route and status class) and resolutions (by outcome) are counted in plain dicts,
an increment of ~100 ns on the hot path; they become Prometheus metrics only when scraped
(:meth:`Metrics.collect`), together with the records by status, read from the database then,
and prometheus_client's process, platform and garbage-collector metrics. Each server process
counts for itself: with ``--workers N`` a scrape reaches one of them.

>>> from urnkit.resolver.service import Service
>>> from urnkit.resolver.store import Store
>>> service = Service(Store("sqlite://"))
>>> service.store.upgrade()
>>> metrics = Metrics(service)
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

from urnkit.resolver.service import Service

Outcome = Literal["redirect", "surrogate", "gone", "not_found", "invalid"]


class Metrics(Collector):
    """The counters of one server process and the collector that exposes them."""

    def __init__(self, service: Service) -> None:
        self.service = service
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
        (``2xx`` …); a request no route took is counted under the route ``other``."""
        requests = self.requests

        async def counted(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
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
        for (route, status), count in sorted(self.requests.items()):
            requests.add_metric([route, status], count)
        yield requests
        resolutions = CounterMetricFamily(
            "urnkit_resolutions",
            "Resolutions (GET /{urn}) by outcome: redirect, surrogate, gone, not_found, invalid",
            labels=["outcome"],
        )
        for outcome, count in sorted(self.resolutions.items()):
            resolutions.add_metric([outcome], count)
        yield resolutions
        records = GaugeMetricFamily(
            "urnkit_records", "Registered URNs by status (read at scrape time)", labels=["status"]
        )
        for status, count in sorted(self.service.record_counts().items()):
            records.add_metric([status], count)
        yield records

    def exposition(self) -> bytes:
        """Every metric in the Prometheus text format (see ``CONTENT_TYPE_LATEST``)."""
        return generate_latest(self.registry)
