"""Harvest sources add locations as their organisation, against a real OAI-PMH repository
(pyoai's server, :class:`oai_support.Upstream`) and a real resolver on SQLite and PostgreSQL.

A source of "Other Library" harvests URNs of "Test Library": on a URN whose owner granted Other
Library its own locations, the source writes those (held by Other Library) and nothing else,
not the metadata; without a grant the URN is refused (RFC 8458 §4.3) and nothing is written. The
owner's own source replaces its locations only, keeping the grantee's.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from oai_support import OLD, Upstream
from resolver_support import Resolver, urnkit

OWNER = "Test Library"
GRANTEE = "Other Library"
OWNER_COPY = "https://owner.example.org/thesis.pdf"
MIRROR = r"https://mirror\.example\.org/items/\d+"
REPOSITORY = r"https://repo\.example\.org/items/\d+"


@pytest.fixture
def mirror() -> Iterator[Upstream]:
    """The grantee's repository."""
    with Upstream() as repository:
        yield repository


def add_source(
    resolver: Resolver, name: str, organisation: str, base_url: str, pattern: str
) -> None:
    urnkit(
        "oai",
        "add-source",
        name,
        "--organisation",
        organisation,
        "--base-url",
        base_url,
        "--url-pattern",
        pattern,
        "--database-url",
        resolver.database_url,
    )


def harvest(resolver: Resolver, name: str) -> str:
    return urnkit("oai", "harvest", name, "--database-url", resolver.database_url).stdout


def holders(record: dict[str, Any]) -> list[tuple[str, str]]:
    """(URL, organisation) of a record's locations, best first."""
    return [(loc["url"], loc["organisation"]) for loc in record["locations"]]


def test_a_grantees_source_adds_its_own_locations(
    resolver: Resolver,
    mirror: Upstream,
    api: httpx.Client,
    anonymous: httpx.Client,
    unique: str,
) -> None:
    shared, closed = (f"urn:nbn:fi:test-h{unique}{n}" for n in (1, 2))
    for urn in (shared, closed):
        body = {"locations": [{"url": OWNER_COPY}], "metadata": {"title": "Owner's"}}
        assert api.put(f"/api/v1/urns/{urn}", json=body).status_code == 201
    assert api.put(f"/api/v1/urns/{shared}/grants/Other%20Library").status_code == 201
    for n, urn in enumerate((shared, closed), 1):
        copy = f"https://mirror.example.org/items/{n}"
        mirror.add(f"oai:m:{n}", OLD, identifier=[urn, copy], title=["Mirror's"])
    name = f"mirror-{unique}"
    add_source(resolver, name, GRANTEE, mirror.base_url, MIRROR)

    output = harvest(resolver, name)
    assert "0 created, 1 changed, 0 unchanged" in output
    assert f"{closed}: the prefix 'fi:test' is not delegated to 'Other Library'" in output
    record = anonymous.get(f"/api/v1/urns/{shared}").json()
    assert holders(record) == [
        (OWNER_COPY, OWNER),
        ("https://mirror.example.org/items/1", GRANTEE),
    ]
    assert record["metadata"] == {"title": "Owner's"}  # the owner's
    assert holders(anonymous.get(f"/api/v1/urns/{closed}").json()) == [(OWNER_COPY, OWNER)]
    entries = anonymous.get(f"/api/v1/urns/{shared}/history").json()["entries"]
    assert (entries[-1]["action"], entries[-1]["actor"]) == ("harvested", f"oai:{name}")
    assert (
        "0 created, 0 changed, 1 unchanged"
        in urnkit("oai", "harvest", name, "--full", "--database-url", resolver.database_url).stdout
    )

    # The owner's source writes the owner's locations only: the grantee's stay.
    with Upstream() as own_repository:
        own_repository.add(
            "oai:o:1", OLD, identifier=[shared, "https://repo.example.org/items/1"], title=["T"]
        )
        add_source(resolver, f"own-{unique}", OWNER, own_repository.base_url, REPOSITORY)
        assert "1 changed" in harvest(resolver, f"own-{unique}")
    record = anonymous.get(f"/api/v1/urns/{shared}").json()
    assert holders(record) == [
        ("https://mirror.example.org/items/1", GRANTEE),
        ("https://repo.example.org/items/1", OWNER),
    ]

    # A deleted item withdraws the source's locations, no one else's (RFC 8458 §4.1).
    mirror.delete("oai:m:1", datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=1))
    assert "1 withdrawn" in harvest(resolver, name)
    record = anonymous.get(f"/api/v1/urns/{shared}").json()
    assert holders(record) == [("https://repo.example.org/items/1", OWNER)]
    assert record["grants"] == [GRANTEE]
