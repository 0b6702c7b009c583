"""Harvest resumption: a harvest stopped at its deadline keeps where it stopped, the
resumption token of the request it did not finish and the ``responseDate`` its list began
with (the next ``from=`` once the list is read to its end), so that the next run goes on from
there instead of asking the whole list again.

Revision ID: harvest_resumption
Revises: references_per_statement
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "harvest_resumption"
down_revision = "references_per_statement"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("oai_sources") as batch:
        batch.add_column(sa.Column("resumption_token", sa.Text))
        batch.add_column(sa.Column("resumption_from", sa.String(30)))


def downgrade() -> None:
    with op.batch_alter_table("oai_sources") as batch:
        batch.drop_column("resumption_from")
        batch.drop_column("resumption_token")
