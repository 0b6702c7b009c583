"""``urnkit db upgrade``: the resolver's database schema, by its Alembic migrations."""

from __future__ import annotations

import argparse

from urnkit.commandline import EXIT_OK, Commands, Help, group
from urnkit.resolver.cli.common import REFUSED, add, database_flag, settings_for

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


def add_commands(commands: Commands) -> None:
    """Add ``db`` and its command, ``upgrade``."""
    db = group(commands, "db", "The resolver's database schema (Alembic migrations).")
    upgrade = add(db, "upgrade", _upgrade, _UPGRADE)
    database_flag(upgrade)
