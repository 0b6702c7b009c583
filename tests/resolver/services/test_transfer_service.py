"""Import and export (``urnkit.resolver.services.transfer``), in process, on SQLite and
PostgreSQL: imports skip what is present, duplicates within a batch included, and give each
record to the holder of the longest delegated prefix covering it; an export imported into a new
database gives the same records.
"""

from __future__ import annotations

import io
import itertools
import json
import subprocess
import threading
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resolver_support import fresh_database
from services_support import HERE, THERE, Principals, all_records, set_up

from urnkit.resolver.domain import (
    InvalidURNError,
    Location,
    NotFoundError,
    Record,
    UnacceptableError,
)
from urnkit.resolver.representations.shapes import record_json
from urnkit.resolver.services import Services
from urnkit.resolver.services.prefetch import made_elsewhere, read_ahead
from urnkit.resolver.services.rows import csv_rows
from urnkit.resolver.services.transfer import FORMULA_STARTS, export_lines
from urnkit.resolver.store import Store, links, url_hash


def _comparable(record: Record) -> dict[str, Any]:
    """A record as the API shows it, without the times an import sets anew."""
    shown = record_json(record)
    del shown["created"], shown["updated"]
    return shown


# --- import and export ---------------------------------------------------------------------------


def test_import_skips_what_is_present_and_refuses_duplicates_in_a_batch(
    services: Services, who: Principals
) -> None:
    rows: list[Mapping[str, Any]] = [
        {"urn": "urn:nbn:fi:demo-1", "locations": [{"url": "https://example.org/1"}]},
        {"urn": "URN:NBN:FI:DEMO-1", "locations": [{"url": "https://example.org/dup"}]},
        {"urn": "urn:nbn:fi:demo-2", "metadata": {"t": 2}, "status": "reserved"},
        {"urn": "urn:nbn:fi:demo-1"},
    ]
    refused: list[tuple[int, str]] = []

    def rejected(line: int, row: Mapping[str, Any], reason: str) -> None:
        refused.append((line, reason))

    assert services.transfer.import_records(enumerate(rows, 1), rejected=rejected) == (2, 0)
    # RFC 8141 §3: equivalent URNs are one; the first row wins, the others name its line.
    assert [line for line, _ in refused] == [2, 4]
    assert all("the URN of line 1 again" in reason for _, reason in refused)
    first = services.records.get("urn:nbn:fi:demo-1")
    # The first row's location is held by the record's owner.
    assert first.locations == (Location("https://example.org/1", organisation="Demo Library"),)
    assert services.records.get("urn:nbn:fi:demo-2").status == "reserved"
    refused.clear()
    assert services.transfer.import_records(enumerate(rows, 1), rejected=rejected) == (0, 2)
    assert [line for line, _ in refused] == [2, 4]  # a rerun adds nothing, says the same
    assert services.records.get("urn:nbn:fi:demo-1") == first
    assert [e.action for e in services.records.history("urn:nbn:fi:demo-1")] == ["imported"]


def test_import_across_batches(services: Services, who: Principals) -> None:
    rows = [{"urn": f"urn:nbn:fi:demo-{n}"} for n in (1, 2, 1, 3, 3, 2, 4)]
    progress: list[tuple[int, int]] = []
    refused: list[tuple[int, str]] = []
    assert services.transfer.import_records(
        enumerate(rows, 1),
        batch_size=2,
        progress=lambda *p: progress.append(p),
        rejected=lambda line, _, reason: refused.append((line, reason)),
    ) == (4, 0)
    assert progress == [(2, 0), (3, 0), (3, 0), (4, 0)]
    # Each repeat names the line of the first row, in an earlier batch or its own.
    assert [(line, reason.split(" again")[0]) for line, reason in refused] == [
        (3, "the URN of line 1"),
        (5, "the URN of line 4"),
        (6, "the URN of line 2"),
    ]
    assert [r.urn for r in all_records(services)] == [f"urn:nbn:fi:demo-{n}" for n in (1, 2, 3, 4)]


