"""What link checking found: the states of location URLs, and the broken ones by owner. The
checking itself is :mod:`urnkit.resolver.services.link_checker`."""

from __future__ import annotations

from collections.abc import Iterable

from urnkit.resolver.domain import BrokenLink, ForbiddenError, LinkState, NotFoundError, Principal
from urnkit.resolver.store import Store


class LinkService:
    """Link states and broken links as stored."""

    def __init__(self, store: Store) -> None:
        self.store = store

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
