"""Harvest runs: each harvest of a source, whether ``urnkit oai harvest`` or the staff pages
started it, with when it started and ended, its outcome (``ok`` or ``failed``), its summary
(or the failure) and each refusal, so that the staff pages show the last run's refusals. The
newest runs of each source are kept (``HARVEST_RUNS_KEPT`` in the store's queries).

Revision ID: harvest_runs
Revises: staff_accounts
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "harvest_runs"
down_revision = "staff_accounts"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)
_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "harvest_runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "source_id", sa.Integer, sa.ForeignKey("oai_sources.id"), nullable=False, index=True
        ),
        sa.Column("started", _TIME, nullable=False),
        sa.Column("finished", _TIME, nullable=False),
        sa.Column("outcome", sa.String(10), nullable=False),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("refused", _JSON, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("harvest_runs")
