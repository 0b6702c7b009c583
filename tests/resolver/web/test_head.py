"""``HEAD`` is answered wherever ``GET`` is, black-box against ``urnkit serve`` on SQLite and
PostgreSQL: link checkers, uptime monitors and ``curl -I`` ask so. A ``HEAD`` of a page or of
the API once reached resolution's catch-all and was answered 400 "Not a URN"."""

from __future__ import annotations

import httpx
import pytest
from fastapi.routing import APIRoute
from resolver_support import BROWSER, JSON, register

from urnkit.resolver.web.app import ROUTERS

# What each answer makes anew, or what a request changes (the counters of /metrics).
FRESH = {"date", "x-request-id", "set-cookie", "content-length", "etag", "last-modified"}


def get_paths(urn: str) -> list[str]:
    """Every path a route of the API or of the pages answers ``GET`` at, ``{urn}`` being
    ``urn``; those with another parameter left out."""
    paths = {
        route.path.replace("{urn:path}", urn)
        for area in ROUTERS
        for route in area.router.routes
        if isinstance(route, APIRoute) and "GET" in (route.methods or ())
    }
    return sorted(path for path in paths if "{" not in path)


def fields(response: httpx.Response) -> list[tuple[str, str]]:
    return sorted((name, value) for name, value in response.headers.items() if name not in FRESH)


@pytest.mark.parametrize("accept", [BROWSER, JSON])
def test_head_answers_as_get_wherever_get_is_answered(
    anonymous: httpx.Client, api: httpx.Client, unique: str, accept: str
) -> None:
    # RFC 9110 §9.1: every general-purpose server supports GET and HEAD; §9.3.2: a HEAD is
    # answered as the GET would be, the same status and header fields, without the content.
    urn = f"urn:nbn:fi:test-head-{unique}"
    register(api, urn, [{"url": "https://example.org/head"}], {"title": "Heads"})
    paths = get_paths(urn)
    assert {"/", "/prefixes", "/api/v1/prefixes", f"/api/v1/urns/{urn}", "/metrics"} <= set(paths)
    for path in paths:
        got = anonymous.get(path, headers={"Accept": accept})
        head = anonymous.head(path, headers={"Accept": accept})
        assert (path, head.status_code) == (path, got.status_code)
        assert fields(head) == fields(got), path
        assert head.content == b""


def test_a_method_not_allowed_names_head_beside_get(anonymous: httpx.Client) -> None:
    # RFC 9110 §15.5.6: Allow lists every method the resource supports.
    response = anonymous.delete("/prefixes")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"


def test_head_of_a_text_that_is_no_urn_is_still_its_problem(anonymous: httpx.Client) -> None:
    # RFC 8141 §2: the catch-all still answers what no other route takes.
    got = anonymous.get("/no-such-page")
    head = anonymous.head("/no-such-page")
    assert got.status_code == head.status_code == 400
    assert fields(head) == fields(got)
