"""Staff accounts: who signs in to the pages under ``/staff/``, of which organisation, with
which role; the rules of their user names and passwords, and of sign-in's back-off.

A user name is 1 to :data:`LONGEST_USER_NAME` printable characters without white space at
either end (an e-mail address fits); two names that differ only in case are the same account
(:func:`name_key`). A password is :data:`SHORTEST_PASSWORD` to :data:`LONGEST_PASSWORD`
characters, none of them a control character.

>>> name_key("Alice@Library.example")
'alice@library.example'
>>> check_password("short")
Traceback (most recent call last):
...
urnkit.resolver.domain.UnacceptableError: a password is 12 to 256 characters
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta

from urnkit.resolver.domain.errors import ResolverError, UnacceptableError
from urnkit.resolver.domain.principals import Principal, Role

LONGEST_USER_NAME = 254  # an e-mail address's longest (RFC 5321 §4.5.3.1.3)
SHORTEST_PASSWORD = 12
LONGEST_PASSWORD = 256  # argon2 takes any length; this bounds the work a request can ask for


class TooManyAttemptsError(ResolverError):
    """Sign-in refused for a while: too many failures for the account from this client
    address; ``retry_after`` says how many seconds to wait."""

    status = 429
    title = "Too many attempts"


@dataclass(frozen=True, slots=True)
class Account:
    """A staff account as the pages and the services see it (never its password's hash)."""

    id: int
    organisation: str
    name: str
    role: Role
    disabled: bool
    must_change_password: bool
    created: datetime

    def principal(self) -> Principal:
        """Who acts when this account does: its organisation with its role, as a token would.

        >>> from datetime import UTC
        >>> Account(1, "Library", "alice", "admin", False, False, datetime.now(UTC)).principal()
        Principal(organisation='Library', role='admin', token_id=0, account='alice')
        """
        return Principal(self.organisation, self.role, 0, account=self.name)


@dataclass(frozen=True, slots=True)
class SignInLimits:
    """The back-off of failed sign-ins, counted per account and client address together:
    after ``attempts`` failures in a row the pair waits ``backoff``, twice as long after each
    further failure, never longer than ``longest``. A failure more than ``forgotten`` after
    the last one counts as the first again; a success forgets them all.

    >>> limits = SignInLimits(attempts=3, backoff=timedelta(seconds=1))
    >>> [limits.wait(n).total_seconds() for n in range(1, 7)]
    [0.0, 0.0, 1.0, 2.0, 4.0, 8.0]
    >>> limits.wait(10**6) == limits.longest
    True
    """

    attempts: int = 5
    backoff: timedelta = timedelta(seconds=1)
    longest: timedelta = timedelta(minutes=15)
    forgotten: timedelta = timedelta(days=1)

    def wait(self, failures: int) -> timedelta:
        """How long a pair waits after its ``failures``-th failure in a row."""
        if failures < self.attempts:
            return timedelta(0)
        doublings = min(failures - self.attempts, 64)  # past the longest wait long before
        seconds = self.backoff.total_seconds() * 2.0**doublings
        return timedelta(seconds=min(seconds, self.longest.total_seconds()))


# The least work a password's hash may ask for, in KiB of memory times passes over it: the
# weakest of the argon2id configurations of one lane that OWASP's Password Storage Cheat Sheet
# recommends as equally strong (46 MiB and 1 pass down to 7 MiB and 5 passes).
LEAST_HASHING_WORK = 7 * 1024 * 5
LARGEST_ARGON2 = 2**32 - 1  # RFC 9106 §3.1: memory and passes are 32-bit numbers


@dataclass(frozen=True, slots=True)
class PasswordHashing:
    """What an argon2id hash of a password costs (RFC 9106): ``memory_kib`` KiB, filled
    ``passes`` times, in ``lanes`` lanes computed side by side. The default is RFC 9106 §4's
    second recommended option, for machines without 2 GiB to spare a sign-in. Every hash
    names its own costs, so hashes made with others still verify, and are made again with
    these at their account's next sign-in. A :class:`ValueError` says which costs RFC 9106
    §3.1 refuses, or that they ask for less work than :data:`LEAST_HASHING_WORK`.

    >>> PasswordHashing(memory_kib=7168, passes=5, lanes=1).memory_kib
    7168
    >>> PasswordHashing(memory_kib=8192, passes=2, lanes=1)
    Traceback (most recent call last):
    ...
    ValueError: password_memory_kib times password_passes must be 35840 or more, not 16384
    """

    memory_kib: int = 64 * 1024
    passes: int = 3
    lanes: int = 4

    def __post_init__(self) -> None:
        if not 1 <= self.lanes < 2**24:
            raise ValueError(f"password_lanes must be 1 to {2**24 - 1}, not {self.lanes}")
        if not 8 * self.lanes <= self.memory_kib <= LARGEST_ARGON2:
            raise ValueError(
                f"password_memory_kib must be 8 times password_lanes ({8 * self.lanes}) to "
                f"{LARGEST_ARGON2}, not {self.memory_kib}"
            )
        if not 1 <= self.passes <= LARGEST_ARGON2:
            raise ValueError(f"password_passes must be 1 to {LARGEST_ARGON2}, not {self.passes}")
        if self.memory_kib * self.passes < LEAST_HASHING_WORK:
            raise ValueError(
                f"password_memory_kib times password_passes must be {LEAST_HASHING_WORK} or more, "
                f"not {self.memory_kib * self.passes}"
            )


DEFAULT_HASHING = PasswordHashing()  # RFC 9106 §4's second recommended option


def name_key(name: str) -> str:
    """What makes two user names the same account: their case-folded NFKC form."""
    return unicodedata.normalize("NFKC", name).casefold()


def check_user_name(name: str) -> str:
    """``name`` if it can be a user name, else :class:`UnacceptableError` naming the field.

    >>> check_user_name(" alice")
    Traceback (most recent call last):
    ...
    urnkit.resolver.domain.UnacceptableError: a user name is 1 to 254 printable \
characters, without spaces at either end
    """
    if (
        not name
        or len(name) > LONGEST_USER_NAME
        or len(name_key(name)) > LONGEST_USER_NAME
        or not name.isprintable()
        or name != name.strip()
    ):
        raise UnacceptableError(
            f"a user name is 1 to {LONGEST_USER_NAME} printable characters, without spaces "
            "at either end",
            field="username",
        )
    return name


def check_password(password: str, field: str = "password") -> str:
    """``password`` if it can be one, else :class:`UnacceptableError` naming ``field``."""
    if not SHORTEST_PASSWORD <= len(password) <= LONGEST_PASSWORD:
        raise UnacceptableError(
            f"a password is {SHORTEST_PASSWORD} to {LONGEST_PASSWORD} characters", field=field
        )
    if any(unicodedata.category(character) == "Cc" for character in password):
        raise UnacceptableError("a password holds no control characters", field=field)
    return password
