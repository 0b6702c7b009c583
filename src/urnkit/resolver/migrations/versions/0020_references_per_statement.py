"""The references of records, locations and history, checked once a statement on insert
(PostgreSQL): ``records.owner_id`` and ``locations.owner_id`` name an organisation,
``locations.record_id`` and ``history.record_id`` a record, as their foreign keys said, but an
insert is checked over its transition table (``REFERENCING NEW TABLE``) in one query instead of
one referential-integrity trigger call a row. An import spent 11.4 of PostgreSQL's 40.5 µs of
CPU a row in those four calls (``docs/benchmarks.md``, 2026-11-27, fifth sitting).

What the foreign keys refused is still refused, with their error code (23503,
``foreign_key_violation``):

- an insert naming an organisation or a record that is not there, checked when the statement
  ends; the organisations named are locked as a foreign key locks them (``FOR KEY SHARE``),
  so that no organisation they name is deleted before the insert commits;
- an update that changes one of those columns to a missing one (a row trigger, on the rare
  update of the column itself);
- deleting an organisation that a record or location names, or changing an organisation's or
  a record's id while anything names it. Records are never deleted (revision initial).

SQLite keeps its foreign keys: its checks run in the statement, an index probe each.

Revision ID: references_per_statement
Revises: times_as_integers
Create Date: 2026-11-27
"""

from alembic import op

revision = "references_per_statement"
down_revision = "times_as_integers"
branch_labels = None
depends_on = None

# (table, column, referred table) of each foreign key checked once a statement.
REFERENCES = (
    ("records", "owner_id", "organisations"),
    ("locations", "record_id", "records"),
    ("locations", "owner_id", "organisations"),
    ("history", "record_id", "records"),
)
_VIOLATION = "foreign_key_violation"


def _missing(column: str, referred: str) -> str:
    """A query finding a row of ``changed`` whose ``column`` names no row of ``referred``: one
    index probe a row (a LATERAL subquery with LIMIT is not turned into a join, and a plan
    PL/pgSQL keeps from a session's first call stays right for any size)."""
    return (
        f"SELECT c.{column} FROM changed c LEFT JOIN LATERAL (SELECT 1 AS found FROM {referred} r"
        f" WHERE r.id = c.{column} LIMIT 1) x ON true WHERE x.found IS NULL LIMIT 1"
    )


def _inserted_check(table: str, columns: list[tuple[str, str]]) -> list[str]:
    """The statement trigger of ``table`` checking ``columns`` (column, referred table) of
    the rows a statement inserted, and its function."""
    body = ["DECLARE missing bigint; BEGIN"]
    for column, referred in columns:
        if referred == "organisations":  # held until commit: none of them is deleted meanwhile
            body.append(
                "PERFORM 1 FROM organisations WHERE id IN"
                f" (SELECT DISTINCT {column} FROM changed) ORDER BY id FOR KEY SHARE;"
            )
        body.append(
            f"missing := ({_missing(column, referred)}); IF missing IS NOT NULL THEN"
            f" RAISE EXCEPTION '{table}.{column} % names no row of {referred}', missing"
            f" USING ERRCODE = '{_VIOLATION}'; END IF;"
        )
    body.append("RETURN NULL; END")
    return [
        f"CREATE FUNCTION urnkit_{table}_references() RETURNS trigger LANGUAGE plpgsql"
        f" SET enable_seqscan = off AS $$ {' '.join(body)} $$",
        f"CREATE TRIGGER {table}_references AFTER INSERT ON {table}"
        f" REFERENCING NEW TABLE AS changed"
        f" FOR EACH STATEMENT EXECUTE FUNCTION urnkit_{table}_references()",
    ]


