"""Who calls the registration API or the staff pages: an organisation's token, or a staff
account of it, and its role; the tokens an organisation holds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Role = Literal["admin", "registrant"]
ROLES: tuple[Role, ...] = ("admin", "registrant")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the organisation a token (``token_id``) or a staff account
    (``account``, its user name; ``token_id`` 0) belongs to, and its role. Both act with the
    same rights, by organisation and role.

    >>> Principal("Library", "registrant", 0, account="alice").account
    'alice'
    """

    organisation: str
    role: Role
    token_id: int
    account: str | None = None


@dataclass(frozen=True, slots=True)
class Token:
    """An API token as it is listed: never the token itself, which is stored only hashed."""

    id: int
    organisation: str
    role: Role
    label: str | None
    created: datetime
    revoked: datetime | None
