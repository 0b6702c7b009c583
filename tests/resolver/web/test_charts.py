"""The pages' line charts (``urnkit.resolver.web.charts``): whatever the series, the SVG parses
as XML, names itself for assistive technology, draws every point inside its plot area with
rising ticks, escapes every text, uses no inline style (the pages' CSP forbids it) and caps the
series it draws without losing a count."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.web.charts import (
    LEFT,
    MAX_NAME,
    MAX_SERIES,
    PLOT_HEIGHT,
    RIGHT,
    TOP,
    WIDTH,
    capped,
    day_ticks,
    line_chart,
    value_ticks,
)
from urnkit.resolver.web.languages import LANGUAGES

SVG = "{http://www.w3.org/2000/svg}"
FIRST = date(2026, 1, 1)
NAMES = st.text(min_size=1, max_size=80)  # any text: prefixes come from registrants
COUNTS = st.one_of(st.integers(0, 20), st.integers(0, 10**15))
POINTS = st.lists(st.tuples(NAMES, st.integers(-2, 400), COUNTS), max_size=40)
# Names XML can hold as they are (others' characters are replaced: the module's doctest)
SHOWN_NAMES = st.text(st.characters(exclude_categories=("Cc", "Cs", "Cn")), min_size=1, max_size=80)
SHOWN_POINTS = st.lists(st.tuples(SHOWN_NAMES, st.integers(-2, 400), COUNTS), max_size=40)


def chart(points: list[tuple[str, int, int]], days: int, language: str = "en") -> ET.Element:
    svg = line_chart(
        [(name, FIRST + timedelta(days=offset), count) for name, offset, count in points],
        FIRST,
        FIRST + timedelta(days=days - 1),
        chart_id="chart",
        title="<Title & co>",
        description='A description\'s "text"',
        language=language,
        other="other prefixes",
    )
    return ET.fromstring(str(svg))


def axis_labels(root: ET.Element) -> list[str | None]:
    axis = root.find(f"{SVG}g[@class='axis']")
    assert axis is not None
    return [e.text for e in axis.iter(f"{SVG}text")]


def coordinates(element: ET.Element) -> list[tuple[float, float]]:
    return [
        (float(x), float(y))
        for x, y in (pair.split(",") for pair in element.attrib["points"].split())
    ]


@given(points=POINTS, days=st.integers(1, 366), language=st.sampled_from(LANGUAGES))
def test_every_chart_parses_and_draws_inside_its_plot_area(
    points: list[tuple[str, int, int]], days: int, language: str
) -> None:
    root = chart(points, days, language)
    assert root.attrib["role"] == "img"
    ids = {e.attrib["id"]: e for e in root.iter() if "id" in e.attrib}
    labelled = [ids[name] for name in root.attrib["aria-labelledby"].split()]
    assert [e.tag for e in labelled] == [f"{SVG}title", f"{SVG}desc"]
    assert labelled[0].text == "<Title & co>"
    assert not any("style" in e.attrib for e in root.iter())
    lines = root.findall(f".//{SVG}polyline")
    assert len(lines) <= MAX_SERIES
    for line in lines:
        drawn = coordinates(line)
        assert len(drawn) == days
        xs = [x for x, _ in drawn]
        assert xs == sorted(xs)
        assert len(set(xs)) == days
        for x, y in drawn:
            assert LEFT <= x <= WIDTH - RIGHT
            assert TOP <= y <= TOP + PLOT_HEIGHT
    axis = root.find(f"{SVG}g[@class='axis']")
    assert axis is not None
    grid = [float(e.attrib["y1"]) for e in axis.findall(f"{SVG}line[@class='grid']")]
    assert grid == sorted(grid, reverse=True)
    assert len(set(grid)) == len(grid)
    assert grid[0] == TOP + PLOT_HEIGHT
    assert grid[-1] >= TOP


@given(points=SHOWN_POINTS, days=st.integers(1, 40))
def test_the_legend_names_each_series_escaped_and_a_cap_keeps_every_count(
    points: list[tuple[str, int, int]], days: int
) -> None:
    root = chart(points, days)
    legend = [e.text for e in root.iter(f"{SVG}text") if e.attrib.get("class") == "legend"]
    within = [(name, count) for name, offset, count in points if 0 <= offset < days]
    names = {name for name, _ in within}
    if len(names) <= MAX_SERIES:
        assert sorted(map(str, legend)) == sorted(
            n if len(n) <= MAX_NAME else n[: MAX_NAME - 1] + "…" for n in names
        )
    else:
        assert len(legend) == MAX_SERIES
        assert legend[-1] == "other prefixes"


@given(
    series=st.dictionaries(NAMES, st.lists(st.integers(0, 10**12), min_size=3, max_size=3)),
)
def test_capping_keeps_the_biggest_and_sums_the_rest(series: dict[str, list[int]]) -> None:
    drawn = capped(series, "\x00other")
    assert len(drawn) <= MAX_SERIES
    assert [sum(day) for day in zip(*drawn.values(), strict=True)] == [
        sum(day) for day in zip(*series.values(), strict=True)
    ] or not series
    kept = [name for name in drawn if name != "\x00other"]
    smallest_kept = min((sum(series[n]) for n in kept), default=0)
    assert all(sum(series[n]) <= smallest_kept for n in series if n not in drawn)


@given(highest=st.integers(0, 10**18))
def test_value_ticks_rise_from_zero_past_the_highest_value(highest: int) -> None:
    ticks = value_ticks(highest)
    assert ticks[0] == 0
    assert ticks[-1] >= max(highest, 1)
    assert all(a < b for a, b in itertools.pairwise(ticks))
    assert 2 <= len(ticks) <= 6
    assert ticks[-2] < highest or highest == 0  # no tick wasted above the top


@given(days=st.integers(1, 366))
def test_day_ticks_rise_end_on_the_last_day_and_are_few(days: int) -> None:
    ticks = day_ticks(days)
    assert all(a < b for a, b in itertools.pairwise(ticks))
    assert ticks[-1] == days - 1
    assert ticks[0] >= 0
    assert len(ticks) <= 6


def test_a_zero_only_series_lies_on_the_axis_and_the_scale_is_one() -> None:
    root = chart([("fi:zero", 0, 0), ("fi:zero", 1, 0)], 2)
    (line,) = root.findall(f".//{SVG}polyline")
    assert {y for _, y in coordinates(line)} == {TOP + PLOT_HEIGHT}
    labels = axis_labels(root)
    assert labels[:2] == ["0", "1"]


def test_no_data_draws_axes_without_lines_and_one_day_centres_its_point() -> None:
    assert chart([], 5).findall(f".//{SVG}polyline") == []
    (line,) = chart([("fi:a", 0, 3)], 1).findall(f".//{SVG}polyline")
    assert coordinates(line) == [((LEFT + WIDTH - RIGHT) / 2, TOP)]


@pytest.mark.parametrize(
    ("language", "labels"),
    [
        ("en", ["0", "500K", "1M"]),
        ("fi", ["0", "500\xa0t.", "1\xa0milj."]),
        ("de", ["0", "500.000", "1\xa0Mio."]),
    ],
)
def test_huge_counts_are_written_compactly_in_the_pages_language(
    language: str, labels: list[str]
) -> None:
    root = chart([("fi:a", 0, 1_000_000)], 1, language)
    shown = axis_labels(root)
    assert shown[:3] == labels


def test_named_series_keep_their_order_and_names_even_without_counts() -> None:
    svg = line_chart(
        [("active", FIRST, 3)],
        FIRST,
        FIRST,
        chart_id="s",
        title="t",
        description="d",
        language="sv",
        names={"reserved": "reserverade", "active": "aktiva", "deactivated": "inaktiverade"},
    )
    root = ET.fromstring(str(svg))
    legend = [e.text for e in root.iter(f"{SVG}text") if e.attrib.get("class") == "legend"]
    assert legend == ["reserverade", "aktiva", "inaktiverade"]


def test_an_id_that_is_no_xml_name_is_refused() -> None:
    with pytest.raises(ValueError, match="not a usable id"):
        line_chart(
            [], FIRST, FIRST, chart_id='x" onload="', title="", description="", language="en"
        )
