"""Readers' paths (issue 32, points 4-6; docs/resolution.md, "Pasted URNs"): a URN pasted with
what copying adds reaches its record by a 301 on /{urn}, the legacy forms and the search box; a
URN not found gets a 404 page that helps; /robots.txt, /favicon.ico and the Czech resolver's
/web/urn/{urn} form are answered. Black-box against ``urnkit serve`` on SQLite and PostgreSQL.
"""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest
from resolver_support import Resolver, register

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: pasted_support
from pasted_support import pasted_forms, sent

from urnkit.resolver.store import Store
from urnkit.resolver.store.queries.neighbours import neighbour_queries

HTML = {"Accept": "text/html"}


@pytest.fixture
def registered(api: httpx.Client, unique: str) -> str:
    """A registered URN with a hyphen inside, as a thesis prints it."""
    urn = f"URN:NBN:fi:test-{unique}-2019"
    register(api, urn, [{"url": "https://example.org/pasted"}])
    return urn


def test_a_pasted_urn_moves_to_its_record(resolver: Resolver, registered: str) -> None:
    # issue 32 point 4: on /{urn}, for a browser and for any other client
    with httpx.Client(base_url=resolver.base_url) as client:
        for form in map(sent, pasted_forms(registered)):
            for headers in ({}, HTML):
                moved = client.get(f"/{form}", headers=headers)
                assert moved.status_code == 301, (form, moved.text)
                assert moved.headers["location"] == f"/{registered}", form
        # the q-component goes along (RFC 8141 §2.3.2)
        moved = client.get(f"/{registered}.?=page=2")
        assert moved.headers["location"] == f"/{registered}?=page=2"
        found = client.get(f"/{registered}")
        assert found.status_code == 302
        assert found.headers["location"] == "https://example.org/pasted"


def test_a_urn_registered_as_given_wins(resolver: Resolver, api: httpx.Client, unique: str) -> None:
    # an NSS may end in "." or "/" (RFC 8141 §2): then it is that record's, not the cleaned one's
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/plain"}])
    register(api, urn + ".", [{"url": "https://example.org/dot"}])
    with httpx.Client(base_url=resolver.base_url) as client:
        dot = client.get(f"/{urn}.")
        assert dot.status_code == 302
        assert dot.headers["location"] == "https://example.org/dot"
        assert client.get(f"/{urn}/").headers["location"] == f"/{urn}"


def test_legacy_forms_and_the_search_box_move_in_one_step(
    resolver: Resolver, registered: str
) -> None:
    # issue 32 point 4: every legacy form (web/routes/legacy.py) and the search box
    pasted = sent(registered + ".\u200b")
    forms = [
        f"/resolve?urn={pasted}",
        f"/?identifier=%20{pasted}",
        f"/redirect/{pasted}",
        f"/web/urn/{pasted}",
        f"/http://resolver.nkp.cz/web/urn/{pasted}",
        f"/search?q={pasted}",
        f"/search?q={pasted}&by=urn",
    ]
    with httpx.Client(base_url=resolver.base_url) as client:
        for form in forms:
            moved = client.get(form, headers=HTML)
            assert moved.status_code == 301, (form, moved.text)
            assert moved.headers["location"] == f"/{registered}", form
        service = client.get(f"/uri-res/I2L?{registered}.")
        assert service.status_code == 301
        assert service.headers["location"] == f"/uri-res/I2L?{registered}"


def test_the_czech_form_moves_as_the_others(resolver: Resolver) -> None:
    # issue 32 point 6: /web/urn/{urn}, also behind another resolver's address, once or twice
    urn = "urn:nbn:cz:nk-000001"
    with httpx.Client(base_url=resolver.base_url) as client:
        for form in (
            f"/web/urn/{urn}",
            f"/http://resolver.nkp.cz/web/urn/{urn}",
            f"/http:/resolver.nkp.cz/web/urn/{urn}",
            f"/https://example.org/http://resolver.nkp.cz/web/urn/{urn}",
        ):
            moved = client.get(form)
            assert moved.status_code == 301, (form, moved.text)
            assert moved.headers["location"] == f"/{urn}"


def test_the_404_page_helps(resolver: Resolver, api: httpx.Client, unique: str) -> None:
    # issue 32 point 5: the search box filled in, the registered URNs closest, what a URN:NBN
    # looks like, in the reader's language
    near = [f"urn:nbn:fi:test-{unique}-{n}" for n in (11, 12, 13, 14, 15, 16)]
    for urn in near:
        register(api, urn)
    sought = f"urn:nbn:fi:test-{unique}-19"
    with httpx.Client(base_url=resolver.base_url) as client:
        page = client.get(f"/{sought}", headers=HTML)
        assert page.status_code == 404
        assert f'value="{sought}"' in page.text
        shown = [urn for urn in near if f'href="/{urn}"' in page.text]
        assert len(shown) == 5
        assert "urn:nbn:fi-fe2019123456" in page.text
        finnish = client.get(f"/{sought}?lang=fi", headers=HTML)
        assert finnish.status_code == 404
        assert "URN-tunnusta ei löytynyt" in finnish.text
        problem = client.get(f"/{sought}")
        assert problem.status_code == 404
        assert problem.headers["content-type"] == "application/problem+json"
        unlike = client.get("/urn:nbn:fi:test-" + "z" * 40, headers=HTML)
        assert unlike.status_code == 404
        assert not [urn for urn in near if f'href="/{urn}"' in unlike.text]


def test_the_suggestions_use_the_index(server_database: Store) -> None:
    # issue 32 point 5: each of the two queries is a range on records' unique index of
    # equivalence keys, on both databases (never a scan)
    with server_database.snapshot() as tx:
        connection = tx.connection
        postgresql = connection.dialect.name == "postgresql"
        if postgresql:  # a small table would be read whole; the plan must be able to use it
            connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
        for query in neighbour_queries("urn:nbn:fi:test-1", 5):
            compiled = query.compile(connection, compile_kwargs={"literal_binds": True})
            explain = "EXPLAIN " if postgresql else "EXPLAIN QUERY PLAN "
            plan = "\n".join(
                str(row) for row in connection.exec_driver_sql(explain + str(compiled))
            )
            if postgresql:
                assert "Index" in plan, plan
                assert "Seq Scan" not in plan, plan
            else:
                assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan
                assert "SCAN records" not in plan.replace("SCAN records USING", ""), plan


def test_robots_and_the_icons(resolver: Resolver) -> None:
    # issue 32 point 6: no longer "400 Not a URN"
    with httpx.Client(base_url=resolver.base_url) as client:
        robots = client.get("/robots.txt")
        assert robots.status_code == 200
        assert robots.headers["content-type"].startswith("text/plain")
        lines = robots.text.splitlines()
        for path in ("/api/", "/staff", "/oai"):
            assert f"Disallow: {path}" in lines
        assert "Allow: /" in lines
        icon = client.get("/favicon.ico")
        assert icon.status_code == 200
        assert icon.content[:4] == b"\0\0\1\0"  # an ICO file's header
        svg = client.get("/static/icon.svg")
        assert svg.status_code == 200
        assert svg.headers["content-type"].startswith("image/svg+xml")
