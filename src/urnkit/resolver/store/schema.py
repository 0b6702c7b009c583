"""The schema's state and its upgrade: the Alembic migrations in ``urnkit/resolver/migrations``
are the only code that creates or changes tables."""

from __future__ import annotations

from importlib.resources import files
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine


def _alembic_config(connection: Connection) -> Any:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(files("urnkit.resolver") / "migrations"))
    config.attributes["connection"] = connection
    return config


def schema_state(connection: Connection) -> Literal["empty", "current", "outdated"]:
    """Whether the database ``connection`` reads (read-only: it waits for no writer) has no
    schema, the newest one, or one to upgrade."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    if not sa.inspect(connection).get_table_names():
        return "empty"
    current = MigrationContext.configure(connection).get_current_heads()
    heads = ScriptDirectory.from_config(_alembic_config(connection)).get_heads()
    return "current" if set(current) == set(heads) else "outdated"


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply the Alembic migrations up to ``revision``."""
    from alembic import command

    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), revision)
