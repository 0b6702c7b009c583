"""A registrant's upload (``services.uploads``), on SQLite and PostgreSQL: the preview tells
each row's outcome, findings and refusal (its line and field) without writing anything; the
commit writes exactly the rows the preview accepted, as the API writes them, or nothing when
the file or the records changed since the preview.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from services_support import (
    HERE,
    NEW_USERINFO,
    OLD_LOCATIONS,
    Principals,
    held,
    stored_before_the_rules,
)

from urnkit import validate
from urnkit.resolver.domain import ConflictError, Record, UnacceptableError
from urnkit.resolver.services import Services, uploads
from urnkit.resolver.store import Store, tables
from urnkit.resolver.store.bulk_import import BulkImport

DB_SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def counts(services: Services) -> dict[str, int]:
    """How many rows each table holds."""
    with services.store.snapshot() as tx:
        return {
            table.name: tx.connection.scalar(sa.select(sa.func.count()).select_from(table)) or 0
            for table in tables.metadata.sorted_tables
        }


def ndjson(*rows: object) -> bytes:
    return b"".join(
        (row if isinstance(row, bytes) else json.dumps(row).encode()) + b"\n" for row in rows
    )


def location(url: str) -> dict[str, object]:
    return {"url": url}


@pytest.fixture
def stored(services: Services, who: Principals) -> None:
    """Demo Library's records: -1, -3 and -4 active, -2 deactivated."""
    services.records.put(who.demo, "URN:NBN:fi:demo-1", HERE, {"title": "One"})
    services.records.put(who.demo, "URN:NBN:fi:demo-3", HERE, {"title": "One"})
    services.records.put(who.demo, "URN:NBN:fi:demo-4", HERE, {})
    services.records.put(who.demo, "URN:NBN:fi:demo-2", HERE, {})
    services.records.deactivate(who.demo, "URN:NBN:fi:demo-2", "gone", [])


FILE = ndjson(
    {"urn": "URN:NBN:fi:demo-10", "locations": [location("https://example.org/10")]},  # 1
    {
        "urn": "URN:NBN:fi:demo-1",
        "locations": [location(HERE[0].url)],
        "metadata": {"title": "One"},
    },
    {"urn": "urn:nbn:fi:demo-3", "locations": [], "metadata": {"title": "Changed"}},  # 3
    {"urn": "URN:NBN:fi:demo-10", "locations": []},  # 4: line 1's URN again
    {"urn": "URN:NBN:fi:demox-1", "locations": []},  # 5: Other Library's prefix
    {"urn": "URN:NBN:fi:demo-11", "locations": [location("mailto:x@example.org")]},  # 6
    {"urn": "URN:NBN:fi:demo-2", "locations": [location("https://example.org/2")]},  # 7
    b"{not json",  # 8
    {"urn": "URN:NBN:fi:demo-12", "status": "deactivated", "note": "n", "successors": ["x"]},
    {"urn": "URN:NBN:fi:demo-13", "status": "reserved"},  # 10
    {"urn": "urn:nbn:fi:demo-4", "status": "deactivated", "note": "withdrawn"},  # 11
    {"urn": "urn:nbn:fi:demo-3", "locations": []},  # 12: line 3's URN again
)


@pytest.mark.usefixtures("stored")
def test_the_preview_tells_each_row_and_writes_nothing(services: Services, who: Principals) -> None:
    before = counts(services)
    preview = services.uploads.preview(who.demo, FILE, "ndjson")
    assert counts(services) == before
    assert [(row.line, row.outcome, row.field) for row in preview.rows] == [
        (1, "created", None),
        (2, "present", None),
        (3, "present", None),  # a stored record: left as it is without change_existing
        (4, "refused", "urn"),
        (5, "refused", "urn"),
        (6, "refused", "locations"),
        (7, "present", None),
        (8, "refused", None),
        (9, "refused", "successors"),
        (10, "refused", "status"),
        (11, "present", None),
        (12, "refused", "urn"),  # line 3's URN again
    ]
    refusals = {row.line: row.refusal for row in preview.rows if row.refusal is not None}
    assert all(error.extensions["row"] == line for line, error in refusals.items())
    assert "the URN of line 1 again" in str(refusals[4])
    assert "the URN of line 3 again" in str(refusals[12])
    assert str(refusals[8]).startswith("line 8")
    # What a present row would change, were it allowed to
    assert [str(d) for d in preview.rows[2].differences] == [
        "metadata 'title' changed: 'One' → 'Changed'",
        f"location {HERE[0].url} removed",
    ]
    assert preview.rows[1].differences == ()
    created = preview.rows[0]
    assert ("location", "added", "https://example.org/10") in [
        (d.field, d.kind, d.key) for d in created.differences
    ]
    assert [f.code for f in preview.rows[0].findings] == [
        f.code for f in validate("URN:NBN:fi:demo-10")
    ]


