"""The title search's indexes (``tx.titles``): whether they agree with the records' titles, and
building them again from them. On SQLite they are FTS5's tables ``record_titles`` (trigrams)
and ``record_title_words`` (words), kept by triggers that hand them each old title (migrations
title_index_from_records, title_word_index); on PostgreSQL the GIN indexes
``ix_records_title`` and ``ix_records_title_words``, which PostgreSQL keeps itself."""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa

from urnkit.resolver.store.queries.base import Queries

SQLITE_TITLE_TABLES: Final = ("record_titles", "record_title_words")
_POSTGRESQL_INDEXES = ("ix_records_title", "ix_records_title_words")


class TitleIndex(Queries):
    """The title indexes' upkeep: :meth:`agrees`, :meth:`rebuild`."""

    __slots__ = ()

    def agrees(self) -> bool:
        """Whether the indexes hold every record's title and nothing else: on SQLite FTS5's
        integrity check of each table against the records (seconds at a million records); on
        PostgreSQL always, its indexes being the database's own."""
        if self.dialect != "sqlite":
            return True
        try:
            for table in SQLITE_TITLE_TABLES:
                self.connection.exec_driver_sql(
                    f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)"
                )
        except sa.exc.DatabaseError:  # FTS5 reports a disagreement as a malformed database
            return False
        return True

    def rebuild(self) -> None:
        """The indexes built again from the records' titles: FTS5's ``rebuild`` of each table
        on SQLite, ``REINDEX`` on PostgreSQL (writes to records wait for either)."""
        if self.dialect == "sqlite":
            for table in SQLITE_TITLE_TABLES:
                self.connection.exec_driver_sql(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
            return
        for index in _POSTGRESQL_INDEXES:
            self.connection.exec_driver_sql(f"REINDEX INDEX {index}")
