"""Bulk writes (``tx.bulk``): imports and batches of records. PostgreSQL imports by COPY into a
staging table, prepared outside the transaction (:func:`stage_import`)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.domain.identifiers import carries_identifiers
from urnkit.resolver.store.queries.base import Queries, inserted_in_pages, now, one_of
from urnkit.resolver.store.queries.identifiers import Identifiers
from urnkit.resolver.store.queries.links import (
    broken_by_hashes,
    broken_urls,
    resolution_targets,
    restricted_targets,
    url_hash,
)
from urnkit.resolver.store.queries.records import Records, records_where
from urnkit.resolver.store.queries.titles import SQLITE_TITLE_TABLES
from urnkit.resolver.store.tables import locations, records, unix_microseconds

# PostgreSQL imports (BulkImport.import_staged): each record's document (the record whole, as
# the API shows it) is COPied into a session's temporary table with its key, then one statement
# inserts the free ones into records and locations (in order) and notes their ids, and the next
# gives each an entry without a document in history (the record as it is; migration
# current_history). Two statements: the check that a location's record has no such entry yet
# runs when the locations' statement ends (migration history_guards_per_statement).
_IMPORT_COLUMNS = (
    "seq",
    "equivalence_key",
    "prefix",
    "owner_id",
    "actor",
    "created",
    "updated",
    "targets",
    "document",
)
_IMPORT_STAGE = (
    "CREATE TEMPORARY TABLE IF NOT EXISTS urnkit_import (seq integer, equivalence_key text,"
    " prefix text, owner_id integer, actor text, created timestamptz, updated timestamptz,"
    " targets text, document jsonb);"
    " CREATE TEMPORARY TABLE IF NOT EXISTS urnkit_imported (id bigint, seq integer, actor text)"
)
_IMPORT = sa.text("""
WITH inserted AS (
    INSERT INTO records (equivalence_key, urn, prefix, status, metadata, successors, note,
                         owner_id, created, updated, targets)
    SELECT equivalence_key, document ->> 'urn', prefix, document ->> 'status',
           document -> 'metadata', document -> 'successors', document ->> 'note', owner_id,
           created, updated, targets
    FROM urnkit_import ORDER BY seq
    ON CONFLICT (equivalence_key) DO NOTHING
    RETURNING id, equivalence_key
), staged AS (
    SELECT i.id, s.seq, s.owner_id, s.actor, s.document
    FROM inserted i JOIN urnkit_import s USING (equivalence_key)
), placed AS (
    INSERT INTO locations (record_id, url, priority, label, media_type, owner_id)
    SELECT staged.id, e.loc ->> 'url', (e.loc ->> 'priority')::integer, e.loc ->> 'label',
           e.loc ->> 'media_type', staged.owner_id
    FROM staged
    CROSS JOIN LATERAL jsonb_array_elements(staged.document -> 'locations')
        WITH ORDINALITY AS e(loc, n)
    ORDER BY staged.seq, e.n
)
INSERT INTO urnkit_imported (id, seq, actor) SELECT id, seq, actor FROM staged
""")
_IMPORT_HISTORY = sa.text(
    "INSERT INTO history (record_id, at, action, actor)"
    " SELECT id, :at, 'imported', actor FROM urnkit_imported ORDER BY seq"
)


def _copy_text(text: str) -> str:
    r"""``text`` as a column of COPY's text format: backslash, tab, newline and CR escaped.

    >>> print(_copy_text("a\\b\tc\nd\re"))
    a\\b\tc\nd\re
    """
    # str.replace, not str.translate: 20 times faster on a document of 400 characters.
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


_COPY_NULL = "\\N"


# Run when links of a staged batch are known broken: targets as resolution_targets gives them,
# the staged ones (which assumed no link broken) without the lines of broken URLs (a line: the
# URL, then a tab and its media type if it has one).
_IMPORT_UNBROKEN = sa.text("""
UPDATE urnkit_import SET targets = (
    SELECT string_agg(t.line, E'\\n' ORDER BY t.n)
    FROM unnest(string_to_array(targets, E'\\n')) WITH ORDINALITY AS t(line, n)
    WHERE split_part(t.line, E'\\t', 1) <> ALL (string_to_array(:broken, E'\\n'))
)
WHERE EXISTS (
    SELECT FROM unnest(string_to_array(targets, E'\\n')) AS t(line)
    WHERE split_part(t.line, E'\\t', 1) = ANY (string_to_array(:broken, E'\\n'))
)""")


_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"))  # jsonb keeps no whitespace anyway

# SQLite imports (BulkImport._import_sqlite): the driver's statements.
_SQLITE_RECORDS = (
    "INSERT INTO records (id, equivalence_key, urn, prefix, status, metadata, successors, note,"
    " owner_id, created, updated, targets) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_SQLITE_LOCATIONS = (
    "INSERT INTO locations (record_id, url, priority, label, media_type, owner_id)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
# A text title, indexed for the title search in each of its tables (migrations title_search,
# title_word_index). Records whose titles are indexed so, or that have none, are inserted while
# its trigger is dropped (_trigger_suspended): a trigger run per row, though it did nothing, cost
# a third of SQLite's work (storage_bench.py). Other titles are left to the trigger, which
# extracts them as json_extract gives them.
_SQLITE_TITLES = [
    f"INSERT INTO {table} (rowid, title) VALUES (?, ?)" for table in SQLITE_TITLE_TABLES
]
_TITLE_TRIGGER = "record_titles_insert"
# An "imported" entry for each record from the batch's first id on (the transaction holds the
# write lock: they are the batch's), acted by its owner: one statement, no row built in Python.
_SQLITE_HISTORY = (
    "INSERT INTO history (record_id, at, action, actor)"
    " SELECT r.id, ?, 'imported', o.name FROM records r JOIN organisations o ON o.id = r.owner_id"
    " WHERE r.id >= ? ORDER BY r.id"
)


@contextmanager
def _trigger_suspended(cursor: Any, name: str) -> Iterator[None]:
    """SQLite's trigger ``name`` dropped while the block runs, then created again as it was, in
    the block's transaction: no other connection sees it missing (the transaction holds the
    write lock, readers see the last commit), and a rollback restores it."""
    (created,) = cursor.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)
    ).fetchone()
    cursor.execute(f"DROP TRIGGER {name}")
    try:
        yield
    finally:
        if cursor.connection.in_transaction:  # else rolled back already, the trigger with it
            cursor.execute(created)


@dataclass(frozen=True, slots=True)
class StagedImport:
    """A batch as PostgreSQL imports it (:meth:`BulkImport.import_staged`), prepared outside
    the transaction: COPY text lines whose targets assume no link broken, and the SHA-256 of
    every location URL (space-separated) to look the broken ones up."""

    lines: str
    url_hashes: str


def stage_import(
    batch: Sequence[Record], owner_ids: Mapping[str, int], documents: Sequence[dict[str, Any]]
) -> StagedImport:
    """``batch`` staged for :meth:`BulkImport.import_staged` on PostgreSQL, each record owned
    by the organisation its ``owner`` names in ``owner_ids``, with its document (the record as
    the API shows it)."""
    # COPY's text format, written whole: psycopg's write_row cost more than the rest of the
    # row's preparation.
    lines = []
    hashes: set[str] = set()
    for seq, (r, doc) in enumerate(zip(batch, documents, strict=True)):
        hashes.update(url_hash(loc.url) for loc in r.locations)
        targets = resolution_targets(r.locations, ())
        created = r.created.isoformat()
        updated = created if r.updated == r.created else r.updated.isoformat()
        lines.append(
            f"{seq}\t{_copy_text(r.key)}\t{_copy_text(r.prefix)}\t{owner_ids[r.owner]}\t"
            f"{_copy_text(r.owner)}\t{created}\t{updated}\t"
            f"{_COPY_NULL if targets is None else _copy_text(targets)}\t"
            f"{_copy_text(_COMPACT_JSON.encode(doc))}\n"
        )
    return StagedImport("".join(lines), " ".join(hashes))


@dataclass(frozen=True, slots=True)
class SqliteStagedImport:
    """A batch as SQLite imports it (:meth:`BulkImport.import_staged`), prepared outside the
    transaction: the driver's rows of ``records`` whose titles the import indexes (with
    ``titles``) and of those whose titles the trigger does (``left``: a title neither text nor
    absent), of ``locations``, and the SHA-256 of every location URL (space-separated). Each
    row's record id is the one its record was staged with; targets assume no link broken."""

    records: list[tuple[Any, ...]]
    left: list[tuple[Any, ...]]
    titles: list[tuple[int, str]]
    locations: list[tuple[Any, ...]]
    url_hashes: str


