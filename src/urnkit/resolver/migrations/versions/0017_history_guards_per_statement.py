"""History's guards on inserts, once a statement instead of once a row (PostgreSQL): the rules of
revision ``current_history`` are unchanged, and each insert into ``history`` or ``locations`` is
checked over its transition table (``REFERENCING NEW TABLE``) in one query, not by a PL/pgSQL
call per row. An import of 5,000 records spent about 6.5 µs of the server's CPU a row in those
calls (``docs/benchmarks.md``, 2026-11-27). Updates and deletes keep their row triggers: the
rules there compare a row's old and new values, and no bulk path updates or deletes.

- ``history``: a statement inserting an entry without a document is refused if its record then
  has two (the other already there, or inserted by the same statement).
- ``locations``: a statement inserting a location of a record whose newest history entry has no
  document is refused. The check runs when the statement ends, so an import inserts the records
  and their locations in one statement and the history entries in the next
  (``store.bulk_import``); a single statement inserting both is refused, as it would be row by
  row where the entry came first.

SQLite is unchanged: its triggers run in the statement, and no PL/pgSQL call costs there.

Revision ID: history_guards_per_statement
Revises: harvest_runs
Create Date: 2026-11-27
"""

from importlib import import_module

from alembic import op

revision = "history_guards_per_statement"
down_revision = "harvest_runs"
branch_labels = None
depends_on = None

# Revision current_history: its rules' messages and the statements that made its guards (its
# module's name starts with a digit, hence import_module; alembic loads it apart).
_BEFORE = import_module("urnkit.resolver.migrations.versions.0008_current_history")
_FROZEN = _BEFORE._FROZEN.replace("old.", "OLD.").replace("new.", "NEW.")
_CURRENT = _BEFORE._CURRENT


def _function(name: str, body: str) -> str:
    return f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ {body} $$"


def _statement_check(name: str, query: str, message: str) -> str:
    """A statement trigger's function: ``message`` raised if ``query`` finds a row. The query
    asks history's index by record once a row inserted (a LATERAL subquery with LIMIT, which
    the planner does not turn into a join; sequential scans off): PL/pgSQL keeps the plan of a
    session's first call, and one made while history looked small read all of history for
    each row inserted (an import of 100,000 records did not end in ten minutes)."""
    return (
        f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off"
        f" AS $$ BEGIN IF EXISTS ({query}) THEN RAISE EXCEPTION '{message}'; END IF;"
        " RETURN NULL; END $$"
    )


UPGRADE = [
    "DROP TRIGGER history_guard ON history",
    "DROP TRIGGER locations_history_first ON locations",
    _function(
        "urnkit_history_guard",
        f"BEGIN IF TG_OP = 'UPDATE' AND {_FROZEN} THEN RETURN NEW; END IF;"
        f" RAISE EXCEPTION '{_BEFORE.APPEND_ONLY}'; END",
    ),
    "CREATE TRIGGER history_guard BEFORE UPDATE OR DELETE ON history"
    " FOR EACH ROW EXECUTE FUNCTION urnkit_history_guard()",
    _statement_check(
        "urnkit_history_one_current",
        "SELECT 1 FROM entered e CROSS JOIN LATERAL (SELECT 1 FROM history h"
        " WHERE h.record_id = e.record_id AND h.record IS NULL AND h.id <> e.id LIMIT 1) other"
        " WHERE e.record IS NULL",
        _BEFORE.ONE_CURRENT,
    ),
    "CREATE TRIGGER history_one_current AFTER INSERT ON history REFERENCING NEW TABLE AS entered"
    " FOR EACH STATEMENT EXECUTE FUNCTION urnkit_history_one_current()",
    _function(
        "urnkit_history_first",
        "DECLARE changed bigint; BEGIN"
        " IF TG_TABLE_NAME = 'records' THEN changed := OLD.id; ELSE changed := OLD.record_id;"
        f" END IF; IF EXISTS ({_CURRENT.format(row='changed')}) THEN"
        f" RAISE EXCEPTION '{_BEFORE.FREEZE_FIRST}'; END IF;"
        " IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END",
    ),
    "CREATE TRIGGER locations_history_first BEFORE UPDATE OR DELETE ON locations"
    " FOR EACH ROW EXECUTE FUNCTION urnkit_history_first()",
    _statement_check(
        "urnkit_history_first_placed",
        "SELECT 1 FROM placed p CROSS JOIN LATERAL (SELECT 1 FROM history h"
        " WHERE h.record_id = p.record_id AND h.record IS NULL LIMIT 1) current",
        _BEFORE.FREEZE_FIRST,
    ),
    "CREATE TRIGGER locations_history_first_placed AFTER INSERT ON locations"
    " REFERENCING NEW TABLE AS placed"
    " FOR EACH STATEMENT EXECUTE FUNCTION urnkit_history_first_placed()",
]

# Back to revision current_history's guards, made again by its own statements.
DOWNGRADE = [
    "DROP TRIGGER history_one_current ON history",
    "DROP TRIGGER locations_history_first_placed ON locations",
    "DROP TRIGGER history_guard ON history",
    "DROP TRIGGER locations_history_first ON locations",
    "DROP TRIGGER records_history_first ON records",
    "DROP FUNCTION urnkit_history_one_current()",
    "DROP FUNCTION urnkit_history_first_placed()",
    "DROP FUNCTION urnkit_history_guard()",
    "DROP FUNCTION urnkit_history_first()",
    *(statement for statement in _BEFORE.POSTGRESQL if statement.startswith("CREATE ")),
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in UPGRADE:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in DOWNGRADE:
            op.execute(statement)
