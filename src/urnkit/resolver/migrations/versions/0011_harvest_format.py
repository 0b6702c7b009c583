"""Harvest sources say which metadata format they harvest: ``oai_sources.metadata_prefix``,
``oai_dc`` (every source so far) or ``epicur`` (xepicur, the URN deliveries of German
repositories).

Revision ID: harvest_format
Revises: location_grants
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "harvest_format"
down_revision = "location_grants"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("oai_sources") as table:
        table.add_column(
            sa.Column("metadata_prefix", sa.String(30), nullable=False, server_default="oai_dc")
        )


def downgrade() -> None:
    with op.batch_alter_table("oai_sources") as table:
        table.drop_column("metadata_prefix")
