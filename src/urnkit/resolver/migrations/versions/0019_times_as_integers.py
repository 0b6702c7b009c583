"""SQLite's times of records and history as integers: microseconds since 1970, UTC
(``tables.unix_microseconds``), 8 bytes where SQLAlchemy's text (``2026-11-27 14:41:21.027875``)
took 26. ``records.created``, ``records.updated`` (and ``ix_records_updated``, which repeats it)
and ``history.at``: about 70 bytes a URN at 1,000,000 (``docs/storage.md``). The columns keep
their declared type, ``DATETIME``, whose affinity (NUMERIC) keeps an integer as it is.

Every stored time is rewritten, exactly: the whole seconds from ``strftime('%s')`` of the text
up to its point, the microseconds from its digits after the point (none: 0). A record's and a
history entry's triggers refuse changing them (migration current_history): those triggers are
dropped for the rewrite and created again as they were, in the migration's transaction. A release
before this one cannot read the integers: stop the servers for this upgrade
(``docs/deploy.md``). PostgreSQL is unchanged: ``timestamptz`` takes 8 bytes already.

Revision ID: times_as_integers
Revises: title_index_from_records
Create Date: 2026-11-27
"""

from alembic import op

revision = "times_as_integers"
down_revision = "title_index_from_records"
branch_labels = None
depends_on = None

COLUMNS = {"records": ("created", "updated"), "history": ("at",)}
# The triggers that refuse the rewrite (migration current_history).
_GUARDS = ("records_history_first", "history_no_update")
# The seconds of the text's first 19 characters: strftime rounds a fraction of .9995 or more up.
_AS_INTEGER = (
    "CAST(strftime('%s', substr({c}, 1, 19)) AS INTEGER) * 1000000"
    " + CAST(substr({c}, 21, 6) AS INTEGER)"
)
_AS_TEXT = (
    "strftime('%Y-%m-%d %H:%M:%S', {c} / 1000000, 'unixepoch')"
    " || '.' || printf('%06d', {c} % 1000000)"
)


def _rewrite(expression: str, kind: str) -> None:
    """Every time of :data:`COLUMNS` stored as ``kind`` rewritten by ``expression``, with the
    guards that would refuse it dropped meanwhile."""
    connection = op.get_bind()
    guards = [
        connection.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)
        ).scalar_one()
        for name in _GUARDS
    ]
    for name in _GUARDS:
        connection.exec_driver_sql(f"DROP TRIGGER {name}")
    for table, columns in COLUMNS.items():
        for column in columns:
            value = expression.format(c=column)
            connection.exec_driver_sql(
                f"UPDATE {table} SET {column} = {value} WHERE typeof({column}) = '{kind}'"
            )
    for sql in guards:  # as written, colons and all: not a statement of SQLAlchemy's
        connection.exec_driver_sql(sql)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rewrite(_AS_INTEGER, "text")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rewrite(_AS_TEXT, "integer")
