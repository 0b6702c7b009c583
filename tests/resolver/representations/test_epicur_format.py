"""xepicur (``urnkit.resolver.representations.epicur``), by property: a record written as
epicur reads back; each update status applied twice is applied once; whatever XML comes in
named like epicur, it is read or refused with a reason, never anything else.

The format is DNB's xepicur (namespace urn:nbn:de:1111-2004033116; reference description at
https://www.persistent-identifier.de/?link=210, schema xepicur.xsd version 1.0).
"""

from __future__ import annotations

from datetime import UTC, datetime
from xml.etree import ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.representations.epicur import (
    EPICUR,
    STATUSES,
    EpicurError,
    apply_status,
    epicur_element,
    parse_epicur,
)

MOMENT = datetime(2026, 1, 1, tzinfo=UTC)
URLS = st.integers(0, 30).map(lambda n: f"https://example.org/{n}")
MEDIA_TYPES = st.none() | st.sampled_from(["text/html", "application/pdf", "image/tiff"])
LOCATION_LISTS = st.lists(
    st.builds(Location, URLS, st.just(1), st.none(), MEDIA_TYPES),
    max_size=6,
    unique_by=lambda location: location.url,
).map(
    lambda found: tuple(
        Location(loc.url, n, None, loc.media_type) for n, loc in enumerate(found, 1)
    )
)


@given(LOCATION_LISTS)
def test_a_record_written_as_epicur_reads_back(locations: tuple[Location, ...]) -> None:
    record = Record(
        "URN:NBN:fi:test-1", "urn:nbn:fi:test-1", "fi:test", "active", "Org", MOMENT, MOMENT,
        locations=locations,
    )  # fmt: skip
    text = ET.tostring(epicur_element(record))
    delivery = parse_epicur(ET.fromstring(text))
    assert delivery.status.name == "url_update_general"
    assert [(entry.urn, entry.locations) for entry in delivery.records] == [
        ("URN:NBN:fi:test-1", locations)
    ]


@given(st.sampled_from(sorted(STATUSES)), LOCATION_LISTS, LOCATION_LISTS)
def test_a_status_applied_twice_is_applied_once(
    name: str, current: tuple[Location, ...], delivered: tuple[Location, ...]
) -> None:
    status = STATUSES[name]
    once = apply_status(status, current, delivered)
    assert apply_status(status, once, delivered) == once
    urls = [location.url for location in once]
    assert len(urls) == len(set(urls))
    delivered_urls = {location.url for location in delivered}
    if status.urls == "add":  # every delivered URL held, the others kept in their order
        assert delivered_urls <= set(urls)
        assert once[: len(current)] == current
    elif status.urls == "remove":
        assert not delivered_urls & set(urls)
    else:
        assert once == delivered


_NAMES = st.sampled_from(
    ["epicur", "administrative_data", "delivery", "update_status", "record", "identifier",
     "resource", "format", "other"]
)  # fmt: skip
_ATTRIBUTES = st.dictionaries(
    st.sampled_from(["type", "scheme", "role"]),
    st.sampled_from([*STATUSES, "urn_alternative", "x", "", "url", "urn:nbn:de", "primary"]),
    max_size=3,
)
_TEXTS = st.none() | st.sampled_from(["", " ", "urn:nbn:de:0001-1", "https://e.org/1", "a/b", "x"])


def _trees(depth: int) -> st.SearchStrategy[ET.Element]:
    children = st.lists(_trees(depth - 1), max_size=3) if depth else st.just([])
    return st.builds(_element, _NAMES, _ATTRIBUTES, _TEXTS, children)


def _element(
    name: str, attributes: dict[str, str], text: str | None, children: list[ET.Element]
) -> ET.Element:
    element = ET.Element(f"{{{EPICUR}}}{name}", attributes)
    element.text = text
    element.extend(children)
    return element


@given(st.builds(_element, st.just("epicur"), _ATTRIBUTES, _TEXTS, st.lists(_trees(3), max_size=4)))
def test_any_epicur_shaped_xml_is_read_or_refused_with_a_reason(element: ET.Element) -> None:
    try:
        delivery = parse_epicur(element)
    except EpicurError as error:
        reason = str(error)
        assert reason  # what is wrong, said
        return
    assert delivery.status.name in STATUSES
    for entry in delivery.records:
        assert entry.urn.strip() == entry.urn != ""
        assert [location.priority for location in entry.locations] == list(
            range(1, len(entry.locations) + 1)
        )


@pytest.mark.parametrize(
    ("xml", "reason"),
    [
        ("<epicur/>", "the metadata is epicur, not an epicur element"),
        (f'<epicur xmlns="{EPICUR}"/>', "epicur has no administrative_data/delivery/update_status"),
        (
            f'<epicur xmlns="{EPICUR}"><administrative_data><delivery><update_status/>'
            "</delivery></administrative_data></epicur>",
            "the update status '' is unknown",
        ),
        (
            f'<epicur xmlns="{EPICUR}"><administrative_data><delivery>'
            '<update_status type="urn_new"/></delivery></administrative_data>'
            '<record><identifier scheme="urn:nbn:de">urn:nbn:de:0001-1</identifier>'
            '<resource><identifier scheme="urn">x</identifier></resource></record></epicur>',
            "record 1: a resource has no identifier with scheme url",
        ),
    ],
)
def test_malformed_epicur_is_refused_with_the_reason(xml: str, reason: str) -> None:
    with pytest.raises(EpicurError, match="^" + reason.replace("(", r"\(").replace(")", r"\)")):
        parse_epicur(ET.fromstring(xml))
