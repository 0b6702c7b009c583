"""The rows of an import file (``services.rows``): what ``urnkit export`` writes, an import
and an upload read back, whatever the size of a cell a record can hold."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from services_support import Principals

from urnkit.resolver.domain import MAX_DEPTH, ForbiddenError, Location, Record
from urnkit.resolver.services import Services
from urnkit.resolver.services.locations import LONGEST, MAX_LOCATIONS
from urnkit.resolver.services.rows import (
    MAX_CELL,
    Rules,
    csv_rows,
    ndjson_rows,
    nests_deeper,
)
from urnkit.resolver.services.transfer import export_lines

AT = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_largest_locations_cell_an_export_writes_is_read_back() -> None:
    """A hundred locations with the longest URLs and labels make a cell of over 500,000
    characters: past the csv module's default field limit (128 KiB)."""
    base = "https://example.org/"
    found = tuple(
        Location(url=f"{base}{n:03}".ljust(LONGEST["url"], "x"), label="l" * LONGEST["label"])
        for n in range(MAX_LOCATIONS)
    )
    urn = "urn:nbn:fi:demo-1"
    record = Record(urn, urn, "fi:demo", "active", "Org", AT, AT, locations=found)
    text = "".join(export_lines([record], "csv"))
    assert len(text) > 500_000
    refused: list[Any] = []
    rows = list(csv_rows(io.BytesIO(text.encode()), lambda *row: refused.append(row)))
    assert refused == []
    assert [len(row["locations"]) for _, row in rows] == [MAX_LOCATIONS]
    assert rows[0][1]["locations"][-1]["url"] == found[-1].url


# --- one path for rows: the upload and the import decide each row alike -------------------------

DEEP = "[" * 100_000 + "]" * 100_000
ROWS_OF_EVERY_KIND = b"\n".join(
    [
        b"urn,url,metadata",
        b'urn:nbn:fi:demo-1,https://example.org/1,"{""title"": ""One""}"',  # 2: created
        b"urn:nbn:se:kb-1,https://example.org/2,{}",  # 3: a prefix no organisation holds
        b"URN:NBN:FI:DEMO-1,https://example.org/4,{}",  # 4: line 2's URN again
        b"urn:nbn:fi:demo-stored,https://example.org/5,{}",  # 5: registered already
        b"urn:nbn:fi:demo-%zz,https://example.org/6,{}",  # 6: bad URN syntax
        b"urn:nbn:fi:demo-7,not a url,{}",  # 7: a URL that is none
        f'urn:nbn:fi:demo-8,https://example.org/8,"{DEEP}"'.encode(),  # 8: nested too deep
        "urn:nbn:fi:demo-9,https://example.org/9?q=caf\xe9,{}".encode("latin-1"),  # 9
        b"urn:nbn:fi:demo-10,https://example.org/10," + b"x" * (MAX_CELL + 1),  # 10: too long
        b"urn:nbn:fi:demo-11,https://example.org/11",  # 11: a cell missing
        b"urn:nbn:fi:demox-12,https://example.org/12,{}",  # 12: Other Library's prefix
        b"urn:nbn:fi:demo-13,https://example.org/13,{}",  # 13: created
    ]
)


