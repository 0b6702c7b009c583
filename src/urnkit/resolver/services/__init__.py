"""The resolver's application services: every rule above the store and below the web and CLI
adapters, one class per area; each write is one database transaction, so a failure leaves
nothing half done.

>>> from urnkit.resolver.domain import Location
>>> services = Services(Store("sqlite://"))
>>> services.store.upgrade()
>>> services.admin.create_organisation("Demo Library")
'Demo Library'
>>> services.admin.delegate("Demo Library", "FI:Demo")
'fi:demo'
>>> admin = services.admin.create_token("Demo Library", "admin")
>>> principal = services.access.authenticate(admin)
>>> record, created = services.records.put(
...     principal, "URN:NBN:fi:demo-1", [Location("https://example.org/1")], {"title": "One"}
... )
>>> created, record.status, record.urn
(True, 'active', 'URN:NBN:fi:demo-1')
>>> resolution = services.resolution.resolve("urn:nbn:FI:DEMO-1?=page=2")
>>> resolution.kind, resolution.target
('redirect', 'https://example.org/1?page=2')
>>> services.resolution.pasted("urn:nbn:fi:demo\u20101.\u200b")  # pasted from a PDF
'URN:NBN:fi:demo-1'

The modules beside the areas: :mod:`~urnkit.resolver.services.descriptions` (the reads
behind RFC 2483's requests), :mod:`~urnkit.resolver.services.harvest` and
:mod:`~urnkit.resolver.services.oai_repository` (OAI-PMH),
:mod:`~urnkit.resolver.services.link_checker`, :mod:`~urnkit.resolver.services.discovery`
(DNS NAPTR). What they return is written out by :mod:`~urnkit.resolver.representations`.
"""

from __future__ import annotations

from collections.abc import Sequence

from urnkit.resolver.domain import DEFAULT_HASHING, PasswordHashing
from urnkit.resolver.services.access import AccessService
from urnkit.resolver.services.accounts import AccountService
from urnkit.resolver.services.admin import AdminService
from urnkit.resolver.services.discovery import Discovery
from urnkit.resolver.services.forwarding import ForwardingService
from urnkit.resolver.services.grants import GrantService
from urnkit.resolver.services.harvest import Harvester
from urnkit.resolver.services.health import HealthService
from urnkit.resolver.services.links import LinkService
from urnkit.resolver.services.networks import NETWORK_REFRESH, NetworkService
from urnkit.resolver.services.oai_feed import Bounds
from urnkit.resolver.services.outbound import FetchGuard
from urnkit.resolver.services.overview import STATISTICS_CACHE, OverviewService
from urnkit.resolver.services.records import RecordService
from urnkit.resolver.services.resolution import ResolutionService
from urnkit.resolver.services.time_travel import TimeTravel
from urnkit.resolver.services.transfer import TransferService
from urnkit.resolver.services.uploads import UploadService
from urnkit.resolver.statistics import ResolutionTally
from urnkit.resolver.store import Store

__all__ = ["Services"]


class Services:
    """The services over one :class:`~urnkit.resolver.store.Store`, and DNS NAPTR
    ``discovery`` of other resolvers if enabled; each process reads the networks again every
    ``network_refresh`` seconds and counts the records by status again after
    ``statistics_cache`` seconds. Resolution counts into a tally (``resolution.tally``) that
    ``overview.flush_statistics`` writes to the database. Link checking, harvesting and the
    forwarding table's health checks connect where ``fetch_guard`` allows (by default: the
    public internet alone); each answer to a harvest is within ``harvest_bounds``. A record whose
    locations are all broken offers their copies in the ``web_archives`` (URL templates). Staff
    passwords are hashed at the cost ``password_hashing``."""

    def __init__(
        self,
        store: Store,
        discovery: Discovery | None = None,
        network_refresh: float = NETWORK_REFRESH,
        statistics_cache: float = STATISTICS_CACHE,
        fetch_guard: FetchGuard | None = None,
        harvest_bounds: Bounds | None = None,
        web_archives: Sequence[str] = (),
        password_hashing: PasswordHashing = DEFAULT_HASHING,
    ) -> None:
        self.store = store
        guard = fetch_guard or FetchGuard()
        tally = ResolutionTally()
        self.access = AccessService(store)
        self.networks = NetworkService(store, network_refresh)
        self.records = RecordService(store, self.access)
        self.grants = GrantService(store, self.access)
        self.forwarding = ForwardingService(store, discovery, guard)
        self.time_travel = TimeTravel(store, self.records, web_archives)
        self.resolution = ResolutionService(
            store, self.records, self.forwarding, tally, self.networks, self.time_travel
        )
        self.admin = AdminService(store)
        self.accounts = AccountService(store, password_hashing)
        self.transfer = TransferService(store, self.records)
        self.uploads = UploadService(store, self.records)
        self.overview = OverviewService(store, self.records, tally, statistics_cache)
        self.links = LinkService(store, guard)
        self.harvest = Harvester(store, self.access, guard, harvest_bounds)
        self.health = HealthService(store)
