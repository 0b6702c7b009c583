"""Other sites' scripts read the resolver's answers and call its API (the Fetch standard's
CORS protocol, https://fetch.spec.whatwg.org/#http-cors-protocol), black-box against
``urnkit serve``: the header fields with httpx on SQLite and PostgreSQL, and a real
cross-origin ``fetch`` in headless Chromium, whose CORS checks are the ones that count."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from browser_support import chromium
from resolver_support import JSON, Resolver, register
from selenium.webdriver import Chrome

ALLOWED = "access-control-allow-origin"
EXPOSED = "access-control-expose-headers"


@pytest.mark.parametrize("origin", [None, "https://app.example", "null"])
def test_every_answer_but_the_staff_pages_may_be_read_by_any_site(
    anonymous: httpx.Client, api: httpx.Client, unique: str, origin: str | None
) -> None:
    # Fetch §3.2.5: "*" lets any origin read an answer made without credentials. The same
    # bytes whatever the Origin, so a shared cache keeps one answer for every client.
    urn = f"urn:nbn:fi:test-cors-{unique}"
    register(api, urn, [{"url": "https://example.org/cors"}], {"title": "Across"})
    headers = {} if origin is None else {"Origin": origin}
    paths = [f"/{urn}", f"/api/v1/urns/{urn}", "/prefixes", "/urn:nbn:fi:test-none", "/a b"]
    for path in paths:
        response = anonymous.get(path, headers=headers)
        assert response.headers.get(ALLOWED) == "*", path
        assert {"Link", "ETag", "X-Request-ID"} <= _listed(response.headers[EXPOSED]), path
        assert "vary" not in response.headers or "origin" not in response.headers["vary"].lower()
    assert anonymous.get(f"/{urn}", headers=headers).status_code == 302
    staff = anonymous.get("/staff/sign-in", headers=headers)
    assert staff.status_code == 200
    assert ALLOWED not in staff.headers
    assert EXPOSED not in staff.headers


def test_a_preflight_names_what_the_api_takes(anonymous: httpx.Client) -> None:
    # Fetch §3.2.2-3: a request with Authorization or a JSON body is asked about first.
    asked = {
        "Origin": "https://app.example",
        "Access-Control-Request-Method": "PUT",
        "Access-Control-Request-Headers": "authorization,content-type",
    }
    response = anonymous.options("/api/v1/urns/urn:nbn:fi:test-1", headers=asked)
    assert response.status_code == 204
    assert response.headers[ALLOWED] == "*"
    assert {"PUT", "PATCH", "POST", "GET"} <= _listed(
        response.headers["access-control-allow-methods"]
    )
    allowed = {name.lower() for name in _listed(response.headers["access-control-allow-headers"])}
    assert {"authorization", "content-type", "accept-datetime"} <= allowed
    assert int(response.headers["access-control-max-age"]) > 0
    # The staff pages answer no preflight: a session's forms are posted from their own pages.
    staff = anonymous.options("/staff/sign-in", headers=asked)
    assert staff.status_code == 405
    assert ALLOWED not in staff.headers


def _listed(value: str) -> set[str]:
    return {item.strip() for item in value.split(",")}


@pytest.fixture(scope="module")
def browser() -> Iterator[Chrome]:
    with chromium() as driver:
        yield driver


FETCH = """
const [url, options, done] = arguments;
fetch(url, options).then(
  async (response) => done({status: response.status, etag: response.headers.get("ETag"),
                            body: await response.text()}),
  (error) => done({error: String(error)}));
"""


def test_a_script_of_another_site_resolves_reads_and_registers(
    browser: Chrome, running_resolvers: dict[str, Resolver], unique: str
) -> None:
    resolver = running_resolvers["sqlite"]
    # Another origin, the same server: localhost is not 127.0.0.1 (RFC 6454 §4). A text
    # answer carries no Content-Security-Policy that would keep its script from connecting.
    browser.get(resolver.base_url.replace("127.0.0.1", "localhost") + "/robots.txt")
    assert browser.execute_script("return location.origin") != resolver.base_url

    def fetch(path: str, **options: Any) -> dict[str, Any]:
        found: dict[str, Any] = browser.execute_async_script(
            FETCH, resolver.base_url + path, options
        )
        return found

    urn = f"urn:nbn:fi:test-script-{unique}"
    body = '{"locations": [{"url": "https://example.org/script"}], "metadata": {"title": "S"}}'
    token = {"Authorization": f"Bearer {resolver.registrant_token}"}
    put = fetch(f"/api/v1/urns/{urn}", method="PUT", body=body,
                headers={**token, "Content-Type": JSON})  # fmt: skip
    assert put.get("status") == 201, put
    record = fetch(f"/api/v1/urns/{urn}")
    assert record["status"] == 200
    assert urn in record["body"]
    assert record["etag"], "ETag is exposed to the script"
    # The redirect is followed across the origin, as a client asking for JSON would.
    negotiated = fetch(f"/{urn}", headers={"Accept": JSON})
    assert negotiated["status"] == 200, negotiated
    assert '"urn"' in negotiated["body"]
    # The staff pages are not for other sites: the browser keeps the answer from the script.
    assert "error" in fetch("/staff/sign-in")
