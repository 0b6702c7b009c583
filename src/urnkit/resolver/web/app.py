"""The ASGI application, assembled: its state, lifespan, middleware, exception handlers, routes
and front.

>>> from urnkit.resolver.store import Store
>>> app = create_app(Services(Store("sqlite://")))
>>> app.title
'urnkit resolver'
"""

import asyncio
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from importlib.metadata import version

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp

from urnkit.resolver.domain import NotFoundError, ResolverError, UnavailableError
from urnkit.resolver.domain.versions import web_archives
from urnkit.resolver.services import Services
from urnkit.resolver.services.discovery import Discovery
from urnkit.resolver.services.link_checker import with_periodic_checks
from urnkit.resolver.services.oai_feed import Bounds
from urnkit.resolver.services.oai_repository import Repository
from urnkit.resolver.services.outbound import FetchGuard
from urnkit.resolver.settings import Settings
from urnkit.resolver.store import Store
from urnkit.resolver.web.acceptance import check_bodies
from urnkit.resolver.web.access_log import AccessLog, access_logged
from urnkit.resolver.web.below import KeptAnswers, install
from urnkit.resolver.web.caching import CachePolicy, cache_controlled
from urnkit.resolver.web.cross_origin import cross_origin
from urnkit.resolver.web.front import KeptHeaders, redirect_front
from urnkit.resolver.web.head import with_head
from urnkit.resolver.web.limits import body_limits, header_limits
from urnkit.resolver.web.metrics import Metrics
from urnkit.resolver.web.not_found import not_found
from urnkit.resolver.web.problems import http_error, invalid_request, refusal
from urnkit.resolver.web.proxies import trusted_networks, trusting
from urnkit.resolver.web.routes import (
    admin,
    docs,
    forwarding,
    grants,
    harvest,
    health,
    legacy,
    links,
    metrics,
    oai,
    pages,
    prefixes,
    records,
    resolve,
    search,
    site,
    staff,
    statistics,
    time_travel,
)
from urnkit.resolver.web.sessions import StaffPolicy, StaffRedirect, redirected
from urnkit.resolver.web.templating import Site

# In the order of /openapi.json's paths; resolution's describing routes last.
ROUTERS = (
    forwarding,
    grants,  # before records: its paths lengthen /api/v1/urns/{urn}
    records,
    prefixes,
    admin,
    search,
    statistics,
    links,
    harvest,
    oai,
    pages,
    site,
    staff,
    metrics,
    health,
    docs,
    time_travel,  # before resolve: its catch-all takes every path not under /api/
    resolve,
)
_log = logging.getLogger("urnkit.resolver")


