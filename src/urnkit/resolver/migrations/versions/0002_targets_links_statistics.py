"""Resolution targets on the record row, link status by URL, resolution counts.

- ``records.targets``: the URLs resolution may redirect to, best first, one per line (locations
  by priority, those whose link is known broken left out); NULL when there are none. Resolution
  then reads one row of one table.
- ``links``: the last known state of each location URL (link checking), one row per URL, keyed
  by the URL's SHA-256 (PostgreSQL's btree keys cannot hold URLs of 4,000 characters);
  ``link_checks``: every check, append-only.
- ``locations.url`` indexed, for reverse lookup by URL and for link status changes.
- ``resolution_counts``: resolutions per prefix per day (the statistics page).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)
_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.add_column("records", sa.Column("targets", sa.Text))
    op.create_index("ix_locations_url", "locations", ["url"], postgresql_using="hash", unique=False)
    op.create_table(
        "links",
        sa.Column("url_hash", sa.String(64), primary_key=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("http_status", sa.Integer),
        sa.Column("detail", sa.Text),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("since", _TIME, nullable=False),
        sa.Column("checked", _TIME, nullable=False),
    )
    op.create_table(
        "link_checks",
        sa.Column("id", _ID, primary_key=True),
        sa.Column(
            "url_hash", sa.String(64), sa.ForeignKey("links.url_hash"), nullable=False, index=True
        ),
        sa.Column("at", _TIME, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("http_status", sa.Integer),
        sa.Column("detail", sa.Text),
    )
    op.create_table(
        "resolution_counts",
        sa.Column("prefix", sa.String(200), primary_key=True),
        sa.Column("day", sa.Date, primary_key=True),
        sa.Column("count", sa.BigInteger, nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "UPDATE records SET targets = (SELECT string_agg(url, E'\\n' ORDER BY priority, id) "
            "FROM locations WHERE record_id = records.id)"
        )
    else:
        op.execute(
            "UPDATE records SET targets = (SELECT group_concat(url, char(10)) FROM "
            "(SELECT url FROM locations WHERE record_id = records.id ORDER BY priority, id))"
        )


def downgrade() -> None:
    op.drop_table("resolution_counts")
    op.drop_table("link_checks")
    op.drop_table("links")
    op.drop_index("ix_locations_url", "locations")
    op.drop_column("records", "targets")
