"""Other identifiers lead to the URN: ``record_identifiers``, a row per URN of another
namespace a record's ``metadata.identifiers`` carries (keyed by its equivalence key, the
namespace's own rule: an ISBN-10 and its ISBN-13 share one) and a row for its
``metadata.local_id`` (keyed by the local id, held by the record's organisation: unique within
it, a constraint). Filled from the records' metadata as it is (what is not acceptable is left
out; two records of an organisation claiming one local id keep it on the older only).

Revision ID: record_identifiers
Revises: harvest_format
Create Date: 2026-11-25
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

from urnkit.resolver.domain.identifiers import identifier_keys, local_id

revision = "record_identifiers"
down_revision = "harvest_format"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")
_BATCH = 10_000


def upgrade() -> None:
    table = op.create_table(
        "record_identifiers",
        sa.Column("key", sa.String(2000), primary_key=True),
        sa.Column("record_id", _ID, sa.ForeignKey("records.id"), primary_key=True),
        sa.Column("organisation_id", sa.Integer, sa.ForeignKey("organisations.id")),
        sa.UniqueConstraint("organisation_id", "key", name="uq_record_identifiers_local_id"),
    )
    op.create_index("ix_record_identifiers_record_id", "record_identifiers", ["record_id"])
    records = sa.table(
        "records",
        sa.column("id", _ID),
        sa.column("owner_id", sa.Integer),
        sa.column("metadata", sa.JSON),
    )
    bind = op.get_bind()
    # Only the records naming either field are read (most records name neither).
    text = sa.cast(records.c.metadata, sa.Text)
    named = sa.or_(text.contains('"identifiers"'), text.contains('"local_id"'))
    found = bind.execute(
        sa.select(records.c.id, records.c.owner_id, records.c.metadata)
        .where(named)
        .order_by(records.c.id)
    )
    held: set[tuple[int, str]] = set()
    rows: list[dict[str, Any]] = []
    for record_id, owner_id, metadata in found:
        if not isinstance(metadata, dict):
            continue
        rows += [
            {"key": key, "record_id": record_id, "organisation_id": None}
            for key in identifier_keys(metadata)
        ]
        own = local_id(metadata)
        if own is not None and (owner_id, own) not in held:
            held.add((owner_id, own))
            rows.append({"key": own, "record_id": record_id, "organisation_id": owner_id})
        if len(rows) >= _BATCH:
            op.bulk_insert(table, rows)
            rows = []
    if rows:
        op.bulk_insert(table, rows)


def downgrade() -> None:
    op.drop_table("record_identifiers")