def test_registrations_during_an_import_keep_their_records_and_the_import_its_own(
    services: Services, who: Principals
) -> None:
    # While an import runs, the API registers records: their ids are the ones the import's
    # child staged its rows with (on SQLite), so the import's move past them. Each record keeps
    # its own location and history, whoever wrote it.
    registered: list[str] = []

    def rows() -> Iterator[dict[str, Any]]:
        for n in range(1, 121):
            if n % 20 == 0:  # read between batches, while the batches before are stored
                urn = f"urn:nbn:fi:demo-api-{n}"
                services.records.put(who.demo, urn, [Location(f"https://api.example/{n}")], {})
                registered.append(urn)
            yield {"urn": f"urn:nbn:fi:demo-{n}", "locations": [{"url": f"https://i.example/{n}"}]}

    assert services.transfer.import_records(enumerate(rows(), 1), batch_size=25) == (120, 0)
    stored = {r.urn: r for r in all_records(services)}
    assert len(stored) == 120 + len(registered) == 126
    for urn, record in stored.items():
        number = urn.rpartition("-")[2]
        host = "api" if urn in registered else "i"
        assert [loc.url for loc in record.locations] == [f"https://{host}.example/{number}"]
        actions = [e.action for e in services.records.history(urn)]
        assert actions == (["created"] if urn in registered else ["imported"]), urn


def test_import_gives_records_to_the_prefix_holder(services: Services, who: Principals) -> None:
    services.admin.create_organisation("Sub Library")
    services.admin.delegate("Sub Library", "fi:demo:sub")
    rows = [
        {"urn": "urn:nbn:fi:demo-1"},
        {"urn": "urn:nbn:fi:demo:sub-1"},  # the longest covering prefix wins
        {"urn": "urn:nbn:FI:DEMO:SUB:deeper-1"},
        {"urn": "urn:nbn:fi:demox-1"},  # a sibling, not a sub-namespace
    ]
    assert services.transfer.import_records(enumerate(rows, 1)) == (4, 0)
    assert [(r.urn, r.owner) for r in all_records(services)] == [
        ("urn:nbn:fi:demo-1", "Demo Library"),
        ("urn:nbn:fi:demo:sub-1", "Sub Library"),
        ("urn:nbn:FI:DEMO:SUB:deeper-1", "Sub Library"),
        ("urn:nbn:fi:demox-1", "Other Library"),
    ]
    # One rule for every way in: a prefix no organisation holds is refused, --owner or not.
    for owner in (None, "Sub Library"):
        with pytest.raises(UnacceptableError, match="'se:nowhere' is delegated to no"):
            services.transfer.import_records(enumerate([{"urn": "urn:nbn:se:nowhere-1"}], 1), owner)
    assert services.transfer.import_records(
        enumerate([{"urn": "urn:nbn:fi:demo-2"}], 1), owner="Sub Library"
    ) == (1, 0)
    assert services.records.get("urn:nbn:fi:demo-2").owner == "Sub Library"
    with pytest.raises(NotFoundError):
        services.transfer.import_records(
            enumerate([{"urn": "urn:nbn:fi:demo-9"}], 1), owner="Nobody"
        )


