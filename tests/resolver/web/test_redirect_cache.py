"""The redirects a server process keeps (web/front.py, ``Answers``) against the change counter
the database keeps (migration ``resolution_changes``): after each change of what a redirect
answers, every next request, to either of two worker processes, gets the new answer; black-box
against ``urnkit serve --workers 2`` on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from resolver_support import DATABASES, Server, fresh_database, set_up_resolver, urnkit

HOLDER = "Test Library"  # holds fi:test, the registrant token's prefix
# Requests per look, each on a connection of its own: the two workers share them.
LOOKS = 16

Answer = tuple[int, str | None, str | None, str | None]  # status, Location, Link, Cache-Control


class Served:
    """A resolver of two workers, a registrant's and an admin's client, a test's own URNs."""

    def __init__(self, server: Server, url: str, tokens: dict[str, str]) -> None:
        self.server, self.database_url = server, url
        self.api = httpx.Client(
            base_url=server.base_url,
            headers={"Authorization": f"Bearer {tokens['registrant_token']}"},
            timeout=30,
        )
        self.admin = httpx.Client(
            base_url=server.base_url,
            headers={"Authorization": f"Bearer {tokens['admin_token']}"},
            timeout=30,
        )
        self.n = secrets.token_hex(4)

    def urn(self, suffix: str) -> str:
        return f"urn:nbn:fi:test-{self.n}-{suffix}"

    def put(self, suffix: str, *locations: dict[str, object]) -> None:
        body = {"locations": list(locations), "metadata": {"title": suffix}}
        response = self.api.put(f"/api/v1/urns/{self.urn(suffix)}", json=body)
        assert response.status_code in (200, 201), response.text

    def answers(self, suffix: str) -> set[Answer]:
        """What :data:`LOOKS` requests for the URN get, each on a new connection (no
        ``Accept``: the front's redirect)."""
        found = set()
        for _ in range(LOOKS):
            got = httpx.get(f"{self.server.base_url}/{self.urn(suffix)}")
            headers = got.headers
            found.add(
                (
                    got.status_code,
                    headers.get("location"),
                    headers.get("link"),
                    headers.get("cache-control"),
                )
            )
        return found

    def only(self, suffix: str) -> Answer:
        """The one answer every look gets."""
        (answer,) = self.answers(suffix)
        return answer


@pytest.fixture(scope="module", params=DATABASES)
def running(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, str, dict[str, str]]]:
    directory = tmp_path_factory.mktemp(f"kept-{request.param}")
    with fresh_database(request.param, directory) as url:
        tokens = set_up_resolver(url)
        with Server(url, "--workers", "2") as server:
            yield server, url, tokens


@pytest.fixture
def served(running: tuple[Server, str, dict[str, str]]) -> Iterator[Served]:
    made = Served(*running)
    yield made
    made.api.close()
    made.admin.close()


def test_a_moved_location_is_seen_by_the_next_request(served: Served) -> None:
    # RFC 8458 §4.2: resolution leads to the record's location as it is now.
    served.put("1", {"url": "https://example.org/before"})
    assert served.only("1")[:2] == (302, "https://example.org/before")
    served.put("1", {"url": "https://example.org/after"})
    assert served.only("1")[:2] == (302, "https://example.org/after")


def test_a_deactivation_is_seen_by_the_next_request(served: Served) -> None:
    # RFC 8458 §4.1: a deactivated URN is gone, never redirected again.
    served.put("1", {"url": "https://example.org/here"})
    assert served.only("1")[0] == 302
    response = served.api.post(f"/api/v1/urns/{served.urn('1')}/deactivate", json={})
    assert response.status_code == 200, response.text
    assert served.only("1")[0] == 410


def test_a_succession_is_seen_by_the_successors_next_redirect(served: Served) -> None:
    # RFC 5829 §3.2: the successor's redirect names its predecessor (predecessor-version).
    served.put("old", {"url": "https://example.org/old"})
    served.put("new", {"url": "https://example.org/new"})
    assert "predecessor-version" not in (served.only("new")[2] or "")
    body = {"successors": [served.urn("new")]}
    response = served.api.post(f"/api/v1/urns/{served.urn('old')}/deactivate", json=body)
    assert response.status_code == 200, response.text
    status, location, link, _ = served.only("new")
    assert (status, location) == (302, "https://example.org/new")
    assert f'/{served.urn("old")}>; rel="predecessor-version"' in (link or "")


def test_a_network_restriction_is_seen_by_the_next_request(served: Served) -> None:
    # RFC 8458 §4.2: a location restricted to a network the client is outside is not given.
    network = f"rooms-{served.n}"
    response = served.admin.put(
        f"/api/v1/organisations/{HOLDER}/networks/{network}", json={"ranges": ["10.9.8.0/24"]}
    )
    assert response.status_code == 201, response.text
    shut, open_ = "https://example.org/shut", "https://example.org/open"
    served.put("1", {"url": shut, "priority": 1}, {"url": open_, "priority": 2})
    assert served.only("1")[:2] == (302, shut)
    served.put("1", {"url": shut, "priority": 1, "restricted_to": network}, {"url": open_})
    status, location, _, cache_control = served.only("1")
    assert (status, location, cache_control) == (302, open_, "no-store")


def test_a_record_imported_in_bulk_is_seen_by_the_next_request(
    served: Served, tmp_path: Path
) -> None:
    # RFC 8458 §4.2: a URN registered meanwhile resolves.
    assert served.only("bulk")[0] == 404
    rows = tmp_path / "rows.ndjson"
    row = {"urn": served.urn("bulk"), "locations": [{"url": "https://example.org/bulk"}]}
    rows.write_text(json.dumps(row) + "\n")
    urnkit("import", str(rows), "--database-url", served.database_url)
    assert served.only("bulk")[:2] == (302, "https://example.org/bulk")


# urnkit db backup and restore are SQLite's (PostgreSQL's are pg_dump and pg_restore).
@pytest.mark.parametrize("running", ["sqlite"], indirect=True)
def test_a_restore_from_backup_is_seen_by_the_next_request(served: Served, tmp_path: Path) -> None:
    # RFC 8458 §4.2: resolution answers from the database as restored.
    served.put("1", {"url": "https://example.org/backed-up"})
    copy = tmp_path / "copy.db"
    urnkit("db", "backup", str(copy), "--database-url", served.database_url)
    served.put("1", {"url": "https://example.org/later"})
    assert served.only("1")[:2] == (302, "https://example.org/later")
    urnkit("db", "restore", str(copy), "--force", "--database-url", served.database_url)
    assert served.only("1")[:2] == (302, "https://example.org/backed-up")