# A row trigger for updates of one referencing column: TG_ARGV is the column and the referred
# table.
_UPDATED_CHECK = (
    "CREATE FUNCTION urnkit_reference_kept() RETURNS trigger LANGUAGE plpgsql AS $$"
    " DECLARE wanted bigint := (to_jsonb(NEW) ->> TG_ARGV[0])::bigint; BEGIN"
    " EXECUTE format('SELECT 1 FROM %I WHERE id = $1 FOR KEY SHARE', TG_ARGV[1]) USING wanted;"
    " GET DIAGNOSTICS wanted = ROW_COUNT; IF wanted = 0 THEN"
    " RAISE EXCEPTION '%.% names no row of %', TG_TABLE_NAME, TG_ARGV[0], TG_ARGV[1]"
    f" USING ERRCODE = '{_VIOLATION}'; END IF; RETURN NEW; END $$"
)
# Organisations named by a record or location keep their rows and ids; records keep their ids.
_REFERRED_KEPT = (
    "CREATE FUNCTION urnkit_referred_kept() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    " IF TG_TABLE_NAME = 'records' OR EXISTS (SELECT 1 FROM records WHERE owner_id = OLD.id)"
    " OR EXISTS (SELECT 1 FROM locations WHERE owner_id = OLD.id) THEN"
    " RAISE EXCEPTION '% % is named by other rows: it is kept, with its id', TG_TABLE_NAME, OLD.id"
    f" USING ERRCODE = '{_VIOLATION}'; END IF;"
    " IF TG_OP = 'DELETE' THEN RETURN OLD; END IF; RETURN NEW; END $$"
)


def _upgrade_statements() -> list[str]:
    statements = [f"ALTER TABLE {t} DROP CONSTRAINT {t}_{c}_fkey" for t, c, _ in REFERENCES]
    checked: dict[str, list[tuple[str, str]]] = {}
    for table, column, referred in REFERENCES:
        checked.setdefault(table, []).append((column, referred))
    for table, columns in checked.items():
        statements += _inserted_check(table, columns)
    statements += [_UPDATED_CHECK, _REFERRED_KEPT]
    statements += [
        f"CREATE TRIGGER {table}_{column}_kept BEFORE UPDATE OF {column} ON {table}"
        f" FOR EACH ROW WHEN (NEW.{column} IS DISTINCT FROM OLD.{column})"
        f" EXECUTE FUNCTION urnkit_reference_kept('{column}', '{referred}')"
        for table, column, referred in REFERENCES
    ]
    statements += [
        "CREATE TRIGGER organisations_kept BEFORE DELETE ON organisations"
        " FOR EACH ROW EXECUTE FUNCTION urnkit_referred_kept()",
        "CREATE TRIGGER organisations_id_kept BEFORE UPDATE OF id ON organisations FOR EACH ROW"
        " WHEN (NEW.id IS DISTINCT FROM OLD.id) EXECUTE FUNCTION urnkit_referred_kept()",
        "CREATE TRIGGER records_id_kept BEFORE UPDATE OF id ON records FOR EACH ROW"
        " WHEN (NEW.id IS DISTINCT FROM OLD.id) EXECUTE FUNCTION urnkit_referred_kept()",
    ]
    return statements


def _downgrade_statements() -> list[str]:
    tables = sorted({table for table, _, _ in REFERENCES})
    return [
        "DROP TRIGGER organisations_kept ON organisations",
        "DROP TRIGGER organisations_id_kept ON organisations",
        "DROP TRIGGER records_id_kept ON records",
        *(f"DROP TRIGGER {t}_{c}_kept ON {t}" for t, c, _ in REFERENCES),
        *(f"DROP TRIGGER {table}_references ON {table}" for table in tables),
        *(f"DROP FUNCTION urnkit_{table}_references()" for table in tables),
        "DROP FUNCTION urnkit_reference_kept()",
        "DROP FUNCTION urnkit_referred_kept()",
        *(
            f"ALTER TABLE {t} ADD CONSTRAINT {t}_{c}_fkey FOREIGN KEY ({c}) REFERENCES {r} (id)"
            for t, c, r in REFERENCES
        ),
    ]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _upgrade_statements():
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for statement in _downgrade_statements():
            op.execute(statement)
