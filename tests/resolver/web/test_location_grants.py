"""One URN, several institutions' copies, against a real server on SQLite and PostgreSQL.

"Test Library" (``api``, prefix ``fi:test``) owns the URNs; "Other Library" (``other``) is the
organisation it grants its own locations. What the tests pin down:

* the owner grants and revokes (``PUT``/``DELETE /api/v1/urns/{urn}/grants/{organisation}``,
  ``urnkit admin grant``/``revoke-grant``/``grants``);
* a grantee adds, updates and removes its own locations (``PUT …/locations``), and each
  location shows the organisation holding it;
* a grantee is refused (403, or 404 for no record) another organisation's locations, the
  metadata, the status, the grants and the priorities of others' locations;
* the owner orders every organisation's locations by priority, and resolution follows;
* a revoked grant keeps the grantee's locations (the owner may remove them);
* history names the acting organisation and token of each change.

RFC 8458 §4.3 gives a prefix's registrant the say over its URNs; the grants extend it to the
locations of other holders of copies, as national resolvers do ("my URLs", per-source
locations).
"""

from __future__ import annotations

import secrets
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resolver_support import Resolver, urnkit_here

PROBLEM = "application/problem+json"
MERGE_PATCH = "application/merge-patch+json"
OWNER = "Test Library"
GRANTEE = "Other Library"
GRANTEE_PATH = "Other%20Library"  # its name in a path segment
OWNER_COPY = "https://owner.example.org/thesis.pdf"
GRANTEE_COPY = "https://grantee.example.org/copy.pdf"


