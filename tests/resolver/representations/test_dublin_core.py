"""Records as simple Dublin Core (``urnkit.resolver.representations.dublin_core``): the
``oai_dc`` format of OAI-PMH 2.0, which the RFC 2483 I2C services and the OAI-PMH interface give."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from xml.etree import ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.representations.dublin_core import (
    DC,
    ELEMENTS,
    OAI_DC,
    dublin_core,
    oai_dc_xml,
)

MOMENT = datetime(2026, 1, 1, tzinfo=UTC)


def _record(metadata: dict[str, Any], **fields: Any) -> Record:
    return Record(
        "URN:NBN:fi-fe2010",
        "urn:nbn:fi-fe2010",
        "fi",
        "active",
        "Org",
        MOMENT,
        MOMENT,
        metadata=metadata,
        **fields,
    )


def test_identifiers_come_first_then_metadata_then_successors() -> None:
    record = _record(
        {"title": "T", "creators": ["A", "B"], "language": "fi", "pages": 3, "Date": "2010"},
        locations=(Location("https://a.example/1"), Location("https://b.example/2")),
        successors=("urn:nbn:fi-fe2011",),
    )
    assert dublin_core(record) == [
        ("identifier", "URN:NBN:fi-fe2010"),
        ("identifier", "https://a.example/1"),
        ("identifier", "https://b.example/2"),
        ("title", "T"),
        ("creator", "A"),
        ("creator", "B"),
        ("language", "fi"),
        ("date", "2010"),
        ("relation", "urn:nbn:fi-fe2011"),
    ]


def test_names_outside_dcmes_and_empty_values_are_left_out() -> None:
    record = _record({"pages": 3, "note": "x", "subjects": [], "title": "", "rights": None})
    assert dublin_core(record) == [("identifier", "URN:NBN:fi-fe2010")]


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1)


@given(st.dictionaries(st.sampled_from([*ELEMENTS, "pages", "notes"]), st.lists(_TEXT, max_size=3)))
def test_the_xml_holds_every_pair_in_order(metadata: dict[str, list[str]]) -> None:
    record = _record(metadata)
    root = ET.fromstring(oai_dc_xml(record).encode())
    assert root.tag == f"{{{OAI_DC}}}dc"
    read = [(child.tag.removeprefix(f"{{{DC}}}"), child.text or "") for child in root]
    assert read == dublin_core(record)
