"""The records' queries (``tx.records``): a record with its locations, listings, writes, its
history, and the responses remembered for Idempotency-Keys."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from urnkit.resolver.domain import HistoryEntry, Location, Record
from urnkit.resolver.domain.identifiers import carries_identifiers, identifier_key
from urnkit.resolver.store.queries.base import Queries, inserted_in_pages, now, one_of, utc
from urnkit.resolver.store.queries.identifiers import Identifiers, identified_by
from urnkit.resolver.store.queries.links import (
    broken_urls,
    resolution_targets,
    restricted_targets,
)
from urnkit.resolver.store.tables import (
    history,
    idempotency_keys,
    location_grants,
    locations,
    organisations,
    records,
)

_RECORD_COLUMNS = (
    records.c.id,
    records.c.urn,
    records.c.equivalence_key,
    records.c.prefix,
    records.c.status,
    records.c.metadata,
    records.c.successors,
    records.c.note,
    records.c.created,
    records.c.updated,
    organisations.c.name.label("owner"),
)


# The columns a write of a record changes (Records.update_many).
_CHANGED = ("status", "metadata", "successors", "note", "updated", "targets", "restricted")

_HOLDERS = organisations.alias("holders")  # the organisations holding locations
_LOCATION_COLUMNS = (
    locations.c.record_id,
    locations.c.url,
    locations.c.priority,
    locations.c.label,
    locations.c.media_type,
    _HOLDERS.c.name.label("organisation"),
    locations.c.restricted_to,
)


def grants_of(connection: sa.Connection, record_ids: Sequence[int]) -> dict[int, list[str]]:
    """The organisations granted locations on each record (``location_grants``), by name."""
    found: dict[int, list[str]] = {record_id: [] for record_id in record_ids}
    for condition in one_of(location_grants.c.record_id, found, connection.dialect.name):
        for row in connection.execute(
            sa.select(location_grants.c.record_id, organisations.c.name)
            .join(organisations)
            .where(condition)
            .order_by(organisations.c.name)
        ):
            found[row.record_id].append(row.name)
    return found


def _record(row: Any, found: Sequence[Location] = (), grants: Sequence[str] = ()) -> Record:
    return Record(
        urn=row.urn,
        key=row.equivalence_key,
        prefix=row.prefix,
        status=row.status,
        owner=row.owner,
        created=utc(row.created),
        updated=utc(row.updated),
        locations=tuple(found),
        metadata=row.metadata,
        successors=tuple(row.successors),
        note=row.note,
        grants=tuple(grants),
    )


def _location(row: Any) -> Location:
    return Location(
        row.url, row.priority, row.label, row.media_type, row.organisation, row.restricted_to
    )


def listing_condition(
    prefix: str | None, start: datetime | None, end: datetime | None
) -> sa.ColumnElement[bool]:
    """The records under ``prefix`` (if given) updated in [``start``, ``end``) (either open)."""
    conditions: list[sa.ColumnElement[bool]] = [sa.true()]
    if prefix is not None:
        conditions.append(
            sa.or_(records.c.prefix == prefix, records.c.prefix.startswith(prefix + ":"))
        )
    if start is not None:
        conditions.append(records.c.updated >= start)
    if end is not None:
        conditions.append(records.c.updated < end)
    return sa.and_(*conditions)


def records_where(
    connection: sa.Connection,
    condition: sa.ColumnElement[bool],
    *order: Any,
    limit: int | None = None,
) -> list[tuple[int, Record]]:
    """The records meeting ``condition`` in ``order`` (up to ``limit``), with their locations,
    each with its row id."""
    query = sa.select(*_RECORD_COLUMNS).join(organisations).where(condition).order_by(*order)
    rows = connection.execute(query.limit(limit)).all()
    found: dict[int, list[Location]] = {row.id: [] for row in rows}
    for condition in one_of(locations.c.record_id, found, connection.dialect.name):
        for loc in connection.execute(
            sa.select(*_LOCATION_COLUMNS)
            .join(_HOLDERS, _HOLDERS.c.id == locations.c.owner_id)
            .where(condition)
            .order_by(locations.c.priority, locations.c.id)
        ):
            found[loc.record_id].append(_location(loc))
    grants = grants_of(connection, list(found))
    return [(row.id, _record(row, found[row.id], grants[row.id])) for row in rows]


def _like_escaped(text: str) -> str:
    r"""``text`` for a LIKE pattern escaped by backslash: ``\``, ``%`` and ``_`` escaped.

    >>> print(_like_escaped("50% off_\\"))
    50\% off\_\\
    """
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def held_words(title: str) -> tuple[list[str], str | None]:
    """The words every title holding ``title`` holds, lower-cased: those ``title`` holds whole
    (ASCII letters and digits, a space either side), and the start of its last word (after a
    space), None if it has none. Its first word may be the end of a title's word: left out.

    >>> held_words("Benchmark record 6666667")
    (['record'], '6666667')
    >>> held_words("Tale"), held_words("the 50% sale")
    (([], None), ([], 'sale'))
    """
    words = title.split(" ")
    whole = [word.lower() for word in words[1:-1] if _plain(word)]
    started = words[-1].lower() if len(words) > 1 and _plain(words[-1]) else None
    return whole, started


def title_words(title: str) -> str | None:
    """:func:`held_words` as PostgreSQL's text search asks for them (configuration
    ``simple``), a ``tsquery``; None if there are none.

    >>> title_words("Benchmark record 6666667")
    'record & 6666667:*'
    >>> title_words("Tale") is None, title_words("the 50% sale")
    (True, 'sale:*')
    """
    whole, started = held_words(title)
    return " & ".join(whole + ([] if started is None else [f"{started}:*"])) or None


def title_match(title: str) -> str | None:
    """:func:`held_words` as SQLite's FTS5 asks for them (``MATCH``), each quoted: FTS5 reads
    ``AND``, ``OR``, ``NOT`` and ``NEAR`` unquoted as operators. None if there are none.

    >>> title_match("Benchmark record 6666667")
    '"record" AND "6666667"*'
    >>> title_match("Tale") is None, title_match("x OR not")
    (True, '"or" AND "not"*')
    """
    whole, started = held_words(title)
    quoted = [f'"{word}"' for word in whole] + ([] if started is None else [f'"{started}"*'])
    return " AND ".join(quoted) or None


def _plain(word: str) -> bool:
    """A word that PostgreSQL's parser takes whole, in any locale, and indexes; a word of
    SQLite's ``unicode61`` tokenizer too, which splits at every space."""
    return word.isascii() and word.isalnum() and len(word) <= MAX_INDEXED_WORD


