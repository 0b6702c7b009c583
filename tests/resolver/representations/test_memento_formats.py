"""Memento's formats (RFC 7089): the Accept-Datetime parser against werkzeug's HTTP-date parser,
the RFC's own examples, and the TimeMaps and Link headers as the Memento project's client
(memento_client) reads them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memento_client import MementoClient
from werkzeug.http import http_date as werkzeug_http_date
from werkzeug.http import parse_date

from urnkit.resolver.domain import HistoryEntry
from urnkit.resolver.domain.versions import Versions, stamp
from urnkit.resolver.representations import memento
from urnkit.resolver.representations.memento import (
    accept_datetime,
    http_date,
    memento_links,
    stamped,
    timemap_json,
    timemap_link_format,
)

BASE = "https://urn.example/"
MOMENTS = st.datetimes(
    min_value=datetime(1900, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)
).map(lambda moment: moment.replace(microsecond=0))


def _versions(count: int, start: datetime = datetime(2019, 1, 1, tzinfo=UTC)) -> Versions:
    entries = [
        HistoryEntry(start + timedelta(days=n), "patched", "A", {"n": n}) for n in range(count)
    ]
    return Versions.of("URN:NBN:fi-1", entries)


# RFC 7089 §2.1.1 and its examples (§4.1.1 and elsewhere) verbatim.
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Thu, 31 May 2007 20:35:00 GMT", datetime(2007, 5, 31, 20, 35, tzinfo=UTC)),
        ("Tue, 15 Nov 1994 12:45:26 GMT", datetime(1994, 11, 15, 12, 45, 26, tzinfo=UTC)),
    ],
)
def test_the_rfcs_accept_datetimes(value: str, expected: datetime) -> None:
    assert accept_datetime(value) == expected


@given(MOMENTS)
def test_accept_datetime_reads_every_http_date(moment: datetime) -> None:
    # RFC 7089 §2.1.1: rfc1123-date; written by werkzeug, read back the same.
    assert accept_datetime(werkzeug_http_date(moment)) == moment
    assert http_date(moment) == werkzeug_http_date(moment)


@given(st.text(max_size=40) | st.from_regex(r"[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} .{0,12}"))
def test_accept_datetime_takes_what_werkzeug_takes_and_refuses_the_rest(text: str) -> None:
    # RFC 7089 §4.5.3: a malformed Accept-Datetime is refused (400), never misread.
    theirs = parse_date(text)
    try:
        ours = accept_datetime(text)
    except ValueError:
        assert theirs is None or theirs.tzinfo is None or "-0000" in text
        return
    assert theirs is not None
    assert ours == theirs.astimezone(UTC)


@given(MOMENTS)
def test_a_mementos_14_digits_name_its_second(moment: datetime) -> None:
    assert stamped(stamp(moment)) == moment
    assert len(stamp(moment)) == 14


@given(st.text(alphabet="0123456789x", max_size=16))
def test_other_digits_name_no_memento(text: str) -> None:
    found = stamped(text)
    assert found is None or stamp(found) == text


@pytest.mark.parametrize("count", [1, 2, 7])
def test_memento_client_reads_the_link_format_timemap(count: int) -> None:
    # RFC 7089 §5.1.1: the original, the TimeGate, the TimeMap itself, each Memento.
    versions = _versions(count)
    links = MementoClient.parse_link_header(timemap_link_format(BASE, versions))
    found = MementoClient.get_uri_dt_for_rel(links, ["original", "timegate", "self", "first"])
    assert found["original"]["uri"] == found["timegate"]["uri"] == BASE + "URN:NBN:fi-1"
    mementos = {uri: link for uri, link in links.items() if "memento" in link["rel"]}
    assert len(mementos) == count
    for entry in versions.entries:
        link = mementos[f"{BASE}memento/{stamp(entry.at)}/URN:NBN:fi-1"]
        assert MementoClient.convert_to_datetime(link["datetime"][0]) == entry.at.replace(
            tzinfo=None
        )


@given(st.integers(1, 12), st.data())
def test_a_mementos_links_name_its_neighbours(count: int, data: st.DataObject) -> None:
    # RFC 7089 §2.2.1: first, last, prev, next, with their datetimes.
    versions = _versions(count)
    index = data.draw(st.integers(0, count - 1))
    header = ", ".join(link.header() for link in memento_links(BASE, versions, index))
    rels = ["original", "timegate", "timemap", "first", "last", "prev", "next"]
    found = MementoClient.get_uri_dt_for_rel(MementoClient.parse_link_header(header), rels)
    urls = [f"{BASE}memento/{stamp(entry.at)}/URN:NBN:fi-1" for entry in versions.entries]
    assert found["first"]["uri"] == urls[0]
    assert found["last"]["uri"] == urls[-1]
    assert found.get("prev", {}).get("uri") == (urls[index - 1] if index else None)
    assert found.get("next", {}).get("uri") == (urls[index + 1] if index < count - 1 else None)
    assert found["original"]["uri"] == found["timegate"]["uri"] == BASE + "URN:NBN:fi-1"


def test_long_timemaps_come_in_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memento, "TIMEMAP_PAGE", 3)
    versions = _versions(7)
    first, last = timemap_json(BASE, versions, 1), timemap_json(BASE, versions, 3)
    assert len(first["mementos"]) == 3
    assert [m["datetime"] for m in last["mementos"]] == [versions.entries[6].at.isoformat()]
    assert len(first["pages"]) == 3
    links = MementoClient.parse_link_header(timemap_link_format(BASE, versions, 2))
    pages = {uri: link for uri, link in links.items() if "timemap" in link["rel"]}
    assert sorted(pages) == [
        f"{BASE}timemap/link/URN:NBN:fi-1",
        f"{BASE}timemap/link/URN:NBN:fi-1?page=3",
    ]
    assert sum("memento" in link["rel"] for link in links.values()) == 3