async def _flush_statistics(services: Services, interval: float) -> None:
    """Add the counted resolutions to the database every ``interval`` seconds, off the loop."""
    while True:
        await asyncio.sleep(interval)
        try:
            await asyncio.to_thread(services.overview.flush_statistics)
        except UnavailableError:  # the store logs the outage: the counts wait for its end
            pass
        except Exception:
            _log.exception("flushing the resolution statistics failed; retrying later")


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Flush the counted resolutions while the application runs, and once more at its end (a
    database unavailable then loses them, said in one line: the process still stops cleanly)."""
    services: Services = app.state.services
    flushing = asyncio.create_task(_flush_statistics(services, app.state.statistics_interval))
    try:
        yield
    finally:
        flushing.cancel()
        with suppress(asyncio.CancelledError):
            await flushing
        try:
            await asyncio.to_thread(services.overview.flush_statistics)
        except UnavailableError as error:
            _log.warning("the resolutions counted since the last flush are lost: %s", error)


def create_app(
    services: Services, statistics_interval: float = 5.0, cache: CachePolicy | None = None
) -> FastAPI:
    """The resolver's ASGI application over ``service``; resolutions counted for the
    statistics are flushed to the database every ``statistics_interval`` seconds and when the
    application shuts down (a process killed outright loses up to one interval of them).
    Caches may keep resolution's answers as ``cache`` says (by default, as the settings do)."""
    settings = Settings.from_environment()
    app = FastAPI(
        lifespan=_lifespan,
        title="urnkit resolver",
        version=version("urnkit"),
        description=(
            "URN:NBN resolution (RFC 8458 §4.4) and registration. Resolve with `GET /{urn}`; "
            "register under the prefixes delegated to your organisation with a bearer token. "
            "RFC 2483's services (I2L, I2Ls, I2R, I2Rs, I2C, I2Cs, I2N, I2Ns, I=I) answer at "
            "`GET /uri-res/{service}?{urn}` (RFC 2169) and at `GET /{urn}?s={service}`."
        ),
        docs_url=None,  # served by routes/docs.py, without a CDN
        redoc_url=None,
        # FastAPI's native OpenTelemetry asks, on every request, whether a tracer, meter or
        # logger provider is configured (environment lookups): a large part of a resolution.
        # Off; /metrics serves the numbers.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    counters = Metrics(services)
    app.state.services = services
    app.state.statistics_interval = statistics_interval
    app.state.metrics = counters
    app.state.staff = StaffPolicy.from_settings(settings)
    app.state.oai_repository = Repository(services.store, settings.oai_admin_email)
    app.state.site = Site.from_settings(
        settings.site_name, settings.site_operator, settings.site_operator_url, settings.site_logo
    )
    # Innermost first: the body limits, then the counters, then (outermost) the front.
    app.add_middleware(body_limits, services=services)
    app.add_middleware(counters.middleware)
    app.exception_handler(ResolverError)(refusal)
    app.exception_handler(NotFoundError)(not_found)  # a URN not found: a page that helps
    app.exception_handler(RequestValidationError)(invalid_request)
    app.exception_handler(HTTPException)(http_error)
    app.exception_handler(StaffRedirect)(redirected)
    # The routers' routes join the application's list as they are, in order: include_router
    # would nest each router, and every request would be matched through the nests.
    for area in ROUTERS:
        app.router.routes += area.router.routes
    check_bodies(app.router.routes)
    app.router.routes[:] = with_head(app.router.routes)
    # Caching headers on what the routes answer; the front's redirects carry their own.
    policy = cache or CachePolicy.from_settings(settings)
    app.state.cache = policy
    app.add_middleware(cache_controlled, policy=policy)
    # Resolution's commonest answer is given before routing (the front); what it leaves goes
    # to resolution's routes, tried before every other.
    app.state.kept_headers = KeptHeaders(policy.header(302))
    app.add_middleware(
        redirect_front,
        services=services,
        metrics=counters,
        kept=app.state.kept_headers,
    )
    app.router.routes[:0] = (*resolve.FIRST_ROUTES, *legacy.ROUTES)
    return app


OLDEST_COLLECTED_AFTER = 100  # collections of the middle generation (Python's default: 10)


def app_from_environment() -> ASGIApp:
    """The application for ``URNKIT_DATABASE_URL``: the factory ``urnkit serve`` hands to the
    ASGI server, once per worker process; outermost, the trusted proxies' word on where the
    request came from (``URNKIT_TRUSTED_PROXIES``, ``URNKIT_FORWARDED_HEADERS``), then
    request ids and the access log (``URNKIT_ACCESS_LOG``), around everything else, so that
    they see every response; then the limits on header fields."""
    settings = Settings.from_environment()
    store = Store(
        settings.database_url,
        log_outages=True,
        replica_urls=settings.replica_urls,
        replica_max_lag=settings.replica_max_lag,
    )
    discovery = (
        Discovery(settings.dns_nameserver or None, settings.dns_root)
        if settings.dns_discovery
        else None
    )
    app = create_app(
        Services(
            store,
            discovery,
            settings.network_refresh,
            settings.statistics_cache,
            FetchGuard.from_setting(settings.fetch_allowed_networks),
            Bounds(settings.harvest_max_bytes, settings.harvest_timeout),
            web_archives(settings.web_archives),
            settings.password_hashing(),
        ),
        settings.statistics_interval,
        CachePolicy.from_settings(settings),
    )
    if settings.link_check_interval:
        app.router.lifespan_context = with_periodic_checks(
            app.router.lifespan_context,
            store,
            settings.link_check_interval,
            app.state.services.links.guard,
        )
    # What exists now lives as long as the process. Frozen, the garbage collector stops
    # traversing it: a full collection walked the modules and FastAPI's and pydantic's
    # models, every second or so under load, and set the p99 latency.
    gc.collect()
    gc.freeze()
    # What comes after lives long too: the redirects kept (up to KeptRedirects.MOST, and
    # their headers), replaced one by one under load from many URNs. Python collects the
    # oldest generation whenever a quarter as many objects again have reached it, so each of
    # its collections walked every kept redirect while they were being replaced. Here it waits
    # for more young collections first; cycles among young objects go as before.
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, OLDEST_COLLECTED_AFTER)
    writer = AccessLog() if settings.access_log else None
    logged = access_logged(cross_origin(header_limits(app)), writer)
    # What a server's HTTP protocol may answer below the application (web/below.py).
    install(KeptAnswers(app.state.services, app.state.metrics, app.state.kept_headers, writer))
    networks = trusted_networks(settings.trusted_proxies)
    return trusting(logged, networks, settings.forwarded_headers) if networks else logged
