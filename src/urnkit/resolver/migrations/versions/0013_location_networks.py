"""Access by network: each organisation's named networks (address ranges, one a line), a
location restricted to one of its holder's networks (``locations.restricted_to``), and what
resolution reads of the records having such locations (``records.restricted``: every usable
URL, best first, each with the network it is restricted to; NULL on every other record, so
that their resolution reads nothing more). ``records.targets`` keeps the unrestricted URLs.

Revision ID: location_networks
Revises: record_identifiers
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "location_networks"
down_revision = "record_identifiers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "networks",
        sa.Column(
            "organisation_id",
            sa.Integer,
            sa.ForeignKey("organisations.id"),
            primary_key=True,
        ),
        sa.Column("name", sa.String(63), primary_key=True),
        sa.Column("ranges", sa.Text, nullable=False),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
    )
    op.add_column("locations", sa.Column("restricted_to", sa.String(63)))
    op.add_column("records", sa.Column("restricted", sa.Text))


def downgrade() -> None:
    op.drop_column("records", "restricted")
    op.drop_column("locations", "restricted_to")
    op.drop_table("networks")