def test_import_stores_any_text_exactly(services: Services, who: Principals) -> None:
    """PostgreSQL imports by COPY's text format, which escapes backslash, tab, newline and CR."""
    awkward = 'tab\there, line\nbreak, CR\r, back\\slash \\N \\t, quote" ä \u2028 \x01 end\\'
    services.admin.create_organisation("Awkward Org \\N\\")
    services.admin.delegate("Awkward Org \\N\\", "fi:odd")
    rows: list[dict[str, Any]] = [
        {
            "urn": "urn:nbn:fi:odd-1",
            "locations": [
                {"url": "https://example.org/a\\b", "label": awkward, "media_type": "text/x"},
                {"url": "https://example.org/2", "priority": 0},
            ],
            "metadata": {awkward: [awkward, {"n": 1.5, "\\": None}], "title": "\\N"},
            "successors": [awkward],
            "note": awkward,
            "status": "deactivated",
        },
        {"urn": "urn:nbn:fi:odd-2", "metadata": {"title": "\\"}, "note": "\\N"},
    ]
    assert services.transfer.import_records(enumerate(rows, 1)) == (2, 0)
    for row in rows:
        record = services.records.get(row["urn"])
        assert record.owner == "Awkward Org \\N\\"
        assert record.metadata == row["metadata"]
        assert record.note == row["note"]
        assert list(record.successors) == row.get("successors", [])
        [entry] = services.records.history(row["urn"])
        assert (entry.action, entry.actor) == ("imported", "Awkward Org \\N\\")
        assert entry.record == record_json(record)
    first = services.records.get("urn:nbn:fi:odd-1")
    assert [loc.url for loc in first.locations] == [
        "https://example.org/2",
        "https://example.org/a\\b",
    ]
    assert first.locations[1].label == awkward
    assert services.store.resolution_row("urn:nbn:fi:odd-1") == (
        "deactivated",
        # targets: a location a line, its media type after a tab (COPY escapes the tab too)
        "https://example.org/2\nhttps://example.org/a\\b\ttext/x",
        None,
        "fi:odd",
        None,
    )


def test_import_leaves_out_links_known_broken(services: Services, who: Principals) -> None:
    broken, fine = "https://example.org/broken", "https://example.org/fine"
    moment = datetime.now(UTC)
    with services.store.transaction() as tx:
        tx.connection.execute(
            links.insert().values(
                url_hash=url_hash(broken),
                url=broken,
                status="broken",
                failures=3,
                since=moment,
                checked=moment,
            )
        )
    rows = [
        {"urn": f"urn:nbn:fi:demo-{n}", "locations": [{"url": broken}, {"url": fine}]}
        for n in (1, 2)
    ]
    rows.append({"urn": "urn:nbn:fi:demo-3", "locations": [{"url": broken}]})
    assert services.transfer.import_records(enumerate(rows, 1), batch_size=2) == (3, 0)
    for n, targets in ((1, fine), (2, fine), (3, None)):
        assert services.store.resolution_row(f"urn:nbn:fi:demo-{n}") == (
            "active",
            targets,
            None,
            "fi:demo",
            None,
        )


