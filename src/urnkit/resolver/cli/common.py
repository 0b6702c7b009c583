"""What the resolver's commands share: the settings and the service their flags give, the
``--database-url`` flag, and refusals reported as messages.

Only the standard library and :mod:`urnkit.commandline` are imported here at first; the
server's libraries when a command runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
from contextlib import AbstractContextManager, nullcontext
from typing import IO, TYPE_CHECKING

from urnkit.commandline import EXIT_INVALID, EXIT_USAGE, Commands, Help, Run, command, fail

if TYPE_CHECKING:
    from urnkit.resolver.services import Services
    from urnkit.resolver.settings import Settings

REFUSED = (
    "0  done",
    "1  the service refused (the message says why)",
    "2  usage error, a file or database that cannot be used, or no server extra",
)
"""The exit statuses of most resolver commands."""
NOT_INSTALLED = (
    "the resolver needs the server extra: pip install '.[server]' in a clone of urnkit, "
    "or its wheel with [server] (docs/deploy.md)"
)


class SchemaError(Exception):
    """The database's schema is missing or older than this urnkit."""


def settings_for(args: argparse.Namespace) -> Settings:
    """The settings the flags give, over ``URNKIT_*`` variables, over the configuration file
    (``--config``, ``URNKIT_CONFIG`` or ``./urnkit.toml``), over the defaults."""
    from urnkit.resolver.settings import Settings

    base = Settings.from_environment(config=getattr(args, "config", None))
    flags = {
        name: getattr(args, name)
        for name in (
            "database_url",
            "host",
            "port",
            "workers",
            "server",
            "trusted_proxies",
            "forwarded_headers",
            "replica_max_lag",
        )
        if getattr(args, name, None) is not None
    }
    if getattr(args, "replica_url", None):  # --replica-url, repeated
        flags["replica_urls"] = tuple(args.replica_url)
    return dataclasses.replace(base, **flags).checked()


def services_for(args: argparse.Namespace, *, upgrade: bool = False) -> Services:
    """The service over the flags' database, its schema checked (or made, with ``upgrade``)."""
    from urnkit.resolver.domain.versions import web_archives
    from urnkit.resolver.services import Services
    from urnkit.resolver.services.oai_feed import Bounds
    from urnkit.resolver.services.outbound import FetchGuard
    from urnkit.resolver.store import Store
    from urnkit.resolver.store.failures import schema_problem

    settings = settings_for(args)
    store = Store(settings.database_url)
    state = store.schema_state()
    if state == "empty" and upgrade:
        print(f"urnkit: creating the schema in {store.engine.url!r}", file=sys.stderr)
        store.upgrade()
    elif state != "current":
        raise SchemaError(f"the database {store.engine.url!r} has {schema_problem(state)}")
    return Services(
        store,
        fetch_guard=FetchGuard.from_setting(settings.fetch_allowed_networks),
        harvest_bounds=Bounds(settings.harvest_max_bytes, settings.harvest_timeout),
        web_archives=web_archives(settings.web_archives),
        password_hashing=settings.password_hashing(),
    )


def guarded(run: Run) -> Run:
    """``run``, with the service's refusals and missing libraries reported as messages."""

    @functools.wraps(run)
    def run_guarded(args: argparse.Namespace) -> int:
        try:
            from urnkit.resolver.domain import ResolverError, UnavailableError
        except ImportError:
            return fail(NOT_INSTALLED, EXIT_USAGE)
        from sqlalchemy.exc import ArgumentError, DataError, DBAPIError, NoSuchModuleError

        from urnkit.resolver.store.failures import one_line

        try:
            return run(args)
        except UnavailableError as error:  # the store's words: the driver's error is the cause
            return fail(database_problem(error.__cause__ or error, _url(args)), EXIT_USAGE)
        except ResolverError as error:
            return fail(f"{error.title.lower()}: {error.detail}", EXIT_INVALID)
        except BrokenPipeError:  # the reader left: urnkit's main stops quietly (141)
            raise
        except DataError as error:  # a value beyond a column's type: PostgreSQL's refusal
            refusal = one_line(error.orig or error)
            return fail(f"the database refused a value: {refusal}", EXIT_INVALID)
        except (SchemaError, ValueError, OSError) as error:
            return fail(str(error), EXIT_USAGE)
        except (ArgumentError, NoSuchModuleError, ModuleNotFoundError, DBAPIError) as error:
            return fail(database_problem(error, _url(args)), EXIT_USAGE)

    return run_guarded


def _url(args: argparse.Namespace) -> str:
    """The database URL the command was given, as far as it can be read."""
    try:
        return settings_for(args).database_url
    except ValueError:  # the settings themselves are what failed
        return str(getattr(args, "database_url", None) or "")


def database_problem(error: BaseException, url: str) -> str:
    """One line saying why the database at ``url`` could not be used and the likely fix
    (:func:`~urnkit.resolver.store.failures.database_failure`), else what the error says.

    >>> from sqlalchemy.exc import NoSuchModuleError
    >>> database_problem(NoSuchModuleError("Can't load plugin: sqlalchemy.dialects:foo"), "foo://")
    "cannot use the database: no such dialect (Can't load plugin: sqlalchemy.dialects:foo): \
use sqlite:///FILE or postgresql+psycopg://ROLE@HOST:PORT/NAME"
    """
    from urnkit.resolver.store.failures import database_failure, one_line

    failure = database_failure(error, url)
    words = failure or one_line(getattr(error, "orig", None) or error)  # the driver's, if any
    return f"cannot use the database: {words}"


def add(commands: Commands, name: str, run: Run, about: Help) -> argparse.ArgumentParser:
    """Add the resolver command ``name``, which ``run`` does, :func:`guarded`."""
    return command(commands, name, guarded(run), about)


def database_flag(*parsers: argparse.ArgumentParser) -> None:
    """Add ``--database-url`` and ``--config`` to each of ``parsers``."""
    for parser in parsers:
        parser.add_argument(
            "--database-url",
            help="SQLAlchemy URL: sqlite:///urnkit.db (default, or URNKIT_DATABASE_URL), "
            "postgresql+psycopg://user@host/db",
        )
        parser.add_argument(
            "--config",
            metavar="FILE",
            help="settings file (TOML; default URNKIT_CONFIG, else ./urnkit.toml if present)",
        )


def output(name: str) -> AbstractContextManager[IO[str]]:
    """The text file ``name`` to write, closed on leaving ``with``; stdout for ``-``, left open."""
    if name == "-":
        return nullcontext(sys.stdout)
    return open(name, "w", encoding="utf-8", newline="")
