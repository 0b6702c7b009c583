"""The change counter of resolution on SQLite (migration ``resolution_changes``): it moves on
whatever changes what a redirect answers, not on a record inserted (a key not registered had no
redirect to keep), and not on PostgreSQL, which keeps none. Its use through the server:
tests/resolver/web/test_redirect_cache.py."""

from __future__ import annotations

from dataclasses import replace

from store_support import add_organisation, raw_sql, sample_record

from urnkit.resolver.store import Store


def test_the_counter_moves_on_changes_of_redirects_only(store: Store) -> None:
    # RFC 8458 §4.2: a record's status and locations decide its redirect.
    before = store.resolution_changes()
    if store.engine.dialect.name != "sqlite":
        assert before is None
        return
    assert before is not None
    record = sample_record("urn:nbn:fi:lib-1")
    with store.transaction() as tx:
        record_id = tx.records.insert(record, add_organisation(tx))
    assert store.resolution_changes() == before
    assert record_id is not None
    with store.transaction() as tx:
        tx.records.update(record_id, replace(record, status="deactivated"), {}, "gone", "test")
    after = store.resolution_changes()
    assert after is not None
    assert after > before


def test_each_move_names_the_key_whose_redirect_it_may_change(store: Store) -> None:
    # RFC 8458 §4.2: a server keeps a record's redirect until that record changes.
    if store.engine.dialect.name != "sqlite":
        assert store.resolution_changed(0, 1) is None
        return
    with store.transaction() as tx:
        owner = add_organisation(tx)
        ids = {n: tx.records.insert(sample_record(f"urn:nbn:fi:lib-{n}"), owner) for n in (1, 2)}
    moves = _moves(store, f"UPDATE records SET targets = 'https://e.org/' WHERE id = {ids[1]}")
    assert moves == ["urn:nbn:fi:lib-1"]
    # RFC 5829 §3.2: a successor's redirect names its predecessors.
    succession = (
        "INSERT INTO successions (successor_key, predecessor_id, predecessor_urn)"
        f" VALUES ('urn:nbn:fi:lib-2', {ids[1]}, 'URN:NBN:fi:lib-1')"
    )
    assert _moves(store, succession) == ["urn:nbn:fi:lib-2"]
    moved = "UPDATE successions SET successor_key = 'urn:nbn:fi:lib-3'"
    assert _moves(store, moved) == ["urn:nbn:fi:lib-2", "urn:nbn:fi:lib-3"]
    assert _moves(store, "DELETE FROM successions") == ["urn:nbn:fi:lib-3"]
    rekeyed = f"UPDATE records SET equivalence_key = 'urn:nbn:fi:lib-4' WHERE id = {ids[2]}"
    assert _moves(store, rekeyed) == ["urn:nbn:fi:lib-2", "urn:nbn:fi:lib-4"]
    # What moves nothing: a column resolution does not read, a record inserted.
    assert _moves(store, f"UPDATE records SET metadata = '{{}}' WHERE id = {ids[1]}") == []


def test_a_move_whose_keys_are_not_held_names_none(store: Store) -> None:
    # RFC 8458 §4.2: when the keys are not known, no kept redirect can be trusted.
    if store.engine.dialect.name != "sqlite":
        return
    with store.transaction() as tx:
        record_id = tx.records.insert(sample_record("urn:nbn:fi:lib-1"), add_organisation(tx))
    before = store.resolution_changes()
    assert before is not None
    raw_sql(store, "UPDATE resolution_changes SET counter = counter + 1")  # a restore's move
    raw_sql(store, f"UPDATE records SET status = 'active' WHERE id = {record_id}")
    assert store.resolution_changed(before, before + 2) is None
    assert store.resolution_changed(before + 1, before + 2) == ["urn:nbn:fi:lib-1"]
    assert store.resolution_changed(before + 2, before + 1) is None  # backwards
    assert store.resolution_changed(before, before + Store.MOST_CHANGED + 1) is None
    # Only the last 10,000 moves are held (migration resolution_changed_keys).
    same = f"UPDATE records SET status = 'active' WHERE id = {record_id}"
    with store.engine.begin() as connection:
        for _ in range(10_000):
            connection.exec_driver_sql(same)
    last = store.resolution_changes()
    assert last == before + 10_002
    assert store.resolution_changed(last - 1_000, last) == ["urn:nbn:fi:lib-1"] * 1_000
    with store.engine.connect() as connection:
        held = connection.exec_driver_sql("SELECT count(*) FROM resolution_changed_keys")
        assert held.scalar_one() == 10_000


def _moves(store: Store, statement: str) -> list[str] | None:
    """The keys :meth:`Store.resolution_changed` names for the moves ``statement`` made."""
    before = store.resolution_changes()
    raw_sql(store, statement)
    after = store.resolution_changes()
    assert before is not None
    assert after is not None
    return store.resolution_changed(before, after)
