"""SQLite's staged import (``stage_sqlite_import``, then ``tx.bulk.import_staged``): rows made
ready in another process, with the ids the import began with, stored whole however the store
changed meanwhile: ids taken by records registered since move past the highest, records already
present are skipped, and each stored record keeps its own locations, title and history."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from itertools import count
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from store_support import add_organisation, sample_record, title_index_matches

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.store import Store, stage_sqlite_import

_NUMBERS = count(1)  # URNs differ between examples, which share one database


@pytest.fixture(scope="module")
def sqlite_store() -> Iterator[Store]:
    store = Store("sqlite://")
    store.upgrade()
    with store.transaction() as tx:
        add_organisation(tx)
    yield store
    store.close()


def _imported(n: int, title: Any, urls: int) -> Record:
    record = sample_record(f"urn:nbn:fi:bulk-{n}")
    found = tuple(Location(f"https://example.org/{n}/{i}", priority=i + 1) for i in range(urls))
    metadata = {} if title is None else {"title": title}
    return replace(record, locations=found, metadata=metadata)


def _stored(store: Store, key: str) -> tuple[Record, list[str], bool]:
    """The record stored under ``key``, the actions of its history, whether the title index
    finds it by its title."""
    with store.snapshot() as tx:
        record_id = tx.records.id(key)
        record = tx.records.get(key)
        assert record_id is not None
        assert record is not None
        actions = [e.action for e in tx.records.history(record_id, {})]
        title = record.metadata.get("title")
        found = tx.connection.scalars(
            sa.text("SELECT rowid FROM record_titles WHERE title LIKE :title"),
            {"title": f"%{title}%"},
        )
        indexed = title is not None and record_id in set(found)
    return record, actions, indexed


# Hypothesis: the boundaries are which staged keys are present already, how many records were
# registered after staging (taking the staged ids), and titles of every kind the trigger or the
# import indexes (text, a number, none) over zero or more locations.
@settings(max_examples=40, deadline=None)
@given(
    shapes=st.lists(
        st.tuples(st.sampled_from(["On URNs", 1999, None]), st.integers(0, 3), st.booleans()),
        min_size=1,
        max_size=6,
    ),
    registered_since=st.integers(0, 4),
)
def test_a_staged_batch_is_stored_whole_whatever_changed_since(
    sqlite_store: Store, shapes: list[tuple[Any, int, bool]], registered_since: int
) -> None:
    store = sqlite_store
    batch = [(next(_NUMBERS), *shape) for shape in shapes]
    made = {n: _imported(n, title, urls) for n, title, urls, _ in batch}
    with store.snapshot() as tx:
        base, owner = tx.records.highest_id(), tx.organisations.ids()["Library"]
    numbered = [(base + i, made[n]) for i, (n, *_) in enumerate(batch, 1)]
    staged = stage_sqlite_import(numbered, {"Library": owner})
    present = [made[n] for n, _, _, was_present in batch if was_present]
    with store.transaction() as tx:
        for record in present:  # registered before, with another location
            tx.records.insert(
                replace(record, locations=(Location("https://before.example/"),)), owner
            )
        for _ in range(registered_since):
            tx.records.insert(sample_record(f"urn:nbn:fi:since-{next(_NUMBERS)}"), owner)
    with store.transaction() as tx:
        assert tx.bulk.import_staged(staged) == len(made) - len(present)
    for record in made.values():
        stored, actions, indexed = _stored(store, record.key)
        if record in present:
            assert [loc.url for loc in stored.locations] == ["https://before.example/"]
            continue
        assert [loc.url for loc in stored.locations] == [loc.url for loc in record.locations]
        assert stored.metadata == record.metadata
        assert actions == ["imported"]
        assert indexed == (record.metadata.get("title") is not None)
        assert store.resolution_row(record.key) == (
            "active",
            "\n".join(loc.url for loc in record.locations) or None,
            None,
            "fi:bulk",
            None,
        )
    assert title_index_matches(store)
