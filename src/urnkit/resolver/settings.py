"""The resolver's settings: command-line flags override ``URNKIT_*`` environment variables,
which override the configuration file (``urnkit.toml``), which overrides the defaults.

The file is the one ``--config`` or ``URNKIT_CONFIG`` names, else ``urnkit.toml`` in the current
directory if there is one; its keys are the settings' names (``port = 9000``), every one
documented in docs/configuration.md.

>>> Settings.from_environment({"URNKIT_PORT": "9000"}).port
9000
>>> Settings.from_environment({"URNKIT_PORT": "x"})
Traceback (most recent call last):
...
ValueError: URNKIT_PORT must be a whole number, not 'x'
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from urnkit.resolver.domain.accounts import DEFAULT_HASHING, PasswordHashing
from urnkit.resolver.domain.networks import HEADER_FORMS, listed_networks
from urnkit.resolver.domain.versions import web_archives
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
    # PostgreSQL's streaming standbys that serve reads (store/databases.py), and how many
    # seconds a standby's replay may be behind before reads skip it.
    replica_urls: tuple[str, ...] = ()
    replica_max_lag: int = 10
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
    # Networks, comma-separated, that link checking and harvesting may fetch from although
    # they are not the public internet (a reading-room intranet: "10.20.0.0/16"); none by
    # default (services/outbound.py).
    fetch_allowed_networks: str = ""
    # Each answer to a harvest: at most this many bytes, within this many seconds in all
    # (services/oai_feed.py).
    harvest_max_bytes: int = 64 * 2**20
    harvest_timeout: int = 60

    # Resolver discovery by DNS NAPTR (RFC 3404) for URNs the forwarding table does not cover:
    # off unless URNKIT_DNS_DISCOVERY=1; the system's resolver unless a nameserver is named.
    dns_discovery: bool = False
    dns_nameserver: str = ""  # address:port
    dns_root: str = "urn.arpa"
    # OAI-PMH Identify's adminEmail; the default is of RFC 2606's reserved .invalid, as the
    # OAI-PMH schema's emailType wants a dot in the domain (\S+@(\S+\.)+\S+).
    oai_admin_email: str = "urnkit@resolver.invalid"
    # The pages' header (web/templating.py): the service's name, the organisation running it
    # and its home page, and a logo file (PNG, SVG, JPEG or WebP) shown beside the name.
    site_name: str = "urnkit resolver"
    site_operator: str = ""
    site_operator_url: str = ""
    site_logo: str = ""
    # One JSON line per HTTP request on standard error (web/access_log.py); 0 turns it off.
    access_log: bool = True
    # Addresses and networks whose forwarding headers are believed (web/proxies.py),
    # comma-separated; none by default.
    trusted_proxies: str = ""
    # Which of their headers: "x-forwarded" (X-Forwarded-For, -Proto, -Host) or "forwarded"
    # (RFC 7239); the other form is ignored.
    forwarded_headers: str = "x-forwarded"
    # Seconds each server process keeps the organisations' networks before reading them again:
    # a change made elsewhere reaches resolution within this bound (services/networks.py).
    network_refresh: int = 10
    # Seconds each server process reuses the records' counts by status (the charts of records
    # by status, the staff overview, /metrics): each count reads every record; 0: every time.
    statistics_cache: int = 60
    # Seconds a cache may keep resolution's answers, by outcome (web/caching.py).
    cache_redirect: int = 300
    cache_record: int = 300
    cache_not_found: int = 60
    cache_invalid: int = 86_400
    cache_gone: int = 86_400
    # The staff pages (/staff/, web/sessions.py): the key that signs their sessions (every
    # server must share it; empty: one made once and kept in the database), hours a sign-in
    # lasts, and the back-off of failed sign-ins per account and client address (counted in
    # the database, across every process): after staff_sign_in_attempts failures in a row,
    # staff_sign_in_backoff_seconds, doubled at each further failure, at most
    # staff_sign_in_longest_minutes.
    staff_secret: str = ""
    staff_session_hours: int = 12
    staff_sign_in_attempts: int = 5
    staff_sign_in_backoff_seconds: int = 1
    staff_sign_in_longest_minutes: int = 15
    # What hashing a staff password costs (argon2id, RFC 9106; domain/accounts.py): KiB of
    # memory, passes over it and lanes; RFC 9106 §4's second recommended option by default.
    password_memory_kib: int = DEFAULT_HASHING.memory_kib
    password_passes: int = DEFAULT_HASHING.passes
    password_lanes: int = DEFAULT_HASHING.lanes
    # Web archives whose copies a record offers when every location of it is broken: URL
    # templates separated by spaces, {url} the location's URL, {datetime} the 14 digits of
    # when it was last seen working (docs/resolution.md, "Time travel"); none by default.
    web_archives: str = ""

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str] | None = None, config: str | None = None
    ) -> Settings:
        """Settings from ``URNKIT_*`` variables (a setting's name in capitals: ``URNKIT_PORT``)
        over those of the configuration file ``config`` (else ``URNKIT_CONFIG``'s, else
        ``./urnkit.toml`` if it exists) over the defaults. A :class:`ValueError` says which
        value is wrong, and where."""
        environ = os.environ if environ is None else environ
        path = config or environ.get("URNKIT_CONFIG") or _default_file()
        values = {} if path is None else read_config(path)
        for field in fields(cls):
            name = f"URNKIT_{field.name.upper()}"
            if name in environ:
                values[field.name] = _parsed(name, str(field.type), environ[name])
        return cls(**values).checked()

    def checked(self) -> Settings:
        """These settings, if they fit together; else a :class:`ValueError` saying why."""
        if self.statistics_interval < 1:
            raise ValueError("statistics_interval must be 1 (second) or more")
        if self.network_refresh < 1:
            raise ValueError("network_refresh must be 1 (second) or more")
        if self.harvest_max_bytes < 1 or self.harvest_timeout < 1:
            raise ValueError("harvest_max_bytes and harvest_timeout must be 1 or more")
        _check_replicas(self.replica_urls, self.replica_max_lag)
        if self.statistics_cache < 0:
            raise ValueError("statistics_cache must be 0 (seconds) or more")
        staff = ("staff_session_hours", "staff_sign_in_attempts", "staff_sign_in_backoff_seconds")
        if any(getattr(self, name) < 1 for name in (*staff, "staff_sign_in_longest_minutes")):
            raise ValueError(
                f"{', '.join(staff)} and staff_sign_in_longest_minutes must be 1 or more"
            )
        if self.server not in SERVERS:
            raise ValueError(f"server must be one of {', '.join(SERVERS)}, not {self.server!r}")
        if self.dns_nameserver:
            parse_nameserver(self.dns_nameserver)  # a ValueError saying what is wrong
        listed_networks("trusted_proxies", self.trusted_proxies)  # a ValueError naming the entry
        if self.forwarded_headers not in HEADER_FORMS:
            raise ValueError(
                f"forwarded_headers must be one of {', '.join(HEADER_FORMS)}, "
                f"not {self.forwarded_headers!r}"
            )
        listed_networks("fetch_allowed_networks", self.fetch_allowed_networks)
        web_archives(self.web_archives)  # a ValueError naming the template
        self.password_hashing()  # a ValueError naming the setting
        return self

    def password_hashing(self) -> PasswordHashing:
        """The cost of hashing a staff password these settings ask for.

        >>> Settings(password_memory_kib=8192).password_hashing()
        Traceback (most recent call last):
        ...
        ValueError: password_memory_kib times password_passes must be 35840 or more, not 24576
        """
        return PasswordHashing(self.password_memory_kib, self.password_passes, self.password_lanes)

    def environment(self) -> dict[str, str]:
        """These settings as ``URNKIT_*`` variables: what ``urnkit serve`` hands its workers.

        >>> Settings(workers=4, access_log=False).environment()["URNKIT_ACCESS_LOG"]
        '0'
        """
        return {
            f"URNKIT_{field.name.upper()}": _text(getattr(self, field.name))
            for field in fields(self)
        }


CONFIG_FILE = "urnkit.toml"


def _check_replicas(replica_urls: tuple[str, ...], max_lag: int) -> None:
    """A :class:`ValueError` unless the standbys are PostgreSQL's (the store checks that the
    primary is too), and the lag a whole second or more.

    >>> _check_replicas(("sqlite:///standby.db",), 10)
    Traceback (most recent call last):
    ...
    ValueError: replica_urls: 'sqlite:///standby.db' is no PostgreSQL URL (postgresql+psycopg://)
    """
    for url in replica_urls:
        if not url.startswith("postgresql"):
            raise ValueError(f"replica_urls: {url!r} is no PostgreSQL URL (postgresql+psycopg://)")
    if max_lag < 1:
        raise ValueError("replica_max_lag must be 1 (second) or more")


def _default_file() -> str | None:
    return CONFIG_FILE if os.path.isfile(CONFIG_FILE) else None


def read_config(path: str) -> dict[str, Any]:
    """The settings a TOML file gives (its top-level keys are settings' names), checked; a
    :class:`ValueError` naming the file, the key and what is wrong, or an :class:`OSError`.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as file:
    ...     _ = file.write('port = 9000\\nworkers = "auto"\\n')
    >>> read_config(file.name)["port"]
    9000
    """
    try:
        with open(path, "rb") as file:
            document = tomllib.load(file)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not TOML: {error}") from None
    except OSError as error:
        raise OSError(f"cannot read the configuration file {path}: {error.strerror}") from None
    known = {field.name: str(field.type) for field in fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in document.items():
        if key not in known:
            raise ValueError(
                f"{path}: no setting is called {key!r}; the settings are {', '.join(known)}"
            )
        values[key] = _parsed(f"{path}: {key}", known[key], value)
    return values


def _parsed(label: str, kind: str, value: object) -> object:
    """``value`` (a variable's text, or a TOML value) as a setting of type ``kind``; ``label``
    says where it came from (``URNKIT_PORT``, or ``urnkit.toml: port``)."""
    from_variable = label.startswith("URNKIT_")
    if kind == "int":
        if label.endswith(("WORKERS", " workers")) and value == "auto":
            return available_cpus()
        if from_variable and isinstance(value, str) and value.strip().isdigit():
            return int(value)
        if not from_variable and type(value) is int and value >= 0:
            return value
        raise ValueError(f"{label} must be a whole number, not {value!r}")
    if kind == "bool":
        if from_variable and value in ("0", "1"):
            return value == "1"
        if not from_variable and isinstance(value, bool):
            return value
        expected = "0 or 1" if from_variable else "true or false"
        raise ValueError(f"{label} must be {expected}, not {value!r}")
    if kind == "tuple[str, ...]":
        if from_variable and isinstance(value, str):
            return tuple(item.strip() for item in value.split(",") if item.strip())
        if not from_variable and isinstance(value, list) and _texts(value):
            return tuple(value)
        raise ValueError(f"{label} must be a list of text, not {value!r}")
    if not isinstance(value, str):
        raise ValueError(f"{label} must be text, not {value!r}")
    return value


def _texts(values: list[object]) -> bool:
    return all(isinstance(value, str) for value in values)


def available_cpus() -> int:
    """The CPUs this process may run on: ``workers = "auto"``'s number of server processes.

    >>> available_cpus() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _text(value: object) -> str:
    if isinstance(value, tuple):
        return ",".join(value)
    return ("1" if value else "0") if isinstance(value, bool) else str(value)
