"""The staff accounts' queries (``tx.accounts``): accounts, their sessions, the failed sign-ins
counted against an account and a client address together, and the secrets the servers share."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from urnkit.resolver.domain import Account, SignInLimits, name_key
from urnkit.resolver.store.queries.base import Queries, now, utc
from urnkit.resolver.store.tables import (
    accounts,
    organisations,
    server_secrets,
    sign_in_failures,
    staff_sessions,
)

_ACCOUNT = (
    accounts.c.id,
    organisations.c.name,
    accounts.c.name,
    accounts.c.role,
    accounts.c.disabled,
    accounts.c.must_change_password,
    accounts.c.created,
)


def _account(row: Sequence[Any]) -> Account:
    return Account(row[0], row[1], row[2], row[3], bool(row[4]), bool(row[5]), utc(row[6]))


def _session_hash(session_id: str) -> str:
    """What ``staff_sessions`` keeps of a session's id: its SHA-256, so that a copy of the
    table signs no one in."""
    return hashlib.sha256(session_id.encode()).hexdigest()


class Accounts(Queries):
    """The queries of ``accounts``, ``staff_sessions``, ``sign_in_failures`` and
    ``server_secrets``."""

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
        return None if row is None else (_account(row), row[7])

    def all(self, organisation: str | None = None) -> list[Account]:
        """Every account, or an organisation's, by organisation and name."""
        query = self._select().order_by(organisations.c.name, accounts.c.name_key)
        if organisation is not None:
            query = query.where(organisations.c.name == organisation)
        return [_account(row) for row in self.connection.execute(query)]

    def set_password(self, account_id: int, password_hash: str, must_change: bool) -> None:
        """Store a new password's hash."""
        self.connection.execute(
            sa.update(accounts)
            .where(accounts.c.id == account_id)
            .values(password_hash=password_hash, must_change_password=must_change)
        )

    def set_disabled(self, account_id: int, disabled: bool) -> bool:
        """Disable or enable an account; False when there is none."""
        statement = sa.update(accounts).where(accounts.c.id == account_id).values(disabled=disabled)
        return self.connection.execute(statement).rowcount == 1

    def start_session(self, account_id: int, lifetime: timedelta) -> str:
        """A new session of the account, lasting ``lifetime``: its id (256 random bits). The
        sessions expired by now go."""
        moment = now()
        self.connection.execute(sa.delete(staff_sessions).where(staff_sessions.c.expires <= moment))
        session_id = secrets.token_urlsafe(32)
        self.connection.execute(
            sa.insert(staff_sessions).values(
                id=_session_hash(session_id),
                account_id=account_id,
                created=moment,
                expires=moment + lifetime,
            )
        )
        return session_id

    def session_account(self, session_id: str) -> Account | None:
        """The account of the session ``session_id``, if it is live (not ended, not expired)."""
        row = self.connection.execute(
            self._select()
            .join(staff_sessions, staff_sessions.c.account_id == accounts.c.id)
            .where(staff_sessions.c.id == _session_hash(session_id))
            .where(staff_sessions.c.expires > now())
        ).first()
        return None if row is None else _account(row)

    def end_session(self, session_id: str) -> None:
        """End the session ``session_id``."""
        self.connection.execute(
            sa.delete(staff_sessions).where(staff_sessions.c.id == _session_hash(session_id))
        )

    def end_sessions(self, account_id: int) -> int:
        """End every session of the account; how many there were."""
        statement = sa.delete(staff_sessions).where(staff_sessions.c.account_id == account_id)
        ended: int = self.connection.execute(statement).rowcount
        return ended

    def attempt(self, subject: str) -> datetime | None:
        """Begin a sign-in of ``subject`` (an account and a client address): its row made if
        missing and locked until the transaction ends, so that concurrent attempts of one
        subject go one at a time; the time before which it may not try, if still to come."""
        moment = now()
        self.connection.execute(
            self._insert(sign_in_failures)
            .values(subject=subject, failures=0, last_failure=moment, not_before=moment)
            .on_conflict_do_nothing()
        )
        latest = self.connection.scalar(
            sa.select(sign_in_failures.c.not_before)
            .where(sign_in_failures.c.subject == subject)
            .with_for_update()
        )
        if latest is None or utc(latest) <= now():
            return None
        return utc(latest)

    def fail(self, subject: str, limits: SignInLimits) -> None:
        """Count a failed sign-in against ``subject``: one more in a row, or the first again
        if the last was ``limits.forgotten`` ago, counted in one statement. It may not try
        again for :meth:`SignInLimits.wait` of its count; failures forgotten go."""
        moment = now()
        table = sign_in_failures
        recent = table.c.last_failure > moment - limits.forgotten
        counted = (
            self._insert(table)
            .values(subject=subject, failures=1, last_failure=moment, not_before=moment)
            .on_conflict_do_update(
                index_elements=["subject"],
                set_={
                    "failures": sa.case((recent, table.c.failures + 1), else_=1),
                    "last_failure": moment,
                },
            )
            .returning(table.c.failures)
        )
        failures: int = self.connection.execute(counted).scalar_one()
        self.connection.execute(
            sa.update(table)
            .where(table.c.subject == subject)
            .values(not_before=moment + limits.wait(failures))
        )
        self.connection.execute(
            sa.delete(table).where(table.c.last_failure <= moment - limits.forgotten)
        )

    def succeed(self, subject: str) -> None:
        """Forget the failures counted against ``subject``."""
        self.connection.execute(
            sa.delete(sign_in_failures).where(sign_in_failures.c.subject == subject)
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
