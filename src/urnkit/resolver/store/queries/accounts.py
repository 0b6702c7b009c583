"""The staff accounts' queries (``tx.accounts``): accounts, the failed sign-ins counted against
an account or a client address, and the secrets the servers share."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from urnkit.resolver.domain import Account, SignInLimits, name_key
from urnkit.resolver.store.queries.base import Queries, now, utc
from urnkit.resolver.store.tables import accounts, organisations, server_secrets, sign_in_failures

_ACCOUNT = (
    accounts.c.id,
    organisations.c.name,
    accounts.c.name,
    accounts.c.role,
    accounts.c.disabled,
    accounts.c.must_change_password,
    accounts.c.epoch,
    accounts.c.created,
)


def _account(row: Sequence[Any]) -> Account:
    return Account(row[0], row[1], row[2], row[3], bool(row[4]), bool(row[5]), row[6], utc(row[7]))


class Accounts(Queries):
    """The queries of ``accounts``, ``sign_in_failures`` and ``server_secrets``."""

    __slots__ = ()

    def create(self, organisation_id: int, name: str, role: str, password_hash: str) -> int | None:
        """A new account's id (its password to be changed at first sign-in), or None when
        the name is taken in any case."""
        statement = (
            self._insert(accounts)
            .values(
                organisation_id=organisation_id,
                name=name,
                name_key=name_key(name),
                password_hash=password_hash,
                role=role,
                disabled=False,
                must_change_password=True,
                epoch=1,
                created=now(),
            )
            .on_conflict_do_nothing()
            .returning(accounts.c.id)
        )
        created: int | None = self.connection.scalar(statement)
        return created

    def _select(self) -> sa.Select[tuple[Any, ...]]:
        return sa.select(*_ACCOUNT).join(organisations)

    def get(self, account_id: int) -> Account | None:
        """The account with this id, if there is one."""
        row = self.connection.execute(self._select().where(accounts.c.id == account_id)).first()
        return None if row is None else _account(row)

    def by_name(self, name: str) -> tuple[Account, str] | None:
        """The account called ``name`` (in any case) and its password's hash, if there is one."""
        row = self.connection.execute(
            self._select()
            .add_columns(accounts.c.password_hash)
            .where(accounts.c.name_key == name_key(name))
        ).first()
        return None if row is None else (_account(row), row[8])

    def all(self, organisation: str | None = None) -> list[Account]:
        """Every account, or an organisation's, by organisation and name."""
        query = self._select().order_by(organisations.c.name, accounts.c.name_key)
        if organisation is not None:
            query = query.where(organisations.c.name == organisation)
        return [_account(row) for row in self.connection.execute(query)]

    def set_password(self, account_id: int, password_hash: str, must_change: bool) -> None:
        """Store a new password's hash; the epoch advances, so older sessions stop."""
        self._update(account_id, password_hash=password_hash, must_change_password=must_change)

    def set_disabled(self, account_id: int, disabled: bool) -> bool:
        """Disable or enable an account (the epoch advances); False when there is none."""
        return self._update(account_id, disabled=disabled)

    def _update(self, account_id: int, **values: object) -> bool:
        statement = (
            sa.update(accounts)
            .where(accounts.c.id == account_id)
            .values(epoch=accounts.c.epoch + 1, **values)
        )
        return self.connection.execute(statement).rowcount == 1

    def locked_until(self, subjects: list[str]) -> datetime | None:
        """The latest time any of ``subjects`` is locked out until, if one is locked now."""
        latest = self.connection.scalar(
            sa.select(sa.func.max(sign_in_failures.c.locked_until)).where(
                sign_in_failures.c.subject.in_(subjects)
            )
        )
        if latest is None or utc(latest) <= now():
            return None
        return utc(latest)

    def fail(self, subjects: list[str], limits: SignInLimits) -> None:
        """Count a failed sign-in against each subject: a count older than the window starts
        again; the ``attempts``-th failure within it locks the subject out."""
        moment = now()
        for subject in subjects:
            row = self.connection.execute(
                sa.select(sign_in_failures.c.failures, sign_in_failures.c.first_failure)
                .where(sign_in_failures.c.subject == subject)
                .with_for_update()
            ).first()
            if row is None or utc(row[1]) + limits.window <= moment:
                failures, first = 1, moment
            else:
                failures, first = row[0] + 1, utc(row[1])
            locked = moment + limits.lockout if failures >= limits.attempts else None
            values = {"failures": failures, "first_failure": first, "locked_until": locked}
            statement = self._insert(sign_in_failures).values(subject=subject, **values)
            self.connection.execute(
                statement.on_conflict_do_update(index_elements=["subject"], set_=values)
            )

    def succeed(self, subjects: list[str]) -> None:
        """Forget the failures counted against ``subjects``."""
        self.connection.execute(
            sa.delete(sign_in_failures).where(sign_in_failures.c.subject.in_(subjects))
        )

    def secret(self, name: str) -> str:
        """The shared secret called ``name``, made (256 random bits) by whoever asks first."""
        self.connection.execute(
            self._insert(server_secrets)
            .values(name=name, value=secrets.token_urlsafe(32), created=now())
            .on_conflict_do_nothing()
        )
        value: str = self.connection.execute(
            sa.select(server_secrets.c.value).where(server_secrets.c.name == name)
        ).scalar_one()
        return value