MAX_INDEXED_WORD = 100  # to_tsvector leaves out words over 2,047 bytes
TITLE_PROBE = 2_000  # records read in id order before a title search asks its index
_HIGHEST_ID = 2**63 - 1  # SQLite's highest rowid


def title_condition(title: str) -> sa.ColumnElement[bool]:
    """PostgreSQL's condition for a title holding ``title``, case-insensitively. When ``title``
    holds words (:func:`title_words`), the word index (migration title_words) finds the few
    titles that hold them and ``ILIKE`` reads those only: the trigram index, which must read
    the posting list of every trigram ("ben", "enc", … are in every title of a catalogue of
    benchmarks), reads far more at ten million records than the words' index does. The
    ``ILIKE`` is then written with ``jsonb_extract_path_text``, which no index matches, so that
    the planner does not add the trigram index's scan. Without words, the trigram index
    (migration title_search) answers the ``ILIKE``."""
    pattern = f"%{_like_escaped(title)}%"
    words = title_words(title)
    if words is None:
        # The expression of the index, 'title' a literal: a bound name would not match it.
        stored = records.c.metadata.op("->>", return_type=sa.Text())(sa.literal_column("'title'"))
        return stored.ilike(pattern, escape="\\")
    indexed = sa.text(
        "to_tsvector('simple', records.metadata ->> 'title') @@ to_tsquery('simple', :words)"
    ).bindparams(words=words)
    read = sa.func.jsonb_extract_path_text(records.c.metadata, "title", type_=sa.Text())
    return sa.and_(indexed, read.ilike(pattern, escape="\\"))