@pytest.mark.usefixtures("stored")
def test_changing_stored_records_is_previewed_with_its_differences(
    services: Services, who: Principals
) -> None:
    preview = services.uploads.preview(who.demo, FILE, "ndjson", change_existing=True)
    outcomes = {row.line: row for row in preview.rows}
    assert outcomes[3].outcome == "replaced"
    assert [str(d) for d in outcomes[3].differences] == [
        "metadata 'title' changed: 'One' → 'Changed'",
        f"location {HERE[0].url} removed",
    ]
    assert [str(d) for d in outcomes[11].differences] == [
        "status changed: 'active' → 'deactivated'",
        f"location {HERE[0].url} removed",
        "note added: 'withdrawn'",
    ]
    assert [(row.line, row.outcome) for row in preview.accepted] == [
        (1, "created"),
        (3, "replaced"),
        (11, "deactivated"),
    ]


def test_a_malformed_urn_has_its_findings_and_is_refused(
    services: Services, who: Principals
) -> None:
    preview = services.uploads.preview(who.demo, b"urn\nurn:nbn:fi:demo-1\nurn:a%zz\n", "csv")
    bad = preview.rows[1]
    assert (bad.line, bad.outcome, bad.field) == (3, "refused", "urn")
    assert any(f.severity == "error" and f.position is not None for f in bad.findings)


@pytest.mark.usefixtures("stored")
def test_the_commit_writes_exactly_the_accepted_rows(services: Services, who: Principals) -> None:
    preview = services.uploads.preview(who.demo, FILE, "ndjson", change_existing=True)
    before = counts(services)
    written = services.uploads.commit(
        who.demo, FILE, "ndjson", preview.digest, change_existing=True
    )
    assert [(r.line, r.outcome) for r in written.rows] == [
        (1, "created"),
        (3, "replaced"),
        (11, "deactivated"),
    ]
    assert counts(services)["records"] == before["records"] + 1
    assert counts(services)["history"] == before["history"] + 4  # demo-4: replaced, deactivated
    actor = f"Demo Library (token {who.demo.token_id})"
    assert [(e.action, e.actor) for e in services.records.history("URN:NBN:fi:demo-10")] == [
        ("created", actor)
    ]
    assert services.records.history("URN:NBN:fi:demo-3")[-1].actor == actor
    assert services.records.get("URN:NBN:fi:demo-3").metadata == {"title": "Changed"}
    assert services.records.get("URN:NBN:fi:demo-4").note == "withdrawn"
    with pytest.raises(ConflictError):  # previewed once, committed once
        services.uploads.commit(who.demo, FILE, "ndjson", preview.digest, change_existing=True)


@pytest.mark.usefixtures("stored")
def test_a_file_or_records_changed_since_the_preview_are_not_committed(
    services: Services, who: Principals
) -> None:
    preview = services.uploads.preview(who.demo, FILE, "ndjson")
    before = counts(services)
    with pytest.raises(ConflictError) as changed:
        services.uploads.commit(who.demo, FILE + b"\n", "ndjson", preview.digest)
    assert changed.value.extensions["field"] == "file"
    services.records.put(who.demo, "URN:NBN:fi:demo-10", HERE, {})  # meanwhile
    after_put = counts(services)
    with pytest.raises(ConflictError):
        services.uploads.commit(who.demo, FILE, "ndjson", preview.digest)
    assert counts(services) == after_put != before


def test_a_reserved_urn_is_filled_in_by_a_file(services: Services, who: Principals) -> None:
    (reserved,) = services.records.generate(who.demo, "fi:demo")
    row = {"urn": reserved.urn, "locations": [location("https://example.org/r")]}
    file = ndjson({**row, "metadata": {"title": "Filled"}})
    preview = services.uploads.preview(who.demo, file, "ndjson", change_existing=True)
    assert [r.outcome for r in preview.rows] == ["replaced"]
    services.uploads.commit(who.demo, file, "ndjson", preview.digest, change_existing=True)
    record = services.records.get(reserved.urn)
    assert (record.status, record.metadata) == ("active", {"title": "Filled"})


