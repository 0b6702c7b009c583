"""The resolver's tables and queries: SQLAlchemy Core, one code path for SQLite and PostgreSQL.

The schema is created and changed only by the Alembic migrations beside this module
(:func:`upgrade`); the :data:`metadata` below describes it for queries and must match them (a test
compares the two). What keeps data correct lives in the database, never only in a process:

* a URN's equivalence key is ``UNIQUE`` — two processes cannot register the same URN twice;
* sequential generation takes numbers with one ``UPDATE … RETURNING`` on the prefix row, which
  the database serializes;
* records and history rows cannot be deleted, history rows cannot be changed (triggers).

SQLite runs in WAL mode; a write transaction begins with ``BEGIN IMMEDIATE`` so that concurrent
writers wait (``busy_timeout``) instead of failing halfway.

>>> store = Store("sqlite://")
>>> store.schema_state()
'empty'
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib.resources import files
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from urnkit.resolver.domain import (
    BrokenLink,
    HarvestSource,
    HistoryEntry,
    LinkCheck,
    LinkState,
    Location,
    Principal,
    Record,
)
from urnkit.resolver.forwarding_rules import Forwarding, Health

DEFAULT_DATABASE_URL = "sqlite:///urnkit.db"

metadata = sa.MetaData()
_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_TIME = sa.DateTime(timezone=True)

organisations = sa.Table(
    "organisations",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("created", _TIME, nullable=False),
)
prefixes = sa.Table(
    "prefixes",
    metadata,
    sa.Column("prefix", sa.String(200), primary_key=True),
    sa.Column("organisation_id", sa.ForeignKey("organisations.id"), nullable=False),
    sa.Column("generator", sa.String(20), nullable=False),
    sa.Column("next_value", sa.BigInteger, nullable=False),
    sa.Column("created", _TIME, nullable=False),
)
tokens = sa.Table(
    "tokens",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("organisation_id", sa.ForeignKey("organisations.id"), nullable=False),
    sa.Column("role", sa.String(20), nullable=False),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("label", sa.String(200)),
    sa.Column("created", _TIME, nullable=False),
    sa.Column("revoked", _TIME),
)
records = sa.Table(
    "records",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
    sa.Column("equivalence_key", sa.String(2000), nullable=False, unique=True),
    sa.Column("urn", sa.String(2000), nullable=False),
    sa.Column("prefix", sa.String(200), nullable=False, index=True),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("metadata", _JSON, nullable=False),
    sa.Column("successors", _JSON, nullable=False),
    sa.Column("note", sa.Text),
    sa.Column("owner_id", sa.ForeignKey("organisations.id"), nullable=False),
    sa.Column("created", _TIME, nullable=False),
    sa.Column("updated", _TIME, nullable=False),
    # What resolution redirects to, best first, one URL a line: see _targets. NULL when none.
    sa.Column("targets", sa.Text),
)
locations = sa.Table(
    "locations",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
    sa.Column("record_id", sa.ForeignKey("records.id"), nullable=False, index=True),
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("priority", sa.Integer, nullable=False),
    sa.Column("label", sa.Text),
    sa.Column("media_type", sa.String(255)),
    sa.Column("owner_id", sa.ForeignKey("organisations.id"), nullable=False),
    # Reverse lookup by URL, and the records a link status change concerns.
    sa.Index("ix_locations_url", "url", postgresql_using="hash"),
)
history = sa.Table(
    "history",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
    sa.Column("record_id", sa.ForeignKey("records.id"), nullable=False, index=True),
    sa.Column("at", _TIME, nullable=False),
    sa.Column("action", sa.String(20), nullable=False),
    sa.Column("actor", sa.String(200), nullable=False),
    sa.Column("record", _JSON, nullable=False),
)
idempotency_keys = sa.Table(
    "idempotency_keys",
    metadata,
    sa.Column("organisation_id", sa.ForeignKey("organisations.id"), primary_key=True),
    sa.Column("key", sa.String(255), primary_key=True),
    sa.Column("request_hash", sa.String(64), nullable=False),
    sa.Column("status_code", sa.Integer, nullable=False),
    sa.Column("body", _JSON, nullable=False),
    sa.Column("created", _TIME, nullable=False),
)

# The last known state of each location URL ("ok" or "broken"), keyed by the URL's SHA-256
# (PostgreSQL's btree keys cannot hold URLs of 4,000 characters), and every check made.
links = sa.Table(
    "links",
    metadata,
    sa.Column("url_hash", sa.String(64), primary_key=True),
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("http_status", sa.Integer),
    sa.Column("detail", sa.Text),
    sa.Column("failures", sa.Integer, nullable=False),  # consecutive failed checks
    sa.Column("since", _TIME, nullable=False),  # when the status last changed
    sa.Column("checked", _TIME, nullable=False),
)
link_checks = sa.Table(
    "link_checks",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
    sa.Column("url_hash", sa.ForeignKey("links.url_hash"), nullable=False, index=True),
    sa.Column("at", _TIME, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("http_status", sa.Integer),
    sa.Column("detail", sa.Text),
)
# The URLs due for checking, oldest check first (Transaction.claim_links).
sa.Index("ix_links_checked", links.c.checked)
# Resolutions per delegated prefix per day (UTC), for the statistics page.
resolution_counts = sa.Table(
    "resolution_counts",
    metadata,
    sa.Column("prefix", sa.String(200), primary_key=True),
    sa.Column("day", sa.Date, primary_key=True),
    sa.Column("count", sa.BigInteger, nullable=False),
)
# Country code -> national resolver (RFC 8458 §4.4): see urnkit.resolver.forwarding.
forwarding = sa.Table(
    "forwarding",
    metadata,
    sa.Column("country", sa.String(2), primary_key=True),
    sa.Column("url_template", sa.Text, nullable=False),
    sa.Column("health", sa.String(10), nullable=False),  # unknown, up, down
    sa.Column("checked", _TIME),  # the last health check, None before the first
    sa.Column("detail", sa.Text),  # what the last health check saw
    sa.Column("note", sa.Text),
    sa.Column("updated", _TIME, nullable=False),
)

# OAI-PMH (migration "oai"): datestamps are records.updated, listed in (updated, id) order; the
# repositories harvested; which records each source's OAI items gave (a deleted item's header
# names only its OAI identifier).
sa.Index("ix_records_updated", records.c.updated, records.c.id)
oai_sources = sa.Table(
    "oai_sources",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("base_url", sa.Text, nullable=False),
    sa.Column("organisation_id", sa.ForeignKey("organisations.id"), nullable=False),
    sa.Column("url_pattern", sa.Text, nullable=False),
    sa.Column("set_spec", sa.String(200)),
    sa.Column("granularity", sa.String(30)),  # the repository's, from Identify
    sa.Column("next_from", sa.String(30)),  # the next incremental harvest's from=
    sa.Column("harvested", _TIME),  # when a harvest last succeeded
    sa.Column("created", _TIME, nullable=False),
)
oai_items = sa.Table(
    "oai_items",
    metadata,
    sa.Column("source_id", sa.ForeignKey("oai_sources.id"), primary_key=True),
    sa.Column("identifier", sa.String(1000), primary_key=True),
    sa.Column(
        "record_id",
        sa.BigInteger().with_variant(sa.Integer, "sqlite"),
        sa.ForeignKey("records.id"),
        primary_key=True,
    ),
)
# Who succeeds whom: a row per successor a deactivated record names (RFC 8458 §4.1), keyed by
# the successor's equivalence key, registered here or not. Resolution reads a record's
# predecessors from it in the same query as its targets (Store._predecessors).
successions = sa.Table(
    "successions",
    metadata,
    sa.Column("successor_key", sa.String(2000), primary_key=True),
    sa.Column("predecessor_id", sa.ForeignKey("records.id"), primary_key=True),
    sa.Column("predecessor_urn", sa.String(2000), nullable=False),
)


def now() -> datetime:
    """The current time in UTC, the only time zone stored."""
    return datetime.now(UTC)


def _utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def token_hash(token: str) -> str:
    """How a token is stored: its SHA-256. Tokens are 256 random bits, so a fast hash suffices.

    >>> len(token_hash("urnkit_x"))
    64
    """
    return hashlib.sha256(token.encode()).hexdigest()


def url_hash(url: str) -> str:
    """The key of a URL in the ``links`` table: its SHA-256.

    >>> url_hash("https://example.org/")[:12]
    '8198d1bac40a'
    """
    return hashlib.sha256(url.encode()).hexdigest()


def resolution_targets(found: Sequence[Location], broken: Collection[str]) -> str | None:
    """What ``records.targets`` holds: the URLs of ``found`` (best first) not in ``broken``, one
    a line (a stored URL holds no line break: ``check_locations``); None when none is left.

    >>> resolution_targets([Location("https://a.example/"), Location("https://b.example/")],
    ...                    {"https://a.example/"})
    'https://b.example/'
    """
    return "\n".join(loc.url for loc in found if loc.url not in broken) or None


# PostgreSQL imports (Transaction.import_batch): each record's document (its history entry,
# which holds the record whole) is COPied into a session's temporary table with its key, then
# one statement inserts the free ones into records, locations (in order) and history.
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
_IMPORT_STAGE = """
CREATE TEMPORARY TABLE IF NOT EXISTS urnkit_import (
    seq integer, equivalence_key text, prefix text, owner_id integer, actor text,
    created timestamptz, updated timestamptz, targets text, document jsonb
)"""
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
), logged AS (
    INSERT INTO history (record_id, at, action, actor, record)
    SELECT id, :at, 'imported', actor, document FROM staged ORDER BY seq
)
SELECT count(*) FROM inserted
""")


