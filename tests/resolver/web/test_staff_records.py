"""The staff pages of records (issue 17 item 2), black-box against ``urnkit serve`` on SQLite
and PostgreSQL, signed in as a person would (staff_support): registering, editing, locations,
deactivating, reserving and filling in, the export; what the API then reads back, and who
history names. An organisation's account neither sees nor changes another's records, also by
forged form posts carrying its own valid session and CSRF token."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resolver_support import Resolver, deactivate, register
from staff_support import csrf_of, signed_in

from urnkit.resolver.services.rows import CELL_LIMIT

RECORDS = "/staff/records"


class Staff:
    """A signed-in account's client, posting the staff forms with its CSRF token."""

    def __init__(self, client: httpx.Client, name: str, organisation: str) -> None:
        self.client, self.name, self.organisation = client, name, organisation
        self.csrf = csrf_of(client.get("/staff/"))

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.client.get(path, params=params)

    def post(self, path: str, **fields: str) -> httpx.Response:
        return self.client.post(path, data={"csrf": self.csrf, **fields})

    @property
    def actor(self) -> str:
        return f"{self.organisation} (account {self.name})"


@pytest.fixture(scope="module")
def staff(resolver: Resolver) -> Iterator[Staff]:
    """A registrant account of "Test Library" (prefix fi:test)."""
    with signed_in(resolver, "Test Library", "registrant") as (client, name, _):
        yield Staff(client, name, "Test Library")


@pytest.fixture(scope="module")
def other_staff(resolver: Resolver) -> Iterator[Staff]:
    """A registrant account of "Other Library" (prefix fi:other)."""
    with signed_in(resolver, "Other Library", "registrant") as (client, name, _):
        yield Staff(client, name, "Other Library")


def read(api: httpx.Client, urn: str) -> dict[str, Any]:
    answer = api.get(f"/api/v1/urns/{urn}")
    assert answer.status_code == 200, answer.text
    record: dict[str, Any] = answer.json()
    return record


def actors(api: httpx.Client, urn: str) -> list[tuple[str, str]]:
    entries = api.get(f"/api/v1/urns/{urn}/history").json()["entries"]
    return [(entry["action"], entry["actor"]) for entry in entries]


def error_beside(page: httpx.Response, field: str) -> str:
    """The error text shown beside ``field``, the field marked invalid and pointing to it."""
    found = re.search(rf'<p class="field-error" id="{field}-error"[^>]*>([^<]*)</p>', page.text)
    assert found, f"no error beside {field}: {page.status_code} {page.text[-1500:]}"
    assert f'aria-describedby="{field}-error"' in page.text
    return html.unescape(found.group(1))


def form_error(page: httpx.Response) -> str:
    """The error shown at the top of the form (it concerns no field of the page)."""
    found = re.search(r'<p class="error" role="alert" lang="en">([^<]*)</p>', page.text)
    assert found, f"no error on the form: {page.status_code} {page.text[-1500:]}"
    return html.unescape(found.group(1))


def linked(page: httpx.Response) -> list[str]:
    """The URNs whose staff pages ``page`` links."""
    return re.findall(r'href="/staff/records/(urn:[^"?]+)"', page.text)


def new_record(staff: Staff, urn: str, title: str, url: str = "", **more: str) -> httpx.Response:
    fields = {"how": "typed", "urn": urn, "title": title, "url": url, **more}
    return staff.post(RECORDS + "/new", **fields)


# --- registering ---------------------------------------------------------------------------


