"""The rows of an import file (``services.rows``): what ``urnkit export`` writes, an import
and an upload read back, whatever the size of a cell a record can hold."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.services.locations import LONGEST, MAX_LOCATIONS
from urnkit.resolver.services.rows import csv_rows
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
