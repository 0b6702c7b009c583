"""Administration: organisations, the prefixes delegated to them, and their API tokens."""

from __future__ import annotations

import secrets

from urnkit.resolver.domain import (
    GENERATORS,
    ROLES,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    Principal,
    Token,
    UnacceptableError,
    concerning,
    normalize_prefix,
)
from urnkit.resolver.store import Store, Transaction

LONGEST_NAME = 200  # characters of a prefix or a token's label, as stored and as the API takes


class AdminService:
    """Organisations, delegations (RFC 8458 §4.3) and tokens."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def create_organisation(self, name: str) -> str:
        """Create an organisation; :class:`ConflictError` when the name is taken."""
        name = name.strip()
        if not name or len(name) > LONGEST_NAME or not name.isprintable():
            raise UnacceptableError(
                f"an organisation's name is 1 to {LONGEST_NAME} printable characters", field="name"
            )
        with self.store.transaction() as tx:
            if tx.organisations.create(name) is None:
                raise ConflictError(f"an organisation called {name!r} exists", field="name")
        return name

    def organisations(self) -> list[str]:
        """Every organisation's name."""
        with self.store.snapshot() as tx:
            return [name for name, _ in tx.organisations.all()]

    def delegate(self, organisation: str, prefix: str, generator: str = "sequential") -> str:
        """Delegate a prefix (country code and sub-namespaces) to an organisation; the
        normalized prefix. A refusal names the field it concerns: ``prefix``, ``generator`` or
        ``organisation``."""
        if generator not in GENERATORS:
            raise UnacceptableError(
                f"the generator is one of {', '.join(GENERATORS)}", field="generator"
            )
        with concerning("prefix"):
            prefix = normalize_prefix(prefix)
        if len(prefix) > LONGEST_NAME:
            raise UnacceptableError(
                f"a prefix is at most {LONGEST_NAME} characters", field="prefix"
            )
        with self.store.transaction() as tx:
            if not tx.organisations.delegate(organisation_id(tx, organisation), prefix, generator):
                raise ConflictError(f"the prefix {prefix!r} is already delegated", field="prefix")
        return prefix

    def create_token(self, organisation: str, role: str = "registrant", label: str = "") -> str:
        """A new API token for an organisation, returned once and stored only hashed."""
        if role not in ROLES:
            raise UnacceptableError(f"the role is one of {', '.join(ROLES)}")
        if len(label) > LONGEST_NAME:
            raise UnacceptableError(f"a token's label is at most {LONGEST_NAME} characters")
        token = "urnkit_" + secrets.token_urlsafe(32)
        with self.store.transaction() as tx:
            tx.organisations.create_token(
                organisation_id(tx, organisation), role, token, label or None
            )
        return token

    def tokens(self, principal: Principal) -> list[Token]:
        """The tokens ``principal`` may see: its organisation's, or an admin's, all."""
        with self.store.snapshot() as tx:
            return tx.organisations.tokens(
                None if principal.role == "admin" else principal.organisation
            )

    def create_token_as(
        self, principal: Principal, organisation: str, role: str, label: str = ""
    ) -> str:
        """:meth:`create_token` on behalf of ``principal``: a registrant creates registrant
        tokens of its own organisation only."""
        if principal.role != "admin" and (
            organisation != principal.organisation or role != "registrant"
        ):
            raise ForbiddenError(
                f"a registrant creates registrant tokens of {principal.organisation!r} only",
                field="organisation" if organisation != principal.organisation else "role",
            )
        return self.create_token(organisation, role, label)

    def revoke_token(self, token_id: int, principal: Principal | None = None) -> None:
        """Revoke a token by id; it stops working at once, in every process. With a
        registrant ``principal``, only a token of its own organisation: any other is, to it,
        not there."""
        with self.store.transaction() as tx:
            holder = tx.organisations.token_holder(token_id)
            visible = principal is None or principal.role == "admin"
            visible = visible or (principal is not None and holder == principal.organisation)
            if not visible or not tx.organisations.revoke_token(token_id):
                raise NotFoundError(f"no live token has the id {token_id}")

    def prefixes(self) -> list[tuple[str, str, str]]:
        """The public register of delegated prefixes (RFC 8458 §4.3): prefix, organisation,
        generator."""
        with self.store.snapshot() as tx:
            return tx.organisations.prefixes()


def organisation_id(tx: Transaction, organisation: str) -> int:
    """The id of the organisation called ``organisation``; :class:`NotFoundError` (naming the
    ``organisation`` field) when there is none (as for a text no name can be: not 1 to 200
    printable characters, which a database might not even take, U+0000).

    >>> from urnkit.resolver.services import Services
    >>> services = Services(Store("sqlite://"))
    >>> services.store.upgrade()
    >>> with services.store.snapshot() as tx:
    ...     organisation_id(tx, "Nobody")
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.NotFoundError: no organisation is called 'Nobody'
    """
    nameable = 0 < len(organisation) <= LONGEST_NAME and organisation.isprintable()
    found = tx.organisations.id(organisation) if nameable else None
    if found is None:
        raise NotFoundError(f"no organisation is called {organisation!r}", field="organisation")
    return found
