"""Location grants: the owner of a URN lets another organisation add and maintain its own
locations on it (``location_grants``: a row per record and grantee, who granted it and when).
A location already records the organisation that holds it (``locations.owner_id``); existing
locations keep their holder, the record's owner. A revoked grant's row is deleted, the
grantee's locations stay (the record's history names the grant and its revocation).

Revision ID: location_grants
Revises: title_words
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "location_grants"
down_revision = "title_words"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "location_grants",
        sa.Column("record_id", _ID, sa.ForeignKey("records.id"), primary_key=True),
        sa.Column(
            "organisation_id", sa.Integer, sa.ForeignKey("organisations.id"), primary_key=True
        ),
        sa.Column("granted", sa.DateTime(timezone=True), nullable=False),
        sa.Column("granted_by", sa.String(200), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("location_grants")
