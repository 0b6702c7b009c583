"""OAI-PMH: harvest sources, what each source's records registered, datestamps indexed.

- ``oai_sources``: the repositories harvested: name, base URL, the organisation whose delegated
  prefixes bound what the source may register, the regular expression a location URL must fully
  match, an optional setSpec, the repository's granularity (from Identify) and ``next_from``,
  the datestamp the next incremental harvest asks ``from=`` (stored only after a harvest
  succeeded).
- ``oai_items``: which records each source's OAI items gave (a deleted item's header names only
  its OAI identifier: this finds the URNs it held).
- ``records (updated, id)`` indexed: OAI-PMH datestamps are ``records.updated``; the lists are
  read in that order.

Revision ID: oai
Revises: forwarding
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "oai"
down_revision = "forwarding"
branch_labels = None
depends_on = None

_TIME = sa.DateTime(timezone=True)
_ID = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_index("ix_records_updated", "records", ["updated", "id"])
    op.create_table(
        "oai_sources",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("base_url", sa.Text, nullable=False),
        sa.Column("organisation_id", sa.Integer, sa.ForeignKey("organisations.id"), nullable=False),
        sa.Column("url_pattern", sa.Text, nullable=False),
        sa.Column("set_spec", sa.String(200)),
        sa.Column("granularity", sa.String(30)),
        sa.Column("next_from", sa.String(30)),
        sa.Column("harvested", _TIME),
        sa.Column("created", _TIME, nullable=False),
    )
    op.create_table(
        "oai_items",
        sa.Column("source_id", sa.Integer, sa.ForeignKey("oai_sources.id"), primary_key=True),
        sa.Column("identifier", sa.String(1000), primary_key=True),
        sa.Column("record_id", _ID, sa.ForeignKey("records.id"), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("oai_items")
    op.drop_table("oai_sources")
    op.drop_index("ix_records_updated", "records")