def test_a_file_too_large_is_refused_naming_the_limit(
    services: Services, who: Principals, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uploads, "MAX_UPLOAD_ROWS", 2)
    rows = [{"urn": f"URN:NBN:fi:demo-{n}"} for n in range(3)]
    services.uploads.preview(who.demo, ndjson(*rows[:2]), "ndjson")  # at the limit
    with pytest.raises(UnacceptableError, match="more than 2 rows") as too_many:
        services.uploads.preview(who.demo, ndjson(*rows), "ndjson")
    assert too_many.value.extensions == {"limit": 2, "field": "file"}
    monkeypatch.setattr(uploads, "MAX_UPLOAD_BYTES", 10)
    services.uploads.preview(who.demo, b"urn\n" + b"x" * 6, "csv")  # 10 bytes: at the limit
    with pytest.raises(UnacceptableError, match="at most 10 are taken") as too_big:
        services.uploads.preview(who.demo, b"urn\n" + b"x" * 7, "csv")
    assert too_big.value.extensions["limit"] == 10


def test_a_csv_without_a_urn_column_is_refused(services: Services, who: Principals) -> None:
    with pytest.raises(UnacceptableError, match="'urn' column") as refused:
        services.uploads.preview(who.demo, b"url\nhttps://example.org/\n", "csv")
    assert refused.value.extensions["field"] == "file"


@DB_SETTINGS
@given(data=st.binary(max_size=200), kind=st.sampled_from(["csv", "ndjson"]))
def test_any_file_is_previewed_or_refused_and_nothing_is_written(
    services: Services, who: Principals, data: bytes, kind: uploads.FileFormat
) -> None:
    before = counts(services)
    fields = []
    try:
        preview = services.uploads.preview(who.demo, data, kind)
    except UnacceptableError as error:
        fields.append(error.extensions["field"])
    else:
        assert all((row.refusal is None) == (row.outcome != "refused") for row in preview.rows)
    assert fields in ([], ["file"])
    assert counts(services) == before


def test_another_organisation_writes_while_a_preview_runs(
    services: Services, who: Principals, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A preview writes nothing and holds no lock (issue 30, point 4): while it reads the
    records its file names, in its snapshot, another organisation's write completes at once,
    and the preview does not see it."""
    file = ndjson(*({"urn": f"urn:nbn:fi:demo-{n}"} for n in range(1, 201)))
    writer = Services(Store(database_url))
    written: list[Record] = []
    read = BulkImport.registered

    def registered(self: BulkImport, keys: Sequence[str]) -> dict[str, Record]:
        found = read(self, keys)
        done = threading.Event()

        def put() -> None:  # another process would do the same: its own connection
            written.append(writer.records.put(who.other, "urn:nbn:fi:demox-w", [], {})[0])
            done.set()

        thread = threading.Thread(target=put)
        thread.start()
        # Far below the lock's wait (30 s): a preview holding the write lock fails this.
        assert done.wait(10), "a write waited for the preview"
        thread.join()
        return found

    monkeypatch.setattr(BulkImport, "registered", registered)
    try:
        preview = services.uploads.preview(who.demo, file, "ndjson")
    finally:
        writer.store.close()
    assert [w.urn for w in written] == ["urn:nbn:fi:demox-w"]
    assert [row.outcome for row in preview.rows] == ["created"] * 200
    assert services.records.get("urn:nbn:fi:demox-w").owner == "Other Library"


def test_an_upload_writes_a_record_stored_before_the_rules_back(
    services: Services, who: Principals
) -> None:
    urn = stored_before_the_rules(services)  # its NSS holds %0A (RFC 8141 §2's pct-encoded)
    old = [{"url": loc.url, "priority": loc.priority} for loc in OLD_LOCATIONS]
    new = {"url": NEW_USERINFO.url, "priority": NEW_USERINFO.priority}
    data = ndjson(
        {"urn": urn, "locations": old, "metadata": {"title": "Uploaded"}},
        {"urn": "urn:nbn:fi:demo-up%0Aload", "locations": old},  # a new registration
    )
    preview = services.uploads.preview(who.demo, data, "ndjson", change_existing=True)
    assert [(row.outcome, row.field) for row in preview.rows] == [
        ("replaced", None),
        ("refused", "urn"),
    ]
    services.uploads.commit(who.demo, data, "ndjson", preview.digest, change_existing=True)
    record = services.records.get(urn)
    assert (record.metadata, record.locations) == ({"title": "Uploaded"}, held(OLD_LOCATIONS))
    added = ndjson({"urn": urn, "locations": [*old, new]})
    refused = services.uploads.preview(who.demo, added, "ndjson", change_existing=True).rows[0]
    assert (refused.outcome, refused.field) == ("refused", "locations")
    assert "holds user information" in str(refused.refusal)
