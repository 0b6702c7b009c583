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

from urnkit.resolver.services.discovery import parse_nameserver
from urnkit.resolver.store import DEFAULT_DATABASE_URL

# uvicorn is the default. benchmarks/resolve_bench.py (1,000,000 URNs, 2 CPUs) finds no steady
# winner: on 2026-11-23 uvicorn resolved 18% faster on PostgreSQL in one run, granian 2-16%
# faster on both databases in two later runs. The black-box tests run uvicorn, and granian is
# held to the same answers (test_granian_answers_resolution_as_uvicorn_does).
SERVERS = ("uvicorn", "granian")


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the database is, where to listen, which ASGI server and how many processes."""

    database_url: str = DEFAULT_DATABASE_URL
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    server: str = "uvicorn"
    # Seconds between flushes of the resolutions counted for the statistics (a process killed
    # outright loses at most this many seconds of counts).
    statistics_interval: int = 5
    # Seconds between rounds of link checking in each server process (0: none; see
    # services/link_checker.py).
    link_check_interval: int = 0

    # Resolver discovery by DNS NAPTR (RFC 3404) for URNs the forwarding table does not cover:
    # off unless URNKIT_DNS_DISCOVERY=1; the system's resolver unless a nameserver is named.
    dns_discovery: bool = False
    dns_nameserver: str = ""  # address:port
    dns_root: str = "urn.arpa"
    oai_admin_email: str = "urnkit@localhost"  # OAI-PMH Identify's adminEmail
    # One JSON line per HTTP request on standard error (web/access_log.py); 0 turns it off.
    access_log: bool = True

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``URNKIT_DATABASE_URL``, ``URNKIT_HOST``, ``URNKIT_PORT``,
        ``URNKIT_WORKERS``, ``URNKIT_SERVER``, ``URNKIT_STATISTICS_INTERVAL``,
        ``URNKIT_LINK_CHECK_INTERVAL``, ``URNKIT_DNS_DISCOVERY`` (0 or 1),
        ``URNKIT_DNS_NAMESERVER``, ``URNKIT_DNS_ROOT``, ``URNKIT_OAI_ADMIN_EMAIL`` and
        ``URNKIT_ACCESS_LOG`` (0 or 1)."""
        environ = os.environ if environ is None else environ
        values: dict[str, str | int | bool] = {}
        for field in fields(cls):
            name = f"URNKIT_{field.name.upper()}"
            if name not in environ:
                continue
            text = environ[name]
            if field.type == "int":
                if not text.strip().isdigit():
                    raise ValueError(f"{name} must be a whole number, not {text!r}")
                values[field.name] = int(text)
            elif field.type == "bool":
                if text not in ("0", "1"):
                    raise ValueError(f"{name} must be 0 or 1, not {text!r}")
                values[field.name] = text == "1"
            else:
                values[field.name] = text
        settings = cls(**values)  # type: ignore[arg-type]
        if settings.statistics_interval < 1:
            raise ValueError("URNKIT_STATISTICS_INTERVAL must be 1 (second) or more")
        if settings.server not in SERVERS:
            raise ValueError(f"URNKIT_SERVER must be one of {', '.join(SERVERS)}")
        if settings.dns_nameserver:
            parse_nameserver(settings.dns_nameserver)  # a ValueError saying what is wrong
        return settings
