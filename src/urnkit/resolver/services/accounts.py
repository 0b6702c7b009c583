"""Staff accounts: creation with a one-time password, sign-in (argon2, with a back-off per
account and client address kept in the database, so that it holds across every server
process), sessions kept in the database, password changes, disabling.

>>> from urnkit.resolver.store import Store
>>> store = Store("sqlite://")
>>> store.upgrade()
>>> with store.transaction() as tx:
...     _ = tx.organisations.create("Library")
>>> accounts = AccountService(store)
>>> alice, one_time = accounts.create(ADMIN, "Library", "alice")
>>> signed_in = accounts.authenticate("ALICE", one_time, "192.0.2.1")
>>> signed_in.name, signed_in.must_change_password
('alice', True)
>>> session = accounts.start_session(signed_in, timedelta(hours=1))
>>> accounts.session_account(session).name
'alice'
>>> accounts.end_session(session)
>>> accounts.session_account(session) is None
True
"""

from __future__ import annotations

import math
import secrets
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from urnkit.resolver.domain import (
    DEFAULT_HASHING,
    ROLES,
    Account,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    PasswordHashing,
    Principal,
    SignInLimits,
    TooManyAttemptsError,
    UnacceptableError,
    UnauthenticatedError,
    check_password,
    check_user_name,
    name_key,
)
from urnkit.resolver.domain.accounts import LONGEST_USER_NAME
from urnkit.resolver.services.admin import organisation_id
from urnkit.resolver.store import Store, now

ADMIN = Principal("command line", "admin", 0)  # the operator: every right of an admin
LIMITS = SignInLimits()  # unless the settings say otherwise
SESSION_SECRET = "staff-sessions"  # the name of the sessions' signing key in the database


def one_time_password() -> str:
    """A new one-time password: 120 random bits in 20 URL-safe characters.

    >>> len(one_time_password())
    20
    """
    return secrets.token_urlsafe(15)


