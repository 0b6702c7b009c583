"""The first schema: organisations, delegated prefixes, tokens, records, locations, history,
idempotency keys; triggers that keep records and history from being deleted.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_TIME = sa.DateTime(timezone=True)
_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")  # SQLite's rowid alias must be INTEGER

# RFC 8458 §4.1: a URN:NBN "MUST NOT be reused", so its record is never deleted; the history
# of changes is append-only.
_NEVER_DELETED = "URN records are never deleted (RFC 8458 §4.1: no reuse); deactivate instead"
_APPEND_ONLY = "history is append-only"


def upgrade() -> None:
    op.create_table(
        "organisations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("created", _TIME, nullable=False),
    )
    op.create_table(
        "prefixes",
        sa.Column("prefix", sa.String(200), primary_key=True),
        sa.Column("organisation_id", sa.Integer, sa.ForeignKey("organisations.id"), nullable=False),
        sa.Column("generator", sa.String(20), nullable=False),
        sa.Column("next_value", sa.BigInteger, nullable=False),
        sa.Column("created", _TIME, nullable=False),
    )
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("organisation_id", sa.Integer, sa.ForeignKey("organisations.id"), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("label", sa.String(200)),
        sa.Column("created", _TIME, nullable=False),
        sa.Column("revoked", _TIME),
    )
    op.create_table(
        "records",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("equivalence_key", sa.String(2000), nullable=False, unique=True),
        sa.Column("urn", sa.String(2000), nullable=False),
        sa.Column("prefix", sa.String(200), nullable=False, index=True),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("metadata", _JSON, nullable=False),
        sa.Column("successors", _JSON, nullable=False),
        sa.Column("note", sa.Text),
        sa.Column("owner_id", sa.Integer, sa.ForeignKey("organisations.id"), nullable=False),
        sa.Column("created", _TIME, nullable=False),
        sa.Column("updated", _TIME, nullable=False),
    )
    op.create_table(
        "locations",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("record_id", _ID, sa.ForeignKey("records.id"), nullable=False, index=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),
        sa.Column("label", sa.Text),
        sa.Column("media_type", sa.String(255)),
        sa.Column("owner_id", sa.Integer, sa.ForeignKey("organisations.id"), nullable=False),
    )
    op.create_table(
        "history",
        sa.Column("id", _ID, primary_key=True),
        sa.Column("record_id", _ID, sa.ForeignKey("records.id"), nullable=False, index=True),
        sa.Column("at", _TIME, nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("record", _JSON, nullable=False),
    )
    op.create_table(
        "idempotency_keys",
        sa.Column(
            "organisation_id", sa.Integer, sa.ForeignKey("organisations.id"), primary_key=True
        ),
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("status_code", sa.Integer, nullable=False),
        sa.Column("body", _JSON, nullable=False),
        sa.Column("created", _TIME, nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION urnkit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION '%', TG_ARGV[0]; END $$"
        )
        for table, events, message in _GUARDS:
            op.execute(
                f"CREATE TRIGGER {table}_guard BEFORE {' OR '.join(events)} ON {table} "
                f"FOR EACH ROW EXECUTE FUNCTION urnkit_refuse('{message}')"
            )
            # TRUNCATE skips row triggers: a statement trigger refuses it too.
            op.execute(
                f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION urnkit_refuse('{message}')"
            )
    else:
        for table, events, message in _GUARDS:
            for event in events:
                op.execute(
                    f"CREATE TRIGGER {table}_no_{event.lower()} BEFORE {event} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
                )


_GUARDS = (
    ("records", ("DELETE",), _NEVER_DELETED),
    ("history", ("UPDATE", "DELETE"), _APPEND_ONLY),
)


def downgrade() -> None:
    raise NotImplementedError("the first schema is not downgraded: records are never deleted")