def test_the_upload_and_the_import_decide_every_row_alike(
    services: Services, who: Principals
) -> None:
    """The same file, with a bad row of each kind, previewed as an upload by an admin and
    imported as ``urnkit import`` does: the same outcome for every row, the same reasons."""
    services.records.put(who.demo, "urn:nbn:fi:demo-stored", [], {})
    preview = services.uploads.preview(who.admin, ROWS_OF_EVERY_KIND, "csv")
    uploaded = {row.line: row for row in preview.rows}

    refused: dict[int, str] = {}
    rows = csv_rows(
        io.BytesIO(ROWS_OF_EVERY_KIND), lambda line, _, why: refused.update({line: why})
    )
    before = {r.urn for r in services.records.records(None, limit=1_000)[0]}
    read = list(rows)
    imported = services.transfer.import_records(
        read, rejected=lambda line, _, why: refused.update({line: why})
    )
    after = {r.urn: r for r in services.records.records(None, limit=1_000)[0]}
    outcomes = dict.fromkeys(refused, "refused")
    for line, row in read:
        if line not in refused:
            outcomes[line] = "present" if row["urn"] in before else "created"

    assert (
        {line: row.outcome for line, row in uploaded.items()}
        == outcomes
        == {
            2: "created",
            3: "refused",
            4: "refused",
            5: "present",
            6: "refused",
            7: "refused",
            8: "refused",
            9: "refused",
            10: "refused",
            11: "refused",
            12: "created",  # an admin registers under any delegated prefix: its holder owns it
            13: "created",
        }
    )
    assert imported == (3, 1)
    for line, reason in refused.items():
        refusal = uploaded[line].refusal
        assert refusal is not None
        assert refusal.detail.endswith(reason), line
    assert "its prefix 'se:kb' is delegated to no organisation" in refused[3]
    assert "the URN of line 2 again" in refused[4]
    assert "nests deeper than 32" in refused[8]
    assert refused[9].startswith("line 9: not UTF-8")
    assert f"at most {MAX_CELL:,} are read" in refused[10]
    assert "has 2 cells; its header names 3" in refused[11]
    assert after["urn:nbn:fi:demox-12"].owner == "Other Library"
    assert after["urn:nbn:fi:demo-13"].owner == "Demo Library"


def test_a_registrant_uploads_only_under_its_own_prefixes(
    services: Services, who: Principals
) -> None:
    preview = services.uploads.preview(who.demo, ROWS_OF_EVERY_KIND, "csv")
    other = next(row for row in preview.rows if row.line == 12)
    assert (other.outcome, other.field) == ("refused", "urn")
    assert isinstance(other.refusal, ForbiddenError)


# --- every bad row is that row's problem -------------------------------------------------------


def nested(depth: int, inner: str = "1") -> str:
    """JSON of ``depth`` objects and arrays, alternately, the outermost an object, around
    ``inner``."""
    for level in range(depth):
        inner = f"[{inner}]" if (depth - 1 - level) % 2 else f'{{"k": {inner}}}'
    return inner


@settings(max_examples=60)
@given(depth=st.integers(1, MAX_DEPTH + 3), kind=st.sampled_from(["csv", "ndjson"]))
def test_metadata_nested_to_the_acceptance_rule_s_depth_is_read_deeper_is_that_row_s_refusal(
    depth: int, kind: str
) -> None:
    """Metadata nesting ``MAX_DEPTH`` arrays and objects is read; one more refuses its row,
    naming the line, before the JSON is parsed; the rows around it are read."""
    metadata = nested(depth)
    if kind == "csv":
        cell = metadata.replace('"', '""')
        data = f'urn,metadata\nurn:nbn:fi:a-1,{{}}\nurn:nbn:fi:a-2,"{cell}"\nurn:nbn:fi:a-3,{{}}\n'
        read = csv_rows
    else:
        data = "".join(
            f'{{"urn": "urn:nbn:fi:a-{n}", "metadata": {metadata if n == 2 else "{}"}}}\n'
            for n in (1, 2, 3)
        )
        read = ndjson_rows
    refused: list[tuple[int, str]] = []
    rows = list(read(io.BytesIO(data.encode()), lambda line, _, why: refused.append((line, why))))
    first = 2 if kind == "csv" else 1
    if depth <= MAX_DEPTH:
        assert refused == []
        Rules((("fi:a", "A"),)).record(rows[1][1], AT)  # and the acceptance rule takes it
    else:
        assert [line for line, _ in rows] == [first, first + 2]
        assert [line for line, _ in refused] == [first + 1]
        assert f"nests deeper than {MAX_DEPTH}" in refused[0][1]


JSON_VALUES = st.recursive(
    st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
)


@settings(max_examples=60)
@given(text=JSON_VALUES, deepest=st.integers(0, 6))
def test_the_nesting_found_without_parsing_is_the_parsed_nesting(text: Any, deepest: int) -> None:
    def depth(value: Any) -> int:
        if isinstance(value, list):
            return 1 + max(map(depth, value), default=0)
        if isinstance(value, dict):
            return 1 + max(map(depth, value.values()), default=0)
        return 0

    assert nests_deeper(json.dumps(text), deepest) == (depth(text) > deepest)


