"""History without a second copy of the record: a record's newest history entry holds no
document (``record`` is NULL) and means "the record as it is now"; when the record next changes,
that entry is given the record as it was (frozen) before the change is written, and the new
newest entry again holds none. Nine records in ten never change after they are registered, and
their one history entry was a copy of the record's own row: about 430 bytes a URN.

The database keeps the rule, as it keeps history append-only:

- a history entry cannot change, but for its ``record`` written once where it is NULL;
- a record has at most one entry without a document;
- a record and its locations cannot change while that entry holds none (the writer freezes it
  first: ``Records.update``).

Entries written before this revision keep their documents. SQLite rebuilds ``history`` to let
``record`` be NULL (a copy of the table: minutes at ten million entries); PostgreSQL alters it in
place.

Revision ID: current_history
Revises: title_search
Create Date: 2026-11-25
"""

from alembic import op

revision = "current_history"
down_revision = "title_search"
branch_labels = None
depends_on = None

APPEND_ONLY = "history is append-only"
ONE_CURRENT = "a record has one history entry without a document, its newest"
FREEZE_FIRST = (
    "the newest history entry of a record is given its document before the record changes"
)
# The columns a history document shows (representations.shapes.record_json); the others
# (targets) are derived from them and from link checks, and change without history.
_RECORD_COLUMNS = "urn, status, metadata, successors, note, owner_id, created, updated"
_CURRENT = "SELECT 1 FROM history WHERE record_id = {row} AND record IS NULL"
_FROZEN = (
    "old.record IS NULL AND new.record IS NOT NULL AND new.id = old.id"
    " AND new.record_id = old.record_id AND new.at = old.at AND new.action = old.action"
    " AND new.actor = old.actor"
)

SQLITE = [
    f"CREATE TRIGGER history_no_update BEFORE UPDATE ON history WHEN NOT ({_FROZEN})"
    f" BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END",
    f"CREATE TRIGGER history_no_delete BEFORE DELETE ON history"
    f" BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END",
    "CREATE TRIGGER history_one_current BEFORE INSERT ON history WHEN new.record IS NULL"
    f" AND EXISTS ({_CURRENT.format(row='new.record_id')})"
    f" BEGIN SELECT RAISE(ABORT, '{ONE_CURRENT}'); END",
    f"CREATE TRIGGER records_history_first BEFORE UPDATE OF {_RECORD_COLUMNS} ON records"
    f" WHEN EXISTS ({_CURRENT.format(row='old.id')})"
    f" BEGIN SELECT RAISE(ABORT, '{FREEZE_FIRST}'); END",
    *(
        f"CREATE TRIGGER locations_history_first_{event.lower()} BEFORE {event} ON locations"
        f" WHEN EXISTS ({_CURRENT.format(row=f'{row}.record_id')})"
        f" BEGIN SELECT RAISE(ABORT, '{FREEZE_FIRST}'); END"
        for event, row in (("INSERT", "new"), ("UPDATE", "old"), ("DELETE", "old"))
    ),
]
POSTGRESQL = [
    "ALTER TABLE history ALTER COLUMN record DROP NOT NULL",
    "DROP TRIGGER history_guard ON history",
    "CREATE FUNCTION urnkit_history_guard() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    " IF TG_OP = 'INSERT' THEN"
    f"  IF NEW.record IS NULL AND EXISTS ({_CURRENT.format(row='NEW.record_id')}) THEN"
    f"   RAISE EXCEPTION '{ONE_CURRENT}'; END IF;"
    "  RETURN NEW;"
    " END IF;"
    f" IF TG_OP = 'UPDATE' AND {_FROZEN.replace('old.', 'OLD.').replace('new.', 'NEW.')}"
    " THEN RETURN NEW; END IF;"
    f" RAISE EXCEPTION '{APPEND_ONLY}'; END $$",
    "CREATE TRIGGER history_guard BEFORE INSERT OR UPDATE OR DELETE ON history"
    " FOR EACH ROW EXECUTE FUNCTION urnkit_history_guard()",
    "CREATE FUNCTION urnkit_history_first() RETURNS trigger LANGUAGE plpgsql AS $$"
    " DECLARE changed bigint; BEGIN"
    " IF TG_TABLE_NAME = 'records' THEN changed := OLD.id;"
    " ELSIF TG_OP = 'INSERT' THEN changed := NEW.record_id;"
    " ELSE changed := OLD.record_id; END IF;"
    f" IF EXISTS ({_CURRENT.format(row='changed')}) THEN"
    f"  RAISE EXCEPTION '{FREEZE_FIRST}'; END IF;"
    " IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;"
    " RETURN NEW; END $$",
    f"CREATE TRIGGER records_history_first BEFORE UPDATE OF {_RECORD_COLUMNS} ON records"
    " FOR EACH ROW EXECUTE FUNCTION urnkit_history_first()",
    "CREATE TRIGGER locations_history_first BEFORE INSERT OR UPDATE OR DELETE ON locations"
    " FOR EACH ROW EXECUTE FUNCTION urnkit_history_first()",
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in POSTGRESQL:
            op.execute(statement)
        return
    # The rebuilt table loses the old table's triggers (history_no_update, history_no_delete).
    with op.batch_alter_table("history", recreate="always") as history:
        history.alter_column("record", nullable=True)
    for statement in SQLITE:
        op.execute(statement)


def downgrade() -> None:
    raise NotImplementedError(
        "history entries without a document cannot be given one in SQL: restore a backup"
    )
