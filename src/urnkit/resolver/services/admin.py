"""Administration: organisations, the prefixes delegated to them, and their API tokens."""

from __future__ import annotations

import secrets

from urnkit.resolver.domain import (
    GENERATORS,
    ROLES,
    ConflictError,
    NotFoundError,
    UnacceptableError,
    normalize_prefix,
)
from urnkit.resolver.store import Store

LONGEST_NAME = 200  # characters of a prefix or a token's label, as stored and as the API takes


class AdminService:
    """Organisations, delegations (RFC 8458 §4.3) and tokens."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def create_organisation(self, name: str) -> str:
        """Create an organisation; :class:`ConflictError` when the name is taken."""
        name = name.strip()
        if not name or len(name) > 200 or not name.isprintable():
            raise UnacceptableError("an organisation's name is 1 to 200 printable characters")
        with self.store.transaction() as tx:
            if tx.organisations.create(name) is None:
                raise ConflictError(f"an organisation called {name!r} exists")
        return name

    def organisations(self) -> list[str]:
        """Every organisation's name."""
        with self.store.snapshot() as tx:
            return [name for name, _ in tx.organisations.all()]

    def delegate(self, organisation: str, prefix: str, generator: str = "sequential") -> str:
        """Delegate a prefix (country code and sub-namespaces) to an organisation; the
        normalized prefix."""
        if generator not in GENERATORS:
            raise UnacceptableError(f"the generator is one of {', '.join(GENERATORS)}")
        prefix = normalize_prefix(prefix)
        if len(prefix) > LONGEST_NAME:
            raise UnacceptableError(f"a prefix is at most {LONGEST_NAME} characters")
        with self.store.transaction() as tx:
            organisation_id = tx.organisations.id(organisation)
            if organisation_id is None:
                raise NotFoundError(f"no organisation is called {organisation!r}")
            if not tx.organisations.delegate(organisation_id, prefix, generator):
                raise ConflictError(f"the prefix {prefix!r} is already delegated")
        return prefix

    def create_token(self, organisation: str, role: str = "registrant", label: str = "") -> str:
        """A new API token for an organisation, returned once and stored only hashed."""
        if role not in ROLES:
            raise UnacceptableError(f"the role is one of {', '.join(ROLES)}")
        if len(label) > LONGEST_NAME:
            raise UnacceptableError(f"a token's label is at most {LONGEST_NAME} characters")
        token = "urnkit_" + secrets.token_urlsafe(32)
        with self.store.transaction() as tx:
            organisation_id = tx.organisations.id(organisation)
            if organisation_id is None:
                raise NotFoundError(f"no organisation is called {organisation!r}")
            tx.organisations.create_token(organisation_id, role, token, label or None)
        return token

    def revoke_token(self, token_id: int) -> None:
        """Revoke a token by id; it stops working at once, in every process."""
        with self.store.transaction() as tx:
            if not tx.organisations.revoke_token(token_id):
                raise NotFoundError(f"no live token has the id {token_id}")

    def prefixes(self) -> list[tuple[str, str, str]]:
        """The public register of delegated prefixes (RFC 8458 §4.3): prefix, organisation,
        generator."""
        with self.store.snapshot() as tx:
            return tx.organisations.prefixes()
