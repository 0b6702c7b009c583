"""Title search by an index: a case-insensitive part of ``metadata.title`` found without reading
every record (the search page and ``GET /api/v1/search?by=title``).

- PostgreSQL: a trigram index (``pg_trgm``, a trusted extension since PostgreSQL 13: the
  database's owner may create it) on ``metadata ->> 'title'``, which serves ``ILIKE '%…%'``.
- SQLite: ``record_titles``, an FTS5 table with the trigram tokenizer (SQLite 3.34 or later),
  its rowid the record's id, kept by triggers on ``records`` (records are never deleted), which
  serves ``LIKE '%…%'``. Filled from the records stored so far.

Revision ID: title_search
Revises: successions
Create Date: 2026-11-24
"""

from alembic import op

revision = "title_search"
down_revision = "successions"
branch_labels = None
depends_on = None

_TITLE = "json_extract({row}.metadata, '$.title')"
# What the search matched before the index: json_extract's value, whatever its type.
_IS_TEXT = "json_extract({row}.metadata, '$.title') IS NOT NULL"
SQLITE = [
    # columnsize=0: no per-row token counts, which only ranking (bm25) would read.
    "CREATE VIRTUAL TABLE record_titles USING fts5(title, tokenize = 'trigram', columnsize = 0)",
    "INSERT INTO record_titles (rowid, title) SELECT id, "
    + _TITLE.format(row="records")
    + " FROM records WHERE "
    + _IS_TEXT.format(row="records"),
    # Unless the writer indexed the title itself, as imports do (BulkImport._import_sqlite):
    # a row of FTS5 through this trigger cost 22 µs, inserted with the rest 3.
    "CREATE TRIGGER record_titles_insert AFTER INSERT ON records WHEN "
    + _IS_TEXT.format(row="new")
    + " AND NOT EXISTS (SELECT 1 FROM record_titles WHERE rowid = new.id)"
    + " BEGIN INSERT INTO record_titles (rowid, title) VALUES (new.id, "
    + _TITLE.format(row="new")
    + "); END",
    "CREATE TRIGGER record_titles_update AFTER UPDATE OF metadata ON records BEGIN"
    " DELETE FROM record_titles WHERE rowid = old.id;"
    " INSERT INTO record_titles (rowid, title) SELECT new.id, "
    + _TITLE.format(row="new")
    + " WHERE "
    + _IS_TEXT.format(row="new")
    + "; END",
]
POSTGRESQL = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX ix_records_title ON records USING gin ((metadata ->> 'title') gin_trgm_ops)",
]


def upgrade() -> None:
    for statement in POSTGRESQL if op.get_bind().dialect.name == "postgresql" else SQLITE:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX ix_records_title")
    else:
        op.execute("DROP TRIGGER record_titles_update")
        op.execute("DROP TRIGGER record_titles_insert")
        op.execute("DROP TABLE record_titles")
