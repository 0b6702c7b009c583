"""SQLite's title search by words: ``record_title_words``, an FTS5 table beside the trigram table
``record_titles`` keeping which records hold each word of their title (tokenizer ``unicode61``),
its content the same view ``record_title_source``, without positions (``detail = none``) or
token counts (``columnsize = 0``). A search holding whole words (``records.held_words``) asks
it for the few records holding them before ``LIKE`` reads their titles: the trigram table
intersects the posting list of every trigram of the part, and "Ben", "enc", … of ``Benchmark
record 6666667`` are in each of ten million titles (docs/benchmarks.md). PostgreSQL has had
its word index since migration title_words.

A word the search asks for (ASCII letters and digits, a space either side; the last one after a
space, as a prefix) is a word of the title to the tokenizer: ``unicode61`` splits at every
space and takes ASCII letters and digits into its words, lower-cased, whatever it does with
the title's other characters; ``remove_diacritics 0`` leaves those as they are.

The triggers of migration title_index_from_records now keep both tables: an insert indexes the
title in both, an update hands both the old title with FTS5's ``delete`` command (FTS5 reads
nothing to remove a title). The table is filled from the records stored so far. An import by a
release before this one indexes titles in ``record_titles`` only (``store.bulk_import``):
``urnkit db check --rebuild-title-index`` builds both again. PostgreSQL is unchanged.

Revision ID: title_word_index
Revises: resolution_changes
Create Date: 2026-12-06
"""

from importlib import import_module

from alembic import op

revision = "title_word_index"
down_revision = "resolution_changes"
branch_labels = None
depends_on = None

# Revision title_index_from_records (its module's name starts with a digit, hence
# import_module): its title expressions and triggers, which this revision replaces.
_BEFORE = import_module("urnkit.resolver.migrations.versions.0018_title_index_from_records")
_OLD, _NEW, _IS_TEXT = _BEFORE._OLD, _BEFORE._NEW, _BEFORE._IS_TEXT
_TRIGGERS = [statement for statement in _BEFORE.UPGRADE if statement.startswith("CREATE TRIGGER")]
_TABLES = ("record_titles", "record_title_words")


def _each(statement: str) -> str:
    """``statement`` once for each title table, ``{table}`` its name."""
    return " ".join(statement.format(table=table) for table in _TABLES)


UPGRADE = [
    "DROP TRIGGER record_titles_update",
    "DROP TRIGGER record_titles_insert",
    # columnsize=0: no per-row token counts, which only ranking (bm25) would read.
    "CREATE VIRTUAL TABLE record_title_words USING fts5(title,"
    " tokenize = 'unicode61 remove_diacritics 0', columnsize = 0, detail = none,"
    " content = 'record_title_source', content_rowid = 'id')",
    "INSERT INTO record_title_words (record_title_words) VALUES ('rebuild')",
    "CREATE TRIGGER record_titles_insert AFTER INSERT ON records WHEN "
    + _IS_TEXT.format(row="new")
    + " BEGIN "
    + _each(f"INSERT INTO {{table}} (rowid, title) VALUES (new.id, {_NEW});")
    + " END",
    "CREATE TRIGGER record_titles_update AFTER UPDATE OF metadata ON records BEGIN "
    + _each(
        f"INSERT INTO {{table}} ({{table}}, rowid, title) SELECT 'delete', old.id, {_OLD}"
        f" WHERE {_OLD} IS NOT NULL;"
    )
    + " "
    + _each(f"INSERT INTO {{table}} (rowid, title) SELECT new.id, {_NEW} WHERE {_NEW} IS NOT NULL;")
    + " END",
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in UPGRADE:
            op.execute(statement)


def downgrade() -> None:
    """Back to revision title_index_from_records: the trigram table alone, kept as it was."""
    if op.get_bind().dialect.name != "sqlite":
        return
    for statement in [
        "DROP TRIGGER record_titles_update",
        "DROP TRIGGER record_titles_insert",
        "DROP TABLE record_title_words",
        *_TRIGGERS,
    ]:
        op.execute(statement)
