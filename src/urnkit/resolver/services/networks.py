"""Organisations' networks: kept by admins, and read by resolution to route a client to the
locations it may use (a location restricted to a network is for clients inside it only).

Each server process keeps every network in memory, read again when older than
``refresh_seconds`` (and at once after a change made through this process): a change made
elsewhere (another process, the ``urnkit admin`` command) takes effect everywhere within that
bound. Only records with restricted locations consult them.

>>> from urnkit.resolver.services import Services
>>> from urnkit.resolver.store import Store
>>> services = Services(Store("sqlite://"))
>>> services.store.upgrade()
>>> _ = services.admin.create_organisation("Library")
>>> network, created = services.networks.save("Library", "rooms", ["192.0.2.0/24"])
>>> created, services.networks.reader(None, "192.0.2.9").networks
(True, frozenset({('Library', 'rooms')}))
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

from urnkit.resolver.domain import (
    ConflictError,
    Network,
    NotFoundError,
    Principal,
    Reader,
    check_network_name,
    client_address,
    concerning,
    inside,
    parse_ranges,
)
from urnkit.resolver.domain.networks import Address, Range
from urnkit.resolver.services.admin import organisation_id
from urnkit.resolver.store import Store

NETWORK_REFRESH = 10.0
"""Seconds a process keeps the networks before reading them again (``network_refresh``)."""


class NetworkService:
    """The networks of every organisation: admin's changes, and the reads of resolution."""

    def __init__(self, store: Store, refresh_seconds: float = NETWORK_REFRESH) -> None:
        self.store = store
        self.refresh_seconds = refresh_seconds
        # By "{organisation id}/{name}" (as records.restricted names them): the organisation's
        # name, the network's, its ranges.
        self._known: dict[str, tuple[str, str, tuple[Range, ...]]] = {}
        self._loaded = -math.inf

    def save(self, organisation: str, name: str, ranges: Sequence[str]) -> tuple[Network, bool]:
        """Create or replace an organisation's network; it and whether it is new. A refusal
        names the field it concerns: ``organisation``, ``network`` (the name) or ``ranges``."""
        with concerning("network"):
            check_network_name(name)
        with concerning("ranges"):
            parsed = parse_ranges(ranges)
        with self.store.transaction() as tx:
            created = tx.networks.save(
                organisation_id(tx, organisation), name, "\n".join(map(str, parsed))
            )
        self._loaded = -math.inf
        return Network(organisation, name, parsed), created

    def networks(self, organisation: str | None = None) -> list[Network]:
        """Every network (of ``organisation`` if given), by organisation and name."""
        with self.store.snapshot() as tx:
            chosen = None if organisation is None else organisation_id(tx, organisation)
            rows = tx.networks.all(chosen)
        return [
            Network(holder, name, parse_ranges(text.split("\n"))) for _, holder, name, text in rows
        ]

    def delete(self, organisation: str, name: str) -> None:
        """Delete a network; :class:`ConflictError` while locations are restricted to it."""
        check_network_name(name)
        with self.store.transaction() as tx:
            holder_id = organisation_id(tx, organisation)
            held = tx.networks.restricted_locations(holder_id, name)
            if held:
                raise ConflictError(
                    f"{held} location(s) of {organisation!r} are restricted to the network "
                    f"{name!r}: restrict them to another network, or lift the restriction, first",
                    locations=held,
                )
            if not tx.networks.delete(holder_id, name):
                raise NotFoundError(f"{organisation!r} has no network called {name!r}")
        self._loaded = -math.inf

    def fresh(self) -> bool:
        """Whether the networks in memory are recent enough to route by."""
        return time.monotonic() - self._loaded < self.refresh_seconds

    def load(self) -> None:
        """Read every network again (for resolution: from a standby if one is near enough)."""
        with self.store.snapshot(standby=True) as tx:
            rows = tx.networks.all()
        self._known = {
            f"{holder_id}/{name}": (holder, name, parse_ranges(text.split("\n")))
            for holder_id, holder, name, text in rows
        }
        self._loaded = time.monotonic()

    def usable(self, restricted: str, address: Address | None) -> list[str]:
        """The locations of ``records.restricted`` a client at ``address`` may use, best first,
        each as a line of ``records.targets`` (its URL, and its media type after a tab if it
        has one; the networks in memory, whatever their age: see :meth:`fresh`)."""
        found = []
        for line in restricted.split("\n"):
            network, _, target = line.partition("\t")
            if not network or ((known := self._known.get(network)) and inside(address, known[2])):
                found.append(target)
        return found

    def reader(self, principal: Principal | None, client: str | None) -> Reader:
        """Who reads: a token's ``principal`` (if any), from the address ``client`` (the
        networks read again first if they are old)."""
        if not self.fresh():
            self.load()
        address = client_address(client)
        networks = frozenset(
            (holder, name)
            for holder, name, ranges in self._known.values()
            if inside(address, ranges)
        )
        if principal is None:
            return Reader(networks=networks)
        return Reader(principal.organisation, principal.role == "admin", networks)