def problem_of(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    """An RFC 9457 problem of ``status`` whose detail says each of ``words``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    problem: dict[str, Any] = response.json()
    assert problem["status"] == status
    for word in words:
        assert word in problem["detail"], problem
    return problem


def respelled(urn: str) -> str:
    """An equivalent spelling of one of the tests' URNs: RFC 8458 §4.3, the prefix in any case
    (the NBN string is case-sensitive)."""
    return urn.replace("urn:nbn:fi:test-", "URN:NBN:FI:TEST-")


def registered(api: httpx.Client, unique: str) -> str:
    """A new URN of the owner's, with one location of its own; the URN."""
    urn = f"urn:nbn:fi:test-grant{unique}"
    body = {"locations": [{"url": OWNER_COPY, "priority": 1}], "metadata": {"title": "T"}}
    response = api.put(f"/api/v1/urns/{urn}", json=body)
    assert response.status_code == 201, response.text
    return urn


def granted(api: httpx.Client, unique: str) -> str:
    """A new URN of the owner's, on which the grantee holds a grant; the URN."""
    urn = registered(api, unique)
    response = api.put(f"/api/v1/urns/{urn}/grants/{GRANTEE_PATH}")
    assert response.status_code == 201, response.text
    return urn


def holders(record: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(URL, organisation, priority) of a record's locations, best first."""
    return [(loc["url"], loc["organisation"], loc["priority"]) for loc in record["locations"]]


def own(client: httpx.Client, urn: str, *locations: dict[str, Any]) -> httpx.Response:
    """PUT the caller's own locations on ``urn``."""
    return client.put(f"/api/v1/urns/{urn}/locations", json={"locations": list(locations)})


def test_the_owner_grants_and_revokes(
    api: httpx.Client, other: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = registered(api, unique)
    assert api.get(f"/api/v1/urns/{urn}").json()["grants"] == []
    problem_of(own(other, urn, {"url": GRANTEE_COPY}), 403, "holds no grant", OWNER)

    response = api.put(f"/api/v1/urns/{urn}/grants/{GRANTEE_PATH}")
    assert response.status_code == 201, response.text
    assert response.json()["grants"] == [GRANTEE]
    again = api.put(f"/api/v1/urns/{urn}/grants/{GRANTEE_PATH}")
    assert again.status_code == 200  # granting again changes nothing
    listed = anonymous.get(f"/api/v1/urns/{respelled(urn)}/grants").json()
    assert listed["urn"] == urn
    [grant] = listed["grants"]
    assert grant["organisation"] == GRANTEE
    assert grant["granted_by"].startswith(f"{OWNER} (token ")
    assert grant["granted"].startswith("20")

    assert anonymous.put(f"/api/v1/urns/{urn}/grants/{GRANTEE_PATH}").status_code == 401
    problem_of(api.put(f"/api/v1/urns/{urn}/grants/Nobody"), 404, "no organisation", "Nobody")
    problem_of(api.put(f"/api/v1/urns/{urn}/grants/Test%20Library"), 422, "owns")
    problem_of(api.put(f"/api/v1/urns/urn:nbn:fi:test-none{unique}/grants/x"), 404, "no URN")

    response = api.delete(f"/api/v1/urns/{urn}/grants/{GRANTEE_PATH}")
    assert response.status_code == 200, response.text
    assert response.json()["grants"] == []
    assert anonymous.get(f"/api/v1/urns/{urn}/grants").json()["grants"] == []
    problem_of(api.delete(f"/api/v1/urns/{urn}/grants/{GRANTEE_PATH}"), 404, "holds no grant")
    problem_of(own(other, urn, {"url": GRANTEE_COPY}), 403, "holds no grant")


def test_a_grantee_adds_updates_and_removes_its_own_locations(
    api: httpx.Client, other: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = granted(api, unique)

    added = own(other, urn, {"url": GRANTEE_COPY, "priority": 2})
    assert added.status_code == 200, added.text
    assert holders(added.json()) == [(OWNER_COPY, OWNER, 1), (GRANTEE_COPY, GRANTEE, 2)]
    assert added.json()["metadata"] == {"title": "T"}

    second = "https://grantee.example.org/other.html"
    updated = own(
        other,
        urn,
        {"url": GRANTEE_COPY, "priority": 0, "label": "mirror", "media_type": "application/pdf"},
        {"url": second, "priority": 3, "organisation": GRANTEE},
    )
    assert updated.status_code == 200, updated.text
    assert holders(updated.json()) == [
        (GRANTEE_COPY, GRANTEE, 0),
        (OWNER_COPY, OWNER, 1),
        (second, GRANTEE, 3),
    ]
    assert updated.json()["locations"][0]["label"] == "mirror"
    shown = api.get(f"/api/v1/urns/{urn}").json()
    assert holders(shown) == holders(updated.json())
    # RFC 8458 §4.1: resolution answers with the best location, whoever holds it.
    resolved = anonymous.get(f"/{urn}")
    assert resolved.status_code == 302
    assert resolved.headers["location"] == GRANTEE_COPY

    removed = own(other, urn)
    assert removed.status_code == 200, removed.text
    assert holders(removed.json()) == [(OWNER_COPY, OWNER, 1)]
    assert anonymous.get(f"/{urn}").headers["location"] == OWNER_COPY


def test_a_grantee_touches_nothing_but_its_own_locations(
    api: httpx.Client, other: httpx.Client, unique: str
) -> None:
    urn = granted(api, unique)
    assert own(other, urn, {"url": GRANTEE_COPY, "priority": 2}).status_code == 200
    before = api.get(f"/api/v1/urns/{urn}").json()

    # another organisation's location, even restated as it is
    problem_of(own(other, urn, {"url": OWNER_COPY, "priority": 1}), 403, "held by", OWNER)
    problem_of(
        own(other, urn, {"url": "https://x.example.org/", "organisation": OWNER}), 403, OWNER
    )
    # the metadata, the status, the whole list of locations and their priorities, the grants
    what_a_grant_allows = ("may add and change only its own locations", "/locations")
    patches = [
        {"metadata": {"title": "Mine now"}},
        {"locations": [{"url": GRANTEE_COPY, "priority": 0}, {"url": OWNER_COPY, "priority": 9}]},
    ]
    for patch in patches:
        response = other.patch(
            f"/api/v1/urns/{urn}", json=patch, headers={"Content-Type": MERGE_PATCH}
        )
        problem_of(response, 403, *what_a_grant_allows)
    body = {"locations": [{"url": GRANTEE_COPY}], "metadata": {}}
    problem_of(other.put(f"/api/v1/urns/{urn}", json=body), 403, *what_a_grant_allows)
    deactivate = other.post(f"/api/v1/urns/{urn}/deactivate", json={"note": "gone"})
    problem_of(deactivate, 403, *what_a_grant_allows)
    revoke = other.delete(f"/api/v1/urns/{urn}/grants/{GRANTEE_PATH}")
    problem_of(revoke, 403, *what_a_grant_allows)
    problem_of(own(other, f"urn:nbn:fi:test-none{unique}", {"url": GRANTEE_COPY}), 404, "no URN")

    assert api.get(f"/api/v1/urns/{urn}").json() == before  # nothing written


def test_the_owner_orders_every_organisations_locations(
    api: httpx.Client, other: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = granted(api, unique)
    assert own(other, urn, {"url": GRANTEE_COPY, "priority": 5}).status_code == 200
    assert anonymous.get(f"/{urn}").headers["location"] == OWNER_COPY

    # The owner's list is the whole list: GET's locations sent back, reordered.
    shown = api.get(f"/api/v1/urns/{urn}").json()["locations"]
    reordered = [loc | {"priority": 9 - loc["priority"]} for loc in shown]
    response = api.patch(
        f"/api/v1/urns/{urn}", json={"locations": reordered}, headers={"Content-Type": MERGE_PATCH}
    )
    assert response.status_code == 200, response.text
    assert holders(response.json()) == [(GRANTEE_COPY, GRANTEE, 4), (OWNER_COPY, OWNER, 8)]
    assert anonymous.get(f"/{urn}").headers["location"] == GRANTEE_COPY

    # A location keeps its holder: the owner cannot take it over by naming itself.
    taken = [{"url": GRANTEE_COPY, "priority": 1, "organisation": OWNER}]
    problem_of(
        api.patch(
            f"/api/v1/urns/{urn}", json={"locations": taken}, headers={"Content-Type": MERGE_PATCH}
        ),
        422,
        "held by",
        GRANTEE,
    )
    # The owner's own locations alone, through …/locations: the grantee's stay.
    mine = own(api, urn, {"url": "https://owner.example.org/new", "priority": 0})
    assert mine.status_code == 200, mine.text
    assert holders(mine.json()) == [
        ("https://owner.example.org/new", OWNER, 0),
        (GRANTEE_COPY, GRANTEE, 4),
    ]


def test_a_revoked_grant_keeps_the_grantees_locations(
    api: httpx.Client, other: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = granted(api, unique)
    assert own(other, urn, {"url": GRANTEE_COPY, "priority": 0}).status_code == 200

    revoked = api.delete(f"/api/v1/urns/{urn}/grants/{GRANTEE_PATH}")
    assert revoked.status_code == 200, revoked.text
    assert holders(revoked.json()) == [(GRANTEE_COPY, GRANTEE, 0), (OWNER_COPY, OWNER, 1)]
    assert anonymous.get(f"/{urn}").headers["location"] == GRANTEE_COPY
    problem_of(own(other, urn), 403, "holds no grant")

    # The owner may remove them: a change history keeps.
    kept = [{"url": OWNER_COPY, "priority": 1}]
    response = api.put(f"/api/v1/urns/{urn}", json={"locations": kept, "metadata": {}})
    assert response.status_code == 200, response.text
    assert holders(response.json()) == [(OWNER_COPY, OWNER, 1)]
    entries = api.get(f"/api/v1/urns/{urn}/history").json()["entries"]
    assert (GRANTEE_COPY, GRANTEE, 0) in holders(entries[-2]["record"])


def test_history_names_who_changed_what(
    api: httpx.Client, other: httpx.Client, unique: str
) -> None:
    urn = granted(api, unique)
    assert own(other, urn, {"url": GRANTEE_COPY, "priority": 2}).status_code == 200
    api.delete(f"/api/v1/urns/{urn}/grants/{GRANTEE_PATH}")

    entries = api.get(f"/api/v1/urns/{urn}/history").json()["entries"]
    actions = [(entry["action"], entry["actor"].partition(" (token ")[0]) for entry in entries]
    assert actions == [
        ("created", OWNER),
        ("granted", OWNER),
        ("own locations", GRANTEE),
        ("revoked", OWNER),
    ]
    documents = [entry["record"] for entry in entries]
    assert [document["grants"] for document in documents] == [[], [GRANTEE], [GRANTEE], []]
    assert holders(documents[1]) == [(OWNER_COPY, OWNER, 1)]
    assert holders(documents[2]) == [(OWNER_COPY, OWNER, 1), (GRANTEE_COPY, GRANTEE, 2)]


@pytest.mark.parametrize("spelling", ["Other Library", "other library"])
def test_grants_on_the_command_line(
    resolver: Resolver, api: httpx.Client, other: httpx.Client, unique: str, spelling: str
) -> None:
    urn = registered(api, unique)
    url = ("--database-url", resolver.database_url)
    if spelling != GRANTEE:  # organisations are named exactly
        refused = urnkit_here("admin", "grant", urn, spelling, *url, check=False)
        assert refused.returncode == 1
        assert f"no organisation is called {spelling!r}" in refused.stderr
        return

    done = urnkit_here("admin", "grant", urn, GRANTEE, *url)
    assert "granted" in done.stdout
    assert api.get(f"/api/v1/urns/{urn}").json()["grants"] == [GRANTEE]
    [line] = urnkit_here("admin", "grants", respelled(urn), *url).stdout.splitlines()
    organisation, when, by = line.split("\t")
    assert (organisation, by) == (GRANTEE, "command line (urnkit admin)")
    assert when.startswith("20")
    assert own(other, urn, {"url": GRANTEE_COPY}).status_code == 200

    assert "revoked" in urnkit_here("admin", "revoke-grant", urn, GRANTEE, *url).stdout
    assert urnkit_here("admin", "grants", urn, *url).stdout == ""
    again = urnkit_here("admin", "revoke-grant", urn, GRANTEE, *url, check=False)
    assert again.returncode == 1
    assert "holds no grant" in again.stderr
    record = api.get(f"/api/v1/urns/{urn}").json()
    assert (GRANTEE_COPY, GRANTEE, 1) in holders(record)  # its locations stay
    entries = api.get(f"/api/v1/urns/{urn}/history").json()["entries"]
    assert [e["actor"] for e in entries if e["action"] in ("granted", "revoked")] == [
        "command line (urnkit admin)"
    ] * 2


# An organisation's name is 1 to 200 printable characters (AdminService.create_organisation):
# any of them, "/" and "%" included, reaches the grant percent-encoded in one path segment.
ORGANISATION_NAMES = st.text(
    st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"]), min_size=1, max_size=40
).filter(lambda name: name.strip() == name and name.isprintable())


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=ORGANISATION_NAMES)
def test_any_organisation_name_is_granted_through_its_path_segment(
    resolver: Resolver, admin: httpx.Client, api: httpx.Client, name: str
) -> None:
    organisation = f"{name} {secrets.token_hex(4)}"  # new in the shared database
    created = admin.post("/api/v1/organisations", json={"name": organisation})
    assert created.status_code == 201, created.text
    urn = registered(api, secrets.token_hex(6))
    segment = quote(organisation, safe="")  # RFC 3986 §2.1: percent-encoded in a segment
    response = api.put(f"/api/v1/urns/{urn}/grants/{segment}")
    assert response.status_code == 201, response.text
    assert response.json()["grants"] == [organisation]
    assert api.get(f"/api/v1/urns/{urn}/grants").json()["grants"][0]["organisation"] == (
        organisation
    )
    assert api.delete(f"/api/v1/urns/{urn}/grants/{segment}").status_code == 200
