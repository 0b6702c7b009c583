"""The change counter of resolution on SQLite (migration ``resolution_changes``): it moves on
whatever changes what a redirect answers, not on a record inserted (a key not registered had no
redirect to keep), and not on PostgreSQL, which keeps none. Its use through the server:
tests/resolver/web/test_redirect_cache.py."""

from __future__ import annotations

from dataclasses import replace

from store_support import add_organisation, sample_record

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
