"""SQLite's title index without a copy of the titles or their positions: ``record_titles``
becomes an FTS5 external-content table (``content``) reading each title from ``records``
through the view ``record_title_source``, and keeps only which records hold each trigram
(``detail = none``). FTS5 then checks a ``LIKE`` against the title it reads from the record.
At 1,000,000 URNs the index took 97 bytes a URN (a copy of each title, 32; trigrams with their
positions, 65) and now takes about 22 (``docs/storage.md``); a rare title is found as fast.

FTS5 reads nothing of ``records`` when it removes a title: it must be handed the title it
indexed. The update trigger therefore removes the old title with FTS5's ``delete`` command and
``old.metadata``; a plain ``DELETE`` would read the new title through the view and leave the
old one's trigrams behind. ``INSERT INTO record_titles (record_titles, rank) VALUES
('integrity-check', 1)`` compares the index with the records (the tests run it).

The insert trigger no longer asks whether the writer indexed the title itself: with external
content that question would read the record, always there. An import indexes text titles
itself only with the trigger dropped (``store.bulk_import``). PostgreSQL is unchanged.

Revision ID: title_index_from_records
Revises: history_guards_per_statement
Create Date: 2026-11-27
"""

from importlib import import_module

from alembic import op

revision = "title_index_from_records"
down_revision = "history_guards_per_statement"
branch_labels = None
depends_on = None

# Revision title_search (its module's name starts with a digit, hence import_module).
_BEFORE = import_module("urnkit.resolver.migrations.versions.0007_title_search")
# The title and what the search has matched since the index came (json_extract's value,
# whatever its type), as revision title_search has them.
_TITLE, _IS_TEXT = _BEFORE._TITLE, _BEFORE._IS_TEXT
_OLD, _NEW = _TITLE.format(row="old"), _TITLE.format(row="new")
# The index filled from the records stored so far, as revision title_search filled it.
(_FILL,) = [statement for statement in _BEFORE.SQLITE if statement.startswith("INSERT INTO")]

UPGRADE = [
    "DROP TRIGGER record_titles_update",
    "DROP TRIGGER record_titles_insert",
    "DROP TABLE record_titles",
    "CREATE VIEW record_title_source AS SELECT id, "
    + _TITLE.format(row="records")
    + " AS title FROM records",
    # columnsize=0: no per-row token counts, which only ranking (bm25) would read.
    "CREATE VIRTUAL TABLE record_titles USING fts5(title, tokenize = 'trigram', columnsize = 0,"
    " detail = none, content = 'record_title_source', content_rowid = 'id')",
    _FILL,
    "CREATE TRIGGER record_titles_insert AFTER INSERT ON records WHEN "
    + _IS_TEXT.format(row="new")
    + f" BEGIN INSERT INTO record_titles (rowid, title) VALUES (new.id, {_NEW}); END",
    "CREATE TRIGGER record_titles_update AFTER UPDATE OF metadata ON records BEGIN"
    f" INSERT INTO record_titles (record_titles, rowid, title) SELECT 'delete', old.id, {_OLD}"
    f" WHERE {_OLD} IS NOT NULL;"
    f" INSERT INTO record_titles (rowid, title) SELECT new.id, {_NEW} WHERE {_NEW} IS NOT NULL;"
    " END",
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in UPGRADE:
            op.execute(statement)


def downgrade() -> None:
    """Back to revision title_search's table, which keeps its own copy of each title."""
    if op.get_bind().dialect.name != "sqlite":
        return
    for statement in [
        "DROP TRIGGER record_titles_update",
        "DROP TRIGGER record_titles_insert",
        "DROP TABLE record_titles",
        "DROP VIEW record_title_source",
    ]:
        op.execute(statement)
    for statement in _BEFORE.SQLITE:
        op.execute(statement)
