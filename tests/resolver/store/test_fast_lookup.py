"""Resolution's lookups on the event loop (``urnkit.resolver.store.fast_lookup``) on SQLite and
PostgreSQL: concurrent lookups each get their own key's row; PostgreSQL's survive the server
closing their connection."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from resolver_support import fresh_database
from store_support import add_organisation, raw_sql, sample_record

from urnkit.resolver.store import Store, successions


def _resolvable(store: Store, count: int) -> list[str]:
    """``count`` active records ``urn:nbn:fi:demo-N``, the first two successors of others;
    their keys."""
    with store.transaction() as tx:
        organisation_id = add_organisation(tx)
        for n in range(count):
            tx.records.insert(sample_record(f"urn:nbn:fi:demo-{n}"), organisation_id)
        successions_of = {"urn:nbn:fi:old-1": 0, "urn:nbn:fi:old-2": 0, "urn:nbn:fi:old-3": 1}
        rows = []
        for old, successor in successions_of.items():
            predecessor_id = tx.records.insert(sample_record(old), organisation_id)
            rows.append(
                {
                    "successor_key": f"urn:nbn:fi:demo-{successor}",
                    "predecessor_id": predecessor_id,
                    "predecessor_urn": old,
                }
            )
        tx.connection.execute(successions.insert(), rows)
    return [f"urn:nbn:fi:demo-{n}" for n in range(count)]


def _lookups(store: Store, keys: list[str]) -> list[Any]:
    """The rows of ``keys`` looked up at once, each by a task of its own, in a new event loop."""
    return asyncio.run(_at_once(store, keys))


async def _at_once(store: Store, keys: list[str]) -> list[Any]:
    """The rows of ``keys`` looked up at once; TimeoutError after 10 s rather than a hang."""
    found = asyncio.gather(*(store.resolution_row_async(key) for key in keys))
    return list(await asyncio.wait_for(found, 10))


def _sorted_predecessors(row: Any) -> Any:
    if row is None or row[2] is None:
        return row
    return (row[0], row[1], "\n".join(sorted(row[2].split("\n"))), row[3])


def test_concurrent_lookups_each_get_the_row_of_their_key(store: Store) -> None:
    # On PostgreSQL the lookups of concurrent requests share queries (BatchedLookups): each
    # must still get its own key's row, missing keys None, a key asked twice twice.
    keys = _resolvable(store, 40)
    asked = [*keys, *keys[:10], "urn:nbn:fi:demo-missing", "urn:nbn:fi:demo-x\u00e4"] * 3
    expected = [store.resolution_row(key) for key in asked]
    assert expected[0] is not None
    assert expected[0][2] is not None  # predecessors are read too
    assert sorted(expected[0][2].split("\n")) == ["urn:nbn:fi:old-1", "urn:nbn:fi:old-2"]
    assert expected[40 + 10] is None
    found = _lookups(store, asked)
    assert list(map(_sorted_predecessors, found)) == list(map(_sorted_predecessors, expected))
    # A second event loop (the first one closed) gets a connection of its own.
    assert _lookups(store, keys[:3]) == expected[:3]


def test_lookups_survive_the_server_closing_their_connection(tmp_path: Path) -> None:
    # PostgreSQL's only: the lookups' connection, closed by the server (a restart, a failover,
    # an idle timeout), is replaced and the lookups asked meanwhile are answered on the new one.
    with fresh_database("postgresql", tmp_path) as url:
        store = Store(url)
        try:
            store.upgrade()
            keys = _resolvable(store, 5)
            expected = [store.resolution_row(key) for key in keys]

            async def before_and_after() -> list[list[Any]]:
                found = [await _at_once(store, keys)]
                # The server's goodbye read by the loop before the next lookup, or not yet.
                for pause in (0.2, 0):
                    raw_sql(
                        store,
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()",
                    )
                    await asyncio.sleep(pause)
                    found.append(await _at_once(store, keys))
                return found

            found = asyncio.run(before_and_after())
        finally:
            store.close()
    assert found == [expected] * 3