def sqlite_title_ids(
    title: str, limit: int = 20, *, by_words: bool = True
) -> tuple[sa.TextClause, dict[str, Any]]:
    """SQLite's query for the ids of up to ``limit`` titles holding ``title`` (case-insensitive
    for ASCII letters), in order, above ``:after`` and up to ``:last``, and its arguments but
    those two: FTS5's word table narrows to the titles holding its words (:func:`title_match`),
    if it has any and ``by_words``, and ``LIKE`` reads those; else the trigram table answers
    the ``LIKE``. FTS5 uses its trigram
    index for a LIKE without ESCAPE only, so the pattern escapes only when it must, or when the
    part is shorter than a trigram: FTS5 reads every title for it either way, and SQLite 3.40's
    counts its bytes, not its characters, and finds no title holding a part such as "0²".

    >>> sqlite_title_ids("Benchmark record 6666667")[1]
    {'pattern': '%Benchmark record 6666667%', 'limit': 20, 'words': '"record" AND "6666667"*'}
    >>> sqlite_title_ids("50% off")[1]
    {'pattern': '%50\\\\% off%', 'limit': 20, 'words': '"off"*'}
    """
    special = len(title) < 3 or any(char in title for char in "%_\\")
    like = "title LIKE :pattern" + (" ESCAPE '\\'" if special else "")
    words = title_match(title) if by_words else None
    table = "record_titles" if words is None else "record_title_words"
    matched = "" if words is None else "record_title_words MATCH :words AND "
    query = sa.text(
        f"SELECT rowid FROM {table} WHERE {matched}{like}"
        " AND rowid > :after AND rowid <= :last ORDER BY rowid LIMIT :limit"
    )
    pattern = f"%{_like_escaped(title)}%"
    return query, {"pattern": pattern, "limit": limit} | ({} if words is None else {"words": words})


def _sqlite_titled(
    connection: sa.Connection,
    condition: sa.ColumnElement[bool],
    title: str,
    ids: tuple[int, int | None],
    limit: int,
    *,
    by_words: bool,
) -> list[tuple[int, Record]]:
    """Up to ``limit`` records whose titles hold ``title``, with row ids above the first of
    ``ids`` and up to the second (None: any), in order, kept where ``condition`` holds:
    :func:`sqlite_title_ids`' ids a page at a time (``Records._titled``)."""
    after, last = ids
    query, arguments = sqlite_title_ids(title, limit, by_words=by_words)
    arguments["last"] = _HIGHEST_ID if last is None else last
    found: list[tuple[int, Record]] = []
    while len(found) < limit:
        page = list(connection.scalars(query, arguments | {"after": after}))
        if not page:
            break
        chosen = sa.and_(condition, records.c.id.in_(page))
        found += records_where(connection, chosen, records.c.id, limit=limit - len(found))
        after = page[-1]
    return found


