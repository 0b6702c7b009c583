"""The title search's index (``tx.titles``): whether it agrees with the records' titles, and
building it again from them. On SQLite it is FTS5's table ``record_titles``, kept by triggers
that hand it each old title (migration title_index_from_records); on PostgreSQL the GIN indexes
``ix_records_title`` and ``ix_records_title_words``, which PostgreSQL keeps itself."""

from __future__ import annotations

import sqlalchemy as sa

from urnkit.resolver.store.queries.base import Queries

_POSTGRESQL_INDEXES = ("ix_records_title", "ix_records_title_words")


class TitleIndex(Queries):
    """The title index's upkeep: :meth:`agrees`, :meth:`rebuild`."""

    __slots__ = ()

    def agrees(self) -> bool:
        """Whether the index holds every record's title and nothing else: on SQLite FTS5's
        integrity check against the records (seconds at a million records); on PostgreSQL
        always, its indexes being the database's own."""
        if self.dialect != "sqlite":
            return True
        try:
            self.connection.exec_driver_sql(
                "INSERT INTO record_titles (record_titles, rank) VALUES ('integrity-check', 1)"
            )
        except sa.exc.DatabaseError:  # FTS5 reports a disagreement as a malformed database
            return False
        return True

    def rebuild(self) -> None:
        """The index built again from the records' titles: FTS5's ``rebuild`` on SQLite,
        ``REINDEX`` on PostgreSQL (writes to records wait for either)."""
        if self.dialect == "sqlite":
            self.connection.exec_driver_sql(
                "INSERT INTO record_titles (record_titles) VALUES ('rebuild')"
            )
            return
        for index in _POSTGRESQL_INDEXES:
            self.connection.exec_driver_sql(f"REINDEX INDEX {index}")
