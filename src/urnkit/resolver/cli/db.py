"""``urnkit db upgrade``: the resolver's database schema, by its Alembic migrations;
``urnkit db check``: stored records that break a rule made after they were stored."""

from __future__ import annotations

import argparse

from urnkit.commandline import EXIT_INVALID, EXIT_OK, Commands, Help, group
from urnkit.resolver.cli.common import REFUSED, add, database_flag, services_for, settings_for

_UPGRADE = Help(
    "Apply the schema migrations the database lacks.",
    "The only way the schema is made or changed; safe to run again.",
    REFUSED,
)


def _upgrade(args: argparse.Namespace) -> int:
    from urnkit.resolver.store import Store

    store = Store(settings_for(args).database_url)
    before = store.schema_state()
    store.upgrade()
    print("schema was current" if before == "current" else "schema upgraded to the newest")
    return EXIT_OK


_CHECK = Help(
    "Report stored URNs that could not be resolved.",
    "One line per URN whose NSS holds a '.' or '..' path segment (also as %2E), which HTTP "
    "clients remove before sending a request (RFC 3986 §5.2.4): such URNs are refused now, "
    "but may have been stored before.",
    (
        "0  every stored URN passes",
        "1  some do not (one line each on stdout)",
        "2  a database that cannot be used, or no server extra",
    ),
)


def _check(args: argparse.Namespace) -> int:
    found = 0
    for reason in services_for(args).records.unresolvable():
        print(reason)
        found += 1
    return EXIT_INVALID if found else EXIT_OK


def add_commands(commands: Commands) -> None:
    """Add ``db`` and its commands, ``upgrade`` and ``check``."""
    db = group(commands, "db", "The resolver's database schema (Alembic migrations).")
    upgrade = add(db, "upgrade", _upgrade, _UPGRADE)
    check = add(db, "check", _check, _CHECK)
    database_flag(upgrade, check)
