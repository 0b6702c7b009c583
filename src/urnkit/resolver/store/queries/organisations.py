"""The organisations' queries (``tx.organisations``): organisations, the prefixes delegated to
them and the numbers taken under each, their tokens and who holds a token."""

from __future__ import annotations

import hashlib
from datetime import datetime

import sqlalchemy as sa

from urnkit.resolver.domain import Principal, Token
from urnkit.resolver.store.queries.base import Queries, now, utc
from urnkit.resolver.store.tables import organisations, prefixes, tokens


def token_hash(token: str) -> str:
    """How a token is stored: its SHA-256. Tokens are 256 random bits, so a fast hash suffices.

    >>> len(token_hash("urnkit_x"))
    64
    """
    return hashlib.sha256(token.encode()).hexdigest()


class Organisations(Queries):
    """The organisations' queries: ``organisations``, ``prefixes``, ``tokens``."""

    __slots__ = ()

    def id(self, name: str) -> int | None:
        """The id of the organisation called ``name``, if there is one."""
        return self.connection.scalar(
            sa.select(organisations.c.id).where(organisations.c.name == name)
        )

    def create(self, name: str) -> int | None:
        """A new organisation's id, or None when the name is taken."""
        statement = (
            self._insert(organisations)
            .values(name=name, created=now())
            .on_conflict_do_nothing()
            .returning(organisations.c.id)
        )
        created: int | None = self.connection.scalar(statement)
        return created

    def all(self) -> list[tuple[str, datetime]]:
        """Every organisation's name and creation time, by name."""
        rows = self.connection.execute(
            sa.select(organisations.c.name, organisations.c.created).order_by(organisations.c.name)
        )
        return [(row.name, utc(row.created)) for row in rows]

    def ids(self) -> dict[str, int]:
        """Every organisation's id by name."""
        rows = self.connection.execute(sa.select(organisations.c.name, organisations.c.id))
        return {row.name: row.id for row in rows}

    def delegate(self, organisation_id: int, prefix: str, generator: str) -> bool:
        """Delegate ``prefix``; False when it is already delegated."""
        statement = (
            self._insert(prefixes)
            .values(
                prefix=prefix,
                organisation_id=organisation_id,
                generator=generator,
                next_value=1,
                created=now(),
            )
            .on_conflict_do_nothing()
            .returning(prefixes.c.prefix)
        )
        return self.connection.scalar(statement) is not None

    def prefixes(self, organisation: str | None = None) -> list[tuple[str, str, str]]:
        """Delegated prefixes as (prefix, organisation, generator), by prefix."""
        query = (
            sa.select(prefixes.c.prefix, organisations.c.name, prefixes.c.generator)
            .join(organisations)
            .order_by(prefixes.c.prefix)
        )
        if organisation is not None:
            query = query.where(organisations.c.name == organisation)
        return [(row[0], row[1], row[2]) for row in self.connection.execute(query)]

    def take_numbers(self, prefix: str, count: int) -> int:
        """Reserve ``count`` sequential numbers of ``prefix``; the first is returned. One
        UPDATE … RETURNING: the database's row lock orders concurrent callers."""
        statement = (
            sa.update(prefixes)
            .where(prefixes.c.prefix == prefix)
            .values(next_value=prefixes.c.next_value + count)
            .returning(prefixes.c.next_value)
        )
        after: int = self.connection.execute(statement).scalar_one()
        return after - count

    def create_token(self, organisation_id: int, role: str, token: str, label: str | None) -> int:
        """Store a token (hashed); its id."""
        statement = (
            tokens.insert()
            .values(
                organisation_id=organisation_id,
                role=role,
                token_hash=token_hash(token),
                label=label,
                created=now(),
            )
            .returning(tokens.c.id)
        )
        token_id: int = self.connection.execute(statement).scalar_one()
        return token_id

    def revoke_token(self, token_id: int) -> bool:
        """Revoke a token; False when there is no such live token."""
        statement = (
            sa.update(tokens)
            .where(tokens.c.id == token_id, tokens.c.revoked.is_(None))
            .values(revoked=now())
        )
        return self.connection.execute(statement).rowcount == 1

    def tokens(self, organisation: str | None = None) -> list[Token]:
        """Every token, or an organisation's, newest first (revoked ones too)."""
        query = (
            sa.select(
                tokens.c.id,
                organisations.c.name,
                tokens.c.role,
                tokens.c.label,
                tokens.c.created,
                tokens.c.revoked,
            )
            .join(organisations)
            .order_by(tokens.c.id.desc())
        )
        if organisation is not None:
            query = query.where(organisations.c.name == organisation)
        return [
            Token(row[0], row[1], row[2], row[3], utc(row[4]), row[5] and utc(row[5]))
            for row in self.connection.execute(query)
        ]

    def token_holder(self, token_id: int) -> str | None:
        """The organisation holding the token with this id, if there is one."""
        return self.connection.scalar(
            sa.select(organisations.c.name).join(tokens).where(tokens.c.id == token_id)
        )

    def principal(self, token: str) -> Principal | None:
        """Who holds ``token``, or None for an unknown or revoked token."""
        row = self.connection.execute(
            sa.select(organisations.c.name, tokens.c.role, tokens.c.id)
            .join(organisations)
            .where(tokens.c.token_hash == token_hash(token), tokens.c.revoked.is_(None))
        ).first()
        return None if row is None else Principal(row[0], row[1], row[2])
