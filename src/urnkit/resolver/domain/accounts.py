"""Staff accounts: who signs in to the pages under ``/staff/``, of which organisation, with
which role; the rules of their user names and passwords, and of sign-in's lockout.

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
    """Sign-in refused for a while: too many failures for the account or the client."""

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
    epoch: int  # advanced by a password change and by disabling: older sessions stop
    created: datetime

    def principal(self) -> Principal:
        """Who acts when this account does: its organisation with its role, as a token would.

        >>> from datetime import UTC
        >>> Account(1, "Library", "alice", "admin", False, False, 1, datetime.now(UTC)
        ...         ).principal()
        Principal(organisation='Library', role='admin', token_id=0, account='alice')
        """
        return Principal(self.organisation, self.role, 0, account=self.name)


@dataclass(frozen=True, slots=True)
class SignInLimits:
    """How many failed sign-ins (``attempts``) within ``window`` lock an account or a client
    address out, and for how long (``lockout``)."""

    attempts: int = 5
    window: timedelta = timedelta(minutes=15)
    lockout: timedelta = timedelta(minutes=15)


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
