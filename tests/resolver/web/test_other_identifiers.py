"""Other identifiers lead to the URN (docs/resolution.md, "Other identifiers"): a record's
``metadata.identifiers`` (URNs of other namespaces) and ``metadata.local_id``, black-box against
``urnkit serve`` on SQLite and PostgreSQL: resolution through them, the 300 list, the search,
the checks on write and the local id's uniqueness per organisation.

The ISBNs, ISSNs and UUIDs here are this file's own: the server is shared by the session.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from resolver_support import BROWSER, JSON, PROBLEM, Resolver, register, urnkit

from urnkit.resolver.store import Store, record_identifiers

# ISBN 0-8044-2957-X (ISO 2108 check character X) is ISBN 978-0-8044-2957-3.
ISBN10, ISBN13 = "0-8044-2957-X", "978-0-8044-2957-3"


def _search(client: httpx.Client, identifier: str) -> list[str]:
    found = client.get("/api/v1/search", params={"identifier": identifier})
    assert found.status_code == 200, found.text
    return [record["urn"] for record in found.json()["records"]]


def test_a_urn_of_another_namespace_resolves_through_the_record_carrying_it(
    resolver: Resolver, api: httpx.Client
) -> None:
    urn = "urn:nbn:fi:test-ident-1"
    identifiers = [
        f"urn:isbn:{ISBN13}",
        "urn:issn:0317-8471",
        "urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
    ]
    register(
        api,
        urn,
        [{"url": "https://example.org/ident-1"}],
        {"title": "Carried", "identifiers": identifiers, "local_id": "thesis/ident/1"},
    )
    with httpx.Client(base_url=resolver.base_url) as client:
        # Each namespace's own equivalence: ISBN-10 = ISBN-13, hyphens optional (RFC 8254 §4,
        # ISO 2108); ISSN hyphen optional (RFC 3044 §2); UUID case-blind (RFC 9562 §4).
        for other in (
            f"urn:isbn:{ISBN10}",
            f"URN:ISBN:{ISBN13.replace('-', '')}",
            "urn:issn:03178471",
            "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
        ):
            for method in ("GET", "HEAD"):
                found = client.request(method, f"/{other}")
                assert found.status_code == 302, (other, found.text)
                assert found.headers["location"] == "https://example.org/ident-1"
        # RFC 8141 §2.3.2: the q-component goes to the location, as for the URN:NBN.
        found = client.get(f"/urn:isbn:{ISBN10}?=page=2")
        assert found.headers["location"] == "https://example.org/ident-1?page=2"
        # A client preferring JSON gets the record of the URN:NBN.
        record = client.get(f"/urn:isbn:{ISBN10}", headers={"Accept": JSON})
        assert record.status_code == 200
        assert record.json()["urn"] == urn
        # An ISBN nobody carries stays unknown (RFC 8458 §4.4: no resolver for it).
        unknown = client.get("/urn:isbn:978-0-451-45052-4")
        assert unknown.status_code == 404
        assert unknown.headers["content-type"].startswith(PROBLEM)
        # The search finds it by any equivalent form, and by its local id.
        assert _search(client, f"urn:isbn:{ISBN10.lower()}") == [urn]
        assert _search(client, "URN:ISSN:0317-8471") == [urn]
        assert _search(client, "thesis/ident/1") == [urn]
        assert _search(client, "urn:isbn:978-0-451-45052-4") == []
        assert _search(client, "thesis/ident/none") == []
        # The search page: a URN of another namespace is searched as an identifier by itself.
        page = client.get("/search", params={"q": f"urn:isbn:{ISBN10}"})
        assert page.status_code == 200
        assert f'<a href="/{urn}?s=I2C">' in page.text
        page = client.get("/search", params={"q": "thesis/ident/1", "by": "identifier"})
        assert f'<a href="/{urn}?s=I2C">' in page.text
        page = client.get("/search", params={"q": "thesis/ident/none", "by": "identifier"})
        assert "No record carries this identifier." in page.text


def test_a_record_without_a_location_is_shown_through_its_other_identifier(
    resolver: Resolver, api: httpx.Client
) -> None:
    # RFC 8458 §4.5: no location, the surrogate page of the record carrying the identifier.
    urn = "urn:nbn:fi:test-ident-2"
    register(api, urn, [], {"identifiers": ["urn:issn:1050-124X"]})
    with httpx.Client(base_url=resolver.base_url) as client:
        page = client.get("/urn:issn:1050-124x", headers={"Accept": BROWSER})
        assert page.status_code == 200, page.text
        assert urn in page.text


def test_an_identifier_several_records_carry_gives_the_list_of_them(
    resolver: Resolver, api: httpx.Client, other: httpx.Client
) -> None:
    # RFC 9110 §15.4.1: 300 Multiple Choices; RFC 2483 §5: the list as text/uri-list.
    first, second = "urn:nbn:fi:test-ident-3", "urn:nbn:fi:other-ident-3"
    isbn = "urn:isbn:978-951-98548-9-2"
    register(
        api, first, [{"url": "https://example.org/3a"}], {"title": "Print", "identifiers": [isbn]}
    )
    created = other.put(
        f"/api/v1/urns/{second}",
        json={
            "locations": [{"url": "https://example.org/3b"}],
            "metadata": {"identifiers": [isbn]},
        },
    )
    assert created.status_code == 201, created.text
    with httpx.Client(base_url=resolver.base_url) as client:
        listed = client.get("/urn:isbn:9519854894")  # its ISBN-10
        assert listed.status_code == 300
        assert listed.headers["content-type"].startswith("text/html")
        assert listed.headers["vary"] == "Accept, Accept-Language"  # a page: docs/languages.md
        assert listed.headers["cache-control"] == "max-age=300"
        assert f'href="/{first}"' in listed.text
        assert f'href="/{second}"' in listed.text
        assert "Print" in listed.text
        uris = client.get(f"/{isbn}", headers={"Accept": "text/uri-list"})
        assert uris.status_code == 300
        assert uris.headers["content-type"].startswith("text/uri-list")
        lines = uris.text.split("\r\n")
        assert [line for line in lines if line and not line.startswith("#")] == [first, second]
        assert uris.text.endswith("\r\n")
        as_json = client.get(f"/{isbn}", headers={"Accept": JSON})
        assert as_json.status_code == 300
        assert [r["urn"] for r in as_json.json()["records"]] == [first, second]
        refused = client.get(f"/{isbn}", headers={"Accept": "image/png"})
        assert refused.status_code == 406
        assert sorted(_search(client, isbn)) == sorted([first, second])


def test_identifiers_follow_every_change_of_the_record(
    resolver: Resolver, api: httpx.Client
) -> None:
    urn = "urn:nbn:fi:test-ident-4"
    issn = "urn:issn:0028-0836"
    register(api, urn, [{"url": "https://example.org/4"}])
    with httpx.Client(base_url=resolver.base_url) as client:
        assert client.get(f"/{issn}").status_code == 404
        patched = api.patch(
            f"/api/v1/urns/{urn}",
            json={"metadata": {"identifiers": [issn], "local_id": "ident-4"}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert patched.status_code == 200, patched.text
        assert client.get(f"/{issn}").status_code == 302
        assert _search(client, "ident-4") == [urn]
        replaced = api.put(
            f"/api/v1/urns/{urn}",
            json={"locations": [{"url": "https://example.org/4"}], "metadata": {}},
        )
        assert replaced.status_code == 200, replaced.text
        assert client.get(f"/{issn}").status_code == 404
        assert _search(client, "ident-4") == []


def test_identifiers_are_checked_on_write_naming_the_place(api: httpx.Client) -> None:
    # RFC 9457 problems with RFC 6901 pointers; nothing is stored.
    urn = "urn:nbn:fi:test-ident-5"
    cases = [
        (
            {"identifiers": ["urn:issn:0317-8471", "urn:isbn:978-0-8044-2957-4"]},
            "/metadata/identifiers/1",
        ),
        ({"identifiers": ["urn:nbn:fi:test-1"]}, "/metadata/identifiers/0"),
        ({"identifiers": "urn:isbn:9780804429573"}, "/metadata/identifiers"),
        ({"local_id": ""}, "/metadata/local_id"),
    ]
    for metadata, pointer in cases:
        refused = api.put(f"/api/v1/urns/{urn}", json={"locations": [], "metadata": metadata})
        assert refused.status_code == 422, refused.text
        assert refused.headers["content-type"].startswith(PROBLEM)
        assert pointer in [error["pointer"] for error in refused.json()["errors"]], refused.text
        assert pointer in refused.json()["detail"]
    assert api.get(f"/api/v1/urns/{urn}").status_code == 404
    batch = api.post(
        "/api/v1/urns:batch",
        json={
            "records": [
                {"urn": "urn:nbn:fi:test-ident-6", "locations": [], "metadata": {}},
                {"urn": urn, "locations": [], "metadata": {"identifiers": [1]}},
            ]
        },
    )
    assert batch.status_code == 422, batch.text
    assert "/records/1/metadata/identifiers/0" in batch.text


def test_a_local_id_names_one_record_of_an_organisation(
    resolver: Resolver, api: httpx.Client, other: httpx.Client
) -> None:
    register(api, "urn:nbn:fi:test-ident-7", [], {"local_id": "shelf-7"})
    taken = api.put(
        "/api/v1/urns/urn:nbn:fi:test-ident-8",
        json={"locations": [], "metadata": {"local_id": "shelf-7"}},
    )
    assert taken.status_code == 409, taken.text
    assert "urn:nbn:fi:test-ident-7" in taken.json()["detail"]
    assert api.get("/api/v1/urns/urn:nbn:fi:test-ident-8").status_code == 404
    # Another organisation's local ids are its own.
    mine = other.put(
        "/api/v1/urns/urn:nbn:fi:other-ident-8",
        json={"locations": [], "metadata": {"local_id": "shelf-7"}},
    )
    assert mine.status_code == 201, mine.text
    with httpx.Client(base_url=resolver.base_url) as client:
        assert sorted(_search(client, "shelf-7")) == [
            "urn:nbn:fi:other-ident-8",
            "urn:nbn:fi:test-ident-7",
        ]


def test_the_database_keeps_a_local_id_to_one_record_of_an_organisation(
    resolver: Resolver, api: httpx.Client
) -> None:
    # Written past the service, straight into the table: the unique constraint refuses.
    register(api, "urn:nbn:fi:test-ident-9", [], {"local_id": "shelf-9"})
    register(api, "urn:nbn:fi:test-ident-10", [])
    store = Store(resolver.database_url)
    try:
        with store.snapshot() as tx:
            row = tx.connection.execute(
                sa.select(record_identifiers).where(record_identifiers.c.key == "shelf-9")
            ).one()
            other_id = tx.records.id("urn:nbn:fi:test-ident-10")
        with pytest.raises(sa.exc.IntegrityError), store.transaction() as tx:
            tx.connection.execute(
                record_identifiers.insert().values(
                    key="shelf-9", record_id=other_id, organisation_id=row.organisation_id
                )
            )
    finally:
        store.close()


def test_imported_records_lead_from_their_identifiers(resolver: Resolver, tmp_path: Path) -> None:
    rows = [
        {
            "urn": "urn:nbn:fi:test-ident-11",
            "locations": [{"url": "https://example.org/11"}],
            "metadata": {"identifiers": ["urn:isbn:951-0-11369-7"], "local_id": "import-11"},
        },
        {"urn": "urn:nbn:fi:test-ident-12", "metadata": {"identifiers": ["urn:isbn:1"]}},
    ]
    path = tmp_path / "rows.ndjson"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    rejects = tmp_path / "rejects.ndjson"
    database = ("--database-url", resolver.database_url)
    done = urnkit("import", str(path), "--max-errors", "1", "--rejects", str(rejects), *database)
    assert done.stdout.strip() == "1 imported, 0 already present (skipped), 1 refused"
    (entry,) = map(json.loads, rejects.read_text().splitlines())
    assert entry["line"] == 2
    assert entry["reason"].startswith("urn:nbn:fi:test-ident-12: /metadata/identifiers/0: ")
    with httpx.Client(base_url=resolver.base_url) as client:
        found = client.get("/urn:isbn:978-951-0-11369-1")  # the ISBN-13 of 951-0-11369-7
        assert found.status_code == 302, found.text
        assert found.headers["location"] == "https://example.org/11"
        assert _search(client, "import-11") == ["urn:nbn:fi:test-ident-11"]
        assert client.get("/api/v1/urns/urn:nbn:fi:test-ident-12").status_code == 404


def test_concurrent_claims_of_one_local_id_give_one_record(
    resolver: Resolver, api: httpx.Client
) -> None:
    # Eight writers at once: one record holds the local id, the others are refused 409 (never
    # a server error), on either database.
    def claim(number: int) -> int:
        with resolver.client(resolver.registrant_token) as client:
            answer = client.put(
                f"/api/v1/urns/urn:nbn:fi:test-ident-race-{number}",
                json={"locations": [], "metadata": {"local_id": "shelf-race"}},
            )
            return answer.status_code

    with ThreadPoolExecutor(8) as pool:
        statuses = sorted(pool.map(claim, range(8)))
    assert statuses == [201] + [409] * 7
    with httpx.Client(base_url=resolver.base_url) as client:
        assert len(_search(client, "shelf-race")) == 1