def stage_sqlite_import(
    batch: Sequence[tuple[int, Record]], owner_ids: Mapping[str, int]
) -> SqliteStagedImport:
    """``batch``, each record with the id to store it under (ascending), staged for
    :meth:`BulkImport.import_staged`; each record owned by the organisation its ``owner`` names
    in ``owner_ids``. Ids already taken when it is stored are moved past the highest.

    >>> from datetime import UTC, datetime
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> r = Record("urn:nbn:fi-1", "urn:nbn:fi-1", "fi", "active", "Org", t, t,
    ...            metadata={"title": "On URNs"})
    >>> staged = stage_sqlite_import([(7, r)], {"Org": 3})
    >>> staged.records[0][:3], staged.titles
    ((7, 'urn:nbn:fi-1', 'urn:nbn:fi-1'), [(7, 'On URNs')])
    """
    encode = _COMPACT_JSON.encode
    rows: list[tuple[Any, ...]] = []
    left: list[tuple[Any, ...]] = []
    placed, titled, hashes = [], [], []
    moment, created = None, 0
    for record_id, r in batch:
        owner_id = owner_ids[r.owner]
        if r.created != moment:  # one a batch, as imports give them
            moment, created = r.created, unix_microseconds(r.created)
        title = r.metadata.get("title")
        if isinstance(title, str):
            titled.append((record_id, title))
        (rows if title is None or isinstance(title, str) else left).append(
            (
                *(record_id, r.key, r.urn, r.prefix, r.status, encode(dict(r.metadata))),
                *(encode(list(r.successors)) if r.successors else "[]", r.note, owner_id),
                created,
                created if r.updated == r.created else unix_microseconds(r.updated),
                resolution_targets(r.locations, ()),
            )
        )
        for loc in r.locations:
            placed.append((record_id, loc.url, loc.priority, loc.label, loc.media_type, owner_id))
            hashes.append(url_hash(loc.url))
    return SqliteStagedImport(rows, left, titled, placed, " ".join(hashes))


