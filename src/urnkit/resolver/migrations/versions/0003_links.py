"""Link checking: an index on ``links.checked``, from which checkers take the URLs due, oldest
check first (``Links.claim``).

Revision ID: links
Revises: 0002
Create Date: 2026-11-23
"""

from alembic import op

revision = "links"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_links_checked", "links", ["checked"])


def downgrade() -> None:
    op.drop_index("ix_links_checked", "links")
