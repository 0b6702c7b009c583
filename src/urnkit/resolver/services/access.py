"""Authentication by bearer token, and authorization: who may write under which prefix."""

from __future__ import annotations

from urnkit.resolver.domain import (
    PUBLIC,
    ForbiddenError,
    Principal,
    Reader,
    UnauthenticatedError,
    covers,
)
from urnkit.resolver.store import Store, Transaction


class AccessService:
    """Tokens to principals, and the rules of what a principal may do."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def authenticate(self, token: str | None) -> Principal:
        """The principal holding a live bearer token, else :class:`UnauthenticatedError`."""
        if not token:
            raise UnauthenticatedError(
                "this request needs a bearer token (Authorization: Bearer …)"
            )
        with self.store.snapshot() as tx:
            principal = tx.organisations.principal(token)
        if principal is None:
            raise UnauthenticatedError("the bearer token is unknown or revoked")
        return principal

    @staticmethod
    def authorize(tx: Transaction, principal: Principal, prefix: str) -> None:
        """A registrant writes only under prefixes delegated to its organisation (RFC 8458
        §4.3), and not under a longer prefix delegated on to another; an admin writes anywhere.
        Read in ``tx``, the transaction that writes."""
        if principal.role == "admin":
            return
        holders = sorted(
            (p, name) for p, name, _ in tx.organisations.prefixes() if covers(p, prefix)
        )
        own = [p for p, name in holders if name == principal.organisation]
        if own and holders[-1][1] == principal.organisation:  # the longest covering prefix
            return
        mine = [p for p, _, _ in tx.organisations.prefixes(principal.organisation)]
        if own:
            holder, name = holders[-1]
            reason = f"{holder!r}, which covers it, is delegated to {name!r}"
        else:
            reason = f"its prefixes: {', '.join(mine) or 'none'}"
        raise ForbiddenError(
            f"the prefix {prefix!r} is not delegated to {principal.organisation!r} ({reason})",
            prefix=prefix,
            delegated=mine,
        )

    def authorize_owner(
        self, tx: Transaction, principal: Principal, prefix: str, record_id: int | None, urn: str
    ) -> None:
        """:meth:`authorize` a write that only the owner of a URN may make (its metadata,
        status, grants, every organisation's locations); an organisation holding a grant on
        the record (``location_grants``) is told what the grant lets it do."""
        try:
            self.authorize(tx, principal, prefix)
        except ForbiddenError as error:
            if record_id is not None and tx.grants.holds(record_id, principal.organisation):
                error.detail = (
                    f"{principal.organisation!r} may add and change only its own locations on "
                    f"{urn} (PUT /api/v1/urns/{urn}/locations); the record's metadata, status, "
                    "grants, and other organisations' locations and priorities are its owner's"
                )
            raise

    @staticmethod
    def require_admin(principal: Principal) -> None:
        """:class:`ForbiddenError` unless the principal's token has the admin role."""
        if principal.role != "admin":
            raise ForbiddenError("this needs an admin token; this token's role is registrant")

    @staticmethod
    def reader(principal: Principal | None) -> Reader:
        """Who reads through the API, as restricted locations go: the holder's tokens and
        admins see them, anyone else (no token) does not, wherever it is.

        >>> AccessService.reader(Principal("Library", "registrant", 1)).organisation
        'Library'
        """
        if principal is None:
            return PUBLIC
        return Reader(principal.organisation, principal.role == "admin")
