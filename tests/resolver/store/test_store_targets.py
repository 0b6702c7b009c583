"""Resolution targets (``records.targets``) on SQLite and PostgreSQL: the locations best first
without the links known broken, kept so by every write and link status change, and filled in by
the migrations for records stored before them (targets, and who succeeds whom)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import sqlalchemy as sa
from resolver_support import mark_links
from store_support import add_organisation, downgrade, sample_record

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.store import (
    SqliteStagedImport,
    StagedImport,
    Store,
    records,
    stage_import,
    stage_sqlite_import,
)

A, B, C = "https://a.example/x", "https://b.example/x", "https://c.example/x"


def _with_locations(urn: str, *found: Location) -> Record:
    return replace(sample_record(urn), locations=found)


def _staged(
    store: Store, batch: list[Record], owner: dict[str, int]
) -> StagedImport | SqliteStagedImport:
    """``batch`` staged for ``tx.bulk.import_staged`` as ``store``'s database imports it (on
    SQLite each under id 1: moved past the highest when stored)."""
    if store.engine.dialect.name == "postgresql":
        return stage_import(batch, owner, [record_json(r) for r in batch])
    return stage_sqlite_import([(1, r) for r in batch], owner)


def test_targets_are_the_locations_best_first_without_broken_links(store: Store) -> None:
    # RFC 8458 §4.4: resolution leads to the resource: to the best location that is not known
    # broken; a record whose every location is broken gets no target (its surrogate page).
    with store.transaction() as tx:
        organisation_id = add_organisation(tx)
        found = (Location(B, priority=1), Location(A, priority=2), Location(C, priority=2))
        tx.records.insert(_with_locations("urn:nbn:fi:demo-1", *found), organisation_id)
    assert store.resolution_row("urn:nbn:fi:demo-1") == (
        "active",
        f"{B}\n{A}\n{C}",
        None,
        "fi:demo",
        None,
    )
    mark_links(store, "broken", B)
    assert store.resolution_row("urn:nbn:fi:demo-1") == (
        "active",
        f"{A}\n{C}",
        None,
        "fi:demo",
        None,
    )
    mark_links(store, "broken", A, C)
    assert store.resolution_row("urn:nbn:fi:demo-1") == ("active", None, None, "fi:demo", None)
    mark_links(store, "ok", A, B, C)
    assert store.resolution_row("urn:nbn:fi:demo-1") == (
        "active",
        f"{B}\n{A}\n{C}",
        None,
        "fi:demo",
        None,
    )


def test_writes_leave_out_links_known_broken(store: Store) -> None:
    with store.transaction() as tx:
        organisation_id = add_organisation(tx)
    mark_links(store, "broken", A)
    with store.transaction() as tx:
        tx.records.insert(
            _with_locations("urn:nbn:fi:demo-1", Location(A), Location(B)), organisation_id
        )
        tx.bulk.insert_records(
            [_with_locations("urn:nbn:fi:demo-2", Location(A), Location(C))],
            {"Library": organisation_id},
        )
        imported = [_with_locations("urn:nbn:fi:demo-3", Location(A), Location(B))]
        tx.bulk.import_staged(_staged(store, imported, {"Library": organisation_id}))
        record_id = tx.records.id("urn:nbn:fi:demo-1")
        assert record_id is not None
        changed = _with_locations("urn:nbn:fi:demo-1", Location(C), Location(A))
        tx.records.update(record_id, changed, {}, "replaced", "test")
    assert store.resolution_row("urn:nbn:fi:demo-1") == ("active", C, None, "fi:demo", None)
    assert store.resolution_row("urn:nbn:fi:demo-2") == ("active", C, None, "fi:demo", None)
    assert store.resolution_row("urn:nbn:fi:demo-3") == ("active", B, None, "fi:demo", None)


def test_upgrading_fills_in_the_targets_of_stored_records(empty_store: Store) -> None:
    empty_store.upgrade("0001")
    moment = datetime.now(UTC)
    with empty_store.engine.begin() as connection:
        organisation_id = connection.execute(
            sa.text("INSERT INTO organisations (name, created) VALUES ('L', :t) RETURNING id"),
            {"t": moment},
        ).scalar_one()
        for key, urls in (("urn:nbn:fi:demo-1", [(2, A), (1, B)]), ("urn:nbn:fi:demo-2", [])):
            record_id = connection.execute(
                sa.text(
                    "INSERT INTO records (equivalence_key, urn, prefix, status, metadata, "
                    "successors, owner_id, created, updated) VALUES (:k, :k, 'fi:demo', "
                    "'active', '{}', '[]', :o, :t, :t) RETURNING id"
                ),
                {"k": key, "o": organisation_id, "t": moment},
            ).scalar_one()
            for priority, url in urls:
                connection.execute(
                    sa.text(
                        "INSERT INTO locations (record_id, url, priority, owner_id) "
                        "VALUES (:r, :u, :p, :o)"
                    ),
                    {"r": record_id, "u": url, "p": priority, "o": organisation_id},
                )
    empty_store.upgrade()
    assert empty_store.resolution_row("urn:nbn:fi:demo-1") == (
        "active",
        f"{B}\n{A}",
        None,
        "fi:demo",
        None,
    )
    assert empty_store.resolution_row("urn:nbn:fi:demo-2") == (
        "active",
        None,
        None,
        "fi:demo",
        None,
    )


def test_upgrading_finds_who_succeeds_whom_among_stored_records(empty_store: Store) -> None:
    # Migration "successions": the predecessors of records deactivated before it (RFC 5829's
    # predecessor-version links) are read with resolution; a successor that is no URN (imported
    # as it was) is nobody's.
    empty_store.upgrade("0002")
    with empty_store.transaction() as tx:
        organisation_id = add_organisation(tx)
        tx.records.insert(sample_record("urn:nbn:fi:demo-2"), organisation_id)
        old = replace(
            sample_record("urn:nbn:fi:demo-1"),
            status="deactivated",
            successors=("URN:NBN:FI:demo-2", "not a urn"),
        )
        tx.records.insert(old, organisation_id)
    empty_store.upgrade()
    url = "https://example.org/x"  # where _record locates every record
    assert empty_store.resolution_row("urn:nbn:fi:demo-2") == (
        "active",
        url,
        "urn:nbn:fi:demo-1",
        "fi:demo",
        None,
    )
    assert empty_store.resolution_row("urn:nbn:fi:demo-1") == (
        "deactivated",
        url,
        None,
        "fi:demo",
        None,
    )


# --- media types on the row (migration target_media_types) ----------------------------------------

TYPED = (
    Location(A, priority=1, media_type="Application/PDF; charset=binary"),
    Location(B, priority=2, media_type="not a media type"),
    Location(C, priority=3, media_type="text/html"),
)


def test_every_write_path_stores_the_same_typed_targets(store: Store) -> None:
    # The API's insert, the bulk insert and the staged import (on PostgreSQL by COPY), whose
    # targets the database rewrites when a link is broken: all as resolution_targets writes
    # them, each location's media type after a tab.
    with store.transaction() as tx:
        owner = {"Library": add_organisation(tx)}
    for broken in ((), (A,)):
        if broken:
            mark_links(store, "broken", *broken)
        made = [_with_locations(f"urn:nbn:fi:demo-{len(broken)}{n}", *TYPED) for n in range(3)]
        with store.transaction() as tx:
            tx.records.insert(made[0], owner["Library"])
            tx.bulk.insert_records([made[1]], owner)
            assert tx.bulk.import_staged(_staged(store, [made[2]], owner)) == 1
        expected = [] if broken else [f"{A}\tapplication/pdf"]
        expected += [B, f"{C}\ttext/html"]
        for record in made:
            row = store.resolution_row(record.key)
            assert row is not None
            assert row[1] == "\n".join(expected), record.urn


def _rows(store: Store) -> dict[str, tuple[str | None, str | None]]:
    with store.engine.connect() as connection:
        query = sa.select(records.c.urn, records.c.targets, records.c.restricted)
        return {
            urn: (targets, restricted) for urn, targets, restricted in connection.execute(query)
        }


def test_upgrading_types_the_targets_and_downgrading_strips_them(empty_store: Store) -> None:
    empty_store.upgrade("location_networks")
    shut = Location("https://library.example/x", 0, media_type="text/html", restricted_to="rooms")
    with empty_store.transaction() as tx:
        organisation_id = add_organisation(tx)
        tx.records.insert(_with_locations("urn:nbn:fi:demo-1", *TYPED), organisation_id)
        tx.records.insert(_with_locations("urn:nbn:fi:demo-2", shut, *TYPED), organisation_id)
        tx.records.insert(_with_locations("urn:nbn:fi:demo-3", Location(B)), organisation_id)
    mark_links(empty_store, "broken", C)  # the upgrade leaves broken links out too
    # As the code before the migration wrote them: URLs only, C left out (broken).
    old = {
        "urn:nbn:fi:demo-1": (f"{A}\n{B}", None),
        "urn:nbn:fi:demo-2": (f"{A}\n{B}", f"{organisation_id}/rooms\t{shut.url}\n\t{A}\n\t{B}"),
        "urn:nbn:fi:demo-3": (B, None),
    }
    with empty_store.transaction() as tx:
        for urn, (targets, restricted) in old.items():
            tx.connection.execute(
                sa.update(records)
                .where(records.c.urn == urn)
                .values(targets=targets, restricted=restricted)
            )
    typed = {
        "urn:nbn:fi:demo-1": (f"{A}\tapplication/pdf\n{B}", None),
        "urn:nbn:fi:demo-2": (
            f"{A}\tapplication/pdf\n{B}",
            f"{organisation_id}/rooms\t{shut.url}\ttext/html\n\t{A}\tapplication/pdf\n\t{B}",
        ),
        "urn:nbn:fi:demo-3": (B, None),
    }
    empty_store.upgrade()
    assert _rows(empty_store) == typed
    downgrade(empty_store, "location_networks")
    assert _rows(empty_store) == old
    empty_store.upgrade()
    assert _rows(empty_store) == typed