class Records(Queries):
    """The records' queries: ``records``, ``locations``, ``history``, ``idempotency_keys``."""

    __slots__ = ()

    def id(self, key: str, *, for_update: bool = False) -> int | None:
        """The row id of the record with equivalence key ``key``."""
        query = sa.select(records.c.id).where(records.c.equivalence_key == key)
        return self.connection.scalar(query.with_for_update() if for_update else query)

    def highest_id(self) -> int:
        """The highest record id given so far; 0 before the first."""
        highest = sa.select(sa.func.coalesce(sa.func.max(records.c.id), 0))
        return int(self.connection.execute(highest).scalar_one())

    def get(self, key: str) -> Record | None:
        """The record with equivalence key ``key``, locations by priority."""
        row = self.connection.execute(
            sa.select(*_RECORD_COLUMNS).join(organisations).where(records.c.equivalence_key == key)
        ).first()
        if row is None:
            return None
        grants = grants_of(self.connection, [row.id])[row.id]
        return _record(row, self.locations(row.id), grants)

    def locations(self, record_id: int) -> list[Location]:
        """The record's locations, highest priority (lowest number) first, each with the
        organisation holding it."""
        rows = self.connection.execute(
            sa.select(*_LOCATION_COLUMNS)
            .join(_HOLDERS, _HOLDERS.c.id == locations.c.owner_id)
            .where(locations.c.record_id == record_id)
            .order_by(locations.c.priority, locations.c.id)
        )
        return [_location(row) for row in rows]

    def page(
        self,
        prefix: str | None,
        after: int,
        limit: int,
        *,
        title: str | None = None,
        url: str | None = None,
        identifier: str | None = None,
    ) -> list[tuple[int, Record]]:
        """Up to ``limit`` records with row id above ``after``, under ``prefix`` if given,
        with ``title`` in ``metadata.title`` (case-insensitive; on SQLite for ASCII letters
        only), a location at ``url`` and carrying ``identifier`` (an equivalent URN in
        ``metadata.identifiers``, or the ``metadata.local_id``) if given. A title is looked
        up in its word index when it holds whole words (:func:`held_words`; migrations
        title_words, title_word_index), else in its trigram index (migration title_search)."""
        condition = sa.and_(records.c.id > after, listing_condition(prefix, None, None))
        if url is not None:  # locations.url's index (a hash index on PostgreSQL)
            condition = sa.and_(
                condition,
                records.c.id.in_(sa.select(locations.c.record_id).where(locations.c.url == url)),
            )
        if identifier is not None:  # record_identifiers' primary key
            condition = sa.and_(condition, identified_by(identifier, identifier_key(identifier)))
        if title is not None and self.dialect == "sqlite":
            return self._titled(condition, title, after, limit)
        if title is not None:
            return self._titled_postgresql(sa.and_(condition, title_condition(title)), after, limit)
        return records_where(self.connection, condition, records.c.id, limit=limit)

    def _titled_postgresql(
        self, condition: sa.ColumnElement[bool], after: int, limit: int
    ) -> list[tuple[int, Record]]:
        """:meth:`page` with a title on PostgreSQL, in two steps whatever the planner guesses.
        The next :data:`TITLE_PROBE` records by id are read first: a title many records hold
        fills the page there. Then, if the page is not full, the title's index finds the rest
        (ordered by an expression, ``id + 0``, so that the planner cannot walk the primary key
        instead: it guesses a rare title's words common, and at ten million records read two
        thirds of them, to find one). Without JIT and without parallel workers: the word
        index guesses a prefix (``666667:*``) matches 20,000 rows, which prices the query high
        enough to compile it and to start two workers, each costing far more than the index
        scan of the one title it finds (EXPLAIN ANALYZE at a million records; docs/benchmarks.md).
        And planned for its words each time: psycopg prepares a statement run five times, and
        PostgreSQL's generic plan for it, blind to the words, walks the records instead.
        """
        self.connection.exec_driver_sql(  # SET LOCAL all three, in one round trip
            "SELECT set_config('jit', 'off', true),"
            " set_config('max_parallel_workers_per_gather', '0', true),"
            " set_config('plan_cache_mode', 'force_custom_plan', true)"
        )
        bound = self._probe_bound(after)
        near = condition if bound is None else sa.and_(condition, records.c.id <= bound)
        found = records_where(self.connection, near, records.c.id, limit=limit)
        if bound is None or len(found) == limit:
            return found
        rest = sa.and_(condition, records.c.id > bound)
        return found + records_where(
            self.connection, rest, records.c.id + 0, limit=limit - len(found)
        )

    def _probe_bound(self, after: int) -> int | None:
        """The id of the :data:`TITLE_PROBE`-th record above ``after``; None if fewer remain."""
        return self.connection.scalar(
            sa.select(records.c.id)
            .where(records.c.id > after)
            .order_by(records.c.id)
            .offset(TITLE_PROBE - 1)
            .limit(1)
        )

    def _titled(
        self, condition: sa.ColumnElement[bool], title: str, after: int, limit: int
    ) -> list[tuple[int, Record]]:
        """:meth:`page` with a title on SQLite. Without words (:func:`title_match`), the
        trigram table ``record_titles`` answers the ``LIKE``. With words, the trigram table
        first answers it for the next :data:`TITLE_PROBE` records by id, where a title many
        records hold fills the page; then FTS5's word table ``record_title_words`` (migration
        title_word_index) finds the titles holding the words among the rest, and ``LIKE`` reads
        those only. The trigram table must intersect the posting list of every trigram of the
        part ("Ben", "enc", … are in every title of a catalogue of benchmarks); the word table
        merges the lists of every word its last word starts, all of them before the first
        title is read: the whole catalogue for "Benchmark record"."""
        bound = None if title_match(title) is None else self._probe_bound(after)
        near = (after, bound)
        found = _sqlite_titled(self.connection, condition, title, near, limit, by_words=False)
        if bound is not None and len(found) < limit:
            rest, beyond = limit - len(found), (bound, None)
            found += _sqlite_titled(self.connection, condition, title, beyond, rest, by_words=True)
        return found

    def held_page(
        self,
        organisation_id: int | None,
        before: int,
        limit: int,
        *,
        status: str | None = None,
        prefix: str | None = None,
        key: str | None = None,
        title: str | None = None,
    ) -> list[tuple[int, Record]]:
        """Up to ``limit`` records, the newest first, with row id below ``before`` (0: any)
        that the organisation owns or holds a grant on (any organisation's with None), each
        filter applied if given: the ``status``, under ``prefix``, the equivalence ``key``,
        ``title`` in ``metadata.title`` (case-insensitive for ASCII letters; read, not looked
        up in an index: one organisation's records)."""
        conditions = [listing_condition(prefix, None, None)]
        if before:
            conditions.append(records.c.id < before)
        if organisation_id is not None:
            granted = sa.select(location_grants.c.record_id).where(
                location_grants.c.organisation_id == organisation_id
            )
            conditions.append(
                sa.or_(records.c.owner_id == organisation_id, records.c.id.in_(granted))
            )
        if status is not None:
            conditions.append(records.c.status == status)
        if key is not None:
            conditions.append(records.c.equivalence_key == key)
        if title is not None:
            stored = records.c.metadata["title"].as_string()
            conditions.append(stored.ilike(f"%{_like_escaped(title)}%", escape="\\"))
        newest = records.c.id.desc()
        return records_where(self.connection, sa.and_(*conditions), newest, limit=limit)

    def by_ids(self, record_ids: Sequence[int]) -> list[tuple[int, Record]]:
        """The records with these row ids, with their locations, by id."""
        return records_where(self.connection, records.c.id.in_(list(record_ids)), records.c.id)

    def insert(self, record: Record, owner_id: int) -> int | None:
        """Insert a new record, its locations and its other identifiers; None (and nothing
        written) when its equivalence key is taken."""
        holders = self._holders([(record.locations, owner_id)])[0]
        broken = broken_urls(self.connection, (loc.url for loc in record.locations))
        statement = (
            self._insert(records)
            .values(
                equivalence_key=record.key,
                urn=record.urn,
                prefix=record.prefix,
                status=record.status,
                metadata=dict(record.metadata),
                successors=list(record.successors),
                note=record.note,
                owner_id=owner_id,
                created=record.created,
                updated=record.updated,
                # NULLs left to the defaults: a schema older than a column inserts too (tests)
                **{k: v for k, v in self._targets(record.locations, holders, broken).items() if v},
            )
            .on_conflict_do_nothing()
            .returning(records.c.id)
        )
        record_id: int | None = self.connection.scalar(statement)
        if record_id is not None:
            self._insert_locations([(record_id, record.locations, holders)])
            if carries_identifiers(record.metadata):
                identified = [(record_id, owner_id, record.metadata)]
                Identifiers(self.connection, self.dialect).replace(identified, fresh=True)
        return record_id

    def by_keys(self, keys: Sequence[str]) -> dict[str, tuple[int, Record]]:
        """The records with these equivalence keys, with their locations and row ids, by key."""
        found: dict[str, tuple[int, Record]] = {}
        for condition in one_of(records.c.equivalence_key, keys, self.dialect):
            for record_id, record in records_where(self.connection, condition, records.c.id):
                found[record.key] = (record_id, record)
        return found

    def update(
        self, record_id: int, record: Record, previous: Mapping[str, Any], action: str, actor: str
    ) -> None:
        """:meth:`update_many` for one record."""
        self.update_many([(record_id, record, previous)], action, actor)

    def update_many(
        self, changed: Sequence[tuple[int, Record, Mapping[str, Any]]], action: str, actor: str
    ) -> None:
        """Replace each record's (row id, record, ``previous``) status, metadata (and the other
        identifiers it carries), successors, note and locations (each held by its
        ``organisation``, or by the record's owner when it names none), and log the change:
        the newest history entry is first given ``previous`` (the record as it was, as the API
        shows it), and a new one, without a document, stands for the record as it is now
        (migration ``current_history``; :meth:`history`). A few statements for any number of
        records."""
        if not changed:
            return
        ids = [record_id for record_id, _, _ in changed]
        self.connection.execute(
            sa.update(history)
            .where(history.c.record_id == sa.bindparam("b_id"), history.c.record.is_(None))
            .values(record=sa.bindparam("b_record", type_=history.c.record.type)),
            [{"b_id": record_id, "b_record": dict(was)} for record_id, _, was in changed],
        )
        owner_ids: dict[int, int] = {}
        for condition in one_of(records.c.id, ids, self.dialect):
            query = sa.select(records.c.id, records.c.owner_id).where(condition)
            owner_ids.update((row.id, row.owner_id) for row in self.connection.execute(query))
        holders = self._holders([(r.locations, owner_ids[i]) for i, r, _ in changed])
        broken = broken_urls(
            self.connection, (loc.url for _, r, _ in changed for loc in r.locations)
        )
        self.connection.execute(
            sa.update(records)
            .where(records.c.id == sa.bindparam("b_id"))
            .values(
                {name: sa.bindparam(f"b_{name}", type_=records.c[name].type) for name in _CHANGED}
            ),
            [
                {"b_id": record_id}
                | {
                    f"b_{name}": value
                    for name, value in (
                        ("status", r.status),
                        ("metadata", dict(r.metadata)),
                        ("successors", list(r.successors)),
                        ("note", r.note),
                        ("updated", r.updated),
                        *self._targets(r.locations, held, broken).items(),
                    )
                }
                for (record_id, r, _), held in zip(changed, holders, strict=True)
            ],
        )
        for condition in one_of(locations.c.record_id, ids, self.dialect):
            self.connection.execute(sa.delete(locations).where(condition))
        self._insert_locations(
            [(i, r.locations, held) for (i, r, _), held in zip(changed, holders, strict=True)]
        )
        Identifiers(self.connection, self.dialect).replace(
            [(i, owner_ids[i], r.metadata) for i, r, _ in changed]
        )
        self.append_history([(record_id, action, actor) for record_id in ids])

    def _targets(
        self, found: Sequence[Location], holders: Sequence[int], broken: Collection[str]
    ) -> dict[str, str | None]:
        """``records.targets`` and ``records.restricted`` of ``found``, each held by the
        organisation of the same place in ``holders``, the URLs in ``broken`` left out."""
        return {
            "targets": resolution_targets(found, broken),
            "restricted": restricted_targets(list(zip(found, holders, strict=True)), broken),
        }

    def _holders(self, held: Sequence[tuple[Sequence[Location], int]]) -> list[list[int]]:
        """For each (locations, owner id) of ``held``, the id of the organisation holding each
        location: its ``organisation``, or the record's owner when it names none."""
        named = {loc.organisation for found, _ in held for loc in found} - {None}
        ids: dict[str | None, int] = {}
        if named:
            query = sa.select(organisations.c.name, organisations.c.id)
            for name, holder_id in self.connection.execute(
                query.where(organisations.c.name.in_(named))
            ):
                ids[name] = holder_id
        return [
            [owner_id if loc.organisation is None else ids[loc.organisation] for loc in found]
            for found, owner_id in held
        ]

    def _insert_locations(
        self, held: Sequence[tuple[int, Sequence[Location], Sequence[int]]]
    ) -> None:
        """Insert each (record id, locations, holders) of ``held``: each location held by the
        organisation of the same place in its holders."""
        rows = [
            {
                "record_id": record_id,
                "url": loc.url,
                "priority": loc.priority,
                "label": loc.label,
                "media_type": loc.media_type,
                "owner_id": holder_id,
                "restricted_to": loc.restricted_to,
            }
            for record_id, found, holders in held
            for loc, holder_id in zip(found, holders, strict=True)
        ]
        # restricted_to only when given (a schema older than the column inserts too: tests)
        if not any(row["restricted_to"] is not None for row in rows):
            for row in rows:
                del row["restricted_to"]
        if rows:
            self.connection.execute(inserted_in_pages(locations), rows)

    def append_history(self, rows: Sequence[tuple[int, str, str]]) -> None:
        """Log (record id, action, actor) for records just inserted, each entry standing for
        the record as it is now (:meth:`update` logs changes)."""
        if rows:  # the document left out: NULL (JSON's None would be the text "null")
            at = now()
            self.connection.execute(
                inserted_in_pages(history),
                [
                    {"record_id": rid, "at": at, "action": action, "actor": actor}
                    for rid, action, actor in rows
                ],
            )

    def history(self, record_id: int, current: Mapping[str, Any]) -> list[HistoryEntry]:
        """Every change to a record, oldest first; the newest entry's record is ``current``
        (the record as the API shows it now) unless the entry was written with a copy."""
        rows = self.connection.execute(
            sa.select(history.c.at, history.c.action, history.c.actor, history.c.record)
            .where(history.c.record_id == record_id)
            .order_by(history.c.id)
        )
        return [
            HistoryEntry(utc(r.at), r.action, r.actor, current if r.record is None else r.record)
            for r in rows
        ]

    def idempotent_response(
        self, organisation_id: int, key: str
    ) -> tuple[str, int, dict[str, Any]] | None:
        """A stored (request hash, status, body) for an Idempotency-Key, if any."""
        row = self.connection.execute(
            sa.select(
                idempotency_keys.c.request_hash,
                idempotency_keys.c.status_code,
                idempotency_keys.c.body,
            ).where(
                idempotency_keys.c.organisation_id == organisation_id,
                idempotency_keys.c.key == key,
            )
        ).first()
        return None if row is None else (row[0], row[1], row[2])

    def claim_response(self, organisation_id: int, key: str, request_hash: str) -> bool:
        """Claim an Idempotency-Key for a request (``request_hash``) whose response this
        transaction will store (:meth:`remember_response`); False when the key is taken. A
        claim of another transaction still open is waited for: its key is then taken if it
        commits, and claimed here if it rolls back."""
        claimed = self.connection.scalar(
            self._insert(idempotency_keys)
            .values(
                organisation_id=organisation_id,
                key=key,
                request_hash=request_hash,
                status_code=0,  # until remember_response: seen by no other transaction
                body={},
                created=now(),
            )
            .on_conflict_do_nothing()
            .returning(idempotency_keys.c.key)
        )
        return claimed is not None

    def remember_response(
        self, organisation_id: int, key: str, status: int, body: dict[str, Any]
    ) -> None:
        """Store the response to an Idempotency-Key this transaction claimed
        (:meth:`claim_response`), in the same transaction as its effects."""
        self.connection.execute(
            sa.update(idempotency_keys)
            .where(
                idempotency_keys.c.organisation_id == organisation_id,
                idempotency_keys.c.key == key,
            )
            .values(status_code=status, body=body)
        )
