"""Successions: who succeeds whom, for the predecessor-version links of resolution.

- ``successions``: a row per successor a deactivated record names, keyed by the successor's
  equivalence key (registered here or not); resolution reads a record's predecessors from it in
  the same query as its status and targets. Filled from the records deactivated so far.

Revision ID: successions
Revises: oai
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

from urnkit.syntax import URNSyntaxError
from urnkit.urn import URN

revision = "successions"
down_revision = "oai"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    table = op.create_table(
        "successions",
        sa.Column("successor_key", sa.String(2000), primary_key=True),
        sa.Column(
            "predecessor_id", _ID, sa.ForeignKey("records.id"), primary_key=True, nullable=False
        ),
        sa.Column("predecessor_urn", sa.String(2000), nullable=False),
    )
    records = sa.table(
        "records",
        sa.column("id", _ID),
        sa.column("urn", sa.String),
        sa.column("status", sa.String),
        sa.column("successors", sa.JSON),
    )
    found = op.get_bind().execute(
        sa.select(records.c.id, records.c.urn, records.c.successors).where(
            records.c.status == "deactivated"
        )
    )
    rows: dict[tuple[str, int], str] = {}
    for record_id, urn, successors in found:
        for successor in successors or ():
            try:
                rows[(URN.parse(successor).equivalence_key(), record_id)] = urn
            except URNSyntaxError:  # imported as it was; no URN, so nobody's predecessor
                continue
    if rows:
        op.bulk_insert(
            table,
            [
                {"successor_key": key, "predecessor_id": rid, "predecessor_urn": urn}
                for (key, rid), urn in rows.items()
            ],
        )


def downgrade() -> None:
    op.drop_table("successions")