class AccountService:
    """Staff accounts, their sign-in and their passwords, hashed at the cost ``hashing``."""

    def __init__(self, store: Store, hashing: PasswordHashing = DEFAULT_HASHING) -> None:
        self.store = store
        self._hasher = PasswordHasher(
            time_cost=hashing.passes, memory_cost=hashing.memory_kib, parallelism=hashing.lanes
        )
        self._decoy = ""

    def _decoy_hash(self) -> str:
        """The hash verified when no account has the name, so that a sign-in takes as long
        either way; made at the first such sign-in rather than by every process."""
        if not self._decoy:
            self._decoy = self._hasher.hash(secrets.token_urlsafe(16))
        return self._decoy

    def _verified(self, stored: str, password: str) -> bool:
        """Whether ``password`` is the one ``stored`` (an argon2 hash) was made of."""
        try:
            return self._hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False

    def create(
        self, principal: Principal, organisation: str, name: str, role: str = "registrant"
    ) -> tuple[Account, str]:
        """A new account of ``organisation`` (an admin's act) and its one-time password,
        which is shown once and must be changed at the first sign-in."""
        self.require_admin(principal)
        check_user_name(name)
        if role not in ROLES:
            raise UnacceptableError(f"the role is one of {', '.join(ROLES)}", field="role")
        password = one_time_password()
        with self.store.transaction() as tx:
            holder_id = organisation_id(tx, organisation)
            account_id = tx.accounts.create(holder_id, name, role, self._hasher.hash(password))
            if account_id is None:
                raise ConflictError(f"an account called {name!r} exists", field="username")
            account = tx.accounts.get(account_id)
        assert account is not None  # made in this transaction
        return account, password

    def authenticate(
        self, name: str, password: str, client: str | None, limits: SignInLimits = LIMITS
    ) -> Account:
        """The enabled account ``name`` whose password is ``password``; else
        :class:`UnauthenticatedError`, which says nothing of which was wrong. Failures are
        counted per account and ``client`` address together: after ``limits.attempts`` in a
        row, that pair gets :class:`TooManyAttemptsError` until its wait
        (:meth:`SignInLimits.wait`) is over, while the right password from another address
        still signs in."""
        # A name no account can have (empty, a control character or NUL, which PostgreSQL's
        # text refuses) is looked up nowhere: its failures count against the address alone.
        possible = _possible_user_name(name)
        subject = f"{name_key(name)[:LONGEST_USER_NAME] if possible else ''} from {client}"
        with self.store.transaction() as tx:
            waiting = tx.accounts.attempt(subject)  # concurrent attempts wait for this one
            if waiting is None:  # counted before the check: parallel guesses share one count
                tx.accounts.fail(subject, limits)
            found = tx.accounts.by_name(name) if possible else None
        if waiting is not None:
            raise _wait_until(waiting)
        account, stored = found if found is not None else (None, self._decoy_hash())
        if not self._verified(stored, password) or account is None or account.disabled:
            raise UnauthenticatedError(
                "the user name or the password is wrong, or the account is disabled",
                field="password",
            )
        with self.store.transaction() as tx:
            tx.accounts.succeed(subject)
            if self._hasher.check_needs_rehash(stored):
                tx.accounts.set_password(
                    account.id, self._hasher.hash(password), account.must_change_password
                )
                account = tx.accounts.get(account.id) or account
        return account

    def start_session(self, account: Account, lifetime: timedelta) -> str:
        """A new session of ``account`` lasting ``lifetime``: its id, for the cookie."""
        with self.store.transaction() as tx:
            return tx.accounts.start_session(account.id, lifetime)

    def session_account(self, session_id: str) -> Account | None:
        """The enabled account of the live session ``session_id``: read again on every
        request, so that signing out, a password change, an admin ending the account's
        sessions or disabling it ends them at once, on every server."""
        with self.store.snapshot() as tx:
            account = tx.accounts.session_account(session_id)
        return None if account is None or account.disabled else account

    def end_session(self, session_id: str) -> None:
        """End the session ``session_id`` (signing out): its cookie no longer signs in."""
        with self.store.transaction() as tx:
            tx.accounts.end_session(session_id)

    def end_sessions(self, principal: Principal, account_id: int) -> int:
        """End every session of an account (an admin's act); how many there were."""
        self.require_admin(principal)
        with self.store.transaction() as tx:
            if tx.accounts.get(account_id) is None:
                raise NotFoundError(f"no account has the id {account_id}")
            return tx.accounts.end_sessions(account_id)

    def change_password(self, account: Account, current: str, new: str) -> Account:
        """Replace ``account``'s password, given its current one; every session of the
        account ends (the caller starts a new one) and the new password need not be changed
        again."""
        with self.store.snapshot() as tx:
            found = tx.accounts.by_name(account.name)
        if found is None or not self._verified(found[1], current):
            raise UnauthenticatedError("the current password is wrong", field="current")
        check_password(new, field="new")
        if new == current:
            raise UnacceptableError(
                "the new password must differ from the current one", field="new"
            )
        with self.store.transaction() as tx:
            tx.accounts.set_password(account.id, self._hasher.hash(new), must_change=False)
            tx.accounts.end_sessions(account.id)
            changed = tx.accounts.get(account.id)
        assert changed is not None
        return changed

    def set_disabled(self, principal: Principal, account_id: int, disabled: bool) -> None:
        """Disable (its sessions end at once) or enable an account: an admin's act."""
        self.require_admin(principal)
        if disabled and principal.account is not None:
            with self.store.snapshot() as tx:
                account = tx.accounts.get(account_id)
            if account is not None and account.name == principal.account:
                raise ConflictError("an admin cannot disable their own account")
        with self.store.transaction() as tx:
            if not tx.accounts.set_disabled(account_id, disabled):
                raise NotFoundError(f"no account has the id {account_id}")
            if disabled:
                tx.accounts.end_sessions(account_id)

    def named(self, principal: Principal, name: str) -> Account:
        """The account called ``name`` (in any case), for an admin; else
        :class:`NotFoundError`."""
        self.require_admin(principal)
        with self.store.snapshot() as tx:
            found = tx.accounts.by_name(name) if name else None
        if found is None:
            raise NotFoundError(f"no account is called {name!r}", field="username")
        return found[0]

    def accounts(self, principal: Principal) -> list[Account]:
        """Every account, for an admin."""
        self.require_admin(principal)
        with self.store.snapshot() as tx:
            return tx.accounts.all()

    def session_secret(self, configured: str = "") -> str:
        """The key that signs sessions: ``configured`` (the ``staff_secret`` setting), else
        one made once and kept in the database, so that every server shares it."""
        if configured:
            return configured
        with self.store.transaction() as tx:
            return tx.accounts.secret(SESSION_SECRET)

    @staticmethod
    def require_admin(principal: Principal) -> None:
        """:class:`ForbiddenError` unless ``principal`` is an admin."""
        if principal.role != "admin":
            raise ForbiddenError("only an admin manages staff accounts")


def _wait_until(moment: datetime) -> TooManyAttemptsError:
    """The refusal of a sign-in before ``moment``, saying when to try again."""
    seconds = max(1, math.ceil((moment - now()).total_seconds()))
    return TooManyAttemptsError(
        f"too many failed sign-ins from this address: try again in {seconds} seconds",
        retry_after=seconds,
        until=moment.isoformat(),
    )


def _possible_user_name(name: str) -> bool:
    """Whether an account could be called ``name``.

    >>> _possible_user_name("alice"), _possible_user_name("al\\x00ice")
    (True, False)
    """
    try:
        check_user_name(name)
    except UnacceptableError:
        return False
    return True
