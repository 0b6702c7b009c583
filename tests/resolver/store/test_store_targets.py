"""Resolution targets (``records.targets``) on SQLite and PostgreSQL: the locations best first
without the links known broken, kept so by every write and link status change, and filled in by
the migrations for records stored before them (targets, and who succeeds whom)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import sqlalchemy as sa
from resolver_support import mark_links
from store_support import add_organisation, sample_record

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.store import Store

A, B, C = "https://a.example/x", "https://b.example/x", "https://c.example/x"


def _with_locations(urn: str, *found: Location) -> Record:
    return replace(sample_record(urn), locations=found)


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
        tx.bulk.import_batch(imported, {"Library": organisation_id})
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
