"""History without a second copy of the record (migration ``current_history``), on SQLite and
PostgreSQL: replayed change by change, every record's history gives back each state it had, as
the API showed it then (RFC 8458 §4.1: a URN:NBN's record is kept, never reused); the stored
rows hold exactly one entry without a document per record, its newest; entries stored before the
migration keep their documents and the records go on changing.
"""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from services_support import HERE, THERE, Principals

from urnkit.resolver.domain import ConflictError, Location, NotFoundError, UnacceptableError
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services import Services
from urnkit.resolver.store import Store

DB_SETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
NUMBERS = itertools.count(1)
METADATA = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3)
CHANGES = st.lists(
    st.tuples(
        st.sampled_from(["put", "put by the admin", "patch", "relocate", "deactivate"]),
        st.sampled_from([0, 1]),  # which of two records
        METADATA,
    ),
    min_size=1,
    max_size=8,
)


def _change(services: Services, who: Principals, kind: str, urn: str, metadata: Any) -> None:
    if kind == "put":
        services.records.put(who.demo, urn, HERE, metadata)
    elif kind == "put by the admin":  # of Other Library, spelled otherwise (RFC 8141 §3)
        services.records.put(who.admin, urn.upper(), THERE, metadata)
    elif kind == "patch":
        services.records.patch(who.demo, urn, {"metadata": metadata})
    elif kind == "relocate":
        found = [Location(f"https://example.org/{n}", n) for n in range(1, 1 + len(metadata))]
        services.records.patch(who.demo, urn, {"locations": found})
    else:
        services.records.deactivate(who.demo, urn, str(metadata)[:50], [])


@DB_SETTINGS
@given(changes=CHANGES)
def test_history_replays_every_state_a_record_had(
    services: Services, who: Principals, changes: list[tuple[str, int, Any]]
) -> None:
    urns = [f"urn:nbn:fi:demo-{next(NUMBERS)}" for _ in range(2)]  # new for each example
    states: dict[str, list[dict[str, Any]]] = {urn: [] for urn in urns}
    for kind, which, metadata in changes:
        try:
            _change(services, who, kind, urns[which], metadata)
        except (ConflictError, NotFoundError, UnacceptableError):  # refused: nothing changed
            continue
        states[urns[which]].append(record_json(services.records.get(urns[which])))
    for urn, expected in states.items():
        if expected:
            history = services.records.history(urn)
            assert [dict(entry.record) for entry in history] == expected
    _assert_one_current_entry_each(services.store)


def _assert_one_current_entry_each(store: Store) -> None:
    with store.engine.connect() as connection:
        rows = connection.execute(
            sa.text(
                "SELECT record_id, max(id) AS newest,"
                " sum(CASE WHEN record IS NULL THEN 1 ELSE 0 END) AS current,"
                " max(CASE WHEN record IS NULL THEN id END) AS current_id"
                " FROM history GROUP BY record_id"
            )
        ).all()
    for row in rows:
        assert (row.current, row.current_id) == (1, row.newest)


def test_entries_stored_before_keep_their_documents(empty_store: Store) -> None:
    # A record and its history entry as the revision before current_history stored them: the
    # entry holds the record whole. After the upgrade it is read as it was, and the next change
    # gives the old entry nothing new and appends the entry that stands for the record now.
    empty_store.upgrade("title_search")
    moment = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    stored: dict[str, Any] = {
        "urn": "urn:nbn:fi:demo-1",
        "status": "active",
        "locations": [],
        "metadata": {"title": "as stored then"},
        "successors": [],
        "note": None,
        "owner": "Demo Library",
        "created": moment.isoformat(),
        "updated": moment.isoformat(),
    }
    services = Services(empty_store)
    with empty_store.engine.begin() as connection:
        statements = [
            "INSERT INTO organisations (name, created) VALUES ('Demo Library', :t)",
            "INSERT INTO prefixes (prefix, organisation_id, generator, next_value, created)"
            " VALUES ('fi:demo', 1, 'sequential', 1, :t)",
            "INSERT INTO records (equivalence_key, urn, prefix, status, metadata, successors,"
            " owner_id, created, updated) VALUES ('urn:nbn:fi:demo-1', 'urn:nbn:fi:demo-1',"
            " 'fi:demo', 'active', :m, '[]', 1, :t, :t)",
            "INSERT INTO history (record_id, at, action, actor, record)"
            " VALUES (1, :t, 'created', 'then', :d)",
        ]
        for statement in statements:
            connection.execute(
                sa.text(statement),
                {"t": moment, "m": '{"title": "as stored then"}', "d": json.dumps(stored)},
            )
    empty_store.upgrade()
    [entry] = services.records.history("urn:nbn:fi:demo-1")
    assert (entry.action, dict(entry.record)) == ("created", stored)
    token = services.admin.create_token("Demo Library")
    patched = services.records.patch(
        services.access.authenticate(token), "urn:nbn:fi:demo-1", {"metadata": {"n": 1}}
    )
    old, new = services.records.history("urn:nbn:fi:demo-1")
    assert dict(old.record) == stored
    assert (new.action, dict(new.record)) == ("patched", record_json(patched))
    _assert_one_current_entry_each(empty_store)
