"""Staff accounts' sign-in back-off and sessions (``urnkit.resolver.services.accounts``), in
process, on SQLite and PostgreSQL: failures slow down one account from one address and no
other; sessions live in the database until signed out, replaced by a password change, ended by
an admin or the account disabled, or expired."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from services_support import Principals

from urnkit.resolver.domain import (
    Account,
    ForbiddenError,
    NotFoundError,
    PasswordHashing,
    SignInLimits,
    TooManyAttemptsError,
    UnauthenticatedError,
)
from urnkit.resolver.services import Services
from urnkit.resolver.services.accounts import ADMIN, AccountService
from urnkit.resolver.store import now

# Back-off from the third failure in a row, an hour first: no test waits it out.
LIMITS = SignInLimits(attempts=3, backoff=timedelta(hours=1), longest=timedelta(hours=8))
HOUR = timedelta(hours=1)


def _account(services: Services, role: str = "registrant") -> tuple[Account, str]:
    account, password = services.accounts.create(ADMIN, "Demo Library", f"{role}-1", role)
    return account, password


def _fail(services: Services, name: str, client: str, times: int) -> None:
    for _ in range(times):
        with pytest.raises(UnauthenticatedError):
            services.accounts.authenticate(name, "a wrong password", client, LIMITS)


@pytest.mark.parametrize("role", ["registrant", "admin"])
def test_failures_slow_down_their_address_and_not_the_right_password_from_another(
    services: Services, who: Principals, role: str
) -> None:
    account, password = _account(services, role)
    _fail(services, account.name, "192.0.2.1", 3)
    with pytest.raises(TooManyAttemptsError) as waiting:
        services.accounts.authenticate(account.name, password, "192.0.2.1", LIMITS)
    assert 3590 <= waiting.value.extensions["retry_after"] <= 3600
    assert "try again in" in waiting.value.detail
    # Another address signs in with the right password at once, admins as registrants.
    signed_in = services.accounts.authenticate(account.name, password, "192.0.2.2", LIMITS)
    assert signed_in.id == account.id
    # The same address with another account's name is not slowed down either.
    with pytest.raises(UnauthenticatedError):
        services.accounts.authenticate("someone-else", "a wrong password", "192.0.2.1", LIMITS)


def test_parallel_guesses_from_one_address_share_one_count(
    services: Services, who: Principals
) -> None:
    """Each attempt is counted before its password is checked, in one transaction with the
    look at the wait: six guesses at once get no more tries than six in a row."""
    account, _ = _account(services)

    def guess(number: int) -> str:
        try:
            services.accounts.authenticate(account.name, f"wrong {number}", "192.0.2.9", LIMITS)
        except (UnauthenticatedError, TooManyAttemptsError) as refused:
            return type(refused).__name__
        return "signed in"

    with ThreadPoolExecutor(6) as pool:
        answers = sorted(pool.map(guess, range(6)))
    assert answers == ["TooManyAttemptsError"] * 3 + ["UnauthenticatedError"] * 3


def test_a_success_forgets_the_failures_of_its_address(services: Services, who: Principals) -> None:
    account, password = _account(services)
    _fail(services, account.name, "192.0.2.1", 2)
    services.accounts.authenticate(account.name.upper(), password, "192.0.2.1", LIMITS)
    _fail(services, account.name, "192.0.2.1", 2)  # two more, not four in a row: no wait
    services.accounts.authenticate(account.name, password, "192.0.2.1", LIMITS)


def test_the_wait_doubles_with_each_failure_up_to_the_longest(
    services: Services, who: Principals
) -> None:
    subject = "alice from 192.0.2.1"
    waits = []
    for _ in range(8):
        with services.store.transaction() as tx:
            tx.accounts.fail(subject, LIMITS)  # as if each wait had been waited out
        with services.store.transaction() as tx:
            until = tx.accounts.attempt(subject)
        waits.append(None if until is None else round((until - now()) / HOUR))
    assert waits == [None, None, 1, 2, 4, 8, 8, 8]


@given(failures=st.integers(min_value=0, max_value=10**9), attempts=st.integers(1, 20))
def test_a_wait_is_none_before_the_attempts_then_doubles_to_the_longest(
    failures: int, attempts: int
) -> None:
    limits = SignInLimits(attempts=attempts, backoff=timedelta(seconds=1))
    wait = limits.wait(failures)
    assert wait <= limits.longest
    if failures < attempts:
        assert wait == timedelta(0)
    else:
        assert wait == min(timedelta(seconds=2 ** min(failures - attempts, 20)), limits.longest)
    assert limits.wait(failures + 1) >= wait


def test_a_session_lives_until_signed_out(services: Services, who: Principals) -> None:
    account, _ = _account(services)
    first = services.accounts.start_session(account, HOUR)
    second = services.accounts.start_session(account, HOUR)
    assert services.accounts.session_account(first) == account
    services.accounts.end_session(first)
    assert services.accounts.session_account(first) is None
    assert services.accounts.session_account(second) == account  # another browser's
    assert services.accounts.session_account("never-issued") is None


def test_an_expired_session_is_refused(services: Services, who: Principals) -> None:
    account, _ = _account(services)
    expired = services.accounts.start_session(account, -timedelta(seconds=1))
    assert services.accounts.session_account(expired) is None


def test_a_password_change_ends_every_session_of_the_account(
    services: Services, who: Principals
) -> None:
    account, one_time = _account(services)
    other, _ = services.accounts.create(ADMIN, "Demo Library", "bystander")
    sessions = [services.accounts.start_session(account, HOUR) for _ in range(2)]
    bystanders = services.accounts.start_session(other, HOUR)
    changed = services.accounts.change_password(account, one_time, "a long new password")
    assert not changed.must_change_password
    assert [services.accounts.session_account(s) for s in sessions] == [None, None]
    assert services.accounts.session_account(bystanders) == other


def test_an_admin_ends_an_accounts_sessions_and_disabling_ends_them(
    services: Services, who: Principals
) -> None:
    account, _ = _account(services)
    session = services.accounts.start_session(account, HOUR)
    with pytest.raises(ForbiddenError):
        services.accounts.end_sessions(who.demo, account.id)
    assert services.accounts.end_sessions(who.admin, account.id) == 1
    assert services.accounts.session_account(session) is None
    with pytest.raises(NotFoundError):
        services.accounts.end_sessions(who.admin, 2**31 - 1)
    session = services.accounts.start_session(account, HOUR)
    services.accounts.set_disabled(who.admin, account.id, disabled=True)
    services.accounts.set_disabled(who.admin, account.id, disabled=False)
    assert services.accounts.session_account(session) is None  # enabling revives none


def _costs(services: Services, name: str) -> str:
    """The costs the account's stored hash names (RFC 9106's m, t and p)."""
    with services.store.snapshot() as tx:
        found = tx.accounts.by_name(name)
    assert found is not None
    return found[1].split("$")[3]


def test_a_hash_of_other_costs_signs_in_and_is_made_again_at_these(
    services: Services, who: Principals
) -> None:
    # docs/staff.md, "Password hashing": a change of the costs locks nobody out.
    account, password = _account(services)
    assert _costs(services, account.name) == "m=7168,t=5,p=1"  # resolver_support.LEAST_HASHING
    raised = AccountService(services.store, PasswordHashing(memory_kib=8192, passes=5, lanes=2))
    raised.authenticate(account.name, password, "192.0.2.1")
    assert _costs(services, account.name) == "m=8192,t=5,p=2"
    services.accounts.authenticate(account.name, password, "192.0.2.1")
    assert _costs(services, account.name) == "m=7168,t=5,p=1"
    with pytest.raises(UnauthenticatedError):
        raised.authenticate(account.name, "a wrong password", "192.0.2.1")