_BROKEN = sa.text(
    "SELECT url FROM links WHERE status = 'broken' "
    "AND url_hash = ANY(string_to_array(:hashes, ' '))"
)


def _copy_text(text: str) -> str:
    r"""``text`` as a column of COPY's text format: backslash, tab, newline and CR escaped.

    >>> print(_copy_text("a\\b\tc\nd\re"))
    a\\b\tc\nd\re
    """
    # str.replace, not str.translate: 20 times faster on a document of 400 characters.
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


_COPY_NULL = "\\N"


# Run when links of a staged batch are known broken: targets as resolution_targets gives them.
# A document's locations are the record's, best first (record_json).
_IMPORT_UNBROKEN = sa.text("""
UPDATE urnkit_import SET targets = (
    SELECT string_agg(e.loc ->> 'url', E'\\n' ORDER BY e.n)
    FROM jsonb_array_elements(document -> 'locations') WITH ORDINALITY AS e(loc, n)
    WHERE e.loc ->> 'url' <> ALL (string_to_array(:broken, E'\\n'))
)
WHERE EXISTS (
    SELECT FROM jsonb_array_elements(document -> 'locations') AS e(loc)
    WHERE e.loc ->> 'url' = ANY (string_to_array(:broken, E'\\n'))
)""")


_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"))  # jsonb keeps no whitespace anyway


@dataclass(frozen=True, slots=True)
class StagedImport:
    """A batch as PostgreSQL imports it (:meth:`Transaction.import_staged`), prepared outside
    the transaction: COPY text lines whose targets assume no link broken, and the SHA-256 of
    every location URL (space-separated) to look the broken ones up."""

    lines: str
    url_hashes: str


def stage_import(
    batch: Sequence[Record], owner_ids: Mapping[str, int], documents: Sequence[dict[str, Any]]
) -> StagedImport:
    """``batch`` staged for :meth:`Transaction.import_staged` (arguments as
    :meth:`Transaction.import_batch` takes them)."""
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


