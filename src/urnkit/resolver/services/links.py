"""What link checking found: the states of location URLs, and the broken ones by owner. The
checking itself is :mod:`urnkit.resolver.services.link_checker`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from urnkit.resolver.domain import BrokenLink, ForbiddenError, LinkState, NotFoundError, Principal
from urnkit.resolver.services.link_checker import CheckOptions, Summary, check_url, record_checks
from urnkit.resolver.services.outbound import FetchGuard
from urnkit.resolver.store import Store


class LinkService:
    """Link states and broken links as stored; ``guard`` says what a recheck, and a round of
    checks, may connect to."""

    def __init__(self, store: Store, guard: FetchGuard | None = None) -> None:
        self.store = store
        self.guard = guard or FetchGuard()

    def link_states(self, urls: Iterable[str]) -> dict[str, LinkState]:
        """What link checking knows of each of ``urls`` (those it has seen), by URL."""
        with self.store.snapshot() as tx:
            return tx.links.states(urls)

    def broken_links(self, owner: str | None = None) -> list[BrokenLink]:
        """The locations whose links are broken, of ``owner``'s locations if given (the
        organisation that registered the location), by owner and URN."""
        with self.store.snapshot() as tx:
            if owner is not None and tx.organisations.id(owner) is None:
                raise NotFoundError(f"no organisation is called {owner!r}")
            return tx.links.broken(owner)

    def broken_links_for(
        self, principal: Principal, owner: str | None
    ) -> tuple[str | None, list[BrokenLink]]:
        """:meth:`broken_links` as ``principal`` may see them: a registrant its own
        organisation's (the default), an admin any organisation's, or all (no ``owner``); the
        owner they are of (None: all) with them."""
        if principal.role != "admin":
            if owner not in (None, principal.organisation):
                raise ForbiddenError(
                    f"a registrant token of {principal.organisation!r} sees only its own "
                    f"organisation's broken links, not {owner!r}'s"
                )
            owner = principal.organisation
        return owner, self.broken_links(owner)

    def recheck(
        self, principal: Principal, url: str, options: CheckOptions | None = None
    ) -> LinkState:
        """Check ``url`` now and store what was found as a round of checks does (its state,
        the check, the resolution targets of the records having it); its new state. Only an
        organisation holding a location at ``url`` may, or an admin; a refusal names the
        ``url`` field. Not from inside an event loop: it runs one of its own.

        >>> from urnkit.resolver.services import Services
        >>> services = Services(Store("sqlite://"))
        >>> services.store.upgrade()
        >>> services.links.recheck(Principal("Library", "registrant", 1), "https://example.org/")
        Traceback (most recent call last):
        ...
        urnkit.resolver.domain.NotFoundError: no location is at https://example.org/
        """
        self._held(principal, url)
        check = asyncio.run(check_url(url, options, self.guard))
        record_checks(self.store, [check], Summary())
        with self.store.snapshot() as tx:
            return tx.links.states([url])[url]

    def state_for(self, principal: Principal, url: str) -> LinkState | None:
        """What link checking knows of ``url`` (None: not checked yet), for an organisation
        holding a location at it, or an admin; refused as :meth:`recheck` refuses."""
        self._held(principal, url)
        return self.link_states([url]).get(url)

    def _held(self, principal: Principal, url: str) -> None:
        """Refuse (naming the ``url`` field) unless ``principal`` holds a location at ``url``
        or is an admin."""
        with self.store.snapshot() as tx:
            holders = tx.links.holders(url)
        if not holders:
            raise NotFoundError(f"no location is at {url}", field="url")
        if principal.role != "admin" and principal.organisation not in holders:
            raise ForbiddenError(
                f"{principal.organisation!r} holds no location at {url}: only its holders "
                f"({', '.join(sorted(holders))}) recheck it",
                field="url",
            )
