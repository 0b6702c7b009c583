"""Link checking's queries (``tx.links``): the state of each location URL, the checks made, the
URLs due, and the resolution targets that follow from the links found broken."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from urnkit.resolver.domain import BrokenLink, LinkCheck, LinkState, Location, target_line
from urnkit.resolver.store.queries.base import Queries, now, one_of, utc
from urnkit.resolver.store.tables import link_checks, links, locations, organisations, records

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

# The broken URLs among those whose SHA-256 hashes :hashes holds, space-separated: one text
# parameter, split by the database (see broken_by_hashes).
_BROKEN = {
    "postgresql": sa.text(
        "SELECT url FROM links WHERE status = 'broken' "
        "AND url_hash = ANY(string_to_array(:hashes, ' '))"
    ),
    "sqlite": sa.text(
        "SELECT url FROM links WHERE status = 'broken' AND url_hash IN"
        " (SELECT value FROM json_each('[\"' || replace(:hashes, ' ', '\",\"') || '\"]'))"
    ),
}


def url_hash(url: str) -> str:
    """The key of a URL in the ``links`` table: its SHA-256.

    >>> url_hash("https://example.org/")[:12]
    '8198d1bac40a'
    """
    return hashlib.sha256(url.encode()).hexdigest()


def resolution_targets(found: Sequence[Location], broken: Collection[str]) -> str | None:
    """What ``records.targets`` holds: the locations of ``found`` (best first) not in
    ``broken`` and not restricted to a network, one a line, each its URL and, after a tab,
    its media type if it has one (:func:`~urnkit.resolver.domain.target_line`); None when
    none is left.

    >>> resolution_targets([Location("https://a.example/"), Location("https://b.example/"),
    ...                     Location("https://c.example/", restricted_to="library"),
    ...                     Location("https://d.example/", media_type="application/pdf")],
    ...                    {"https://a.example/"})
    'https://b.example/\\nhttps://d.example/\\tapplication/pdf'
    """
    usable = (
        target_line(loc) for loc in found if loc.url not in broken and loc.restricted_to is None
    )
    return "\n".join(usable) or None


def restricted_targets(
    found: Sequence[tuple[Location, int]], broken: Collection[str]
) -> str | None:
    """What ``records.restricted`` holds, of ``found`` (each location, best first, with the id
    of the organisation holding it): None unless a location not in ``broken`` is restricted to
    a network; then every location not in ``broken``, one a line: ``{holder}/{network}``, a tab
    and the location as ``records.targets`` gives it (:func:`resolution_targets`); an
    unrestricted one with nothing before the tab.

    >>> restricted_targets([(Location("https://a.example/", restricted_to="library"), 7),
    ...                     (Location("https://b.example/", media_type="text/html"), 7)], ())
    '7/library\\thttps://a.example/\\n\\thttps://b.example/\\ttext/html'
    >>> restricted_targets([(Location("https://b.example/"), 7)], ()) is None
    True
    """
    usable = [(loc, holder) for loc, holder in found if loc.url not in broken]
    if all(loc.restricted_to is None for loc, _ in usable):
        return None
    return "\n".join(
        f"{'' if loc.restricted_to is None else f'{holder}/{loc.restricted_to}'}"
        f"\t{target_line(loc)}"
        for loc, holder in usable
    )


def broken_urls(connection: Connection, urls: Iterable[str]) -> set[str]:
    """Which of ``urls`` link checking last found broken."""
    return broken_by_hashes(connection, " ".join({url_hash(url) for url in urls}))


def broken_by_hashes(connection: Connection, hashes: str) -> set[str]:
    """The broken URLs among those whose SHA-256 ``hashes`` holds (space-separated): one text
    parameter, split by the database, as psycopg dumped a 5,000-element array parameter in
    Python element by element, costing more than the query; and as an import hashes its URLs
    in the process preparing its batches."""
    if not hashes:
        return set()
    return set(connection.scalars(_BROKEN[connection.dialect.name], {"hashes": hashes}))


def _link_state(row: Any) -> LinkState:
    checked = utc(row.checked)
    return LinkState(
        url=row.url,
        status=row.status,
        http_status=row.http_status,
        detail=row.detail,
        failures=row.failures,
        since=utc(row.since),
        checked=None if checked == UNCHECKED else checked,
    )


class Links(Queries):
    """Link checking's queries: ``links`` and ``link_checks``, and ``records.targets``."""

    __slots__ = ()

    def seed(self) -> int:
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

    def claim(self, due: datetime, limit: int) -> list[str]:
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

    def states(self, urls: Iterable[str], *, for_update: bool = False) -> dict[str, LinkState]:
        """What link checking knows of each of ``urls`` that it has seen, by URL; with
        ``for_update`` the rows stay locked until the transaction ends (PostgreSQL)."""
        found: dict[str, LinkState] = {}
        hashes = sorted({url_hash(url) for url in urls})
        for condition in one_of(links.c.url_hash, hashes, self.dialect):
            query = sa.select(*_LINK_COLUMNS).where(condition)
            for row in self.connection.execute(query.with_for_update() if for_update else query):
                found[row.url] = _link_state(row)
        return found

    def last_working(self, urls: Iterable[str]) -> dict[str, datetime]:
        """When each of ``urls`` was last checked and found working (its newest ``ok``
        check), by URL; a URL never found working is left out."""
        found: dict[str, datetime] = {}
        hashes = sorted({url_hash(url) for url in urls})
        for condition in one_of(link_checks.c.url_hash, hashes, self.dialect):
            query = (
                sa.select(links.c.url, sa.func.max(link_checks.c.at))
                .join(links, links.c.url_hash == link_checks.c.url_hash)
                .where(condition, link_checks.c.status == "ok")
                .group_by(links.c.url)
            )
            for url, at in self.connection.execute(query):
                found[url] = utc(at)
        return found

    def save_checks(self, states: Sequence[LinkState], checks: Sequence[LinkCheck]) -> None:
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

    def broken(self, owner: str | None) -> list[BrokenLink]:
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

    def holders(self, url: str) -> set[str]:
        """The organisations holding a location at ``url``, by name."""
        query = (
            sa.select(organisations.c.name)
            .join(locations, locations.c.owner_id == organisations.c.id)
            .where(locations.c.url == url)
        )
        return set(self.connection.scalars(query))

    def refresh_targets(self, urls: Collection[str]) -> int:
        """Recompute ``records.targets`` of every record with a location at one of ``urls``
        (after their link status changed); how many records that was."""
        if not urls:
            return 0
        record_ids: set[int] = set()
        for condition in one_of(locations.c.url, urls, self.dialect):
            query = sa.select(locations.c.record_id).where(condition)
            record_ids.update(self.connection.scalars(query))
        # The records locked first, in the order every write of records takes them (by key),
        # and then their locations read: a write of one of them commits before, not between.
        for condition in one_of(records.c.id, record_ids, self.dialect):
            locked = sa.select(records.c.id).where(condition).order_by(records.c.equivalence_key)
            self.connection.execute(locked.with_for_update())
        changed = 0
        for condition in one_of(locations.c.record_id, record_ids, self.dialect):
            found: dict[int, list[tuple[Location, int]]] = {}
            for row in self.connection.execute(
                sa.select(
                    locations.c.record_id,
                    locations.c.url,
                    locations.c.media_type,
                    locations.c.restricted_to,
                    locations.c.owner_id,
                )
                .where(condition)
                .order_by(locations.c.priority, locations.c.id)
            ):
                location = Location(
                    row.url, media_type=row.media_type, restricted_to=row.restricted_to
                )
                found.setdefault(row.record_id, []).append((location, row.owner_id))
            broken = broken_urls(
                self.connection, (loc.url for locs in found.values() for loc, _ in locs)
            )
            self.connection.execute(
                sa.update(records)
                .where(records.c.id == sa.bindparam("record_id"))
                .values(
                    targets=sa.bindparam("new_targets"),
                    restricted=sa.bindparam("new_restricted"),
                ),
                [
                    {
                        "record_id": rid,
                        "new_targets": resolution_targets([loc for loc, _ in locs], broken),
                        "new_restricted": restricted_targets(locs, broken),
                    }
                    for rid, locs in found.items()
                ],
            )
            changed += len(found)
        return changed
