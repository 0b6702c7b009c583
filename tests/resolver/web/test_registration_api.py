"""Contract tests of the registration API under ``/api/v1`` against a real server.

Each test runs on SQLite and PostgreSQL (the ``resolver`` fixture). What they pin down:

* ``PUT /api/v1/urns/{urn}`` creates (201) or replaces (200) a record, found by URN:NBN
  equivalence; ``GET`` shows it, ``PATCH`` changes it with a JSON merge patch (RFC 7396), and
  ``/history`` lists every change;
* ``GET /api/v1/urns?prefix=…`` pages through a prefix and its sub-namespaces with a cursor;
* nothing is ever deleted or reused: ``DELETE`` is not allowed, a deactivated URN is not written
  again, and generation skips every URN that exists (RFC 8458 §4.1);
* generation is sequential, or random base-32 with an ISO/IEC 7064 MOD 37,36 check character,
  with DNB's check digit under de, at and ch;
* a batch is one transaction (all or nothing) and replays under the same ``Idempotency-Key``;
* a registrant writes only under the prefixes delegated to its organisation (RFC 8458 §4.3),
  admins manage organisations, prefixes and tokens; 401 (with ``WWW-Authenticate``) without a
  live token, 403 with a reason outside one's scope, problem details (RFC 9457) throughout.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import httpx
import pytest
from resolver_support import Resolver, urnkit

from urnkit.namespaces.nbn import dnb_check_digit

PROBLEM = "application/problem+json"
MERGE_PATCH = "application/merge-patch+json"
RECORD_FIELDS = {"urn", "status", "locations", "metadata", "successors", "created", "updated"}
CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
ISO7064_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


# --- helpers -------------------------------------------------------------------------------------


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    """An RFC 9457 problem of ``status``; its members."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    problem: dict[str, Any] = response.json()
    assert problem["status"] == status
    assert problem["title"]
    assert problem["detail"]
    return problem


def put(
    client: httpx.Client,
    urn: str,
    locations: Sequence[dict[str, Any]] = (),
    metadata: dict[str, Any] | None = None,
    status: int = 201,
) -> dict[str, Any]:
    """PUT a record, expecting ``status``; the record returned."""
    body = {"locations": list(locations), "metadata": metadata or {}}
    response = client.put(f"/api/v1/urns/{urn}", json=body)
    assert response.status_code == status, response.text
    record: dict[str, Any] = response.json()
    return record


def get(client: httpx.Client, urn: str) -> dict[str, Any]:
    """The record of ``urn``, which must exist."""
    response = client.get(f"/api/v1/urns/{urn}")
    assert response.status_code == 200, response.text
    record: dict[str, Any] = response.json()
    return record


def delegate(
    admin: httpx.Client, prefix: str, organisation: str = "Test Library", generator: str = ""
) -> None:
    """Delegate a new prefix through the admin API."""
    body = {"prefix": prefix, "organisation": organisation}
    if generator:
        body["generator"] = generator
    response = admin.post("/api/v1/prefixes", json=body)
    assert response.status_code == 201, response.text


def generate(client: httpx.Client, prefix: str, count: int = 1) -> list[str]:
    """Generate ``count`` URNs in ``prefix``; the URNs."""
    response = client.post(f"/api/v1/prefixes/{prefix}/urns", params={"count": count})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["urn"] == body["urns"][0]
    assert len(body["urns"]) == count
    urns: list[str] = body["urns"]
    return urns


