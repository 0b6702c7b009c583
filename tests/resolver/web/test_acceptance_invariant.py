"""The invariant of the acceptance rule, property-based against a running server on SQLite and
PostgreSQL: for any JSON metadata (all of Unicode, lone surrogates and U+0000 included; floats
with NaN and the infinities; integers of any size; nesting past the limit) and any URN string
under the test prefix, a write is either refused (4xx) and stores nothing, or its record reads
back exactly, by value and as re-serialised bytes, through every read: the record, its
history, the listing, search, export, OAI-PMH's GetRecord, resolution and the landing page.

The order of an object's members is not part of "exactly": JSON objects are unordered
(RFC 8259 §4) and PostgreSQL's jsonb orders them its own way; bytes are compared with the
members sorted.
"""

from __future__ import annotations

import itertools
import json
import secrets
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from resolver_support import Resolver

from urnkit.resolver.domain import MAX_DEPTH, MAX_URN_LENGTH
from urnkit.resolver.services import Services
from urnkit.resolver.store import Store

JSON = {"content-type": "application/json"}
# Characters of URN strings: RFC 8141's pchar and more (a space, a percent sign, non-ASCII).
URN_ALPHABET = st.sampled_from(list("abcXYZ019-._~:=@!$&'()*+,;/%? é"))
PATH_SAFE = ":@!$&'()*+,;=-._~"  # RFC 3986 §3.3's pchar, but for percent-encodings
counter = itertools.count()


def canonical(value: Any) -> bytes:
    """``value`` re-serialised: members sorted, numbers as Python writes them (an integer
    and a float of equal value differ), lone surrogates escaped."""
    return json.dumps(value, sort_keys=True, allow_nan=True).encode()


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats()  # NaN and the infinities too
    | st.sampled_from([1e16, -1e16, 1e300, -0.0, 0.0, 1e-300, 5e-324, 2.0**53])
    | st.text(st.characters(exclude_categories=()), max_size=12)  # surrogates and U+0000 too
)
names = st.text(st.characters(exclude_categories=()), max_size=6)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(names, inner, max_size=4),
    max_leaves=12,
)


def deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


metadata_values = st.dictionaries(names, values, max_size=5) | st.integers(
    MAX_DEPTH - 1, MAX_DEPTH + 1
).map(deep)
nss_parts = st.text(URN_ALPHABET, min_size=1, max_size=20) | st.integers(
    MAX_URN_LENGTH - 40, MAX_URN_LENGTH - 20
).map(lambda n: "x" * n)


@pytest.fixture
def prefix(resolver: Resolver) -> str:
    """A prefix of its own, delegated to the registrant's organisation for this test."""
    name = f"fi:prop{secrets.token_hex(4)}"
    with resolver.client(resolver.admin_token) as admin:
        body = {"prefix": name, "organisation": "Test Library"}
        assert admin.post("/api/v1/prefixes", json=body).status_code in (200, 201)
    return name


def listed(client: httpx.Client, prefix: str) -> dict[str, dict[str, Any]]:
    page = client.get("/api/v1/urns", params={"prefix": prefix, "limit": 1000})
    assert page.status_code == 200, page.text
    return {r["urn"]: r for r in page.json()["records"]}


def assert_same(found: Any, sent: Any) -> None:
    assert found == sent
    assert canonical(found) == canonical(sent)


def assert_readable(
    resolver: Resolver, client: httpx.Client, prefix: str, urn: str, metadata: Any, url: str
) -> None:
    """Every read gives the record back exactly, or names it."""
    record = client.get(f"/api/v1/urns/{urn}")
    assert record.status_code == 200, record.text
    assert_same(record.json()["metadata"], metadata)
    history = client.get(f"/api/v1/urns/{urn}/history")
    assert history.status_code == 200, history.text
    assert_same(history.json()["entries"][-1]["record"]["metadata"], metadata)
    assert_same(listed(client, prefix)[record.json()["urn"]]["metadata"], metadata)
    found = client.get("/api/v1/search", params={"urn": urn})
    assert found.status_code == 200, found.text
    assert_same(found.json()["records"][0]["metadata"], metadata)
    title = metadata.get("title")
    if isinstance(title, str) and title:
        found = client.get("/api/v1/search", params={"title": title, "limit": 1000})
        assert found.status_code == 200, found.text
        assert record.json()["urn"] in [r["urn"] for r in found.json()["records"]]
    store = Store(resolver.database_url)
    try:
        exported = {r.urn: r for r in Services(store).transfer.export_records(prefix)}
    finally:
        store.close()
    assert_same(exported[record.json()["urn"]].metadata, metadata)
    oai = client.get(
        "/oai",
        params={
            "verb": "GetRecord",
            "identifier": record.json()["urn"],
            "metadataPrefix": "oai_dc",
        },
    )
    assert oai.status_code == 200, oai.text
    assert "<error" not in oai.text
    resolved = client.get(f"/{urn}")
    assert resolved.status_code == 302, resolved.text
    assert resolved.headers["location"] == url
    page = client.get(f"/{urn}", params={"s": "I2C"}, headers={"accept": "text/html"})
    assert page.status_code == 200, page.text


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(metadata=metadata_values, nss=nss_parts)
def test_accepted_reads_back_exactly_and_refused_stores_nothing(
    resolver: Resolver, api: httpx.Client, prefix: str, metadata: Any, nss: str
) -> None:
    # RFC 8141 §2: an NSS the API refuses as no URN is as refused as unstorable metadata.
    number = next(counter)
    # The URN is what the server sees: the path as sent, characters outside a path's
    # percent-encoded (RFC 3986 §3.3).
    urn = quote(f"urn:nbn:{prefix}-{number}{nss}", safe=PATH_SAFE)
    url = f"https://example.org/acceptance/{number}"
    before = listed(api, prefix)
    body = json.dumps({"locations": [{"url": url}], "metadata": metadata}, allow_nan=True)
    response = api.put(f"/api/v1/urns/{urn}", content=body.encode(), headers=JSON)
    assert response.status_code < 500, response.text
    event(f"answered {response.status_code}")
    if response.status_code >= 400:
        assert listed(api, prefix) == before
        return
    assert response.status_code == 201, response.text
    assert_same(response.json()["metadata"], metadata)
    assert_readable(resolver, api, prefix, urn, metadata, url)
