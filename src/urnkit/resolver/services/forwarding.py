"""Forwarding to national resolvers (RFC 8458 §4.4): the country table, the health checks of
its resolvers, and where a URN not registered here is sent. The table's rules are
:mod:`urnkit.resolver.domain.forwarding`."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from urnkit.resolver.domain import (
    NotFoundError,
    UnacceptableError,
    concerning,
    covers,
    prefix_of,
)
from urnkit.resolver.domain.forwarding import (
    Forwarding,
    Health,
    check_template,
    forward_url,
    normalize_country,
)
from urnkit.resolver.services.discovery import Discovery
from urnkit.resolver.services.outbound import FetchGuard, RefusedAddressError
from urnkit.resolver.store import Store, now
from urnkit.urn import URN


class ForwardingService:
    """The forwarding table of a store, and DNS NAPTR ``discovery`` of resolvers if enabled;
    health checks connect where ``guard`` allows."""

    def __init__(
        self, store: Store, discovery: Discovery | None = None, guard: FetchGuard | None = None
    ) -> None:
        self.store = store
        self.discovery = discovery
        self.guard = guard or FetchGuard()

    def target(self, urn: URN) -> str:
        """Where a URN not registered here is forwarded: its country's resolver when no prefix
        delegated here covers it and the forwarding table has its country, else the resolver
        DNS discovery finds (if enabled); else :class:`NotFoundError`."""
        unknown = f"no URN equivalent to {urn.assigned_name} is registered here"
        prefix = None
        if urn.nid.lower() == "nbn":
            with suppress(UnacceptableError):  # no country: nothing to forward by
                prefix = prefix_of(urn)
        if prefix is not None:
            country = prefix.partition(":")[0]
            with self.store.snapshot(standby=True) as tx:
                own = [p for p, _, _ in tx.organisations.prefixes() if covers(p, prefix)]
                entries = [] if own else tx.forwarding.entries(country)
            if own:  # under an own prefix: unknown here means unknown
                raise NotFoundError(unknown, prefix=own[-1])
            if entries:
                return forward_url(entries[0].url_template, urn.assigned_name)
        target = self.discovery.uri(urn.assigned_name) if self.discovery is not None else None
        if target is not None:
            return target
        if prefix is None:
            raise NotFoundError(unknown)
        found_by = "; DNS discovery found none" if self.discovery is not None else ""
        raise NotFoundError(
            f"{unknown}, and no resolver is known for the country {country!r}{found_by} "
            "(RFC 8458 §4.4)",
            country=country,
        )

    def forwardings(self) -> list[Forwarding]:
        """The forwarding table, by country."""
        with self.store.snapshot() as tx:
            return tx.forwarding.entries()

    def set_forwarding(
        self, country: str, url_template: str, note: str | None = None
    ) -> tuple[Forwarding, bool]:
        """Create or replace a country's resolver; the row and True when it was created. A
        refusal names the field it concerns: ``country``, ``url_template`` or ``note``."""
        with concerning("country"):
            country = normalize_country(country)
        with concerning("url_template"):
            url_template = check_template(url_template)
        if note is not None and (len(note) > 1000 or not note.isprintable()):
            raise UnacceptableError("a note is at most 1,000 printable characters", field="note")
        with self.store.transaction() as tx:
            created = tx.forwarding.put(country, url_template, note or None)
            [entry] = tx.forwarding.entries(country)
        return entry, created

    def remove_forwarding(self, country: str) -> None:
        """Remove a country's row: its URN:NBNs are no longer forwarded."""
        country = normalize_country(country)
        with self.store.transaction() as tx:
            if not tx.forwarding.remove(country):
                raise NotFoundError(f"the forwarding table has no row for {country!r}")

    def check_forwarding(
        self, countries: Sequence[str] = (), timeout: float = 10.0
    ) -> list[Forwarding]:
        """HEAD the resolvers of ``countries`` (default: every one) at once and record what each
        answered; their rows as they are after."""
        chosen = {normalize_country(country) for country in countries}
        entries = [e for e in self.forwardings() if not chosen or e.country in chosen]
        missing = chosen - {entry.country for entry in entries}
        if missing:
            raise NotFoundError(f"the forwarding table has no row for {', '.join(sorted(missing))}")
        outcomes = asyncio.run(probe_all(entries, timeout, self.guard))
        moment = now()
        with self.store.transaction() as tx:
            for entry, (health, detail) in zip(entries, outcomes, strict=True):
                tx.forwarding.record_health(entry.country, health, detail, moment)
        return [e for e in self.forwardings() if not chosen or e.country in chosen]


async def _probe(client: Any, entry: Forwarding) -> tuple[Health, str]:
    """HEAD the resolver with a URN of its country: any HTTP answer below 500 (a redirect, a
    404 for this URN) shows it up; a 5xx, a timeout or no connection, down."""
    import httpx

    url = forward_url(entry.url_template, f"urn:nbn:{entry.country}-0")
    try:
        response = await client.head(url)
    except httpx.HTTPError as error:
        return "down", f"HEAD {url}: {type(error).__name__}: {error}".rstrip(": ")
    except RefusedAddressError as refusal:
        return "down", f"HEAD {url}: {refusal.detail}"
    health: Health = "down" if response.status_code >= 500 else "up"
    return health, f"HEAD {url}: HTTP {response.status_code}"


async def probe_all(
    entries: list[Forwarding], timeout: float, guard: FetchGuard
) -> list[tuple[Health, str]]:
    """The health and what was seen of each resolver, checked all at once, each within
    ``timeout`` seconds, connecting where ``guard`` allows; redirects are answers, not
    followed."""
    async with guard.async_client(timeout) as client:
        return await asyncio.gather(*(_probe(client, entry) for entry in entries))
