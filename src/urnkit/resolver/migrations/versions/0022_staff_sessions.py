"""Staff sessions kept in the database, so that signing out, a password change and an admin
end them on every server: ``staff_sessions`` holds each live session's id (its SHA-256 hash:
the cookie carries the id, signed), its account and when it expires. The accounts' credential
``epoch``, which did that job for password changes and disabling only, goes.

Failed sign-ins are counted per account and client address together (``sign_in_failures``,
made anew: its subjects were accounts or addresses alone), each pair with the time of its last
failure and the time before which it may not try again (a back-off that grows with each
failure).

Revision ID: staff_sessions
Revises: harvest_resumption
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "staff_sessions"
down_revision = "harvest_resumption"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("accounts") as table:
        table.drop_column("epoch")
    op.create_table(
        "staff_sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column(
            "account_id", sa.Integer, sa.ForeignKey("accounts.id"), nullable=False, index=True
        ),
        sa.Column("created", _TIME, nullable=False),
        sa.Column("expires", _TIME, nullable=False),
    )
    op.drop_table("sign_in_failures")
    op.create_table(
        "sign_in_failures",
        sa.Column("subject", sa.String(600), primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("last_failure", _TIME, nullable=False),
        sa.Column("not_before", _TIME, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("sign_in_failures")
    op.create_table(
        "sign_in_failures",
        sa.Column("subject", sa.String(300), primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("first_failure", _TIME, nullable=False),
        sa.Column("locked_until", _TIME),
    )
    op.drop_table("staff_sessions")
    with op.batch_alter_table("accounts") as table:
        table.add_column(sa.Column("epoch", sa.Integer, nullable=False, server_default="1"))
