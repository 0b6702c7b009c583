"""Authentication by bearer token, and authorization: who may write under which prefix."""

from __future__ import annotations

from collections.abc import Sequence

from urnkit.resolver.domain import (
    PUBLIC,
    ForbiddenError,
    Principal,
    Reader,
    UnacceptableError,
    UnauthenticatedError,
    covers,
)
from urnkit.resolver.store import Store, Transaction

Delegation = tuple[str, str]
"""A delegated prefix and the organisation holding it."""


def holder_of(
    delegated: Sequence[Delegation], prefix: str, principal: Principal | None = None
) -> str:
    """The organisation a new record under ``prefix`` belongs to: the holder of the longest
    of the ``delegated`` prefixes covering it (RFC 8458 §4.3), whoever registers it (an
    import, an admin). :class:`UnacceptableError` when none covers it; :class:`ForbiddenError`
    when ``principal``, a registrant, is not that holder.

    >>> delegated = [("fi:lib", "Library"), ("fi:lib:sub", "Sub")]
    >>> holder_of(delegated, "fi:lib:sub:x"), holder_of(delegated, "fi:lib")
    ('Sub', 'Library')
    >>> holder_of(delegated, "se:kb")
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: its prefix 'se:kb' is delegated to no organisation
    """
    holders = sorted((p, name) for p, name in delegated if covers(p, prefix))
    registrant = None if principal is None or principal.role == "admin" else principal
    if registrant is not None and (not holders or holders[-1][1] != registrant.organisation):
        mine = [p for p, name in delegated if name == registrant.organisation]
        if any(name == registrant.organisation for _, name in holders):
            holder, name = holders[-1]
            reason = f"{holder!r}, which covers it, is delegated to {name!r}"
        else:
            reason = f"its prefixes: {', '.join(mine) or 'none'}"
        raise ForbiddenError(
            f"the prefix {prefix!r} is not delegated to {registrant.organisation!r} ({reason})",
            prefix=prefix,
            delegated=mine,
        )
    if not holders:
        raise UnacceptableError(
            f"its prefix {prefix!r} is delegated to no organisation", field="urn"
        )
    return holders[-1][1]


def _delegated(tx: Transaction) -> list[Delegation]:
    """Every delegated prefix and its holder, read in ``tx``."""
    return [(prefix, name) for prefix, name, _ in tx.organisations.prefixes()]


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
        §4.3), and not under a longer prefix delegated on to another (:func:`holder_of`); an
        admin writes the records there are anywhere. Read in ``tx``, the transaction that
        writes."""
        if principal.role != "admin":
            holder_of(_delegated(tx), prefix, principal)

    @staticmethod
    def owner(tx: Transaction, principal: Principal, prefix: str, *, anywhere: bool = False) -> str:
        """Who owns a new record ``principal`` (authorized) registers under ``prefix``, read in
        ``tx``: the prefix's holder (:func:`holder_of`), its organisation for a registrant. An
        admin registering where no organisation holds a prefix is refused, but for one record
        by PUT (``anywhere``): its own organisation owns that."""
        if principal.role != "admin":
            return principal.organisation  # authorized: the holder
        try:
            return holder_of(_delegated(tx), prefix, principal)
        except UnacceptableError:
            if not anywhere:
                raise
            return principal.organisation

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