def test_an_import_raises_what_its_rows_raise_after_the_batches_before(
    services: Services, who: Principals, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the second batch on, imports prepare batches in a child process: what the rows
    raise is raised at its place, and the child does not outlive the import."""
    children: list[subprocess.Popen[bytes]] = []

    class Recorded(subprocess.Popen[bytes]):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            children.append(self)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    failure = ValueError("line 13: not a JSON object")

    def rows() -> Iterator[dict[str, Any]]:
        yield from ({"urn": f"urn:nbn:fi:demo-{n}"} for n in range(12))
        raise failure

    with pytest.raises(ValueError, match="line 13") as raised:
        services.transfer.import_records(enumerate(rows(), 1), batch_size=5)
    assert raised.value is failure

    def early() -> Iterator[dict[str, Any]]:  # fails in the second batch
        yield from ({"urn": f"urn:nbn:fi:demo-early-{n}"} for n in range(7))
        raise failure

    with pytest.raises(ValueError, match="line 13"):
        services.transfer.import_records(enumerate(early(), 1), batch_size=5)
    assert services.records.get("urn:nbn:fi:demo-early-4").urn == "urn:nbn:fi:demo-early-4"
    with pytest.raises(NotFoundError):
        services.records.get("urn:nbn:fi:demo-early-5")
    assert services.transfer.import_records(
        enumerate([{"urn": f"urn:nbn:fi:demo-{n}"} for n in range(10)], 1)
    ) == (0, 10)
    with pytest.raises(NotFoundError):
        services.records.get("urn:nbn:fi:demo-10")  # its batch never came whole
    rest = ({"urn": f"urn:nbn:fi:demo-{n}"} for n in range(20))
    assert services.transfer.import_records(enumerate(rest, 1), batch_size=5) == (10, 10)
    assert all(child.poll() is not None for child in children)
    # Those of rows() and rest, one on PostgreSQL and two on SQLite each; early() fails before
    # its second batch.
    assert len(children) == 2 * (1 if services.store.engine.dialect.name == "postgresql" else 2)


@pytest.fixture
def second_database_url(database_url: str, tmp_path: Path) -> Iterator[str]:
    """Another new, empty database of the same kind as ``database_url``."""
    kind = "sqlite" if database_url.startswith("sqlite") else "postgresql"
    directory = tmp_path / "second"
    directory.mkdir()
    with fresh_database(kind, directory) as url:
        yield url


def test_export_then_import_gives_the_same_records(
    services: Services, who: Principals, second_database_url: str
) -> None:
    services.records.put(
        who.demo, "URN:NBN:FI:DEMO-1", [*HERE, *THERE], {"title": "One", "n": [1, 2]}
    )
    services.records.put(who.demo, "urn:nbn:fi:demo:sub-%C3%A4", THERE, {"title": "Ä"})
    services.records.put(who.demo, "urn:nbn:fi:demo-2", HERE, {})
    services.records.patch(who.demo, "urn:nbn:fi:demo-2", {"metadata": {"patched": True}})
    services.records.deactivate(who.demo, "urn:nbn:fi:demo-2", "superseded", ["URN:NBN:FI:DEMO-1"])
    services.records.generate(who.demo, "fi:demo", 2)
    services.records.generate(who.other, "fi:demox", 2)
    exported = all_records(services)
    # What ``urnkit export`` writes, one JSON object a line, read back.
    rows = [json.loads(json.dumps(record_json(r), ensure_ascii=False)) for r in exported]

    target = Services(Store(second_database_url))
    try:
        set_up(target)
        assert target.transfer.import_records(enumerate(rows, 1)) == (len(rows), 0)
        assert [_comparable(r) for r in all_records(target)] == [_comparable(r) for r in exported]
        assert target.transfer.import_records(enumerate(rows, 1)) == (0, len(rows))
    finally:
        target.store.close()


@pytest.fixture
def second_services(second_database_url: str) -> Iterator[Services]:
    """The services of ``second_database_url``, set up as ``services``'."""
    target = Services(Store(second_database_url))
    try:
        set_up(target)
        yield target
    finally:
        target.store.close()


# Text a spreadsheet would take for a formula: the export of ``urnkit export`` is data, not a
# spreadsheet download, and gives it back as it was (the staff download neutralises it).
_FORMULA_LIKE = st.tuples(
    st.sampled_from(FORMULA_STARTS),
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=20),
).map("".join)
_NUMBERS = itertools.count()


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.lists(_FORMULA_LIKE, min_size=4, max_size=4))
def test_formula_like_texts_round_trip_through_the_csv_export_exactly(
    services: Services, who: Principals, second_services: Services, texts: list[str]
) -> None:
    label, title, key, note = texts
    urn = f"urn:nbn:fi:demo-formula{next(_NUMBERS)}"
    url = f"https://example.org/{next(_NUMBERS)}"
    services.records.put(who.demo, urn, [Location(url, label=label)], {"title": title, key: note})
    exported = services.records.deactivate(who.demo, urn, note, [])
    text = "".join(export_lines([exported], "csv"))
    refused: list[Any] = []
    rows = [row for _, row in csv_rows(io.BytesIO(text.encode()), lambda *r: refused.append(r))]
    assert refused == []
    assert second_services.transfer.import_records(enumerate(rows, 1)) == (1, 0)
    assert _comparable(second_services.records.get(urn)) == _comparable(exported)


