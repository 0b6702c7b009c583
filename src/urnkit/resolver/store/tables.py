"""The resolver's tables (SQLAlchemy Core): what the Alembic migrations build.

The schema is created and changed only by the migrations in ``urnkit/resolver/migrations``
(:meth:`~urnkit.resolver.store.Store.upgrade`); :data:`metadata` describes it for queries and
must match them (a test compares the two). What keeps data correct lives in the database, never
only in a process:

* a URN's equivalence key is ``UNIQUE`` — two processes cannot register the same URN twice;
* sequential generation takes numbers with one ``UPDATE … RETURNING`` on the prefix row, which
  the database serializes;
* records and history rows cannot be deleted, history rows cannot be changed but for the
  newest entry's document, written once before the record changes (triggers).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

metadata = sa.MetaData()
_JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_TIME = sa.DateTime(timezone=True)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def unix_microseconds(moment: datetime) -> int:
    """A time as SQLite stores those of records and history: microseconds since 1970, UTC (a
    naive time is taken as UTC).

    >>> unix_microseconds(datetime(1970, 1, 1, 0, 0, 1, 5, tzinfo=UTC))
    1000005
    """
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return (aware - EPOCH) // _MICROSECOND


def _from_stored(value: int | str | None) -> datetime | None:
    """A time as SQLite hands it back: an integer of :func:`unix_microseconds`, or text as
    SQLAlchemy wrote it before migration times_as_integers (``2026-11-27 14:41:21.027875``)."""
    if value is None:
        return None
    if isinstance(value, str):
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    return EPOCH + value * _MICROSECOND


class UnixMicroseconds(sqlite.DATETIME):
    """SQLite's ``DATETIME`` column holding an integer, :func:`unix_microseconds`: 8 bytes where
    SQLAlchemy's text took 26 (migration times_as_integers), read back as an aware UTC time.

    >>> UnixMicroseconds().bind_processor(sqlite.dialect())(EPOCH + timedelta(seconds=2))
    2000000
    """

    cache_ok = True

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]

    def bind_processor(self, dialect: sa.Dialect) -> Callable[[datetime | None], int | None]:
        return lambda moment: None if moment is None else unix_microseconds(moment)

    def result_processor(self, dialect: sa.Dialect, coltype: object) -> Callable[[Any], Any]:
        return _from_stored

    def literal_processor(self, dialect: sa.Dialect) -> Callable[[datetime], str]:
        return lambda moment: str(unix_microseconds(moment))


# The times of records and history, the tables of a row or more per URN.
_MOMENT = _TIME.with_variant(UnixMicroseconds(), "sqlite")

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
# Staff accounts (migration staff_accounts): a user name unique in any case (``name_key``,
# case-folded), an argon2 hash.
accounts = sa.Table(
    "accounts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("organisation_id", sa.ForeignKey("organisations.id"), nullable=False),
    sa.Column("name", sa.String(254), nullable=False),
    sa.Column("name_key", sa.String(254), nullable=False, unique=True),
    sa.Column("password_hash", sa.String(200), nullable=False),
    sa.Column("role", sa.String(20), nullable=False),
    sa.Column("disabled", sa.Boolean, nullable=False),
    sa.Column("must_change_password", sa.Boolean, nullable=False),
    sa.Column("created", _TIME, nullable=False),
)
# The live staff sessions: the SHA-256 hash of each one's id (its cookie carries the id, signed),
# its account, its expiry. Signing out, a password change and an admin delete rows.
staff_sessions = sa.Table(
    "staff_sessions",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("account_id", sa.ForeignKey("accounts.id"), nullable=False, index=True),
    sa.Column("created", _TIME, nullable=False),
    sa.Column("expires", _TIME, nullable=False),
)
# Failed sign-ins by account and client address together ("<name_key> from <address>"), for
# every process: how many in a row, the last one's time, and when the pair may try again.
sign_in_failures = sa.Table(
    "sign_in_failures",
    metadata,
    sa.Column("subject", sa.String(600), primary_key=True),
    sa.Column("failures", sa.Integer, nullable=False),
    sa.Column("last_failure", _TIME, nullable=False),
    sa.Column("not_before", _TIME, nullable=False),
)
# Secrets every server shares, made once (the staff sessions' signing key).
server_secrets = sa.Table(
    "server_secrets",
    metadata,
    sa.Column("name", sa.String(63), primary_key=True),
    sa.Column("value", sa.String(200), nullable=False),
    sa.Column("created", _TIME, nullable=False),
)
# The foreign keys of records.owner_id, locations.record_id, locations.owner_id and
# history.record_id are foreign keys on SQLite and, on PostgreSQL, checks once a statement that
# refuse the same (migration references_per_statement).
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
    sa.Column("created", _MOMENT, nullable=False),
    sa.Column("updated", _MOMENT, nullable=False),
    # What resolution redirects to, best first, one location a line: its URL, and a tab and its
    # media type when it has one (migration target_media_types; queries.links.resolution_targets);
    # NULL when none.
    sa.Column("targets", sa.Text),
    # Only on records having a location restricted to a network (migration location_networks):
    # every usable location, best first, one a line as "{holder id}/{network}\t{target}" (the
    # target as a line of targets gives it; "\t{target}" when unrestricted;
    # queries.links.restricted_targets); NULL on all others.
    sa.Column("restricted", sa.Text),
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
    # The name of a network of the holder's (owner_id) that alone may read it; NULL: anyone.
    sa.Column("restricted_to", sa.String(63)),
    # Reverse lookup by URL, and the records a link status change concerns.
    sa.Index("ix_locations_url", "url", postgresql_using="hash"),
)
# Organisations the owner of a record lets add and maintain their own locations on it
# (migration location_grants); each location names its holder (locations.owner_id).
location_grants = sa.Table(
    "location_grants",
    metadata,
    sa.Column(
        "record_id",
        sa.BigInteger().with_variant(sa.Integer, "sqlite"),
        sa.ForeignKey("records.id"),
        primary_key=True,
    ),
    sa.Column("organisation_id", sa.ForeignKey("organisations.id"), primary_key=True),
    sa.Column("granted", _TIME, nullable=False),
    sa.Column("granted_by", sa.String(200), nullable=False),  # the actor, as history names it
)
history = sa.Table(
    "history",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
    sa.Column("record_id", sa.ForeignKey("records.id"), nullable=False, index=True),
    sa.Column("at", _MOMENT, nullable=False),
    sa.Column("action", sa.String(20), nullable=False),
    sa.Column("actor", sa.String(200), nullable=False),
    # The record as it was after the change; NULL on the newest entry: the record as it is now
    # (migration current_history).
    sa.Column("record", _JSON),
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
# The URLs due for checking, oldest check first (Links.claim).
sa.Index("ix_links_checked", links.c.checked)
# Resolutions per delegated prefix per day (UTC), for the statistics page.
resolution_counts = sa.Table(
    "resolution_counts",
    metadata,
    sa.Column("prefix", sa.String(200), primary_key=True),
    sa.Column("day", sa.Date, primary_key=True),
    sa.Column("count", sa.BigInteger, nullable=False),
)
# An organisation's named networks: address ranges (CIDR), one a line (domain.networks).
networks = sa.Table(
    "networks",
    metadata,
    sa.Column("organisation_id", sa.ForeignKey("organisations.id"), primary_key=True),
    sa.Column("name", sa.String(63), primary_key=True),
    sa.Column("ranges", sa.Text, nullable=False),
    sa.Column("updated", _TIME, nullable=False),
)
# Country code -> national resolver (RFC 8458 §4.4): see urnkit.resolver.domain.forwarding.
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
    # the format harvested: oai_dc or epicur
    sa.Column("metadata_prefix", sa.String(30), nullable=False, server_default="oai_dc"),
    sa.Column("granularity", sa.String(30)),  # the repository's, from Identify
    sa.Column("next_from", sa.String(30)),  # the next incremental harvest's from=
    sa.Column("harvested", _TIME),  # when a harvest last succeeded
    sa.Column("created", _TIME, nullable=False),
    # Where a harvest stopped at its deadline (migration "harvest_resumption"): the resumption
    # token the next run asks with, and the next from= once that list is read to its end.
    sa.Column("resumption_token", sa.Text),
    sa.Column("resumption_from", sa.String(30)),
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
# Each harvest of a source (migration "harvest_runs"): its outcome, summary and refusals.
harvest_runs = sa.Table(
    "harvest_runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("source_id", sa.ForeignKey("oai_sources.id"), nullable=False, index=True),
    sa.Column("started", _TIME, nullable=False),
    sa.Column("finished", _TIME, nullable=False),
    sa.Column("outcome", sa.String(10), nullable=False),  # ok, stopped, failed
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("refused", _JSON, nullable=False),  # a list of strings
)
# Who succeeds whom: a row per successor a deactivated record names (RFC 8458 §4.1), keyed by
# the successor's equivalence key, registered here or not. Resolution reads a record's
# predecessors from it in the same query as its targets (fast_lookup.RESOLUTION_QUERY).
successions = sa.Table(
    "successions",
    metadata,
    sa.Column("successor_key", sa.String(2000), primary_key=True),
    sa.Column("predecessor_id", sa.ForeignKey("records.id"), primary_key=True),
    sa.Column("predecessor_urn", sa.String(2000), nullable=False),
)
# A record's other identifiers (migration "record_identifiers"; domain.identifiers): a row per
# URN in its metadata.identifiers, keyed by that URN's equivalence key (organisation_id NULL),
# and a row for its metadata.local_id, keyed by the local id itself and held by the record's
# organisation, which the unique constraint keeps to one record (NULLs are distinct: URNs of
# other namespaces may be carried by several records).
record_identifiers = sa.Table(
    "record_identifiers",
    metadata,
    sa.Column("key", sa.String(2000), primary_key=True),
    sa.Column(
        "record_id",
        sa.BigInteger().with_variant(sa.Integer, "sqlite"),
        sa.ForeignKey("records.id"),
        primary_key=True,
        index=True,
    ),
    sa.Column("organisation_id", sa.ForeignKey("organisations.id")),
    sa.UniqueConstraint("organisation_id", "key", name="uq_record_identifiers_local_id"),
)