def create_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite gets WAL, foreign keys, a busy timeout and
    ``BEGIN IMMEDIATE`` for transactions that write.

    >>> create_engine("sqlite://").dialect.name
    'sqlite'
    """
    if not url.startswith("sqlite"):
        # The pool serves the API and the CLI; resolution keeps a connection of its own
        # (Store.resolution_row_async). A server process runs at most 40 sync endpoints at once
        # (AnyIO's thread limit), so pool_size + max_overflow = 40: a request never waits for a
        # connection while a thread is free. 10 stay open; the overflow is closed when returned.
        # A worker thus holds at most 41 connections, and W workers W * 41: more than PostgreSQL's
        # default max_connections (100) only from 3 workers on, and only under 40 concurrent API
        # requests per worker; raise max_connections (or put PgBouncer in front) for that.
        return sa.create_engine(url, pool_size=10, max_overflow=30, pool_pre_ping=True)
    memory = url in ("sqlite://", "sqlite:///:memory:")
    engine = sa.create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": 30},
        **({"poolclass": StaticPool} if memory else {}),
    )

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # transactions are begun below, explicitly
        cursor = dbapi_connection.cursor()
        if not memory:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        writes = not connection.get_execution_options().get("urnkit_read_only", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")

    return engine


def _one_of(
    column: sa.Column[Any], values: Collection[Any], dialect: sa.Dialect
) -> Iterator[sa.ColumnElement[bool]]:
    """Conditions that together select the rows whose ``column`` is one of ``values``: on
    PostgreSQL one ``= ANY(array)``, a single parameter (an IN list of 5,000 parameters cost more
    to build and parse than the import it served); elsewhere IN lists of 1,000, which every
    driver accepts.

    >>> [str(c) for c in _one_of(records.c.id, [1, 2, 3], sqlite.dialect())]
    ['records.id IN (__[POSTCOMPILE_id_1])']
    """
    items = list(values)
    if dialect.name == "postgresql":
        if items:
            yield column == sa.any_(sa.bindparam(None, items, type_=postgresql.ARRAY(column.type)))
        return
    for start in range(0, len(items), 1_000):
        yield column.in_(items[start : start + 1_000])


def _record(row: Any, found: Sequence[Location] = ()) -> Record:
    return Record(
        urn=row.urn,
        key=row.equivalence_key,
        prefix=row.prefix,
        status=row.status,
        owner=row.owner,
        created=_utc(row.created),
        updated=_utc(row.updated),
        locations=tuple(found),
        metadata=row.metadata,
        successors=tuple(row.successors),
        note=row.note,
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


class Transaction:
    """The queries of one database transaction; get one from :meth:`Store.transaction`."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.dialect = connection.dialect.name

    def _insert(self, table: sa.Table) -> Any:
        """An INSERT that can take ``ON CONFLICT DO NOTHING`` on either database."""
        return (postgresql.insert if self.dialect == "postgresql" else sqlite.insert)(table)

    # --- organisations, prefixes, tokens -------------------------------------------------------

    def organisation_id(self, name: str) -> int | None:
        """The id of the organisation called ``name``, if there is one."""
        return self.connection.scalar(
            sa.select(organisations.c.id).where(organisations.c.name == name)
        )

    def create_organisation(self, name: str) -> int | None:
        """A new organisation's id, or None when the name is taken."""
        statement = (
            self._insert(organisations)
            .values(name=name, created=now())
            .on_conflict_do_nothing()
            .returning(organisations.c.id)
        )
        created: int | None = self.connection.scalar(statement)
        return created

    def organisations(self) -> list[tuple[str, datetime]]:
        """Every organisation's name and creation time, by name."""
        rows = self.connection.execute(
            sa.select(organisations.c.name, organisations.c.created).order_by(organisations.c.name)
        )
        return [(row.name, _utc(row.created)) for row in rows]

    def organisation_ids(self) -> dict[str, int]:
        """Every organisation's id by name."""
        rows = self.connection.execute(sa.select(organisations.c.name, organisations.c.id))
        return {row.name: row.id for row in rows}

    def delegate(self, organisation_id: int, prefix: str, generator: str) -> bool:
        """Delegate ``prefix``; False when it is already delegated."""
        statement = (
            self._insert(prefixes)
            .values(
                prefix=prefix,
                organisation_id=organisation_id,
                generator=generator,
                next_value=1,
                created=now(),
            )
            .on_conflict_do_nothing()
            .returning(prefixes.c.prefix)
        )
        return self.connection.scalar(statement) is not None

    def prefixes(self, organisation: str | None = None) -> list[tuple[str, str, str]]:
        """Delegated prefixes as (prefix, organisation, generator), by prefix."""
        query = (
            sa.select(prefixes.c.prefix, organisations.c.name, prefixes.c.generator)
            .join(organisations)
            .order_by(prefixes.c.prefix)
        )
        if organisation is not None:
            query = query.where(organisations.c.name == organisation)
        return [(row[0], row[1], row[2]) for row in self.connection.execute(query)]

    def take_numbers(self, prefix: str, count: int) -> int:
        """Reserve ``count`` sequential numbers of ``prefix``; the first is returned. One
        UPDATE … RETURNING: the database's row lock orders concurrent callers."""
        statement = (
            sa.update(prefixes)
            .where(prefixes.c.prefix == prefix)
            .values(next_value=prefixes.c.next_value + count)
            .returning(prefixes.c.next_value)
        )
        after: int = self.connection.execute(statement).scalar_one()
        return after - count

    def create_token(self, organisation_id: int, role: str, token: str, label: str | None) -> int:
        """Store a token (hashed); its id."""
        statement = (
            tokens.insert()
            .values(
                organisation_id=organisation_id,
                role=role,
                token_hash=token_hash(token),
                label=label,
                created=now(),
            )
            .returning(tokens.c.id)
        )
        token_id: int = self.connection.execute(statement).scalar_one()
        return token_id

    def revoke_token(self, token_id: int) -> bool:
        """Revoke a token; False when there is no such live token."""
        statement = (
            sa.update(tokens)
            .where(tokens.c.id == token_id, tokens.c.revoked.is_(None))
            .values(revoked=now())
        )
        return self.connection.execute(statement).rowcount == 1

    def principal(self, token: str) -> Principal | None:
        """Who holds ``token``, or None for an unknown or revoked token."""
        row = self.connection.execute(
            sa.select(organisations.c.name, tokens.c.role, tokens.c.id)
            .join(organisations)
            .where(tokens.c.token_hash == token_hash(token), tokens.c.revoked.is_(None))
        ).first()
        return None if row is None else Principal(row[0], row[1], row[2])

    # --- records ---------------------------------------------------------------------------------

    def record_id(self, key: str, *, for_update: bool = False) -> int | None:
        """The row id of the record with equivalence key ``key``."""
        query = sa.select(records.c.id).where(records.c.equivalence_key == key)
        return self.connection.scalar(query.with_for_update() if for_update else query)

    def record(self, key: str) -> Record | None:
        """The record with equivalence key ``key``, locations by priority."""
        row = self.connection.execute(
            sa.select(*_RECORD_COLUMNS).join(organisations).where(records.c.equivalence_key == key)
        ).first()
        if row is None:
            return None
        return _record(row, self.locations(row.id))

    def locations(self, record_id: int) -> list[Location]:
        """The record's locations, highest priority (lowest number) first."""
        rows = self.connection.execute(
            sa.select(
                locations.c.url, locations.c.priority, locations.c.label, locations.c.media_type
            )
            .where(locations.c.record_id == record_id)
            .order_by(locations.c.priority, locations.c.id)
        )
        return [Location(row.url, row.priority, row.label, row.media_type) for row in rows]

    def records(
        self,
        prefix: str | None,
        after: int,
        limit: int,
        *,
        title: str | None = None,
        url: str | None = None,
    ) -> list[tuple[int, Record]]:
        """Up to ``limit`` records with row id above ``after``, under ``prefix`` if given,
        with ``title`` in ``metadata.title`` (case-insensitive; on SQLite for ASCII letters
        only) and a location at ``url`` if given. The title search reads every record past
        ``after`` until ``limit`` match: no index serves a substring."""
        condition = sa.and_(records.c.id > after, self._listing_condition(prefix, None, None))
        if title is not None:
            escaped = title.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            condition = sa.and_(
                condition,
                records.c.metadata["title"].as_string().ilike(f"%{escaped}%", escape="\\"),
            )
        if url is not None:  # locations.url's index (a hash index on PostgreSQL)
            condition = sa.and_(
                condition,
                records.c.id.in_(sa.select(locations.c.record_id).where(locations.c.url == url)),
            )
        return self._records_where(condition, records.c.id, limit=limit)

    def insert_record(self, record: Record, owner_id: int) -> int | None:
        """Insert a new record and its locations; None (and nothing written) when its
        equivalence key is taken."""
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
                targets=resolution_targets(
                    record.locations, self.broken_urls(loc.url for loc in record.locations)
                ),
            )
            .on_conflict_do_nothing()
            .returning(records.c.id)
        )
        record_id: int | None = self.connection.scalar(statement)
        if record_id is not None:
            self._insert_locations(record_id, record.locations, owner_id)
        return record_id

    def broken_urls(self, urls: Iterable[str]) -> set[str]:
        """Which of ``urls`` link checking last found broken."""
        found: set[str] = set()
        hashes = {url_hash(url) for url in urls}
        if self.connection.dialect.name == "postgresql":
            return self._broken_by_hashes(" ".join(hashes))
        for condition in _one_of(links.c.url_hash, hashes, self.connection.dialect):
            query = sa.select(links.c.url).where(condition, links.c.status == "broken")
            found.update(self.connection.scalars(query))
        return found

    def refresh_targets(self, urls: Collection[str]) -> int:
        """Recompute ``records.targets`` of every record with a location at one of ``urls``
        (after their link status changed); how many records that was."""
        if not urls:
            return 0
        dialect = self.connection.dialect
        record_ids: set[int] = set()
        for condition in _one_of(locations.c.url, urls, dialect):
            query = sa.select(locations.c.record_id).where(condition)
            record_ids.update(self.connection.scalars(query))
        changed = 0
        for condition in _one_of(locations.c.record_id, record_ids, dialect):
            found: dict[int, list[Location]] = {}
            for row in self.connection.execute(
                sa.select(locations.c.record_id, locations.c.url)
                .where(condition)
                .order_by(locations.c.priority, locations.c.id)
            ):
                found.setdefault(row.record_id, []).append(Location(row.url))
            broken = self.broken_urls(loc.url for locs in found.values() for loc in locs)
            self.connection.execute(
                sa.update(records)
                .where(records.c.id == sa.bindparam("record_id"))
                .values(targets=sa.bindparam("new_targets")),
                [
                    {"record_id": rid, "new_targets": resolution_targets(locs, broken)}
                    for rid, locs in found.items()
                ],
            )
            changed += len(found)
        return changed

    def present_keys(self, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` are registered."""
        found: set[str] = set()
        for condition in _one_of(records.c.equivalence_key, keys, self.connection.dialect):
            query = sa.select(records.c.equivalence_key).where(condition)
            found.update(self.connection.scalars(query))
        return found

    def insert_records(
        self, batch: Sequence[Record], owner_ids: Mapping[str, int]
    ) -> dict[str, int]:
        """Insert the records whose keys are free, each owned by the organisation its ``owner``
        names in ``owner_ids``; their ids by key (for imports)."""
        if not batch:
            return {}
        statement = (
            self._insert(records)
            .on_conflict_do_nothing()
            .returning(records.c.id, records.c.equivalence_key)
            # INSERT … VALUES of 100 rows, not SQLAlchemy's 1,000: PostgreSQL plans the smaller
            # statements faster per row (benchmarks/resolve_bench.py); SQLite does not mind.
            .execution_options(insertmanyvalues_page_size=100)
        )
        broken = self.broken_urls(loc.url for r in batch for loc in r.locations)
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
                "owner_id": owner_ids[r.owner],
            }
            for r in batch
            if r.key in ids
            for loc in r.locations
        ]
        if location_rows:
            self.connection.execute(locations.insert(), location_rows)
        return ids

    def import_batch(
        self,
        batch: Sequence[Record],
        owner_ids: Mapping[str, int],
        documents: Sequence[dict[str, Any]],
    ) -> int:
        """Insert the records whose keys are free, with their locations and an "imported"
        history entry each (``documents``: each record as the API shows it, in the order of
        ``batch``, acted by the owner); how many were inserted. PostgreSQL gets them by COPY
        into a staging table and one statement that inserts into all three tables; other
        databases through :meth:`insert_records`."""
        if self.connection.dialect.name != "postgresql":
            ids = self.insert_records(batch, owner_ids)
            self.append_history(
                [
                    (ids[r.key], "imported", r.owner, doc)
                    for r, doc in zip(batch, documents, strict=True)
                    if r.key in ids
                ]
            )
            return len(ids)
        return self.import_staged(stage_import(batch, owner_ids, documents))

    def _broken_by_hashes(self, hashes: str) -> set[str]:
        """On PostgreSQL, the broken URLs among those whose SHA-256 ``hashes`` holds (space-
        separated): one text parameter, split by the server, as psycopg dumped a 5,000-element
        array parameter in Python at ~6 µs an element, more than the query took."""
        return set(self.connection.scalars(_BROKEN, {"hashes": hashes})) if hashes else set()

    def import_staged(self, staged: StagedImport) -> int:
        """:meth:`import_batch` on PostgreSQL, of a batch :func:`stage_import` prepared."""
        self.connection.exec_driver_sql(_IMPORT_STAGE)
        # Compiling the statement (JIT) took twice as long as running it on 5,000 rows.
        self.connection.exec_driver_sql("SET LOCAL jit = off")
        broken = self._broken_by_hashes(staged.url_hashes)
        cursor = self.connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        with cursor.copy(f"COPY urnkit_import ({', '.join(_IMPORT_COLUMNS)}) FROM STDIN") as copy:
            copy.write(staged.lines)
        if broken:  # rare: the staged targets assumed no link broken
            self.connection.execute(_IMPORT_UNBROKEN, {"broken": "\n".join(broken)})
        inserted: int = self.connection.execute(_IMPORT, {"at": now()}).scalar_one()
        self.connection.exec_driver_sql("TRUNCATE urnkit_import")
        return inserted

    def update_record(self, record_id: int, record: Record) -> None:
        """Replace a record's status, metadata, successors, note and locations."""
        owner_id = self.connection.scalar(
            sa.select(records.c.owner_id).where(records.c.id == record_id)
        )
        self.connection.execute(
            sa.update(records)
            .where(records.c.id == record_id)
            .values(
                status=record.status,
                metadata=dict(record.metadata),
                successors=list(record.successors),
                note=record.note,
                updated=record.updated,
                targets=resolution_targets(
                    record.locations, self.broken_urls(loc.url for loc in record.locations)
                ),
            )
        )
        self.connection.execute(sa.delete(locations).where(locations.c.record_id == record_id))
        self._insert_locations(record_id, record.locations, owner_id)

    def _insert_locations(
        self, record_id: int, found: Sequence[Location], owner_id: int | None
    ) -> None:
        if found:
            self.connection.execute(
                locations.insert(),
                [
                    {
                        "record_id": record_id,
                        "url": loc.url,
                        "priority": loc.priority,
                        "label": loc.label,
                        "media_type": loc.media_type,
                        "owner_id": owner_id,
                    }
                    for loc in found
                ],
            )

    def append_history(self, rows: Sequence[tuple[int, str, str, dict[str, Any]]]) -> None:
        """Append (record id, action, actor, record as JSON) entries."""
        if rows:
            at = now()
            self.connection.execute(
                history.insert(),
                [
                    {"record_id": rid, "at": at, "action": action, "actor": actor, "record": doc}
                    for rid, action, actor, doc in rows
                ],
            )

    def history(self, record_id: int) -> list[HistoryEntry]:
        """Every change to a record, oldest first."""
        rows = self.connection.execute(
            sa.select(history.c.at, history.c.action, history.c.actor, history.c.record)
            .where(history.c.record_id == record_id)
            .order_by(history.c.id)
        )
        return [HistoryEntry(_utc(r.at), r.action, r.actor, r.record) for r in rows]

    # --- idempotency -----------------------------------------------------------------------------

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

    def remember_response(
        self, organisation_id: int, key: str, request_hash: str, status: int, body: dict[str, Any]
    ) -> None:
        """Store the response to an Idempotency-Key, in the same transaction as its effects."""
        self.connection.execute(
            idempotency_keys.insert().values(
                organisation_id=organisation_id,
                key=key,
                request_hash=request_hash,
                status_code=status,
                body=body,
                created=now(),
            )
        )

    # --- search and statistics -------------------------------------------------------------------

    def add_resolution_counts(self, counts: Sequence[tuple[str, date, int]]) -> None:
        """Add (prefix, day, count) rows to ``resolution_counts``: an upsert that adds, so that
        processes sharing the database add up. Rows go in key order (no deadlock between two)."""
        if not counts:
            return
        statement = self._insert(resolution_counts)
        statement = statement.on_conflict_do_update(
            index_elements=[resolution_counts.c.prefix, resolution_counts.c.day],
            set_={"count": resolution_counts.c.count + statement.excluded["count"]},
        )
        self.connection.execute(
            statement,
            [{"prefix": p, "day": day, "count": count} for p, day, count in sorted(counts)],
        )

    def resolution_counts(self, since: date) -> list[tuple[str, date, int]]:
        """(prefix, day, count) from ``since`` on, the newest day first, then by prefix."""
        table = resolution_counts
        rows = self.connection.execute(
            sa.select(table.c.prefix, table.c.day, table.c.count)
            .where(table.c.day >= since)
            .order_by(table.c.day.desc(), table.c.prefix)
        )
        return [(row[0], row[1], row[2]) for row in rows]

    def record_counts(self, by: Literal["prefix", "status"]) -> dict[str, int]:
        """How many records there are by ``prefix`` (the URN's own) or by ``status``."""
        column = records.c[by]
        rows = self.connection.execute(sa.select(column, sa.func.count()).group_by(column))
        return {row[0]: row[1] for row in rows}

    # --- link checking ---------------------------------------------------------------------------

    def seed_links(self) -> int:
        """Give every http(s) location URL without one a ``links`` row: ok (not known broken),
        never checked (``checked`` = :data:`UNCHECKED`, so due first); how many were added.
        Other processes may seed at the same time: a URL they added is skipped."""
        unseen = ~sa.exists().where(links.c.url == locations.c.url)
        if self.dialect == "sqlite":
            # SQLite runs NOT EXISTS once per location; NOT IN builds one index of the subquery.
            # (PostgreSQL's NOT IN cannot anti-join; its NOT EXISTS does.)
            unseen = locations.c.url.not_in(sa.select(links.c.url))
        web = sa.or_(locations.c.url.ilike("http://%"), locations.c.url.ilike("https://%"))
        found = list(
            self.connection.scalars(sa.select(locations.c.url).distinct().where(web, unseen))
        )
        if not found:
            return 0
        at = now()
        return len(
            self.connection.execute(
                self._insert(links).on_conflict_do_nothing().returning(links.c.url_hash),
                [
                    {
                        "url_hash": url_hash(url),
                        "url": url,
                        "status": "ok",
                        "detail": "not checked yet",
                        "failures": 0,
                        "since": at,
                        "checked": UNCHECKED,
                    }
                    for url in sorted(set(found))
                ],
            ).all()
        )

    def claim_links(self, due: datetime, limit: int) -> list[str]:
        """Take up to ``limit`` URLs last checked at or before ``due`` (oldest first) that some
        location still has, for checking: their ``checked`` becomes now, so no other process
        takes them until they are due again. PostgreSQL skips rows another transaction holds;
        SQLite's write transactions run one at a time."""
        chosen = (
            sa.select(links.c.url_hash)
            .where(links.c.checked <= due, sa.exists().where(locations.c.url == links.c.url))
            .order_by(links.c.checked)
            .limit(limit)
        )
        if self.dialect == "postgresql":
            chosen = chosen.with_for_update(skip_locked=True)
        statement = (
            sa.update(links)
            .where(links.c.url_hash.in_(chosen.scalar_subquery()), links.c.checked <= due)
            .values(checked=now())
            .returning(links.c.url)
        )
        return list(self.connection.scalars(statement))

    def link_states(self, urls: Iterable[str], *, for_update: bool = False) -> dict[str, LinkState]:
        """What link checking knows of each of ``urls`` that it has seen, by URL; with
        ``for_update`` the rows stay locked until the transaction ends (PostgreSQL)."""
        found: dict[str, LinkState] = {}
        hashes = sorted({url_hash(url) for url in urls})
        for condition in _one_of(links.c.url_hash, hashes, self.connection.dialect):
            query = sa.select(*_LINK_COLUMNS).where(condition)
            for row in self.connection.execute(query.with_for_update() if for_update else query):
                found[row.url] = _link_state(row)
        return found

    def save_link_checks(self, states: Sequence[LinkState], checks: Sequence[LinkCheck]) -> None:
        """Store each URL's new state (inserted or replaced) and append each check to
        ``link_checks``."""
        if not states:
            return
        statement = self._insert(links)
        columns = ("url", "status", "http_status", "detail", "failures", "since", "checked")
        statement = statement.on_conflict_do_update(
            index_elements=[links.c.url_hash],
            set_={name: statement.excluded[name] for name in columns},
        )
        self.connection.execute(
            statement,
            [
                {"url_hash": url_hash(s.url)} | {name: getattr(s, name) for name in columns}
                for s in states
            ],
        )
        self.connection.execute(
            link_checks.insert(),
            [
                {
                    "url_hash": url_hash(c.url),
                    "at": c.at,
                    "status": c.verdict,
                    "http_status": c.http_status,
                    "detail": c.detail,
                }
                for c in checks
            ],
        )

    def broken_links(self, owner: str | None) -> list[BrokenLink]:
        """Every location whose link is broken (of ``owner``'s locations if given), by owner,
        URN and the location's priority."""
        query = (
            sa.select(organisations.c.name, records.c.urn, *_LINK_COLUMNS)
            .select_from(
                links.join(locations, locations.c.url == links.c.url)
                .join(records, records.c.id == locations.c.record_id)
                .join(organisations, organisations.c.id == locations.c.owner_id)
            )
            .where(links.c.status == "broken")
            .order_by(organisations.c.name, records.c.urn, locations.c.priority, locations.c.id)
        )
        if owner is not None:
            query = query.where(organisations.c.name == owner)
        return [
            BrokenLink(row.name, row.urn, _link_state(row))
            for row in self.connection.execute(query)
        ]

    # --- forwarding to national resolvers ------------------------------------------------------

    def forwardings(self, country: str | None = None) -> list[Forwarding]:
        """The forwarding table by country (only ``country``'s row if given)."""
        query = sa.select(
            forwarding.c.country,
            forwarding.c.url_template,
            forwarding.c.health,
            forwarding.c.checked,
            forwarding.c.detail,
            forwarding.c.note,
        ).order_by(forwarding.c.country)
        if country is not None:
            query = query.where(forwarding.c.country == country)
        return [
            Forwarding(
                row.country,
                row.url_template,
                row.health,
                None if row.checked is None else _utc(row.checked),
                row.detail,
                row.note,
            )
            for row in self.connection.execute(query)
        ]

    def set_forwarding(self, country: str, url_template: str, note: str | None) -> bool:
        """Create or replace a country's row; True when it was created. A changed template's
        health is unknown again; the same template keeps what the last check found."""
        moment = now()
        created = self.connection.scalar(
            self._insert(forwarding)
            .values(
                country=country,
                url_template=url_template,
                health="unknown",
                note=note,
                updated=moment,
            )
            .on_conflict_do_nothing()
            .returning(forwarding.c.country)
        )
        if created is not None:
            return True
        changed = forwarding.c.url_template != url_template
        self.connection.execute(
            sa.update(forwarding)
            .where(forwarding.c.country == country)
            .values(
                url_template=url_template,
                note=note,
                updated=moment,
                health=sa.case((changed, "unknown"), else_=forwarding.c.health),
                checked=sa.case((changed, sa.null()), else_=forwarding.c.checked),
                detail=sa.case((changed, sa.null()), else_=forwarding.c.detail),
            )
        )
        return False

    def remove_forwarding(self, country: str) -> bool:
        """Delete a country's row; False when there is none."""
        statement = sa.delete(forwarding).where(forwarding.c.country == country)
        return self.connection.execute(statement).rowcount == 1

    def record_health(self, country: str, health: Health, detail: str, checked: datetime) -> None:
        """What a health check found of a country's resolver."""
        self.connection.execute(
            sa.update(forwarding)
            .where(forwarding.c.country == country)
            .values(health=health, detail=detail, checked=checked)
        )

    # --- OAI-PMH ---------------------------------------------------------------------------------

    def create_oai_source(
        self,
        name: str,
        base_url: str,
        organisation_id: int,
        url_pattern: str,
        set_spec: str | None,
    ) -> bool:
        """Add a harvest source; False when the name is taken."""
        statement = (
            self._insert(oai_sources)
            .values(
                name=name,
                base_url=base_url,
                organisation_id=organisation_id,
                url_pattern=url_pattern,
                set_spec=set_spec,
                created=now(),
            )
            .on_conflict_do_nothing()
            .returning(oai_sources.c.id)
        )
        return self.connection.scalar(statement) is not None

    def oai_sources(self, names: Collection[str] = ()) -> list[HarvestSource]:
        """The harvest sources called ``names`` (every one when empty), by name."""
        query = (
            sa.select(oai_sources, organisations.c.name.label("organisation"))
            .join(organisations)
            .order_by(oai_sources.c.name)
        )
        if names:
            query = query.where(oai_sources.c.name.in_(list(names)))
        return [
            HarvestSource(
                id=row.id,
                name=row.name,
                base_url=row.base_url,
                organisation=row.organisation,
                url_pattern=row.url_pattern,
                set_spec=row.set_spec,
                granularity=row.granularity,
                next_from=row.next_from,
                harvested=None if row.harvested is None else _utc(row.harvested),
                created=_utc(row.created),
            )
            for row in self.connection.execute(query)
        ]

    def finish_oai_harvest(self, source_id: int, granularity: str, next_from: str) -> None:
        """Store where the next incremental harvest of a source starts, after a success."""
        self.connection.execute(
            sa.update(oai_sources)
            .where(oai_sources.c.id == source_id)
            .values(granularity=granularity, next_from=next_from, harvested=now())
        )

    def oai_item_records(self, source_id: int, identifier: str) -> list[int]:
        """The ids of the records that a source's OAI item gave."""
        query = sa.select(oai_items.c.record_id).where(
            oai_items.c.source_id == source_id, oai_items.c.identifier == identifier
        )
        return sorted(self.connection.scalars(query))

    def add_oai_items(self, source_id: int, identifier: str, record_ids: Iterable[int]) -> None:
        """Remember that a source's OAI item gave these records (already known: no change)."""
        rows = [
            {"source_id": source_id, "identifier": identifier, "record_id": record_id}
            for record_id in record_ids
        ]
        if rows:
            self.connection.execute(self._insert(oai_items).on_conflict_do_nothing(), rows)

    def records_by_id(self, record_ids: Sequence[int]) -> list[tuple[int, Record]]:
        """The records with these row ids, with their locations, by id."""
        return self._records_where(records.c.id.in_(list(record_ids)), records.c.id)

    def datestamped_records(
        self,
        prefix: str | None,
        start: datetime | None,
        end: datetime | None,
        after: tuple[datetime, int] | None,
        limit: int,
    ) -> list[tuple[int, Record]]:
        """Up to ``limit`` records updated in [``start``, ``end``), under ``prefix`` if given,
        in (updated, id) order after the position ``after``: the pages of an OAI-PMH list."""
        condition = self._listing_condition(prefix, start, end)
        if after is not None:
            condition = sa.and_(
                condition,
                sa.tuple_(records.c.updated, records.c.id)
                > sa.tuple_(sa.literal(after[0], _TIME), sa.literal(after[1], sa.Integer)),
            )
        return self._records_where(condition, records.c.updated, records.c.id, limit=limit)

    def count_datestamped(
        self, prefix: str | None, start: datetime | None, end: datetime | None
    ) -> int:
        """How many records :meth:`datestamped_records` lists in all."""
        query = sa.select(sa.func.count()).where(self._listing_condition(prefix, start, end))
        counted: int = self.connection.scalar(query.select_from(records)) or 0
        return counted

    def earliest_updated(self) -> datetime | None:
        """The oldest ``records.updated``: OAI-PMH's earliestDatestamp."""
        earliest = self.connection.scalar(sa.select(sa.func.min(records.c.updated)))
        return None if earliest is None else _utc(earliest)

    @staticmethod
    def _listing_condition(
        prefix: str | None, start: datetime | None, end: datetime | None
    ) -> sa.ColumnElement[bool]:
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

    def _records_where(
        self, condition: sa.ColumnElement[bool], *order: Any, limit: int | None = None
    ) -> list[tuple[int, Record]]:
        query = sa.select(*_RECORD_COLUMNS).join(organisations).where(condition).order_by(*order)
        rows = self.connection.execute(query.limit(limit)).all()
        found: dict[int, list[Location]] = {row.id: [] for row in rows}
        for condition in _one_of(locations.c.record_id, found, self.connection.dialect):
            for loc in self.connection.execute(
                sa.select(
                    locations.c.record_id,
                    locations.c.url,
                    locations.c.priority,
                    locations.c.label,
                    locations.c.media_type,
                )
                .where(condition)
                .order_by(locations.c.priority, locations.c.id)
            ):
                found[loc.record_id].append(
                    Location(loc.url, loc.priority, loc.label, loc.media_type)
                )
        return [(row.id, _record(row, found[row.id])) for row in rows]

    # --- successions (resolution services) ---------------------------------------------------

    def named_successors(self, keys: Collection[str]) -> list[tuple[int, str, list[str]]]:
        """(row id, URN, successors) of the deactivated records among ``keys``."""
        found: list[tuple[int, str, list[str]]] = []
        for condition in _one_of(records.c.equivalence_key, keys, self.connection.dialect):
            query = sa.select(records.c.id, records.c.urn, records.c.successors).where(
                condition, records.c.status == "deactivated"
            )
            found += [(row[0], row[1], list(row[2])) for row in self.connection.execute(query)]
        return found

    def set_successions(self, predecessors: Sequence[tuple[int, str, Collection[str]]]) -> None:
        """Make each (predecessor row id, its URN, its successors' equivalence keys) what
        ``successions`` holds of that predecessor."""
        ids = [record_id for record_id, _, _ in predecessors]
        for condition in _one_of(successions.c.predecessor_id, ids, self.connection.dialect):
            self.connection.execute(sa.delete(successions).where(condition))
        rows = [
            {"successor_key": key, "predecessor_id": record_id, "predecessor_urn": urn}
            for record_id, urn, keys in predecessors
            for key in keys
        ]
        if rows:
            self.connection.execute(successions.insert(), rows)

    def predecessors(self, key: str) -> list[str]:
        """The URNs of the deactivated records naming the URN with equivalence key ``key`` as a
        successor, oldest first."""
        query = (
            sa.select(successions.c.predecessor_urn)
            .where(successions.c.successor_key == key)
            .order_by(successions.c.predecessor_id)
        )
        return list(self.connection.scalars(query))


UNCHECKED = datetime(1970, 1, 1, tzinfo=UTC)
"""``links.checked`` of a URL seeded for checking and not taken yet: due before any other."""

_LINK_COLUMNS = (
    links.c.url,
    links.c.status,
    links.c.http_status,
    links.c.detail,
    links.c.failures,
    links.c.since,
    links.c.checked,
)


def _link_state(row: Any) -> LinkState:
    checked = _utc(row.checked)
    return LinkState(
        url=row.url,
        status=row.status,
        http_status=row.http_status,
        detail=row.detail,
        failures=row.failures,
        since=_utc(row.since),
        checked=None if checked == UNCHECKED else checked,
    )


ResolutionRow = tuple[str, str | None, str | None, str]
"""What resolution reads of a record: its status, its targets (``records.targets``: the URLs
to redirect to, best first, one a line; None if none), its predecessors (the URNs of the
deactivated records naming it as a successor, one a line; None if none) and its prefix (what
the statistics count resolutions by)."""


_DriverSQL = tuple[str, Callable[[Any], Any]]


def _driver_sql(query: sa.Select[Any], dialect: sa.Dialect, name: str) -> _DriverSQL:
    """``query`` as its driver takes it, bypassing SQLAlchemy's per-execution work: the SQL and a
    function from the value of the bind parameter ``name`` to the driver's parameters (the
    others, like ``LIMIT 1``, are constants)."""
    # Rendered in: literal parameters, like the separator of aggregate_strings.
    compiled = query.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    fixed = dict(compiled.params)
    order = compiled.positiontup
    if order is None:  # named (psycopg)
        return str(compiled), lambda value: {**fixed, name: value}
    template, index = [fixed[n] for n in order], order.index(name)

    def positional(value: Any) -> list[Any]:  # qmark (sqlite3)
        parameters = template.copy()
        parameters[index] = value
        return parameters

    return str(compiled), positional


# Resolution's lookup on PostgreSQL, a batch of keys at a time (see _BatchedLookups). The keys
# travel as one text parameter, a key a line (no URN holds a control character, RFC 8141 §2):
# psycopg dumps a list parameter element by element in Python, ~5 µs a key.
_RESOLUTION_BATCH_SQL = b"""
SELECT r.equivalence_key, r.status, r.targets,
       (SELECT string_agg(s.predecessor_urn, E'\n') FROM successions s
        WHERE s.successor_key = r.equivalence_key),
       r.prefix
FROM records r WHERE r.equivalence_key = ANY(string_to_array($1, E'\n'))"""
_RESOLUTION_STATEMENT = b"urnkit_resolution"
_COMMAND_OK, _TUPLES_OK = 1, 2  # libpq's ExecStatusType (psycopg.pq.ExecStatus)

_Waiters = dict[str, list["asyncio.Future[ResolutionRow | None]"]]


class _BatchedLookups:
    """Resolution lookups on PostgreSQL for event loops, answered in batches on the loop.

    Each event loop has a connection of its own (autocommit, the statement prepared), driven
    through psycopg's libpq layer in nonblocking mode, its socket watched by the loop. A request
    queues its key and awaits a future; the loop's batch task sends every key queued as one
    query, and the keys queued while it runs make the next. A round trip and the server's work
    per statement are thus shared by many requests; alone, a request waits for one query. No
    thread: a worker thread with psycopg's cursors cost ~65 µs of CPU per query, more than the
    rest of a request; the loop sending libpq's calls costs ~30, mostly the kernel's.
    """

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect  # a psycopg connection, autocommit
        self._loops: dict[asyncio.AbstractEventLoop, _LoopLookups] = {}

    async def row(self, key: str) -> ResolutionRow | None:
        loop = asyncio.get_running_loop()
        lookups = self._loops.get(loop)
        if lookups is None:
            for gone in [other for other in self._loops if other.is_closed()]:
                self._loops.pop(gone).close()
            lookups = self._loops[loop] = _LoopLookups(loop, self._connect)
        return await lookups.row(key)

    def close(self) -> None:
        """Close every loop's connection (a loop still running elsewhere, in its thread)."""
        loops, self._loops = self._loops, {}
        for loop, lookups in loops.items():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if loop is running or not loop.is_running():
                lookups.close()
            else:
                with suppress(RuntimeError):  # closed meanwhile
                    loop.call_soon_threadsafe(lookups.close)


class _LoopLookups:
    """The lookups of one event loop (see :class:`_BatchedLookups`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, connect: Callable[[], Any]) -> None:
        self._loop = loop
        self._connect = connect
        self._queued: _Waiters = {}
        self._task: asyncio.Task[None] | None = None
        self._connection: Any = None
        self._answer: asyncio.Future[Any] | None = None  # the result of the query in flight
        self._result: Any = None  # its last result so far
        self._socket = -1  # the connection's, watched by the loop

    async def row(self, key: str) -> ResolutionRow | None:
        future: asyncio.Future[ResolutionRow | None] = self._loop.create_future()
        self._queued.setdefault(key, []).append(future)
        if self._task is None:
            self._task = self._loop.create_task(self._serve())
        return await future

    async def _serve(self) -> None:
        """Send what is queued, a batch at a time, until nothing is."""
        try:
            while self._queued:
                batch, self._queued = self._queued, {}
                keys = "\n".join(batch).encode()
                try:
                    rows = await self._query(keys)
                except Exception:  # a connection the server closed fails once: retry on a new one
                    self.close()
                    try:
                        rows = await self._query(keys)
                    except Exception as error:
                        self.close()
                        _settle(batch, {}, error)
                        continue
                _settle(batch, rows, None)
        finally:
            self._task = None

    async def _query(self, keys: bytes) -> dict[str, ResolutionRow]:
        if self._connection is None:
            self._connection = await asyncio.to_thread(self._open)
            # Kept: a lost connection's pgconn.socket raises, and the selector must forget this
            # descriptor before a new connection gets its number.
            self._socket = self._connection.pgconn.socket
            self._loop.add_reader(self._socket, self._readable)
        pgconn = self._connection.pgconn
        self._answer, self._result = self._loop.create_future(), None
        pgconn.send_query_prepared(_RESOLUTION_STATEMENT, [keys])
        while pgconn.flush():  # the socket's buffer was full: rare, the query is small
            await asyncio.sleep(0)
        result = await self._answer
        if result.status != _TUPLES_OK:
            message = result.error_message.decode("utf-8", "replace").strip()
            raise RuntimeError(f"the resolution lookup failed: {message}")
        found: dict[str, ResolutionRow] = {}
        for n in range(result.ntuples):
            key, *rest = (_text(result.get_value(n, column)) for column in range(5))
            found[key] = (rest[0], rest[1], rest[2], rest[3])
        return found

    def _open(self) -> Any:
        """A new connection with the statement prepared, nonblocking (in a worker thread)."""
        connection = self._connect()
        try:
            prepared = connection.pgconn.prepare(_RESOLUTION_STATEMENT, _RESOLUTION_BATCH_SQL)
            if prepared.status != _COMMAND_OK:
                raise RuntimeError(prepared.error_message.decode("utf-8", "replace"))
            connection.pgconn.nonblocking = 1
        except BaseException:
            connection.close()
            raise
        return connection

    def _readable(self) -> None:
        """The loop's callback when the connection's socket has something to read."""
        answer, pgconn = self._answer, self._connection.pgconn
        try:
            pgconn.consume_input()
            while not pgconn.is_busy():
                result = pgconn.get_result()
                if result is not None:
                    self._result = result
                    continue
                # The query is complete: only now does the connection take the next one.
                if answer is not None and not answer.done():
                    answer.set_result(self._result)
                break
        except Exception as error:  # the connection is lost: the next query makes another
            self.close()
            if answer is not None and not answer.done():
                answer.set_exception(error)

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            if not self._loop.is_closed():
                self._loop.remove_reader(self._socket)
            with suppress(Exception):  # already gone
                connection.close()


def _text(value: bytes | None) -> Any:
    return None if value is None else value.decode()


def _settle(batch: _Waiters, rows: Mapping[str, ResolutionRow], error: Exception | None) -> None:
    for key, futures in batch.items():
        for future in futures:
            if future.done():  # cancelled: the client went away
                continue
            if error is None:
                future.set_result(rows.get(key))
            else:  # an exception each: raising one in many tasks would pile up its traceback
                failure = RuntimeError(f"the resolution lookup failed: {error!r}")
                failure.__cause__ = error
                future.set_exception(failure)


class Store:
    """The database: a pool of connections and the transactions over it.

    >>> store = Store("sqlite://")
    >>> store.upgrade()
    >>> with store.transaction() as tx:
    ...     tx.create_organisation("Demo Library") is not None
    True
    """

    def __init__(self, url: str = DEFAULT_DATABASE_URL) -> None:
        self.url = url
        self.engine = create_engine(url)
        dialect = self.engine.dialect
        # The fast paths of resolution_row_async (see there); None where it falls back.
        self._lookups: _BatchedLookups | None = None
        self._readers: list[Any] | None = None  # idle sqlite3 connections of the event loops
        if dialect.name == "postgresql" and dialect.driver == "psycopg":
            self._lookups = _BatchedLookups(self._autocommit_connection)
        elif dialect.name == "sqlite" and not isinstance(self.engine.pool, StaticPool):
            self._sqlite_sql = _driver_sql(self._resolution_query, dialect, "key")
            self._readers = []

    def close(self) -> None:
        """Close every pooled connection."""
        if self._lookups is not None:
            self._lookups.close()
        while self._readers:
            self._readers.pop().close()
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A write transaction: committed when the block ends, rolled back if it raises."""
        with self.engine.begin() as connection:
            yield Transaction(connection)

    @contextmanager
    def snapshot(self) -> Iterator[Transaction]:
        """A read-only transaction (on SQLite a plain ``BEGIN``, which never blocks writers)."""
        with self.engine.connect() as connection:
            connection = connection.execution_options(urnkit_read_only=True)
            with connection.begin():
                yield Transaction(connection)

    # The hot path's queries, built once: building a statement and its cache key on every
    # resolution cost more than running it (benchmarks/resolve_bench.py).
    # The predecessors: a correlated subquery, one index probe in ``successions``.
    _predecessors = (
        sa.select(sa.func.aggregate_strings(successions.c.predecessor_urn, "\n"))
        .where(successions.c.successor_key == records.c.equivalence_key)
        .scalar_subquery()
    )
    _resolution_query = sa.select(
        records.c.status, records.c.targets, _predecessors, records.c.prefix
    ).where(records.c.equivalence_key == sa.bindparam("key", required=False))

    def resolution_row(self, key: str) -> ResolutionRow | None:
        """One indexed query for a record's status and targets (see :data:`ResolutionRow`),
        or None: resolution's read, for synchronous callers."""
        with self.engine.connect() as connection:
            connection = connection.execution_options(urnkit_read_only=True)
            if connection.dialect.name == "postgresql":
                # One statement needs no transaction: autocommit saves the BEGIN and ROLLBACK
                # round trips. (On SQLite a read BEGIN costs less than switching modes.)
                connection = connection.execution_options(isolation_level="AUTOCOMMIT")
            row = connection.execute(self._resolution_query, {"key": key}).first()
        return None if row is None else (row[0], row[1], row[2], row[3])

    async def resolution_row_async(self, key: str) -> ResolutionRow | None:
        """:meth:`resolution_row` for the event loop: the hot path of ``GET /{urn}``.

        SQLite runs the query on the event loop, through a sqlite3 connection of its own (no
        SQLAlchemy, no transaction, the statement cached by sqlite3): reading a few pages of a
        local file costs less than handing the call to a worker thread would. WAL readers wait
        for no writer; only recovery after a crash could hold them (``busy_timeout``).
        PostgreSQL batches the lookups of concurrent requests (:class:`_BatchedLookups`): a
        worker process uses one connection for resolution. Other databases and drivers, and
        in-memory SQLite, run :meth:`resolution_row` (in a worker thread unless in-memory).
        """
        if self._readers is not None:
            return self._sqlite_row(key)
        if self._lookups is not None:
            return await self._lookups.row(key)
        if self.engine.dialect.name == "sqlite":  # in memory: one shared connection
            return self.resolution_row(key)
        return await asyncio.to_thread(self.resolution_row, key)

    def _sqlite_row(self, key: str) -> ResolutionRow | None:
        assert self._readers is not None
        try:
            connection = self._readers.pop()
        except IndexError:  # the first call in this event loop, or more at once than before
            connection = self._detached_connection()
            connection.execute("PRAGMA query_only = ON")
            # Pages read from a memory map rather than with a read() each: 10.1 µs instead of
            # 11.6 per lookup among 1,000,000 URNs. (Up to 1 GiB; the rest is read as before.)
            connection.execute(f"PRAGMA mmap_size = {1 << 30}")
        sql, parameters = self._sqlite_sql
        try:
            row: ResolutionRow | None = connection.execute(sql, parameters(key)).fetchone()
        except BaseException:
            connection.close()
            raise
        self._readers.append(connection)
        return row

    def _detached_connection(self) -> Any:
        """A DBAPI connection made as the engine makes them (its connect events ran) that the
        pool no longer counts: a fast path keeps it for itself."""
        pooled = self.engine.raw_connection()
        connection = pooled.driver_connection
        pooled.detach()
        return connection

    def _autocommit_connection(self) -> Any:
        connection = self._detached_connection()
        connection.autocommit = True
        return connection

    # --- schema ----------------------------------------------------------------------------------

    def _alembic_config(self, connection: Connection) -> Any:
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(files("urnkit.resolver") / "migrations"))
        config.attributes["connection"] = connection
        return config

    def schema_state(self) -> Literal["empty", "current", "outdated"]:
        """Whether the database has no schema, the newest one, or one to upgrade."""
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory

        with self.engine.connect() as connection:
            if not sa.inspect(connection).get_table_names():
                return "empty"
            current = MigrationContext.configure(connection).get_current_heads()
            heads = ScriptDirectory.from_config(self._alembic_config(connection)).get_heads()
        return "current" if set(current) == set(heads) else "outdated"

    def upgrade(self, revision: str = "head") -> None:
        """Apply the Alembic migrations up to ``revision``."""
        from alembic import command

        with self.engine.begin() as connection:
            command.upgrade(self._alembic_config(connection), revision)

    # --- locks across processes ------------------------------------------------------------------

    @contextmanager
    def lock(self, name: str, *, wait: bool) -> Iterator[bool]:
        """Hold the lock ``name`` of this database, shared by every process on any machine
        using it, while the block runs; yields whether it is held (without ``wait``: False at
        once when another process holds it). PostgreSQL: a session advisory lock; SQLite: an
        ``flock`` on a file beside the database (in memory: one process, nothing to share). A
        process that dies lets go of it.

        >>> with Store("sqlite://").lock("demo", wait=False) as held:
        ...     held
        True
        """
        if self.engine.dialect.name == "postgresql":
            key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
            with self.engine.connect() as connection:
                connection = connection.execution_options(isolation_level="AUTOCOMMIT")
                if wait:
                    connection.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": key})
                take = sa.text("SELECT pg_try_advisory_lock(:key)")
                held = wait or bool(connection.scalar(take, {"key": key}))
                try:
                    yield held
                finally:
                    if held:
                        unlock = sa.text("SELECT pg_advisory_unlock(:key)")
                        connection.execute(unlock, {"key": key})
            return
        database = self.engine.url.database
        if not database or database == ":memory:":
            yield True
            return
        import fcntl

        with open(f"{database}.{name}.lock", "a") as file:
            try:
                fcntl.flock(file, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
                held = True
            except BlockingIOError:
                held = False
            try:
                yield held
            finally:
                if held:
                    fcntl.flock(file, fcntl.LOCK_UN)