def _restaged(
    staged: SqliteStagedImport, present: set[str], broken: set[str], highest: int
) -> SqliteStagedImport:
    """``staged`` without the records whose keys are ``present``, its ids moved past
    ``highest`` (the highest stored) if any is not, its targets without ``broken`` URLs."""
    dropped = {row[0] for row in itertools.chain(staged.records, staged.left) if row[1] in present}
    kept = [row[0] for row in itertools.chain(staged.records, staged.left) if row[0] not in dropped]
    shift = max(0, highest + 1 - min(kept, default=highest + 1))
    placed: dict[int, list[Location]] = {}
    for row in staged.locations if broken else ():  # targets rebuilt only when links broke
        placed.setdefault(row[0], []).append(Location(*row[1:5]))

    def moved(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        return [
            (
                row[0] + shift,
                *row[1:-1],
                resolution_targets(placed.get(row[0], []), broken) if broken else row[-1],
            )
            for row in rows
            if row[0] not in dropped
        ]

    return SqliteStagedImport(
        moved(staged.records),
        moved(staged.left),
        [(i + shift, title) for i, title in staged.titles if i not in dropped],
        [(row[0] + shift, *row[1:]) for row in staged.locations if row[0] not in dropped],
        staged.url_hashes,
    )


class BulkImport(Queries):
    """Bulk writes: many records in a few statements."""

    __slots__ = ()

    def present_keys(self, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` are registered."""
        found: set[str] = set()
        for condition in one_of(records.c.equivalence_key, keys, self.dialect):
            query = sa.select(records.c.equivalence_key).where(condition)
            found.update(self.connection.scalars(query))
        return found

    def registered(self, keys: Sequence[str]) -> dict[str, Record]:
        """The records of those of ``keys`` that are registered, by key: a few statements
        for any number of keys."""
        found: dict[str, Record] = {}
        for condition in one_of(records.c.equivalence_key, keys, self.dialect):
            found.update((r.key, r) for _, r in records_where(self.connection, condition))
        return found

    def insert_records(
        self, batch: Sequence[Record], owner_ids: Mapping[str, int]
    ) -> dict[str, int]:
        """Insert the records whose keys are free, each owned by the organisation its ``owner``
        names in ``owner_ids``, with their locations and other identifiers; their ids by key.

        The records whose keys are taken are locked instead (on PostgreSQL; SQLite has one
        writer), in the same pass: each key is claimed in the order of ``batch``, inserted or
        locked, and a key another transaction is inserting is waited for. Two batches giving
        their records in one order (by key) thus never hold rows the other waits for."""
        if not batch:
            return {}
        insert = self._insert(records)
        statement = (
            # A conflict locks the row it meets (FOR UPDATE), and updates nothing: WHERE false.
            insert.on_conflict_do_update(
                index_elements=[records.c.equivalence_key],
                set_={"equivalence_key": insert.excluded.equivalence_key},
                where=sa.false(),
            )
            .returning(records.c.id, records.c.equivalence_key)
            # INSERT … VALUES of 100 rows, not SQLAlchemy's 1,000: PostgreSQL plans the smaller
            # statements faster per row (benchmarks/resolve_bench.py); SQLite does not mind.
            .execution_options(insertmanyvalues_page_size=100)
        )
        broken = broken_urls(self.connection, (loc.url for r in batch for loc in r.locations))
        rows = self.connection.execute(
            statement,
            [
                {
                    "equivalence_key": r.key,
                    "urn": r.urn,
                    "prefix": r.prefix,
                    "status": r.status,
                    "metadata": dict(r.metadata),
                    "successors": list(r.successors),
                    "note": r.note,
                    "owner_id": owner_ids[r.owner],
                    "created": r.created,
                    "updated": r.updated,
                    "targets": resolution_targets(r.locations, broken),
                    "restricted": restricted_targets(
                        [(loc, owner_ids[r.owner]) for loc in r.locations], broken
                    ),
                }
                for r in batch
            ],
        ).all()
        ids = {key: record_id for record_id, key in rows}
        location_rows = [
            {
                "record_id": ids[r.key],
                "url": loc.url,
                "priority": loc.priority,
                "label": loc.label,
                "media_type": loc.media_type,
                "restricted_to": loc.restricted_to,
                "owner_id": owner_ids[r.owner],
            }
            for r in batch
            if r.key in ids
            for loc in r.locations
        ]
        if location_rows:
            self.connection.execute(inserted_in_pages(locations), location_rows)
        identified = [
            (ids[r.key], owner_ids[r.owner], r.metadata)
            for r in batch
            if r.key in ids and carries_identifiers(r.metadata)
        ]
        if identified:
            Identifiers(self.connection, self.dialect).replace(identified, fresh=True)
        return ids

    def _import_sqlite(self, staged: SqliteStagedImport) -> int:
        """:meth:`import_staged` on SQLite: the staged rows inserted by the driver's
        ``executemany``, but those whose keys are registered. SQLAlchemy's statement and type
        processing cost more a row than the database's work; building the rows here
        rather than in the child preparing the batches took a quarter of this process's CPU
        (benchmarks/storage_bench.py)."""
        highest = Records(self.connection, self.dialect).highest_id()
        both = itertools.chain(staged.records, staged.left)
        present = self.present_keys([row[1] for row in both])
        broken = broken_by_hashes(self.connection, staged.url_hashes)
        firsts = [rows[0][0] for rows in (staged.records, staged.left) if rows]
        if present or broken or min(firsts, default=highest + 1) <= highest:
            staged = _restaged(staged, present, broken, highest)
            firsts = [rows[0][0] for rows in (staged.records, staged.left) if rows]
        if not firsts:
            return 0
        cursor = self.connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        for statement in _SQLITE_TITLES:
            cursor.executemany(statement, staged.titles)
        with _trigger_suspended(cursor, _TITLE_TRIGGER):
            cursor.executemany(_SQLITE_RECORDS, staged.records)
        cursor.executemany(_SQLITE_RECORDS, staged.left)
        cursor.executemany(_SQLITE_LOCATIONS, staged.locations)
        cursor.execute(_SQLITE_HISTORY, (unix_microseconds(now()), min(firsts)))
        cursor.close()
        return len(staged.records) + len(staged.left)

    def import_staged(self, staged: StagedImport | SqliteStagedImport) -> int:
        """Insert the records of a staged batch whose keys are free (:func:`stage_import` on
        PostgreSQL, :func:`stage_sqlite_import` on SQLite), with their locations and an
        "imported" history entry each, acted by the owner; how many were inserted. Their
        other identifiers are the caller's (``tx.identifiers.refresh``)."""
        if isinstance(staged, SqliteStagedImport):
            return self._import_sqlite(staged)
        self.connection.exec_driver_sql(_IMPORT_STAGE)
        # Compiling the statement (JIT) took twice as long as running it on 5,000 rows.
        self.connection.exec_driver_sql("SET LOCAL jit = off")
        broken = broken_by_hashes(self.connection, staged.url_hashes)
        cursor = self.connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        with cursor.copy(f"COPY urnkit_import ({', '.join(_IMPORT_COLUMNS)}) FROM STDIN") as copy:
            copy.write(staged.lines)
        if broken:  # rare: the staged targets assumed no link broken
            self.connection.execute(_IMPORT_UNBROKEN, {"broken": "\n".join(broken)})
        inserted: int = self.connection.execute(_IMPORT).rowcount
        self.connection.execute(_IMPORT_HISTORY, {"at": now()})
        self.connection.exec_driver_sql("TRUNCATE urnkit_import, urnkit_imported")
        return inserted
