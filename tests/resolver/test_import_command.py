"""``urnkit import`` as an operator runs it: bad rows refused one by one (``--max-errors``,
``--rejects``), good rows stored, errors naming their line and column, progress in rows stored,
on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from resolver_support import urnkit, urnkit_here

GOOD = [f'{{"urn": "urn:nbn:fi:lib-{n}", "metadata": {{"title": "Book {n}"}}}}' for n in range(4)]
# Each bad line of the file, by its line number, and what its refusal must say.
BAD = {
    2: ('{"urn": ', "line 2 is not JSON: Expecting value at character 10"),
    4: ("[1, 2]", "line 4 is not a JSON object"),
    5: ('{"urn": "urn:nbn:fi:lib-x", "locations": "https://a"}', "'locations' must be a list"),
    7: ('{"urn": "urn:nbn:se:elsewhere-1"}', "'se:elsewhere' is delegated to no organisation"),
    8: ('{"urn": "not a urn"}', "is not a URN"),
    9: ('{"urn": "urn:nbn:fi:lib-y", "metadata": {"a": NaN}}', "NaN"),
}


@pytest.fixture
def database(database_url: str) -> tuple[str, str]:
    """A database with the schema and "Library" holding ``fi:lib``."""
    flag = ("--database-url", database_url)
    urnkit_here("db", "upgrade", *flag)
    urnkit_here("admin", "create-org", "Library", *flag)
    urnkit_here("admin", "delegate", "Library", "fi:lib", *flag)
    return flag


def _file(tmp_path: Path) -> Path:
    """Lines 1, 3, 6, 10 good; the lines of ``BAD`` bad; one line not UTF-8 (line 11)."""
    lines = [GOOD[0], BAD[2][0], GOOD[1], BAD[4][0], BAD[5][0], GOOD[2], BAD[7][0], BAD[8][0]]
    lines += [BAD[9][0], GOOD[3]]
    path = tmp_path / "rows.ndjson"
    path.write_bytes("\n".join(lines).encode() + b'\n{"urn": "urn:nbn:fi:lib-\xff"}\n')
    return path


def _stored(database: tuple[str, str]) -> list[str]:
    exported = urnkit_here("export", *database).stdout.splitlines()
    return sorted(json.loads(line)["urn"] for line in exported)


def test_bad_rows_are_refused_one_by_one_and_good_rows_stored(
    database: tuple[str, str], tmp_path: Path
) -> None:
    rejects = tmp_path / "rejects.ndjson"
    done = urnkit(
        "import", str(_file(tmp_path)), "--max-errors", "7", "--rejects", str(rejects), *database
    )
    assert done.stdout.strip() == "4 imported, 0 already present (skipped), 7 refused"
    assert _stored(database) == [f"urn:nbn:fi:lib-{n}" for n in range(4)]
    refused = {entry["line"]: entry for entry in map(json.loads, rejects.read_text().splitlines())}
    assert sorted(refused) == [2, 4, 5, 7, 8, 9, 11]
    for line, (text, reason) in BAD.items():
        assert reason in refused[line]["reason"], refused[line]
        row = refused[line]["row"]
        assert (row if isinstance(row, str) else json.dumps(row)).startswith(text[:8])
    # RFC 3629 §3: 0xFF never appears in UTF-8; the line and the byte are named.
    assert refused[11]["reason"] == "line 11: not UTF-8 at byte 25 (invalid start byte)"


def test_the_first_bad_row_stops_by_default_naming_its_line(
    database: tuple[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "rows.ndjson"
    path.write_text(f"{GOOD[0]}\n{GOOD[1]}\n{BAD[7][0]}\n{GOOD[2]}\n")
    done = urnkit("import", str(path), *database, check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("urnkit: stopped: line 3: urn:nbn:se:elsewhere-1: "), done.stderr
    # The batch's good rows are stored; a rerun with room for the bad row completes the rest.
    assert _stored(database) == [f"urn:nbn:fi:lib-{n}" for n in range(3)]
    rerun = urnkit("import", str(path), "--max-errors", "1", *database)
    assert rerun.stdout.strip() == "0 imported, 3 already present (skipped), 1 refused"


def test_more_refusals_than_allowed_stop_the_import(
    database: tuple[str, str], tmp_path: Path
) -> None:
    done = urnkit("import", str(_file(tmp_path)), "--max-errors", "2", *database, check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("urnkit: stopped: "), done.stderr


def test_csv_errors_name_the_line_and_the_column(database: tuple[str, str], tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text('urn,metadata\nurn:nbn:fi:lib-1,{"a": 1\nurn:nbn:fi:lib-2,"{""a"": 1}"\n')
    rejects = tmp_path / "rejects.ndjson"
    done = urnkit("import", str(path), "--max-errors", "1", "--rejects", str(rejects), *database)
    assert done.stdout.strip() == "1 imported, 0 already present (skipped), 1 refused"
    (entry,) = map(json.loads, rejects.read_text().splitlines())
    assert entry["line"] == 2
    assert entry["reason"].startswith("line 2, column 'metadata' is not JSON: ")


def test_csv_rows_not_utf8_too_deep_or_repeated_are_refused_one_by_one(
    database: tuple[str, str], tmp_path: Path
) -> None:
    """As in NDJSON, so in CSV: a line that is not UTF-8 refuses its row, not the file; so do
    metadata nested 100,000 deep (no traceback) and a URN of an earlier line."""
    path = tmp_path / "rows.csv"
    deep = b"[" * 100_000 + b"]" * 100_000
    path.write_bytes(
        b"urn,metadata\n"
        b"urn:nbn:fi:lib-1,{}\n"
        b"urn:nbn:fi:lib-caf\xe9,{}\n"  # 3: latin-1
        b'urn:nbn:fi:lib-2,"' + deep + b'"\n'  # 4
        b"URN:NBN:FI:LIB-1,{}\n"  # 5: line 2's URN again
        b"urn:nbn:fi:lib-3,{}\n"
    )
    rejects = tmp_path / "rejects.ndjson"
    done = urnkit("import", str(path), "--max-errors", "250", "--rejects", str(rejects), *database)
    assert "Traceback" not in done.stderr
    assert done.stdout.strip() == "2 imported, 0 already present (skipped), 3 refused"
    refused = {e["line"]: e["reason"] for e in map(json.loads, rejects.read_text().splitlines())}
    assert refused == {
        3: "line 3: not UTF-8 at byte 19 (invalid continuation byte)",
        4: "line 4, column 'metadata' nests deeper than 32 arrays and objects",
        5: "the URN of line 2 again (an equivalent URN, RFC 8141 §3): the first wins",
    }
    assert _stored(database) == ["urn:nbn:fi:lib-1", "urn:nbn:fi:lib-3"]


def test_progress_lines_count_rows_stored_when_stderr_is_no_terminal(
    database: tuple[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "rows.ndjson"
    path.write_text("".join(f'{{"urn": "urn:nbn:fi:lib-{n}"}}\n' for n in range(3000)))
    done = urnkit("import", str(path), "--batch-size", "500", "--progress-every", "0", *database)
    progress = [line for line in done.stderr.splitlines() if "rows stored" in line]
    counts = [int(line.split()[1].replace(",", "")) for line in progress]
    # One line a stored batch: the count rises by the batch, never ahead of what is stored.
    assert counts == list(range(500, 3001, 500)), done.stderr
