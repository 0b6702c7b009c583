"""Title search by words on PostgreSQL: a GIN index of each title's words (text search,
configuration ``simple``: every word, lower-cased, none left out), which finds the few titles
holding a search's whole words before ``ILIKE`` reads them (``Records.page``). The trigram index
(migration title_search) stays for searches without a whole word; SQLite's FTS5 index serves
both. Built in one pass over the records: minutes at ten million.

Revision ID: title_words
Revises: current_history
Create Date: 2026-11-25
"""

from alembic import op

revision = "title_words"
down_revision = "current_history"
branch_labels = None
depends_on = None

INDEX = (
    "CREATE INDEX ix_records_title_words ON records"
    " USING gin (to_tsvector('simple', metadata ->> 'title'))"
)


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(INDEX)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX ix_records_title_words")