def _not_utf8(data: bytes) -> bool:
    """Whether ``data`` is no UTF-8, and holds nothing that ends a line, a cell or a string."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return not any(mark in data for mark in (b"\n", b"\r", b'"', b",", b"\\"))
    return False


@settings(max_examples=40)
@given(
    bad=st.binary(min_size=1, max_size=4).filter(_not_utf8),
    at=st.integers(0, 20),
    kind=st.sampled_from(["csv", "ndjson"]),
)
def test_bytes_that_are_not_utf8_refuse_their_row_only(bad: bytes, at: int, kind: str) -> None:
    """As in NDJSON, so in CSV: a line that is not UTF-8 refuses its row, naming the line
    and the byte; the file is read on."""
    if kind == "csv":
        line = b"urn:nbn:fi:a-2,https://example.org/" + b"x" * at
        data = b"urn,url\nurn:nbn:fi:a-1,\n" + line + bad + b"\nurn:nbn:fi:a-3,\n"
        first = 2
    else:
        line = b'{"urn": "urn:nbn:fi:a-2", "note": "' + b"x" * at
        data = b'{"urn": "urn:nbn:fi:a-1"}\n' + line + bad + b'"}\n{"urn": "urn:nbn:fi:a-3"}\n'
        first = 1
    read = csv_rows if kind == "csv" else ndjson_rows
    refused: list[tuple[int, str]] = []
    rows = list(read(io.BytesIO(data), lambda line, _, why: refused.append((line, why))))
    assert [line for line, _ in rows] == [first, first + 2]
    assert [line for line, _ in refused] == [first + 1]
    assert refused[0][1].startswith(f"line {first + 1}: not UTF-8 at byte")


@settings(max_examples=20)
@given(extra=st.integers(-1, 2), kind=st.sampled_from(["csv", "ndjson"]))
def test_a_cell_longer_than_any_field_refuses_its_row(extra: int, kind: str) -> None:
    """A CSV cell, or an NDJSON line, of ``MAX_CELL`` characters is read; one more refuses
    its row, naming the line; the next row is read."""
    if kind == "csv":
        line = b"urn:nbn:fi:a-1," + b"n" * (MAX_CELL + extra)
        data = b"urn,note\n" + line + b"\nurn:nbn:fi:a-2,\n"
        long = MAX_CELL + extra
    else:
        start = b'{"urn":"urn:nbn:fi:a-1","note":"'
        line = start + b"n" * (MAX_CELL + extra - len(start) - 3) + b'"}\n'
        data = line + b'{"urn":"urn:nbn:fi:a-2"}\n'
        long = len(line)
    read = csv_rows if kind == "csv" else ndjson_rows
    refused: list[str] = []
    rows = list(read(io.BytesIO(data), lambda _, __, why: refused.append(why)))
    assert [row["urn"] for _, row in rows][-1] == "urn:nbn:fi:a-2"
    if long <= MAX_CELL:
        assert (len(rows), refused) == (2, [])
    else:
        assert len(rows) == 1
        assert [why.split(":")[0] for why in refused] == [
            "line 2, column 'note'" if kind == "csv" else "line 1"
        ]
        assert f"at most {MAX_CELL:,}" in refused[0]


def test_csv_lines_end_at_a_lone_carriage_return_and_a_broken_line_is_its_rows_problem() -> None:
    # A file from an old Mac ends its lines with CR; the csv module refused a CR inside an
    # unquoted cell for the whole file. Lines now end at LF, CRLF or CR (universal newlines).
    data = b'urn,note\rurn:nbn:fi:demo-1,"one"\r\nurn:nbn:fi:demo-2\rx,"b\rc"\n'
    refused: list[tuple[Any, ...]] = []
    rows = list(csv_rows(io.BytesIO(data), lambda *row: refused.append(row)))
    assert [(line, row["urn"]) for line, row in rows] == [(2, "urn:nbn:fi:demo-1"), (4, "x")]
    assert rows[1][1]["note"] == "b\rc"  # a CR inside a quoted cell is kept
    assert [(line, reason) for line, _, reason in refused] == [
        (3, "line 3 has 1 cells; its header names 2")
    ]
