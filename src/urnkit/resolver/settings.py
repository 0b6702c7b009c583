"""The resolver's settings: command-line flags override ``URNKIT_*`` environment variables,
which override the defaults.

>>> Settings.from_environment({"URNKIT_PORT": "9000"}).port
9000
>>> Settings.from_environment({"URNKIT_PORT": "x"})
Traceback (most recent call last):
...
ValueError: URNKIT_PORT must be a whole number, not 'x'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

from urnkit.resolver.store import DEFAULT_DATABASE_URL

# uvicorn is the default: benchmarks/resolve_bench.py (1,000,000 URNs) measured it ahead of
# granian on PostgreSQL (42-44% vs 30-33% of the ceiling) and level or ahead on SQLite.
SERVERS = ("uvicorn", "granian")


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the database is, where to listen, which ASGI server and how many processes."""

    database_url: str = DEFAULT_DATABASE_URL
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    server: str = "uvicorn"
    oai_admin_email: str = "urnkit@localhost"  # OAI-PMH Identify's adminEmail

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``URNKIT_DATABASE_URL``, ``URNKIT_HOST``, ``URNKIT_PORT``,
        ``URNKIT_WORKERS``, ``URNKIT_SERVER`` and ``URNKIT_OAI_ADMIN_EMAIL``."""
        environ = os.environ if environ is None else environ
        values: dict[str, str | int] = {}
        for field in fields(cls):
            name = f"URNKIT_{field.name.upper()}"
            if name not in environ:
                continue
            text = environ[name]
            if field.type == "int":
                if not text.strip().isdigit():
                    raise ValueError(f"{name} must be a whole number, not {text!r}")
                values[field.name] = int(text)
            else:
                values[field.name] = text
        settings = cls(**values)  # type: ignore[arg-type]
        if settings.server not in SERVERS:
            raise ValueError(f"URNKIT_SERVER must be one of {', '.join(SERVERS)}")
        return settings