def test_export_by_prefix_and_page(services: Services, who: Principals) -> None:
    rows = [{"urn": f"urn:nbn:{p}-{n}"} for n in range(5) for p in ("fi:demo", "fi:demox")]
    rows.append({"urn": "urn:nbn:fi:demo:sub-1"})
    services.transfer.import_records(enumerate(rows, 1))
    for page in (1, 2, 100):
        assert [r.urn for r in services.transfer.export_records("FI:Demo", page=page)] == [
            *(f"urn:nbn:fi:demo-{n}" for n in range(5)),
            "urn:nbn:fi:demo:sub-1",
        ]
    everything = [r.urn for r in services.transfer.export_records(page=3)]
    assert everything == [row["urn"] for row in rows]
    assert len(set(everything)) == len(everything)


def test_read_ahead_keeps_order_and_raises_where_the_producer_failed() -> None:
    def items() -> Iterator[int]:
        yield from range(3)
        raise ValueError("row 4 is bad")

    seen: list[int] = []
    with pytest.raises(ValueError, match="row 4 is bad"):
        seen.extend(read_ahead(items(), depth=1))
    assert seen == [0, 1, 2]


def test_batches_made_by_several_children_come_back_in_order_errors_in_place() -> None:
    # int, a function every child can import: batch n goes to child n modulo 3.
    made = made_elsewhere(int, "0", iter([str(n) for n in range(1, 10)]), children=3)
    assert list(made) == list(range(10))
    made = made_elsewhere(int, "0", iter(["1", "2", "3", "x", "5"]), children=3)
    assert [next(made) for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="'x'"):
        next(made)

    def failing() -> Iterator[str]:  # reading the rows fails: raised after what came before
        yield from ("1", "2", "3", "4")
        raise OSError("the file went away")  # not taken for a child gone (it hung)

    made = made_elsewhere(int, "0", failing(), children=3)
    assert [next(made) for _ in range(5)] == [0, 1, 2, 3, 4]
    with pytest.raises(OSError, match="the file went away"):
        next(made)
    unsendable: Iterator[Any] = iter(["1", "2", threading.Lock()])  # cannot be pickled
    made = made_elsewhere(int, "0", unsendable, children=2)
    assert [next(made) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(TypeError, match="pickle"):
        next(made)


def test_read_ahead_stops_its_thread_when_the_consumer_leaves() -> None:
    produced: list[int] = []

    def endless() -> Iterator[int]:
        number = 0
        while True:
            produced.append(number)
            yield number
            number += 1

    reader = read_ahead(endless(), depth=2)
    assert [next(reader) for _ in range(3)] == [0, 1, 2]
    reader.close()  # joins the producer; a thread left blocked would hang here
    assert len(produced) <= 3 + 2 + 1
    assert not any(t.name == "urnkit-read-ahead" for t in threading.enumerate())


def test_an_import_stopped_by_a_bad_row_keeps_the_batches_before_it(
    services: Services, who: Principals
) -> None:
    rows: list[dict[str, Any]] = [{"urn": f"urn:nbn:fi:demo-{n}"} for n in range(10)]
    rows.append({"urn": "urn:nbn:fi:demo-%zz"})
    with pytest.raises(InvalidURNError, match="'urn:nbn:fi:demo-%zz' is not a URN"):
        services.transfer.import_records(
            enumerate([*rows, {"urn": "urn:nbn:fi:demo-late"}], 1), batch_size=5
        )
    assert services.transfer.import_records(enumerate(rows[:10], 1)) == (
        0,
        10,
    )  # both whole batches were committed
    with pytest.raises(NotFoundError):
        services.records.get("urn:nbn:fi:demo-late")
