"""Staff accounts for the web interface under ``/staff/``: each belongs to an organisation and
has a role, a user name unique in any case (``name_key``, its case-folded form), an argon2 hash
of its password, and a credential ``epoch`` that a password change or a disabling advances, so
that every session signed with the old one stops at once. Failed sign-ins are counted here, per
account and per client address (``sign_in_failures``), so that the limit holds across every
server process; ``server_secrets`` keeps the session signing key the servers share when no
setting gives one.

Revision ID: staff_accounts
Revises: location_networks
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "staff_accounts"
down_revision = "target_media_types"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("organisation_id", sa.Integer, sa.ForeignKey("organisations.id"), nullable=False),
        sa.Column("name", sa.String(254), nullable=False),
        sa.Column("name_key", sa.String(254), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("disabled", sa.Boolean, nullable=False),
        sa.Column("must_change_password", sa.Boolean, nullable=False),
        sa.Column("epoch", sa.Integer, nullable=False),
        sa.Column("created", _TIME, nullable=False),
    )
    op.create_table(
        "sign_in_failures",
        sa.Column("subject", sa.String(300), primary_key=True),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("first_failure", _TIME, nullable=False),
        sa.Column("locked_until", _TIME),
    )
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(63), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False),
        sa.Column("created", _TIME, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("server_secrets")
    op.drop_table("sign_in_failures")
    op.drop_table("accounts")
