"""The rows of an import file, CSV or NDJSON, with their line numbers: what ``urnkit import``
and a registrant's upload (:mod:`~urnkit.resolver.services.uploads`) read.

>>> import io
>>> rows = csv_rows(io.BytesIO(b"urn,url\\nurn:nbn:fi:demo-1,https://example.org/1\\n"), print)
>>> [(line, row["urn"], row["locations"]) for line, row in rows]
[(2, 'urn:nbn:fi:demo-1', [{'url': 'https://example.org/1'}])]
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

CELL_LIMIT = 2**31 - 1
"""The csv module's field limit while a file is read: its default, 128 KiB, is less than an
exported record's locations cell can hold (a hundred locations of long URLs and labels)."""

Reject = Callable[[int, Any, str], None]
"""Told of a row that cannot be imported: its line, the row (or the line's text), the reason."""


def format_of(name: str, chosen: str | None) -> str:
    """The format of a file: ``chosen`` if given, else by the suffix of its ``name``.

    >>> format_of("records.CSV", None), format_of("x.jsonl", None), format_of("x", "csv")
    ('csv', 'ndjson', 'csv')
    """
    if chosen:
        return chosen
    lowered = name.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".ndjson", ".jsonl")):
        return "ndjson"
    raise ValueError(
        f"cannot tell the format of {name!r} from its name: say whether it is csv or ndjson"
    )


def _json_cell(text: str, where: str, empty: Any) -> Any:
    """``text`` read as JSON (``empty`` if blank); :class:`ValueError` naming ``where`` and the
    column of the error in ``text``."""
    if not text.strip():
        return empty
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where} is not JSON: {error.msg} at character {error.pos + 1}") from None


def _decoded(raw: bytes, line: int) -> str:
    """The line ``raw`` as UTF-8 text; :class:`ValueError` naming the line and byte if it is not.

    >>> _decoded(b"caf\\xc3\\xa9", 1)
    'café'
    >>> _decoded(b"ok \\xff", 7)
    Traceback (most recent call last):
    ...
    ValueError: line 7: not UTF-8 at byte 4 (invalid start byte)
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"line {line}: not UTF-8 at byte {error.start + 1} ({error.reason})"
        ) from None


def csv_rows(stream: BinaryIO, reject: Reject) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV file with their line numbers: ``urn``, then optional ``status``,
    ``locations`` (a JSON array) or ``url`` (one location), ``metadata`` (a JSON object),
    ``successors`` (space-separated), ``note``. A row whose cell is not JSON goes to ``reject``;
    a line that is not UTF-8 stops the file (:class:`ValueError`)."""
    csv.field_size_limit(CELL_LIMIT)  # the module's own setting: no reader takes one
    reader = csv.DictReader(_decoded(raw, line) for line, raw in enumerate(stream, 1))
    if reader.fieldnames is None or "urn" not in reader.fieldnames:
        raise ValueError("line 1: a CSV import needs a header row with a 'urn' column")
    for row in reader:
        line = reader.line_num
        try:
            cell = "locations"
            locations = _json_cell(row.get(cell) or "", f"line {line}, column {cell!r}", [])
            if row.get("url"):
                locations = (
                    [*locations, {"url": row["url"]}] if isinstance(locations, list) else locations
                )
            cell = "metadata"
            metadata = _json_cell(row.get(cell) or "", f"line {line}, column {cell!r}", {})
        except ValueError as error:
            reject(line, row, str(error))
            continue
        yield (
            line,
            {
                "urn": row["urn"],
                "status": row.get("status") or None,
                "locations": locations,
                "metadata": metadata,
                "successors": (row.get("successors") or "").split(),
                "note": row.get("note") or None,
            },
        )


def ndjson_rows(stream: BinaryIO, reject: Reject) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of an NDJSON file with their line numbers: one JSON object a line, as ``urnkit
    export`` writes them; a line that is not UTF-8, not JSON or not an object goes to
    ``reject``."""
    for line, raw in enumerate(stream, 1):
        try:
            text = _decoded(raw, line)
            if not text.strip():
                continue
            row = _json_cell(text, f"line {line}", None)
            if not isinstance(row, dict):
                raise ValueError(f"line {line} is not a JSON object")
        except ValueError as error:
            reject(line, raw.decode("utf-8", "backslashreplace").rstrip("\r\n"), str(error))
            continue
        yield line, row