def test_a_typed_in_urn_is_registered_with_its_location_and_metadata(
    staff: Staff, api: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-staff{unique}"
    answer = new_record(
        staff,
        urn,
        "A thesis",
        "https://example.org/thesis.pdf",
        media_type="application/pdf",
        label="Full text",
        creators="Ann Author\nBo Writer",
        other='{"pages": 12}',
    )
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"{RECORDS}/{urn}"
    record = read(api, urn)
    assert record["status"] == "active"
    assert record["metadata"] == {
        "title": "A thesis",
        "creators": ["Ann Author", "Bo Writer"],
        "pages": 12,
    }
    [location] = record["locations"]
    assert (location["url"], location["media_type"], location["label"]) == (
        "https://example.org/thesis.pdf",
        "application/pdf",
        "Full text",
    )
    assert actors(api, urn) == [("created", staff.actor)]
    page = staff.get(answer.headers["location"])
    assert page.status_code == 200
    assert "A thesis" in page.text


def test_a_registered_urn_is_not_replaced_by_registering_it_again(
    staff: Staff, api: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-again{unique}"
    assert new_record(staff, urn, "First").status_code == 303
    again = new_record(staff, urn, "Second")
    assert again.status_code == 409
    assert "registered already" in error_beside(again, "urn")
    assert read(api, urn)["metadata"] == {"title": "First"}


def test_the_next_urn_of_a_prefix_is_generated_and_registered(
    staff: Staff, api: httpx.Client
) -> None:
    answer = staff.post(
        RECORDS + "/new", how="generated", prefix="fi:test", title="Generated", urn=""
    )
    assert answer.status_code == 303, answer.text
    urn = answer.headers["location"].removeprefix(RECORDS + "/")
    assert urn.startswith("urn:nbn:fi:test-")
    record = read(api, urn)
    assert (record["status"], record["metadata"]) == ("active", {"title": "Generated"})
    assert actors(api, urn) == [("reserved", staff.actor), ("replaced", staff.actor)]


def test_a_prefix_of_another_organisation_is_neither_offered_nor_taken(staff: Staff) -> None:
    form = staff.get(RECORDS + "/new")
    assert '<option translate="no">fi:test</option>' in form.text
    assert "fi:other" not in form.text
    answer = staff.post(RECORDS + "/new", how="generated", prefix="fi:other", title="Taken")
    assert answer.status_code == 403
    assert "not delegated to 'Test Library'" in error_beside(answer, "prefix")


@pytest.mark.parametrize(
    ("fields", "field", "status"),
    [
        ({"urn": "urn:nbn:fi:test-"}, "urn", 422),
        ({"urn": "not a urn"}, "urn", 400),
        ({"urn": "urn:nbn:fi:other-x1"}, "urn", 403),
        ({"title": ""}, "title", 422),
        ({"url": "ftp:/nohost"}, "url", 422),
        ({"url": "https://example.org/", "priority": "-1"}, "priority", 422),
        ({"url": "https://example.org/", "priority": "1000001"}, "priority", 422),
        ({"url": "https://example.org/", "media_type": "x" * 256}, "media_type", 422),
        ({"url": "https://example.org/", "restricted_to": "nowhere"}, "restricted_to", 422),
        ({"other": "[1]"}, "other", 422),
        ({"other": '{"title": "twice"}'}, "other", 422),
        ({"identifiers": "urn:isbn:0-451-45052-4"}, "identifiers", 422),
        ({"other": '{"x": NaN}'}, "other", 422),
    ],
)
def test_a_refused_registration_shows_why_beside_the_field(
    staff: Staff, unique: str, fields: dict[str, str], field: str, status: int
) -> None:
    sent = {"how": "typed", "urn": f"urn:nbn:fi:test-refused{unique}", "title": "T", **fields}
    answer = staff.post(RECORDS + "/new", **sent)
    assert answer.status_code == status, answer.text[-800:]
    assert error_beside(answer, field)


# --- the record page: metadata and locations -----------------------------------------------


def test_the_owner_edits_the_metadata(staff: Staff, api: httpx.Client, unique: str) -> None:
    urn = f"urn:nbn:fi:test-edit{unique}"
    assert new_record(staff, urn, "Before", other='{"keep": [1, 2]}').status_code == 303
    answer = staff.post(f"{RECORDS}/{urn}/metadata", title="After", date="2026", other="")
    assert answer.status_code == 303, answer.text
    assert read(api, urn)["metadata"] == {"title": "After", "date": "2026"}
    assert actors(api, urn)[-1] == ("patched", staff.actor)
    refused = staff.post(f"{RECORDS}/{urn}/metadata", title="x", other="{")
    assert refused.status_code == 422
    assert error_beside(refused, "other")
    assert read(api, urn)["metadata"] == {"title": "After", "date": "2026"}


def test_locations_are_added_moved_and_removed(
    staff: Staff, api: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-locations{unique}"
    first, second = "https://example.org/1", "https://example.org/2"
    assert new_record(staff, urn, "Moved", first).status_code == 303
    added = staff.post(f"{RECORDS}/{urn}/locations/add", url=second, priority="1", label="Two")
    assert added.status_code == 303, added.text
    urls = [loc["url"] for loc in read(api, urn)["locations"]]
    assert urls == [first, second]
    page = staff.get(f"{RECORDS}/{urn}").text
    assert f"Move {second} up" in page
    assert f"Move {first} down" in page
    assert staff.post(f"{RECORDS}/{urn}/locations/up", url=second).status_code == 303
    assert [loc["url"] for loc in read(api, urn)["locations"]] == [second, first]
    assert api.get(f"/{urn}").headers["location"] == second  # resolution follows the order
    assert staff.post(f"{RECORDS}/{urn}/locations/down", url=second).status_code == 303
    assert [loc["url"] for loc in read(api, urn)["locations"]] == [first, second]
    assert staff.post(f"{RECORDS}/{urn}/locations/remove", url=first).status_code == 303
    assert [loc["url"] for loc in read(api, urn)["locations"]] == [second]
    twice = staff.post(f"{RECORDS}/{urn}/locations/add", url=second)
    assert twice.status_code == 422
    assert "already" in error_beside(twice, "url")
    assert actors(api, urn)[1:] == [("patched", staff.actor)] * 4


def test_a_grantee_adds_and_removes_only_its_own_locations_and_moves_none(
    staff: Staff, other_staff: Staff, api: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-granted{unique}"
    owners = "https://example.org/owners"
    assert new_record(staff, urn, "Shared", owners).status_code == 303
    assert api.put(f"/api/v1/urns/{urn}/grants/Other%20Library").status_code == 201
    page = other_staff.get(f"{RECORDS}/{urn}")
    assert page.status_code == 200
    assert "Edit the metadata" not in page.text
    assert f"Remove {owners}" not in page.text
    copy = "https://other.example/copy"
    assert other_staff.post(f"{RECORDS}/{urn}/locations/add", url=copy).status_code == 303
    record = read(api, urn)
    assert [(x["url"], x["organisation"]) for x in record["locations"]] == [
        (owners, "Test Library"),
        (copy, "Other Library"),
    ]
    moved = other_staff.post(f"{RECORDS}/{urn}/locations/up", url=copy)
    assert moved.status_code == 403
    removed = other_staff.post(f"{RECORDS}/{urn}/locations/remove", url=owners)
    assert removed.status_code == 422
    described = other_staff.post(f"{RECORDS}/{urn}/metadata", title="Taken over")
    assert described.status_code == 403
    assert read(api, urn)["locations"] == record["locations"]
    assert read(api, urn)["metadata"] == {"title": "Shared"}
    assert other_staff.post(f"{RECORDS}/{urn}/locations/remove", url=copy).status_code == 303
    assert [x["url"] for x in read(api, urn)["locations"]] == [owners]
    assert actors(api, urn)[-2:] == [("own locations", other_staff.actor)] * 2


# --- deactivating --------------------------------------------------------------------------


def test_a_record_is_deactivated_naming_a_successor_found_by_title(
    staff: Staff, api: httpx.Client, unique: str
) -> None:
    old, new = f"urn:nbn:fi:test-old{unique}", f"urn:nbn:fi:test-new{unique}"
    assert new_record(staff, old, f"Old edition {unique}").status_code == 303
    assert new_record(staff, new, f"Second edition {unique}").status_code == 303
    page = staff.get(f"{RECORDS}/{old}/deactivate", q=f"second edition {unique}")
    assert page.status_code == 200
    ticked = re.findall(r'name="(successor-\d+)" value="([^"]+)"', page.text)
    assert ticked == [("successor-1", new)]
    answer = staff.post(f"{RECORDS}/{old}/deactivate", note="Superseded", **dict(ticked))
    assert answer.status_code == 303, answer.text
    record = read(api, old)
    assert (record["status"], record["successors"], record["note"]) == (
        "deactivated",
        [new],
        "Superseded",
    )
    assert actors(api, old)[-1] == ("deactivated", staff.actor)
    again = staff.post(f"{RECORDS}/{old}/metadata", title="Again")
    assert again.status_code == 409


def test_a_search_finding_only_the_record_itself_finds_nothing(staff: Staff, unique: str) -> None:
    urn = f"urn:nbn:fi:test-alone{unique}"
    assert new_record(staff, urn, f"Alone {unique}").status_code == 303
    page = staff.get(f"{RECORDS}/{urn}/deactivate", q=f"alone {unique}")
    assert "No records found." in page.text
    assert 'name="successor-' not in page.text  # a record is never its own successor


def test_ticked_and_typed_successors_are_kept_across_searches(
    staff: Staff, api: httpx.Client, unique: str
) -> None:
    old = f"urn:nbn:fi:test-split{unique}"
    first, second = f"urn:nbn:fi:test-parta{unique}", f"urn:nbn:fi:test-partb{unique}"
    typed = f"urn:nbn:fi:test-typed{unique}"
    for urn, title in ((old, "Whole"), (first, "Part alpha"), (second, "Part beta")):
        assert new_record(staff, urn, f"{title} {unique}").status_code == 303
    path = f"{RECORDS}/{old}/deactivate"
    page = staff.post(path, find="1", q=f"alpha {unique}", note="Split", successors=typed)
    boxes = re.findall(r'name="(successor-\d+)" value="([^"]+)"( checked)?', page.text)
    assert boxes == [("successor-1", first, "")]
    page = staff.post(
        path, find="1", q=f"beta {unique}", note="Split", successors=typed, **{"successor-1": first}
    )
    boxes = re.findall(r'name="(successor-\d+)" value="([^"]+)"( checked)?', page.text)
    assert boxes == [("successor-1", first, " checked"), ("successor-2", second, "")]
    assert f">{typed}</textarea>" in page.text
    assert ">Split</textarea>" in page.text
    assert read(api, old)["status"] == "active"  # finding deactivates nothing
    fields = {"successor-1": first, "successor-2": second}
    answer = staff.post(path, q=f"beta {unique}", note="Split", successors=typed, **fields)
    assert answer.status_code == 303, answer.text
    assert read(api, old)["successors"] == [first, second, typed]


@pytest.mark.parametrize("action", ["history", "deactivate", "metadata", "locations/add"])
def test_a_urn_ending_in_an_action_word_has_pages_of_its_own(
    staff: Staff, api: httpx.Client, unique: str, action: str
) -> None:
    # RFC 8141 §2: an NSS may hold "/"; urn:…-x/history is not urn:…-x's history.
    shorter = f"urn:nbn:fi:test-slash{unique}{action.replace('/', '')}"
    longer = f"{shorter}/{action}"
    register(api, shorter, [{"url": "https://example.org/shorter"}], {"title": "Shorter"})
    register(api, longer, [{"url": "https://example.org/longer"}], {"title": "Longer"})
    listed = staff.get(RECORDS, q=longer).text
    encoded = f"{RECORDS}/{quote(longer, safe='')}"
    assert f'href="{encoded}"' in listed
    page = staff.get(encoded)
    assert page.status_code == 200
    assert f"<h1><code>{longer}</code></h1>" in page.text
    assert f'action="{encoded}/metadata"' in page.text
    history = staff.get(f"{encoded}/history")
    assert history.status_code == 200
    assert longer in history.text
    answer = staff.post(f"{encoded}/metadata", title="Longer, corrected")
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == encoded
    whole = quote(longer, safe="")  # the API's path too takes it percent-encoded whole
    assert read(api, whole)["metadata"]["title"] == "Longer, corrected"
    assert read(api, shorter)["metadata"]["title"] == "Shorter"
    assert staff.post(f"{encoded}/deactivate", note="Gone").status_code == 303
    assert (read(api, whole)["status"], read(api, shorter)["status"]) == ("deactivated", "active")


def test_a_successor_that_is_no_urn_is_refused_beside_the_field(
    staff: Staff, api: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-keep{unique}"
    assert new_record(staff, urn, "Kept").status_code == 303
    answer = staff.post(f"{RECORDS}/{urn}/deactivate", successors="not-a-urn")
    assert answer.status_code == 400
    assert error_beside(answer, "successors")
    yourself = staff.post(f"{RECORDS}/{urn}/deactivate", successors=urn)
    assert yourself.status_code == 422
    assert error_beside(yourself, "successors")
    assert read(api, urn)["status"] == "active"


# --- reserving, filling in, listing, export ------------------------------------------------


def test_three_urns_are_reserved_and_one_filled_in(staff: Staff, api: httpx.Client) -> None:
    answer = staff.post(RECORDS + "/reserve", reserve_prefix="fi:test", count="3")
    assert answer.status_code == 303, answer.text
    listed = staff.client.get(answer.headers["location"])
    reserved = linked(listed)[:3]  # the newest first
    assert all(read(api, urn)["status"] == "reserved" for urn in reserved)
    urn = reserved[1]
    assert read(api, urn)["status"] == "reserved"
    page = staff.get(f"{RECORDS}/{urn}")
    assert "Fill in this reserved URN" in page.text
    filled = staff.post(f"{RECORDS}/{urn}/fill", url="https://example.org/filled", title="Filled")
    assert filled.status_code == 303, filled.text
    record = read(api, urn)
    assert record["status"] == "active"
    assert record["metadata"] == {"title": "Filled"}
    assert actors(api, urn) == [("reserved", staff.actor), ("replaced", staff.actor)]
    again = staff.post(f"{RECORDS}/{urn}/fill", title="Overwritten")
    assert again.status_code == 409
    assert "registered already" in form_error(again)
    too_many = staff.post(RECORDS + "/reserve", reserve_prefix="fi:test", count="1001")
    assert too_many.status_code == 422
    assert error_beside(too_many, "count")


def test_the_list_filters_by_status_prefix_and_text(staff: Staff, unique: str) -> None:
    urn = f"urn:nbn:fi:test-listed{unique}"
    assert new_record(staff, urn, f"Listed {unique} title").status_code == 303
    spelled = urn.replace("urn:nbn:fi:test", "URN:NBN:FI:TEST")  # an equivalent spelling
    for query in ({"q": f"LISTED {unique}"}, {"q": spelled}, {"prefix": "fi:test"}):
        page = staff.get(RECORDS, status="active", **query)
        assert page.status_code == 200
        if "q" in query:
            assert linked(page) == [urn]
    none = staff.get(RECORDS, status="reserved", q=urn)
    assert linked(none) == []
    assert "No records found" in none.text
    bad = staff.get(RECORDS, status="lost")
    assert bad.status_code == 422
    assert error_beside(bad, "status")


def test_the_export_holds_the_organisations_records_only(
    staff: Staff, other: httpx.Client, unique: str
) -> None:
    mine = f"urn:nbn:fi:test-exported{unique}"
    theirs = f"urn:nbn:fi:other-exported{unique}"
    assert new_record(staff, mine, "Exported, with a comma").status_code == 303
    register(other, theirs, metadata={"title": "Theirs"})
    ndjson = staff.get(RECORDS + "/export", format="ndjson")
    assert ndjson.status_code == 200
    assert ndjson.headers["content-disposition"] == 'attachment; filename="records.ndjson"'
    # NDJSON lines end at LF only: a record may hold U+2028, which splitlines() would cut at.
    rows = {row["urn"]: row for row in map(json.loads, filter(None, ndjson.text.split("\n")))}
    assert rows[mine]["metadata"] == {"title": "Exported, with a comma"}
    assert theirs not in rows
    table = staff.get(RECORDS + "/export", format="csv")
    assert table.headers["content-type"].startswith("text/csv")
    # A record's locations may pass the csv module's default field limit, 128 KiB: a reader
    # of the export raises it as the import does.
    limit = csv.field_size_limit(CELL_LIMIT)
    try:
        cells = {row["urn"]: row for row in csv.DictReader(io.StringIO(table.text))}
    finally:
        csv.field_size_limit(limit)
    assert json.loads(cells[mine]["metadata"]) == {"title": "Exported, with a comma"}
    assert set(cells) == set(rows)
    assert staff.get(RECORDS + "/export", format="xml").status_code == 422


@pytest.mark.parametrize(
    "note", ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)", "\tlead", "\rlead"]
)
def test_the_csv_download_neutralises_formulas(
    staff: Staff, api: httpx.Client, unique: str, note: str
) -> None:
    """OWASP's CSV-injection rule (https://owasp.org/www-community/attacks/CSV_Injection): a
    cell beginning with =, +, -, @, tab or CR goes out after a single quote. (The API keeps a
    note's leading tab, which the staff form would strip.)"""
    urn = f"urn:nbn:fi:test-formula{unique}"
    register(api, urn, metadata={"title": note})
    deactivate(api, urn, [], note)
    table = staff.get(RECORDS + "/export", format="csv")
    limit = csv.field_size_limit(CELL_LIMIT)
    try:
        rows = list(csv.reader(io.StringIO(table.text, newline="")))
    finally:
        csv.field_size_limit(limit)
    [mine] = [row for row in rows if row[0] == urn]
    assert mine[5] == "'" + note
    assert not any(
        cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows for cell in row
    )
    ndjson = staff.get(RECORDS + "/export", format="ndjson")  # not a spreadsheet's format
    [shown] = [json.loads(line) for line in ndjson.text.split("\n") if urn in line]
    assert shown["note"] == note


# --- isolation: another organisation's records ---------------------------------------------


def test_another_organisations_record_can_be_neither_seen_nor_changed(
    staff: Staff, other: httpx.Client, unique: str
) -> None:
    """Organisation A's account, with its valid session and CSRF token, forging every form
    post of the record pages against organisation B's record: refused, B's record as it was."""
    urn = f"urn:nbn:fi:other-isolated{unique}"
    url = "https://other.example/isolated"
    register(other, urn, [{"url": url}], {"title": f"Isolated {unique}"})
    before = read(other, urn)
    for path in ("", "/deactivate"):
        assert staff.get(f"{RECORDS}/{urn}{path}").status_code == 404
    assert linked(staff.get(RECORDS, q=urn)) == []
    assert linked(staff.get(RECORDS, q=f"Isolated {unique}")) == []
    assert urn not in staff.get(RECORDS + "/export").text
    forged = {
        "/metadata": {"title": "Forged"},
        "/fill": {"title": "Forged", "url": "https://evil.example/"},
        "/locations/add": {"url": "https://evil.example/"},
        "/locations/remove": {"url": url},
        "/locations/up": {"url": url},
        "/locations/down": {"url": url},
        "/deactivate": {"note": "Forged", "successors": ""},
    }
    for path, fields in forged.items():
        answer = staff.post(f"{RECORDS}/{urn}{path}", **fields)
        assert answer.status_code in (403, 404), (path, answer.status_code)
        assert "Forged" not in answer.text
        assert "evil.example" not in answer.text
    assert staff.post(f"{RECORDS}/new", how="typed", urn=urn, title="Forged").status_code == 403
    reserve = staff.post(RECORDS + "/reserve", reserve_prefix="fi:other", count="1")
    assert reserve.status_code == 403
    assert read(other, urn) == before
    assert all(actor.startswith("Other Library (token") for _, actor in actors(other, urn))


def test_a_form_without_the_sessions_csrf_token_is_refused(
    staff: Staff, other_staff: Staff, api: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-csrf{unique}"
    assert new_record(staff, urn, "Guarded").status_code == 303
    for token in ("", other_staff.csrf):
        answer = staff.client.post(f"{RECORDS}/{urn}/metadata", data={"csrf": token, "title": "x"})
        assert answer.status_code == 403
    assert read(api, urn)["metadata"] == {"title": "Guarded"}


# --- the forms' boundaries ------------------------------------------------------------------

FIELD_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    urn=st.one_of(
        FIELD_TEXT,
        st.builds(lambda s: f"urn:nbn:fi:test-h{s}", FIELD_TEXT),
        st.integers(1990, 2010).map(lambda n: "urn:nbn:fi:test-" + "x" * n),
    ),
    priority=st.one_of(FIELD_TEXT, st.integers(-(2**40), 2**40).map(str)),
    title_size=st.sampled_from([0, 1, 1000, 65_000, 66_000]),
)
def test_the_register_forms_boundaries_never_fail_the_server(
    staff: Staff, urn: str, priority: str, title_size: int
) -> None:
    fields = {
        "how": "typed",
        "urn": urn,
        "title": "t" * title_size,
        "url": "https://example.org/h",
        "priority": priority,
    }
    answer = staff.post(RECORDS + "/new", **fields)
    assert answer.status_code < 500, answer.text[-500:]
    if answer.status_code != 303:
        assert answer.status_code in (400, 403, 409, 422)
        field = re.search(r'id="(\w+)-error"', answer.text)
        assert field, answer.text[-800:]
        assert field.group(1) in ("urn", "priority", "title", "other", "url")


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(url=FIELD_TEXT, kind=st.sampled_from(["add", "remove", "up", "down", "sideways"]))
def test_the_location_forms_boundaries_never_fail_the_server(
    staff: Staff, url: str, kind: str
) -> None:
    urn = quote("urn:nbn:fi:test-boundaries", safe=":")
    staff.post(RECORDS + "/new", how="typed", urn="urn:nbn:fi:test-boundaries", title="B")
    answer = staff.post(f"{RECORDS}/{urn}/locations/{kind}", url=url)
    assert answer.status_code < 500, answer.text[-500:]
    if answer.status_code != 303:
        assert re.search(r'id="(url|locations|form)-error"|class="error"', answer.text)