def listed(client: httpx.Client, prefix: str, limit: int = 1000) -> list[str]:
    """Every URN listed under ``prefix``, page after page."""
    urns: list[str] = []
    params: dict[str, Any] = {"prefix": prefix, "limit": limit}
    while True:
        response = client.get("/api/v1/urns", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        urns += [record["urn"] for record in page["records"]]
        if page["next_cursor"] is None:
            return urns
        params["cursor"] = page["next_cursor"]


def iso7064_mod_37_36(body: str) -> str:
    """The ISO/IEC 7064 MOD 37,36 check character of ``body`` (lower case)."""
    product = 36
    for char in body:
        total = (product + ISO7064_ALPHABET.index(char)) % 36 or 36
        product = total * 2 % 37
    return ISO7064_ALPHABET[(37 - product) % 36]


def token_id(client: httpx.Client, urn: str) -> int:
    """The id of the token that last wrote ``urn``, read from the actor of its history."""
    response = client.get(f"/api/v1/urns/{urn}/history")
    assert response.status_code == 200, response.text
    match = re.search(r"\(token (\d+)\)$", response.json()["entries"][-1]["actor"])
    assert match is not None
    return int(match[1])


# --- create, read, replace -----------------------------------------------------------------------


def test_put_creates_then_replaces(api: httpx.Client, unique: str) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    full = {
        "url": "https://example.org/thesis.pdf",
        "priority": 3,
        "label": "PDF",
        "media_type": "application/pdf",
        "restricted_to": None,
    }
    created = put(api, urn, [full, {"url": "ftp://example.org/t"}], {"title": "T", "n": [1, 2]})
    assert set(created) >= RECORD_FIELDS
    assert created["urn"] == urn
    assert created["status"] == "active"
    assert created["successors"] == []
    assert created["owner"] == "Test Library"
    assert created["created"] == created["updated"]
    shown = get(api, urn)
    held = {"organisation": "Test Library"}  # each location names the organisation holding it
    assert sorted(shown["locations"], key=lambda loc: loc["priority"]) == [
        {
            "url": "ftp://example.org/t",
            "priority": 1,
            "label": None,
            "media_type": None,
            "restricted_to": None,
        }
        | held,
        full | held,
    ]
    assert shown["metadata"] == {"title": "T", "n": [1, 2]}
    replaced = put(api, urn, [{"url": "https://example.org/v2"}], {"title": "T2"}, status=200)
    assert replaced["created"] == created["created"]
    assert datetime.fromisoformat(replaced["updated"]) > datetime.fromisoformat(created["updated"])
    shown = get(api, urn)
    assert [loc["url"] for loc in shown["locations"]] == ["https://example.org/v2"]
    assert shown["metadata"] == {"title": "T2"}  # replaced, not merged


@pytest.mark.parametrize(
    ("registered", "spelling"),
    [
        ("urn:nbn:fi:test-{}", "URN:NBN:FI:TEST-{}"),
        ("URN:NBN:FI:Test-{}", "urn:nbn:fi:test-{}"),
        ("urn:nbn:fi:test-{}a%2fb", "urn:nbn:fi:test-{}a%2Fb"),
    ],
)
def test_a_record_is_found_and_replaced_by_any_equivalent_spelling(
    api: httpx.Client, unique: str, registered: str, spelling: str
) -> None:
    # RFC 8141 §3 and RFC 8458 §4.3: "urn:nbn:", the prefix and percent-encodings in any case.
    first, again = registered.format(unique), spelling.format(unique)
    put(api, first)
    assert get(api, again)["urn"] == first
    replaced = put(api, again, [{"url": "https://example.org/eq"}], status=200)
    assert replaced["urn"] == first  # the spelling it was registered with stays
    assert [loc["url"] for loc in get(api, first)["locations"]] == ["https://example.org/eq"]


def test_the_nbn_string_case_makes_another_urn(api: httpx.Client, unique: str) -> None:
    # RFC 8458 §4.2: NBN strings are case-sensitive.
    put(api, f"urn:nbn:fi:test-{unique}abc")
    put(api, f"urn:nbn:fi:test-{unique}ABC", status=201)
    assert_problem(api.get(f"/api/v1/urns/urn:nbn:fi:test-{unique}Abc"), 404)


def test_reading_unknown_and_invalid_urns(anonymous: httpx.Client, unique: str) -> None:
    assert_problem(anonymous.get(f"/api/v1/urns/urn:nbn:fi:test-{unique}"), 404)
    assert_problem(anonymous.get(f"/api/v1/urns/urn:nbn:fi:test-{unique}/history"), 404)
    problem = assert_problem(anonymous.get("/api/v1/urns/urn:nbn:fi:test-a%zz"), 400)
    assert (problem["position"], problem["rule"]) == (18, "pct-encoded")


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"locations": [{"url": "mailto:someone@example.org"}]}, 422),
        ({"locations": [{"url": "javascript:alert(1)"}]}, 422),
        ({"locations": [{"url": "/relative/path"}]}, 422),
        ({"locations": [{"url": "https://example.org/a b"}]}, 422),
        ({"locations": [{"url": "https://example.org/", "priority": -1}]}, 422),
        ({"locations": [{"href": "https://example.org/"}]}, 422),
        ({"locations": "https://example.org/"}, 422),
        ({"metadata": ["not", "an", "object"]}, 422),
        ({"status": "deactivated"}, 422),
    ],
)
def test_put_refuses_unfit_bodies_and_stores_nothing(
    api: httpx.Client, unique: str, body: dict[str, Any], status: int
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    assert_problem(api.put(f"/api/v1/urns/{urn}", json=body), status)
    assert_problem(api.get(f"/api/v1/urns/{urn}"), 404)


@pytest.mark.parametrize(
    ("urn", "status"),
    [
        ("urn:isbn:{}", 422),  # this service registers URN:NBNs only (RFC 8458)
        ("urn:nbn:fi:test-", 422),  # an empty NBN string (RFC 8458 §4.2)
        ("urn:nbn:fi:test-{}%", 400),  # not a URN (RFC 8141 §2)
    ],
)
def test_put_refuses_names_that_cannot_be_registered(
    admin: httpx.Client, unique: str, urn: str, status: int
) -> None:
    text = urn.format(unique)
    assert_problem(admin.put(f"/api/v1/urns/{text}", json={}), status)
    if status != 400:
        assert_problem(admin.get(f"/api/v1/urns/{text}"), 404)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://example.org:99999/a", "has the port '99999': a port is 1 to 65535"),
        ("https://example.org:0/a", "has the port '0': a port is 1 to 65535"),
        ("https://user:secret@example.org/a", "holds user information (user:password@)"),
    ],
)
def test_put_refuses_a_location_out_of_bounds_saying_why(
    api: httpx.Client, unique: str, url: str, reason: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    body = {"locations": [{"url": "https://example.org/fine"}, {"url": url}]}
    problem = assert_problem(api.put(f"/api/v1/urns/{urn}", json=body), 422)
    assert problem["detail"].startswith(f"location 2: {url!r} {reason}")
    assert_problem(api.get(f"/api/v1/urns/{urn}"), 404)


@pytest.mark.parametrize("encoded", ["%0A", "%0d", "%00", "%1F", "%7f"])
def test_put_refuses_an_nss_with_a_percent_encoded_control_character(
    api: httpx.Client, unique: str, encoded: str
) -> None:
    # RFC 8141 §2 allows it; the resolver's acceptance rule does not register it.
    urn = f"urn:nbn:fi:test-{unique}{encoded}x"
    problem = assert_problem(api.put(f"/api/v1/urns/{urn}", json={}), 422)
    assert (problem["rule"], problem["section"]) == ("no-encoded-controls", "RFC 8141 §2")
    assert problem["position"] == urn.index("%")
    assert encoded in problem["detail"]
    assert_problem(api.get(f"/api/v1/urns/{urn}"), 404)


# --- merge patch ---------------------------------------------------------------------------------


@pytest.mark.parametrize("content_type", [MERGE_PATCH, "application/json"])
def test_patch_merges_metadata(api: httpx.Client, unique: str, content_type: str) -> None:
    # RFC 7396: objects merge, null removes a member, anything else replaces.
    urn = f"urn:nbn:fi:test-{unique}"
    put(
        api,
        urn,
        [{"url": "https://example.org/keep"}],
        {"title": "T", "drop": 1, "nested": {"a": 1, "b": 2}, "list": [1, 2]},
    )
    patch = b'{"metadata": {"drop": null, "nested": {"b": null, "c": 3}, "list": [3], "new": "n"}}'
    patched = api.patch(
        f"/api/v1/urns/{urn}", content=patch, headers={"Content-Type": content_type}
    )
    assert patched.status_code == 200, patched.text
    expected = {"title": "T", "nested": {"a": 1, "c": 3}, "list": [3], "new": "n"}
    assert patched.json()["metadata"] == expected
    shown = get(api, urn)
    assert shown["metadata"] == expected
    assert [loc["url"] for loc in shown["locations"]] == ["https://example.org/keep"]
    assert shown["status"] == "active"


def test_patch_replaces_locations_and_keeps_metadata(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    put(api, urn, [{"url": "https://example.org/old"}], {"title": "Kept"})
    patch = {
        "locations": [
            {"url": "https://example.org/b", "priority": 2},
            {"url": "https://example.org/a"},
        ]
    }
    patched = api.patch(f"/api/v1/urns/{urn}", json=patch, headers={"Content-Type": MERGE_PATCH})
    assert patched.status_code == 200, patched.text
    shown = get(api, urn)
    assert shown["metadata"] == {"title": "Kept"}
    assert {loc["url"] for loc in shown["locations"]} == {
        "https://example.org/a",
        "https://example.org/b",
    }
    assert anonymous.get(f"/{urn}").headers["location"] == "https://example.org/a"


@pytest.mark.parametrize(
    ("patch", "status"),
    [
        ({"status": "reserved"}, 422),  # only metadata and locations can be patched
        ({"urn": "urn:nbn:fi:test-other"}, 422),
        ({"metadata": "a string"}, 422),  # metadata must stay an object
        ({"locations": "https://example.org/"}, 422),
        ({"locations": [{"url": "mailto:x@example.org"}]}, 422),
        ({"locations": [{"href": "https://example.org/"}]}, 422),
        ({"locations": ["https://example.org/"]}, 422),
        ({"locations": [{"url": "https://example.org/", "priority": "high"}]}, 422),
        ([{"op": "replace", "path": "/metadata", "value": {}}], 422),  # a JSON Patch, not ours
    ],
)
def test_patch_refuses_unfit_patches_and_changes_nothing(
    api: httpx.Client, unique: str, patch: Any, status: int
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    before = put(api, urn, [{"url": "https://example.org/same"}], {"title": "Same"})
    response = api.patch(f"/api/v1/urns/{urn}", json=patch, headers={"Content-Type": MERGE_PATCH})
    assert_problem(response, status)
    after = get(api, urn)
    assert (after["metadata"], after["locations"], after["updated"]) == (
        before["metadata"],
        before["locations"],
        before["updated"],
    )


def test_patch_refuses_a_body_not_sent_as_json(api: httpx.Client, unique: str) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    put(api, urn, [], {"title": "Same"})
    response = api.patch(
        f"/api/v1/urns/{urn}",
        content=b'{"metadata": {"title": "Changed"}}',
        headers={"Content-Type": "text/plain"},
    )
    # RFC 5789 §2.2: a patch document in an unsupported format is 415 Unsupported Media Type.
    assert_problem(response, 415)
    assert get(api, urn)["metadata"] == {"title": "Same"}


def test_a_null_locations_member_removes_every_location(api: httpx.Client, unique: str) -> None:
    # RFC 7396 §1: null in a merge patch removes the member; for locations, all of them.
    urn = f"urn:nbn:fi:test-{unique}"
    put(api, urn, [{"url": "https://example.org/gone"}], {"title": "Kept"})
    response = api.patch(
        f"/api/v1/urns/{urn}", json={"locations": None}, headers={"Content-Type": MERGE_PATCH}
    )
    assert response.status_code == 200, response.text
    assert (get(api, urn)["locations"], get(api, urn)["metadata"]) == ([], {"title": "Kept"})


@pytest.mark.parametrize("query", ["=lang=fi", "+resolver=x"])
def test_a_component_in_the_api_path_is_refused_not_dropped(
    api: httpx.Client, unique: str, query: str
) -> None:
    # RFC 8141 §2.3: components are not part of the assigned name a record holds.
    response = api.put(f"/api/v1/urns/urn:nbn:fi:test-{unique}?{query}", json={})
    assert_problem(response, 422)
    assert "RFC 8141 §2.3" in response.json()["section"]
    assert api.get(f"/api/v1/urns/urn:nbn:fi:test-{unique}").status_code == 404


def test_patch_of_an_unknown_urn_is_not_found(api: httpx.Client, unique: str) -> None:
    response = api.patch(
        f"/api/v1/urns/urn:nbn:fi:test-{unique}",
        json={"metadata": {"a": 1}},
        headers={"Content-Type": MERGE_PATCH},
    )
    assert_problem(response, 404)


# --- history -------------------------------------------------------------------------------------


def test_history_lists_every_change_oldest_first(api: httpx.Client, unique: str) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    put(api, urn, [], {"v": 1})
    put(api, f"URN:NBN:FI:TEST-{unique}", [], {"v": 2}, status=200)
    api.patch(f"/api/v1/urns/{urn}", json={"metadata": {"v": 3}}).raise_for_status()
    api.post(f"/api/v1/urns/{urn}/deactivate", json={"note": "bye"}).raise_for_status()
    response = api.get(f"/api/v1/urns/URN:NBN:FI:TEST-{unique}/history")
    assert response.status_code == 200, response.text
    history = response.json()
    assert history["urn"] == urn
    entries = history["entries"]
    assert [entry["action"] for entry in entries] == [
        "created",
        "replaced",
        "patched",
        "deactivated",
    ]
    assert [entry["record"]["metadata"]["v"] for entry in entries] == [1, 2, 3, 3]
    assert [entry["record"]["status"] for entry in entries] == ["active"] * 3 + ["deactivated"]
    assert all(entry["actor"].startswith("Test Library") for entry in entries)
    moments = [datetime.fromisoformat(entry["at"]) for entry in entries]
    assert moments == sorted(moments)


# --- listing -------------------------------------------------------------------------------------


def test_listing_pages_through_a_prefix_and_its_sub_namespaces(
    api: httpx.Client, admin: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    prefix = f"fi:l{unique}"
    delegate(admin, prefix)
    delegate(admin, prefix + "x")  # a longer prefix is not a sub-namespace (RFC 8458 §4.3)
    inside = [
        f"urn:nbn:{prefix}-1",
        f"urn:nbn:{prefix}:sub-2",
        f"URN:NBN:{prefix.upper()}-3",
        f"urn:nbn:{prefix}-4",
        f"urn:nbn:{prefix}:sub:deeper-5",
    ]
    for number, urn in enumerate(inside):
        put(api, urn)
        if number == 2:
            put(api, f"urn:nbn:{prefix}x-2")
    pages: list[list[str]] = []
    params: dict[str, Any] = {"prefix": prefix.upper(), "limit": 2}
    while True:
        response = anonymous.get("/api/v1/urns", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        pages.append([record["urn"] for record in page["records"]])
        assert all(set(record) >= RECORD_FIELDS for record in page["records"])
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
        assert len(pages) < 10
    assert [len(page) for page in pages] == [2, 2, 1]
    assert [urn for page in pages for urn in page] == inside  # registration order
    assert listed(anonymous, f"{prefix}:sub") == [inside[1], inside[4]]
    assert listed(anonymous, prefix + "x") == [f"urn:nbn:{prefix}x-2"]


@pytest.mark.parametrize(
    "params",
    [{"cursor": "abc"}, {"cursor": "-1"}, {"limit": 0}, {"limit": 1001}, {"prefix": "fi-test"}],
)
def test_listing_refuses_bad_parameters(anonymous: httpx.Client, params: dict[str, Any]) -> None:
    assert_problem(anonymous.get("/api/v1/urns", params=params), 422)


# --- never deleted, never reused -----------------------------------------------------------------


@pytest.mark.parametrize("token", ["registrant_token", "admin_token"])
@pytest.mark.parametrize("path", ["/api/v1/urns/{}", "/{}"])
def test_delete_is_not_allowed_and_removes_nothing(
    resolver: Resolver, anonymous: httpx.Client, unique: str, token: str, path: str
) -> None:
    # RFC 8458 §4.1: a URN:NBN, once assigned, is never deleted or reused.
    urn = f"urn:nbn:fi:test-{unique}"
    with resolver.client(getattr(resolver, token)) as client:
        put(client, urn, [{"url": "https://example.org/stays"}])
        response = client.delete(path.format(urn))
        assert_problem(response, 405)
        # RFC 9110 §15.5.6: Allow lists the methods the resource does support.
        allowed = {m.strip() for m in response.headers["allow"].split(",")}
        assert allowed == ({"GET", "HEAD", "PUT", "PATCH"} if "api" in path else {"GET", "HEAD"})
    assert get(anonymous, urn)["status"] == "active"
    assert anonymous.get(f"/{urn}").headers["location"] == "https://example.org/stays"


def test_deactivation_records_note_and_successors(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    put(api, urn, [{"url": "https://example.org/x"}], {"title": "Old"})
    body = {"note": "Superseded", "successors": [f"urn:nbn:fi:test-{unique}b", "urn:nbn:se:x-1"]}
    response = api.post(f"/api/v1/urns/URN:NBN:FI:TEST-{unique}/deactivate", json=body)
    assert response.status_code == 200, response.text
    shown = get(anonymous, urn)
    assert shown["status"] == "deactivated"
    assert shown["note"] == "Superseded"
    assert shown["successors"] == body["successors"]
    assert shown["metadata"] == {"title": "Old"}
    assert anonymous.get(f"/{urn}").status_code == 410


@pytest.mark.parametrize("spelling", ["urn:nbn:fi:test-{}", "URN:NBN:FI:TEST-{}"])
def test_a_deactivated_urn_is_not_written_again(
    api: httpx.Client, admin: httpx.Client, unique: str, spelling: str
) -> None:
    # RFC 8458 §4.1: "MUST NOT be reused".
    urn = f"urn:nbn:fi:test-{unique}"
    put(api, urn, [], {"title": "Old"})
    api.post(f"/api/v1/urns/{urn}/deactivate", json={"successors": []}).raise_for_status()
    again = spelling.format(unique)
    for client in (api, admin):
        problem = assert_problem(client.put(f"/api/v1/urns/{again}", json={}), 409)
        assert "deactivated" in problem["detail"]
        patch = client.patch(f"/api/v1/urns/{again}", json={"metadata": {"title": "New"}})
        assert_problem(patch, 409)
        batch = client.post("/api/v1/urns:batch", json={"records": [{"urn": again}]})
        assert_problem(batch, 409)
    shown = get(api, urn)
    assert (shown["status"], shown["metadata"]) == ("deactivated", {"title": "Old"})


@pytest.mark.parametrize(
    ("successors", "status"),
    [
        (["urn:nbn:fi:test-{}"], 422),  # a URN cannot succeed itself
        (["URN:NBN:FI:TEST-{}"], 422),  # ... in any equivalent spelling
        (["not a urn"], 400),
    ],
)
def test_deactivation_refuses_bad_successors(
    api: httpx.Client, unique: str, successors: list[str], status: int
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    put(api, urn, [{"url": "https://example.org/x"}])
    body = {"successors": [s.format(unique) for s in successors]}
    assert_problem(api.post(f"/api/v1/urns/{urn}/deactivate", json=body), status)
    assert get(api, urn)["status"] == "active"


def test_deactivating_an_unknown_urn_is_not_found(api: httpx.Client, unique: str) -> None:
    response = api.post(f"/api/v1/urns/urn:nbn:fi:test-{unique}/deactivate", json={})
    assert_problem(response, 404)


# --- generation ----------------------------------------------------------------------------------


def test_sequential_generation_reserves_the_next_numbers(
    api: httpx.Client, admin: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    prefix = f"fi:g{unique}"
    delegate(admin, prefix, generator="sequential")
    assert generate(api, prefix) == [f"urn:nbn:{prefix}-1"]  # no check digit outside de/at/ch
    made = generate(api, prefix.upper(), count=3)
    assert made == [f"urn:nbn:{prefix}-{n}" for n in (2, 3, 4)]
    for urn in made:
        record = get(anonymous, urn)
        assert (record["status"], record["locations"], record["owner"]) == (
            "reserved",
            [],
            "Test Library",
        )
    # A reserved URN is registered by PUT: replaced (200), and active from then on.
    assert put(api, made[0], [{"url": "https://example.org/r"}], status=200)["status"] == "active"


def test_generation_never_returns_an_existing_urn(
    api: httpx.Client, admin: httpx.Client, unique: str
) -> None:
    # RFC 8458 §4.1: a URN is never reused; numbers registered by hand are skipped.
    prefix = f"fi:g{unique}"
    delegate(admin, prefix)
    assert generate(api, prefix) == [f"urn:nbn:{prefix}-1"]
    put(api, f"urn:nbn:{prefix}-2")
    put(api, f"URN:NBN:{prefix.upper()}-3")
    api.post(f"/api/v1/urns/urn:nbn:{prefix}-3/deactivate", json={}).raise_for_status()
    put(api, f"urn:nbn:{prefix}-5")
    assert generate(api, prefix, count=2) == [f"urn:nbn:{prefix}-4", f"urn:nbn:{prefix}-6"]


def test_random_generation_uses_base_32_with_a_check_character(
    other: httpx.Client, anonymous: httpx.Client
) -> None:
    made = generate(other, "fi:other", count=20)
    assert len(set(made)) == 20
    for urn in made:
        match = re.fullmatch(rf"urn:nbn:fi:other-([{CROCKFORD}]{{10}})([0-9a-z])", urn)
        assert match is not None, urn
        assert match[2] == iso7064_mod_37_36(match[1]), urn
    assert get(anonymous, made[-1])["status"] == "reserved"


@pytest.mark.parametrize("country", ["de", "at", "ch"])
def test_generation_appends_dnb_check_digit_under_de_at_ch(
    admin: httpx.Client, resolver: Resolver, unique: str, country: str
) -> None:
    organisation, prefix = f"Library {country} {unique}", f"{country}:g{unique}"
    created = admin.post("/api/v1/organisations", json={"name": organisation})
    assert created.status_code == 201, created.text
    delegate(admin, prefix, organisation)
    token = admin.post(f"/api/v1/organisations/{organisation}/tokens", json={"role": "registrant"})
    assert token.status_code == 201, token.text
    with resolver.client(token.json()["token"]) as registrant:
        made = generate(registrant, prefix, count=3)
    for number, urn in enumerate(made, 1):
        assert urn[:-1] == f"urn:nbn:{prefix}-{number}"
        assert urn[-1] == dnb_check_digit(urn[:-1]), urn


@pytest.mark.parametrize(
    ("token", "prefix", "params", "status"),
    [
        ("other_token", "fi:test", {}, 403),  # delegated to another organisation
        ("registrant_token", "fi:other", {}, 403),
        ("registrant_token", "fi:nowhere", {}, 404),  # delegated to nobody
        ("registrant_token", "fi-test", {}, 422),  # not a prefix (RFC 8458 §4.2)
        ("registrant_token", "fi:test", {"count": 0}, 422),
        ("registrant_token", "fi:test", {"count": 1001}, 422),
        ("", "fi:test", {}, 401),
    ],
)
def test_generation_refusals(
    resolver: Resolver, token: str, prefix: str, params: dict[str, Any], status: int
) -> None:
    with resolver.client(getattr(resolver, token) if token else None) as client:
        response = client.post(f"/api/v1/prefixes/{prefix}/urns", params=params)
    assert_problem(response, status)


# --- batches -------------------------------------------------------------------------------------


def test_a_batch_creates_and_replaces_in_order(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    existing = f"urn:nbn:fi:test-{unique}0"
    put(api, existing, [{"url": "https://example.org/before"}])
    records: list[dict[str, Any]] = [
        {"urn": f"urn:nbn:fi:test-{unique}1", "locations": [{"url": "https://example.org/1"}]},
        {"urn": f"URN:NBN:FI:TEST-{unique}0", "metadata": {"t": "now"}},
        {"urn": f"urn:nbn:fi:test:sub-{unique}2", "metadata": {"t": 2}},
    ]
    response = api.post("/api/v1/urns:batch", json={"records": records})
    assert response.status_code == 200, response.text
    assert response.json() == {
        "count": 3,
        "results": [
            {"urn": records[0]["urn"], "result": "created"},
            {"urn": existing, "result": "replaced"},
            {"urn": records[2]["urn"], "result": "created"},
        ],
    }
    assert anonymous.get(f"/{records[0]['urn']}").headers["location"] == "https://example.org/1"
    replaced = get(anonymous, existing)
    assert (replaced["locations"], replaced["metadata"]) == ([], {"t": "now"})
    assert get(anonymous, records[2]["urn"])["metadata"] == {"t": 2}


@pytest.mark.parametrize(
    ("bad", "status"),
    [
        ({"urn": "urn:nbn:fi:other-{}"}, 403),  # outside the delegated prefixes
        ({"urn": "urn:nbn:fi:testx-{}"}, 403),
        ({"urn": "urn:nbn:fi:test-{}x", "locations": [{"url": "mailto:x@example.org"}]}, 422),
        ({"urn": "urn:isbn:{}"}, 422),
        ({"urn": "urn:nbn:fi:test-{}%zz"}, 400),  # not a URN
        ({"urn": "urn:nbn:fi:test-{}gone"}, 409),  # deactivated
    ],
)
def test_one_bad_record_stores_nothing_of_the_batch(
    api: httpx.Client, admin: httpx.Client, unique: str, bad: dict[str, Any], status: int
) -> None:
    prefix = f"fi:b{unique}"
    delegate(admin, prefix)
    existing = f"urn:nbn:{prefix}-existing"
    put(api, existing, [{"url": "https://example.org/before"}], {"v": "before"})
    gone = f"urn:nbn:fi:test-{unique}gone"
    put(api, gone)
    api.post(f"/api/v1/urns/{gone}/deactivate", json={}).raise_for_status()
    good = [{"urn": f"urn:nbn:{prefix}-{n}", "metadata": {"n": n}} for n in range(300)]
    replacing = {"urn": existing, "locations": [], "metadata": {"v": "after"}}
    records = [*good[:150], replacing, *good[150:], {**bad, "urn": bad["urn"].format(unique)}]
    response = api.post("/api/v1/urns:batch", json={"records": records})
    problem = assert_problem(response, status)
    assert problem["index"] == len(records) - 1
    assert str(len(records) - 1) in problem["detail"]
    assert listed(api, prefix) == [existing]  # nothing created ...
    kept = get(api, existing)  # ... and nothing replaced
    assert (kept["metadata"], len(kept["locations"])) == ({"v": "before"}, 1)


def test_a_batch_holds_at_most_ten_thousand_records(api: httpx.Client, unique: str) -> None:
    records = [{"urn": f"urn:nbn:fi:test-{unique}-{n}"} for n in range(10_000)]
    # 10,000 are accepted: the answer is about the first record (outside the delegated
    # prefixes), not about the batch's size.
    refused = [{"urn": f"urn:nbn:fi:other-{unique}"}, *records[1:]]
    problem = assert_problem(api.post("/api/v1/urns:batch", json={"records": refused}), 403)
    assert problem["index"] == 0
    too_many = [*records, {"urn": f"urn:nbn:fi:test-{unique}-last"}]
    problem = assert_problem(api.post("/api/v1/urns:batch", json={"records": too_many}), 422)
    assert "10000" in problem["detail"]
    assert_problem(api.get(f"/api/v1/urns/{records[1]['urn']}"), 404)
    assert_problem(api.post("/api/v1/urns:batch", json={"records": []}), 422)


def test_a_batch_replays_under_the_same_idempotency_key(
    api: httpx.Client, other: httpx.Client, unique: str
) -> None:
    key = f"import-{unique}"
    records: list[dict[str, Any]] = [
        {"urn": f"urn:nbn:fi:test-{unique}{n}", "metadata": {"n": n}} for n in range(3)
    ]
    first = api.post(
        "/api/v1/urns:batch", json={"records": records}, headers={"Idempotency-Key": key}
    )
    assert first.status_code == 200, first.text
    assert [r["result"] for r in first.json()["results"]] == ["created"] * 3
    # A change after the batch: a replay must neither write again nor report "replaced".
    put(api, records[0]["urn"], [], {"changed": True}, status=200)
    replay = api.post(
        "/api/v1/urns:batch", json={"records": records}, headers={"Idempotency-Key": key}
    )
    assert replay.status_code == 200, replay.text
    assert replay.json() == first.json()
    assert get(api, records[0]["urn"])["metadata"] == {"changed": True}
    # The same key with another body is a conflict, and writes nothing.
    changed = [*records[:2], {"urn": f"urn:nbn:fi:test-{unique}new"}]
    conflict = api.post(
        "/api/v1/urns:batch", json={"records": changed}, headers={"Idempotency-Key": key}
    )
    assert_problem(conflict, 409)
    assert_problem(api.get(f"/api/v1/urns/urn:nbn:fi:test-{unique}new"), 404)
    # Keys belong to an organisation: another one's key of the same name is its own.
    theirs = [{"urn": f"urn:nbn:fi:other-{unique}"}]
    other_answer = other.post(
        "/api/v1/urns:batch", json={"records": theirs}, headers={"Idempotency-Key": key}
    )
    assert other_answer.status_code == 200, other_answer.text
    assert other_answer.json()["results"] == [{"urn": theirs[0]["urn"], "result": "created"}]


def test_without_an_idempotency_key_a_repeated_batch_replaces(
    api: httpx.Client, unique: str
) -> None:
    records = [{"urn": f"urn:nbn:fi:test-{unique}"}]
    for result in ("created", "replaced"):
        response = api.post("/api/v1/urns:batch", json={"records": records})
        assert response.status_code == 200, response.text
        assert response.json()["results"][0]["result"] == result


# --- authentication and authorization ------------------------------------------------------------


WRITES: list[tuple[str, str, dict[str, Any]]] = [
    ("PUT", "/api/v1/urns/urn:nbn:fi:test-{}", {"json": {}}),
    ("PATCH", "/api/v1/urns/urn:nbn:fi:test-{}", {"json": {"metadata": {}}}),
    ("POST", "/api/v1/urns/urn:nbn:fi:test-{}/deactivate", {"json": {}}),
    ("POST", "/api/v1/prefixes/fi:test/urns", {}),
    ("POST", "/api/v1/urns:batch", {"json": {"records": [{"urn": "urn:nbn:fi:test-{}"}]}}),
    ("GET", "/api/v1/organisations", {}),
    ("POST", "/api/v1/organisations", {"json": {"name": "Org {}"}}),
    ("POST", "/api/v1/prefixes", {"json": {"prefix": "fi:a{}", "organisation": "Test Library"}}),
    ("POST", "/api/v1/organisations/Test Library/tokens", {"json": {"role": "admin"}}),
    ("POST", "/api/v1/tokens/1/revoke", {}),
]


def _formatted(value: Any, unique: str) -> Any:
    if isinstance(value, str):
        return value.format(unique)
    if isinstance(value, dict):
        return {k: _formatted(v, unique) for k, v in value.items()}
    if isinstance(value, list):
        return [_formatted(v, unique) for v in value]
    return value


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer urnkit_not-a-real-token", "Basic dXNlcjpwYXNz", "urnkit_no-scheme"],
)
@pytest.mark.parametrize(("method", "path", "extra"), WRITES)
def test_writes_need_a_live_bearer_token(
    resolver: Resolver,
    unique: str,
    authorization: str | None,
    method: str,
    path: str,
    extra: dict[str, Any],
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    with resolver.client() as client:
        response = client.request(
            method, path.format(unique), headers=headers, **_formatted(extra, unique)
        )
    assert_problem(response, 401)
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_api_errors_are_pages_for_browsers(resolver: Resolver, unique: str) -> None:
    # RFC 9457 problem details for API clients; a readable page when HTML is preferred.
    browser = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    with resolver.client() as client:
        page = client.put(f"/api/v1/urns/urn:nbn:fi:test-{unique}", json={}, headers=browser)
    assert page.status_code == 401
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["www-authenticate"].startswith("Bearer")
    assert "401" in page.text
    with resolver.client(resolver.other_token) as other:
        page = other.put(f"/api/v1/urns/urn:nbn:fi:test-{unique}", json={}, headers=browser)
    assert page.status_code == 403
    assert page.headers["content-type"].startswith("text/html")
    assert "Other Library" in page.text


@pytest.mark.parametrize(
    ("urn", "refused"),
    [
        ("urn:nbn:fi:test-{}", None),
        ("URN:NBN:FI:TEST-{}", None),  # RFC 8458 §4.3: the prefix is case-insensitive
        ("urn:nbn:Fi:TeSt-{}", None),
        ("urn:nbn:fi:test:sub-{}", None),  # a sub-namespace of a delegated prefix
        ("urn:nbn:FI:TEST:Sub:Deeper-{}", None),
        ("urn:nbn:fi:testx-{}", "fi:testx"),  # a longer prefix, not a sub-namespace
        ("urn:nbn:FI:TESTX-{}", "fi:testx"),
        ("urn:nbn:fi:tes-{}", "fi:tes"),
        ("urn:nbn:fi-{}", "fi"),  # the enclosing country prefix
        ("urn:nbn:fi:other-{}", "fi:other"),  # another organisation's prefix
        ("urn:nbn:se:test-{}", "se:test"),
    ],
)
def test_a_registrant_writes_only_under_its_delegated_prefixes(
    api: httpx.Client, unique: str, urn: str, refused: str | None
) -> None:
    text = urn.format(unique)
    response = api.put(f"/api/v1/urns/{text}", json={})
    if refused is None:
        assert response.status_code == 201, response.text
        return
    problem = assert_problem(response, 403)
    assert problem["prefix"] == refused
    assert f"'{refused}'" in problem["detail"]  # the reason names the prefix ...
    assert "fi:test" in problem["delegated"]  # ... and those delegated
    assert_problem(api.get(f"/api/v1/urns/{text}"), 404)


def test_a_registrant_cannot_touch_another_organisations_records(
    api: httpx.Client, other: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    put(api, urn, [{"url": "https://example.org/mine"}], {"owner": "Test Library"})
    assert_problem(other.put(f"/api/v1/urns/{urn}", json={}), 403)
    assert_problem(other.patch(f"/api/v1/urns/{urn}", json={"metadata": {"x": 1}}), 403)
    assert_problem(other.post(f"/api/v1/urns/{urn}/deactivate", json={}), 403)
    batch = other.post("/api/v1/urns:batch", json={"records": [{"urn": urn}]})
    assert_problem(batch, 403)
    shown = get(api, urn)
    assert (shown["status"], shown["metadata"]) == ("active", {"owner": "Test Library"})


@pytest.mark.parametrize(("method", "path", "extra"), WRITES[5:])
def test_administration_needs_an_admin_token(
    api: httpx.Client, unique: str, method: str, path: str, extra: dict[str, Any]
) -> None:
    response = api.request(method, path.format(unique), **_formatted(extra, unique))
    problem = assert_problem(response, 403)
    assert "admin" in problem["detail"]


def test_admins_manage_organisations_prefixes_and_tokens(
    admin: httpx.Client, resolver: Resolver, unique: str
) -> None:
    name, prefix = f"Library {unique}", f"fi:n{unique}"
    created = admin.post("/api/v1/organisations", json={"name": name})
    assert created.status_code == 201, created.text
    assert created.json() == {"name": name}
    assert_problem(admin.post("/api/v1/organisations", json={"name": name}), 409)
    names = admin.get("/api/v1/organisations")
    assert names.status_code == 200
    assert {"name": name} in names.json()
    made = admin.post(
        "/api/v1/prefixes",
        json={"prefix": prefix.upper(), "organisation": name, "generator": "random"},
    )
    assert made.status_code == 201, made.text
    assert made.json() == {"prefix": prefix, "organisation": name, "generator": "random"}
    again = {"prefix": prefix, "organisation": "Test Library"}
    assert_problem(admin.post("/api/v1/prefixes", json=again), 409)  # delegated once only
    nobody = {"prefix": f"fi:m{unique}", "organisation": f"Nobody {unique}"}
    assert_problem(admin.post("/api/v1/prefixes", json=nobody), 404)
    assert_problem(admin.post("/api/v1/prefixes", json={**nobody, "prefix": "fi-x"}), 422)
    with resolver.client() as anonymous:
        register = anonymous.get("/api/v1/prefixes").json()  # public (RFC 8458 §4.3)
    assert {"prefix": prefix, "organisation": name, "generator": "random"} in register
    token = admin.post(f"/api/v1/organisations/{name}/tokens", json={"label": "test"})
    assert token.status_code == 201, token.text
    assert (token.json()["organisation"], token.json()["role"]) == (name, "registrant")
    with resolver.client(token.json()["token"]) as registrant:
        put(registrant, f"urn:nbn:{prefix}-1")
        assert_problem(registrant.put(f"/api/v1/urns/urn:nbn:fi:test-{unique}", json={}), 403)
        assert_problem(registrant.get("/api/v1/organisations"), 403)
    missing = admin.post(f"/api/v1/organisations/Nobody {unique}/tokens", json={})
    assert_problem(missing, 404)


@pytest.mark.parametrize("how", ["api", "cli"])
def test_a_revoked_token_is_refused(
    admin: httpx.Client, resolver: Resolver, unique: str, how: str
) -> None:
    made = admin.post("/api/v1/organisations/Test Library/tokens", json={"label": unique})
    assert made.status_code == 201, made.text
    urn = f"urn:nbn:fi:test-{unique}"
    with resolver.client(made.json()["token"]) as doomed:
        put(doomed, urn)
        number = made.json()["token_id"]
        assert token_id(doomed, urn) == number  # the history names the token that wrote
        if how == "api":
            assert admin.post(f"/api/v1/tokens/{number}/revoke").status_code == 204
        else:
            urnkit("admin", "revoke-token", str(number), "--database-url", resolver.database_url)
        response = doomed.put(f"/api/v1/urns/{urn}", json={"metadata": {"x": 1}})
        assert_problem(response, 401)
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert_problem(doomed.post("/api/v1/prefixes/fi:test/urns"), 401)
    assert_problem(admin.post(f"/api/v1/tokens/{number}/revoke"), 404)  # revoked already
    assert get(admin, urn)["metadata"] == {}
    with resolver.client(resolver.registrant_token) as still_live:
        put(still_live, urn, [], {"x": 1}, status=200)


# --- description ---------------------------------------------------------------------------------


def test_the_api_is_described_at_openapi_json_and_docs(anonymous: httpx.Client) -> None:
    description = anonymous.get("/openapi.json")
    assert description.status_code == 200
    paths = description.json()["paths"]
    record = paths["/api/v1/urns/{urn}"]
    assert {"get", "put", "patch"} <= set(record)
    assert MERGE_PATCH in record["patch"]["requestBody"]["content"]  # RFC 7396 §4
    for path in (
        "/api/v1/urns",
        "/api/v1/urns:batch",
        "/api/v1/urns/{urn}/history",
        "/api/v1/urns/{urn}/deactivate",
        "/api/v1/prefixes/{prefix}/urns",
    ):
        assert path in paths
    # RFC 8458 §4.1: nothing about a URN is deleted; only configuration rows are (forwarding,
    # organisations' networks) and rights (a grant, whose revocation keeps the grantee's
    # locations and is in history).
    deletable = {path for path, operations in paths.items() if "delete" in operations}
    assert deletable == {
        "/api/v1/forwarding/{country}",
        "/api/v1/organisations/{name}/networks/{network}",
        "/api/v1/urns/{urn}/grants/{organisation}",
    }
    schemes = description.json()["components"]["securitySchemes"].values()
    assert any(scheme.get("scheme") == "bearer" for scheme in schemes)
    docs = anonymous.get("/docs")
    assert docs.status_code == 200
    assert docs.headers["content-type"].startswith("text/html")
    assert "/openapi.json" in docs.text
