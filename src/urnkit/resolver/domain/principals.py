"""Who calls the registration API: an organisation's token and its role."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Role = Literal["admin", "registrant"]
ROLES: tuple[Role, ...] = ("admin", "registrant")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the organisation a token belongs to and the token's role."""

    organisation: str
    role: Role
    token_id: int
