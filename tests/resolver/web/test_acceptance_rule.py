"""The acceptance rule at the API's boundary, against a real server on SQLite and PostgreSQL:
what neither database could store and give back exactly is refused with 422
``application/problem+json`` naming the RFC 6901 JSON pointer of each place and the reason, in
values and in member names, in PUT, PATCH, batch and deactivate, and a refused write stores
nothing. The limits (depth, metadata size, URN length) are accepted exactly at their value.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from urnkit.resolver.domain import MAX_DEPTH, MAX_METADATA_BYTES, MAX_URN_LENGTH

PROBLEM = "application/problem+json"
JSON = {"content-type": "application/json"}
MERGE_PATCH = {"content-type": "application/merge-patch+json"}
UNACCEPTABLE = "tag:urnkit.invalid,2026:problem:unacceptable-input"

# JSON text the service refuses wherever it stands, as a client sends it (raw bytes: a client
# library would refuse to write some of them).
REFUSED_VALUES = {
    "lone surrogate": r'"a\ud800b"',  # RFC 8259 §8.2
    "low surrogate": r'"\udfff"',
    "U+0000": r'"a\u0000b"',
    "NaN": "NaN",  # RFC 8259 §6: no NaN or Infinity
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "1e400": "1e400",  # beyond a double: Python's json reads inf
    "-1e400": "-1e400",
    "float 1e16": "1e16",  # PostgreSQL's jsonb would give back the integer
    "-0.0": "-0.0",  # PostgreSQL's jsonb would give back 0.0
}
REFUSED_NAMES = {
    "lone surrogate": (r'"\ud800"', "\\ud800"),
    "U+0000": (r'"a\u0000"', "a\x00"),
}


def refused(response: httpx.Response, *pointers: str) -> dict[str, Any]:
    """The 422 problem of the acceptance rule, naming ``pointers`` (relative to the body)."""
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    problem: dict[str, Any] = response.json()
    assert problem["type"] == UNACCEPTABLE
    assert [e["pointer"] for e in problem["errors"]] == list(pointers)
    for error in problem["errors"]:
        assert error["location"][0] == "body"
        assert error["message"]
    return problem


def urn_of(unique: str, name: str = "") -> str:
    return f"urn:nbn:fi:test-acc{unique}{name}"


def put_raw(api: httpx.Client, urn: str, body: str) -> httpx.Response:
    return api.put(f"/api/v1/urns/{urn}", content=body.encode(), headers=JSON)


def history_length(api: httpx.Client, urn: str) -> int:
    response = api.get(f"/api/v1/urns/{urn}/history")
    assert response.status_code == 200, response.text
    return len(response.json()["entries"])


def nested(levels: int) -> dict[str, Any]:
    """An object nesting ``levels`` objects, itself the first."""
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


@pytest.mark.parametrize("text", REFUSED_VALUES.values(), ids=list(REFUSED_VALUES))
def test_put_refuses_a_value_and_stores_nothing(api: httpx.Client, unique: str, text: str) -> None:
    urn = urn_of(unique)
    body = f'{{"metadata": {{"ok": 1, "x": [1, {{"y": {text}}}]}}}}'
    problem = refused(put_raw(api, urn, body), "/metadata/x/1/y")
    assert problem["errors"][0]["location"] == ["body", "metadata", "x", 1, "y"]
    assert api.get(f"/api/v1/urns/{urn}").status_code == 404


@pytest.mark.parametrize(("text", "shown"), REFUSED_NAMES.values(), ids=list(REFUSED_NAMES))
def test_put_refuses_a_member_name(api: httpx.Client, unique: str, text: str, shown: str) -> None:
    urn = urn_of(unique)
    problem = refused(
        put_raw(api, urn, f'{{"metadata": {{"t": {{{text}: 1}}}}}}'), f"/metadata/t/{shown}"
    )
    assert "the name" in problem["errors"][0]["message"]
    assert api.get(f"/api/v1/urns/{urn}").status_code == 404


@pytest.mark.parametrize("text", REFUSED_VALUES.values(), ids=list(REFUSED_VALUES))
def test_patch_refuses_a_value_and_changes_nothing(
    api: httpx.Client, unique: str, text: str
) -> None:
    urn = urn_of(unique)
    assert api.put(f"/api/v1/urns/{urn}", json={"metadata": {"t": "kept"}}).status_code == 201
    body = f'{{"metadata": {{"t": {text}}}}}'.encode()
    refused(api.patch(f"/api/v1/urns/{urn}", content=body, headers=MERGE_PATCH), "/metadata/t")
    assert api.get(f"/api/v1/urns/{urn}").json()["metadata"] == {"t": "kept"}
    assert history_length(api, urn) == 1


@pytest.mark.parametrize("text", REFUSED_VALUES.values(), ids=list(REFUSED_VALUES))
def test_batch_refuses_a_value_and_stores_none(api: httpx.Client, unique: str, text: str) -> None:
    first, second = urn_of(unique, "a"), urn_of(unique, "b")
    body = (
        f'{{"records": [{{"urn": "{first}", "metadata": {{"t": "fine"}}}}, '
        f'{{"urn": "{second}", "metadata": {{"x": {{"y": {text}}}}}}}]}}'
    )
    response = api.post("/api/v1/urns:batch", content=body.encode(), headers=JSON)
    refused(response, "/records/1/metadata/x/y")
    assert api.get(f"/api/v1/urns/{first}").status_code == 404
    assert api.get(f"/api/v1/urns/{second}").status_code == 404


@pytest.mark.parametrize("text", REFUSED_VALUES.values(), ids=list(REFUSED_VALUES))
def test_deactivate_refuses_a_note(api: httpx.Client, unique: str, text: str) -> None:
    urn = urn_of(unique)
    assert api.put(f"/api/v1/urns/{urn}", json={}).status_code == 201
    body = f'{{"note": {text}, "successors": []}}'.encode()
    refused(api.post(f"/api/v1/urns/{urn}/deactivate", content=body, headers=JSON), "/note")
    assert api.get(f"/api/v1/urns/{urn}").json()["status"] == "active"
    assert history_length(api, urn) == 1


def test_deactivate_refuses_a_successor_name(api: httpx.Client, unique: str) -> None:
    urn = urn_of(unique)
    assert api.put(f"/api/v1/urns/{urn}", json={}).status_code == 201
    body = rb'{"successors": ["urn:nbn:fi:test-\ud800"]}'
    refused(api.post(f"/api/v1/urns/{urn}/deactivate", content=body, headers=JSON), "/successors/0")
    assert history_length(api, urn) == 1


def test_every_place_is_named(api: httpx.Client, unique: str) -> None:
    body = r'{"metadata": {"a": NaN, "b": ["\u0000", Infinity]}, "locations": [{"url": "\ud800"}]}'
    problem = refused(
        put_raw(api, urn_of(unique), body),
        "/metadata/a",
        "/metadata/b/0",
        "/metadata/b/1",
        "/locations/0/url",
    )
    assert "/metadata/a" in problem["detail"]


def test_depth_limit(api: httpx.Client, unique: str) -> None:
    at_limit, over = urn_of(unique, "a"), urn_of(unique, "b")
    deepest = nested(MAX_DEPTH)
    response = api.put(f"/api/v1/urns/{at_limit}", json={"metadata": deepest})
    assert response.status_code == 201, response.text
    assert api.get(f"/api/v1/urns/{at_limit}").json()["metadata"] == deepest
    pointer = "/metadata" + "/a" * MAX_DEPTH
    refused(api.put(f"/api/v1/urns/{over}", json={"metadata": nested(MAX_DEPTH + 1)}), pointer)
    assert api.get(f"/api/v1/urns/{over}").status_code == 404
    # A batch counts the metadata's levels from its own object, as PUT does.
    batch = {"records": [{"urn": over, "metadata": deepest}]}
    assert api.post("/api/v1/urns:batch", json=batch).status_code == 200
    batch = {"records": [{"urn": over, "metadata": nested(MAX_DEPTH + 1)}]}
    response = api.post("/api/v1/urns:batch", json=batch)
    refused(response, "/records/0/metadata" + "/a" * MAX_DEPTH)
    patch = {"metadata": {"b": nested(MAX_DEPTH)}}
    refused(api.patch(f"/api/v1/urns/{over}", json=patch), "/metadata/b" + "/a" * (MAX_DEPTH - 1))


def test_deep_nesting_elsewhere_in_a_body(api: httpx.Client, unique: str) -> None:
    deep: Any = []
    for _ in range(500):
        deep = [deep]
    response = api.put(f"/api/v1/urns/{urn_of(unique)}", json={"locations": deep})
    assert response.status_code == 422
    assert len(response.json()["errors"]) == 1


@pytest.mark.parametrize("levels", [300, 900, 990, 999])
def test_metadata_nested_near_the_parsers_limit(
    api: httpx.Client, unique: str, levels: int
) -> None:
    # Near the depth Python's JSON parser gives up at: refused, as 422 or 400, never a 500.
    body = '{"metadata": ' + '{"a": ' * levels + "1" + "}" * levels + "}"
    response = put_raw(api, urn_of(unique), body)
    assert response.status_code in (400, 422), response.text
    assert api.get(f"/api/v1/urns/{urn_of(unique)}").status_code == 404


def sized(size: int) -> dict[str, str]:
    """Metadata of ``size`` bytes as compact UTF-8 JSON, with a two-byte character in it."""
    text = "é" + "x" * (size - len('{"t":""}') - 2)
    metadata = {"t": text}
    assert len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")).encode()) == size
    return metadata


def test_metadata_size_limit(api: httpx.Client, unique: str) -> None:
    at_limit, over = urn_of(unique, "a"), urn_of(unique, "b")
    response = api.put(f"/api/v1/urns/{at_limit}", json={"metadata": sized(MAX_METADATA_BYTES)})
    assert response.status_code == 201, response.text
    assert api.get(f"/api/v1/urns/{at_limit}").json()["metadata"] == sized(MAX_METADATA_BYTES)
    bigger = {"metadata": sized(MAX_METADATA_BYTES + 1)}
    problem = refused(api.put(f"/api/v1/urns/{over}", json=bigger), "/metadata")
    assert str(MAX_METADATA_BYTES) in problem["errors"][0]["message"]
    assert api.get(f"/api/v1/urns/{over}").status_code == 404
    batch = {"records": [{"urn": over, **bigger}]}
    refused(api.post("/api/v1/urns:batch", json=batch), "/records/0/metadata")
    # A patch may not grow a record's metadata past the limit either.
    patch = {"metadata": {"u": "y" * 10}}
    response = api.patch(f"/api/v1/urns/{at_limit}", json=patch)
    assert response.status_code == 422
    assert response.json()["errors"][0]["pointer"] == "/metadata"
    assert history_length(api, at_limit) == 1


def long_urn(unique: str, length: int) -> str:
    start = urn_of(unique)
    return start + "x" * (length - len(start))


def test_urn_length_limit(api: httpx.Client, unique: str) -> None:
    at_limit, over = long_urn(unique, MAX_URN_LENGTH), long_urn(unique, MAX_URN_LENGTH + 1)
    assert api.put(f"/api/v1/urns/{at_limit}", json={}).status_code == 201
    assert api.get(f"/api/v1/urns/{at_limit}").json()["urn"] == at_limit
    assert api.get(f"/api/v1/urns/{at_limit}/history").status_code == 200
    for response in (
        api.put(f"/api/v1/urns/{over}", json={}),
        api.get(f"/api/v1/urns/{over}"),
        api.get(f"/api/v1/urns/{over}/history"),
        api.patch(f"/api/v1/urns/{over}", json={"metadata": {}}),
        api.post(f"/api/v1/urns/{over}/deactivate", json={}),
    ):
        assert response.status_code == 422, response.text
        assert response.json()["errors"][0]["location"] == ["path", "urn"]
        assert response.json()["errors"][0]["pointer"] is None
    response = api.post("/api/v1/urns:batch", json={"records": [{"urn": over}]})
    assert response.status_code == 422
    assert response.json()["errors"][0]["pointer"] == "/records/0/urn"
    successor = {"successors": [over]}
    response = api.post(f"/api/v1/urns/{at_limit}/deactivate", json=successor)
    assert response.json()["errors"][0]["pointer"] == "/successors/0"
    short = urn_of(unique, "s")
    batch = {"records": [{"urn": short}, {"urn": at_limit}]}
    assert api.post("/api/v1/urns:batch", json=batch).status_code == 200


def test_validation_errors_carry_pointers(api: httpx.Client, unique: str) -> None:
    # All 422s share one shape: FastAPI's own refusals name the pointer into the body too.
    body = {"locations": [{"url": "https://example.org/", "priority": "high"}]}
    response = api.put(f"/api/v1/urns/{urn_of(unique)}", json=body)
    assert response.status_code == 422
    error = response.json()["errors"][0]
    assert error["pointer"] == "/locations/0/priority"
    assert error["location"] == ["body", "locations", 0, "priority"]
    response = api.get("/api/v1/urns", params={"limit": "many"})
    assert response.json()["errors"][0]["pointer"] is None
    response = put_raw(api, urn_of(unique), '{"metadata": ')
    assert response.status_code == 422
    assert response.json()["errors"][0]["pointer"] == ""


@pytest.mark.parametrize(
    "body",
    [b'{"metadata": {"t": "\xff\xfe"}}', b"[" * 100_000, b'{"n": ' + b"9" * 5000 + b"}"],
    ids=["invalid UTF-8", "nesting beyond the parser", "an integer of 5,000 digits"],
)
def test_unparsable_bodies_are_problems(api: httpx.Client, unique: str, body: bytes) -> None:
    response = api.put(f"/api/v1/urns/{urn_of(unique)}", content=body, headers=JSON)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith(PROBLEM)


def test_admin_bodies_are_checked(admin: httpx.Client) -> None:
    body = rb'{"name": "Lib\u0000rary"}'
    response = admin.post("/api/v1/organisations", content=body, headers=JSON)
    refused(response, "/name")
    forwarding = rb'{"url_template": "https://example.org/{urn}", "note": "\ud800"}'
    refused(admin.put("/api/v1/forwarding/zz", content=forwarding, headers=JSON), "/note")


def test_hostile_bodies_of_the_issue_leave_reads_working(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # Each broke every read of its record, its history, listings and search with a 500.
    for number, text in enumerate([r'"\ud83d"', r'"\u0000"', "1e400", "NaN"]):
        urn = urn_of(unique, str(number))
        refused(put_raw(api, urn, f'{{"metadata": {{"title": {text}}}}}'), "/metadata/title")
    deep = {"metadata": nested(300)}
    assert api.put(f"/api/v1/urns/{urn_of(unique, 'd')}", json=deep).status_code == 422
    prefix = anonymous.get("/api/v1/urns", params={"prefix": "fi:test", "limit": 1000})
    assert prefix.status_code == 200
    assert anonymous.get("/api/v1/search", params={"title": "a"}).status_code == 200


def test_the_token_is_checked_first(
    anonymous: httpx.Client, other: httpx.Client, unique: str
) -> None:
    # RFC 9110 §15.5.2: without a live token the answer is 401, whatever the body holds; the
    # rule runs after the route's own dependencies.
    body = b'{"metadata": {"t": NaN}}'
    urn = urn_of(unique)
    response = anonymous.put(f"/api/v1/urns/{urn}", content=body, headers=JSON)
    assert response.status_code == 401
