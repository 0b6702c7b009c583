"""Line charts for the pages: several series of counts over days, as inline SVG markup.

Pure Python rather than Jinja macros: the scales, ticks and the capping of series are arithmetic
that template syntax would bury, and a function can be tested on its own (the SVG parses, every
point lies in the plot area, the ticks rise). It returns :class:`~markupsafe.Markup` that a
template puts in place; every text in it is escaped (prefixes come from registrants). It draws
with SVG presentation attributes and the classes of ``static/site.css`` only: the pages'
Content-Security-Policy allows no inline style. The SVG is one image (``role="img"``) named by
its ``<title>`` and ``<desc>``; the numbers themselves are in a table on the page, for screen
readers. Series differ by colour and also by dash pattern and marker, so that no one needs
to tell colours apart. Days and numbers are written as the page's language writes them (CLDR):
``1.2M``, ``1,2 milj.``; ``Mar 1``, ``1.3.``.

>>> from datetime import date
>>> svg = line_chart([("fi:a", date(2026, 3, 1), 5)], date(2026, 3, 1), date(2026, 3, 2),
...                  chart_id="c", title="Resolutions", description="Per day", language="fi")
>>> svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"'), "1.3." in svg, "fi:a" in svg
(True, True, True)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import date, timedelta

from babel.dates import format_skeleton
from babel.numbers import format_compact_decimal, format_decimal
from markupsafe import Markup, escape

from urnkit.resolver.domain.xml_text import NOT_XML

WIDTH = 640  # the viewBox's units; the stylesheet scales the chart to the page
LEFT, RIGHT, TOP, PLOT_HEIGHT = 72, 16, 12, 220  # the plot area's place in the viewBox
AXIS_LABELS = 28  # below the plot: the days
LEGEND_ROW = 22  # one row of the legend a series
MAX_SERIES = 6  # series drawn; beyond that the biggest five and the rest summed as one
MAX_MARKED_DAYS = 62  # more days than this and markers would overlap: dashes alone tell apart
MAX_NAME = 48  # characters of a name in the legend (the table has it whole)
DASHES = ("", "8 4", "2 3", "10 3 2 3", "4 4", "12 2", "1 6")  # one a series, and colour
MARKERS = (  # a shape a series, drawn around (x, y): circle, square, triangle, diamond, ...
    "m-3.5 0a3.5 3.5 0 1 0 7 0a3.5 3.5 0 1 0 -7 0",
    "m-3 -3h6v6h-6z",
    "m0 -4l4 7h-8z",
    "m0 -4.5l4.5 4.5l-4.5 4.5l-4.5 -4.5z",
    "m-4 -1.2h8v2.4h-8zm2.8 -2.8h2.4v8h-2.4z",
    "m-3.5 -3.5l7 7m0 -7l-7 7",
    "m0 4l4 -7h-8z",
)
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def capped(series: Mapping[str, list[int]], other: str) -> dict[str, list[int]]:
    """At most :data:`MAX_SERIES` series: if there are more, the biggest by total (ties by
    name) but one, and the rest summed day by day as ``other``.

    >>> capped({str(n): [n] for n in range(8)}, "other")
    {'7': [7], '6': [6], '5': [5], '4': [4], '3': [3], 'other': [3]}
    """
    if len(series) <= MAX_SERIES:
        return dict(series)
    ranked = sorted(series, key=lambda name: (-sum(series[name]), name))
    kept = {name: series[name] for name in ranked[: MAX_SERIES - 1]}
    rest = [series[name] for name in ranked[MAX_SERIES - 1 :]]
    return {**kept, other: [sum(day) for day in zip(*rest, strict=True)]}


def value_ticks(highest: int) -> list[int]:
    """The values the vertical axis marks: from 0 by a step of 1, 2 or 5 times a power of ten
    to the first at or above ``highest`` (at least 1), four or five steps for big values.

    >>> value_ticks(0), value_ticks(7), value_ticks(1234)
    ([0, 1], [0, 2, 4, 6, 8], [0, 500, 1000, 1500])
    """
    rough = max(highest / 4, 1)
    power = 10 ** math.floor(math.log10(rough))
    step = next(power * m for m in (1, 2, 5, 10) if power * m >= rough)
    top = max(step, -(-highest // step) * step)
    return list(range(0, top + 1, step))


def day_ticks(days: int) -> list[int]:
    """The days (offsets from the first) the horizontal axis names: the last and every
    ``step``-th before it, at most six, oldest first.

    >>> day_ticks(1), day_ticks(7), day_ticks(31)
    ([0], [0, 2, 4, 6], [0, 6, 12, 18, 24, 30])
    """
    step = -(-days // 6)
    return sorted(range(days - 1, -1, -step))


def _number(value: int, language: str) -> str:
    """A count as the axis writes it: whole below 10,000, else compact where the language
    has a short form (12K, 1,2 milj.; German has none below a million: 500.000).

    >>> _number(500_000, "de"), _number(2_500_000, "de"), _number(1234, "fi")
    ('500.000', '2,5\\xa0Mio.', '1\\xa0234')
    """
    if value >= 10_000:
        compact = format_compact_decimal(value, locale=language, fraction_digits=1)
        if not compact.isdigit():
            return compact
    return format_decimal(value, locale=language)


def _text(text: str, limit: int | None = None) -> Markup:
    """``text`` escaped for XML, characters XML cannot hold replaced by U+FFFD, cut to ``limit``
    characters (the last one an ellipsis).

    >>> _text("<a & b>\\x00"), _text("abcdef", 4)
    (Markup('&lt;a &amp; b&gt;\\ufffd'), Markup('abc…'))
    """
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return escape(NOT_XML.sub("\ufffd", text))


def line_chart(
    points: Iterable[tuple[str, date, int]],
    first: date,
    last: date,
    *,
    chart_id: str,
    title: str,
    description: str,
    language: str,
    names: Mapping[str, str] | None = None,
    other: str = "other",
) -> Markup:
    """(series, day, count) ``points`` from ``first`` to ``last`` as a line chart, a line a
    series (days without a point count 0; points outside the days are left out). Series
    are those ``names`` gives, in its order and shown by its values, then any others by
    total, capped (:func:`capped`, the rest named ``other``). ``chart_id`` (an XML name)
    prefixes the ids of the title and description."""
    if _ID.fullmatch(chart_id) is None:
        raise ValueError(f"not a usable id: {chart_id!r}")
    days = max((last - first).days + 1, 1)
    shown = dict(names or {})
    series: dict[str, list[int]] = {name: [0] * days for name in shown}
    for name, day, count in points:
        if count < 0:
            raise ValueError(f"a count is never negative: {name} {day} {count}")
        if 0 <= (offset := (day - first).days) < days:
            series.setdefault(name, [0] * days)[offset] += count
    unnamed = {n: v for n, v in series.items() if n not in shown}
    ranked = sorted(unnamed, key=lambda n: (-sum(unnamed[n]), n))
    drawn = capped({**{n: series[n] for n in shown}, **{n: unnamed[n] for n in ranked}}, other)
    ticks = value_ticks(max((max(v) for v in drawn.values()), default=0))
    plot_width = WIDTH - LEFT - RIGHT
    height = TOP + PLOT_HEIGHT + AXIS_LABELS + LEGEND_ROW * len(drawn) + 8

    def x(offset: int) -> float:
        return round(LEFT + (offset + 0.5) * plot_width / days, 1)

    def y(value: int) -> float:
        return round(TOP + PLOT_HEIGHT * (1 - value / ticks[-1]), 1)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {height}"'
        f' role="img" aria-labelledby="{chart_id}-title {chart_id}-desc">',
        f'<title id="{chart_id}-title">{_text(title)}</title>',
        f'<desc id="{chart_id}-desc">{_text(description)}</desc>',
        '<g class="axis" aria-hidden="true">',
    ]
    for tick in ticks:
        parts.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick)}" y2="{y(tick)}"/>'
            f'<text x="{LEFT - 6}" y="{y(tick)}" text-anchor="end" dominant-baseline="middle">'
            f"{_text(_number(tick, language))}</text>"
        )
    bottom = TOP + PLOT_HEIGHT
    for offset in day_ticks(days):
        label = format_skeleton("MMMd", first + timedelta(days=offset), locale=language)
        parts.append(
            f'<line x1="{x(offset)}" x2="{x(offset)}" y1="{bottom}" y2="{bottom + 5}"/>'
            f'<text x="{x(offset)}" y="{bottom + 18}" text-anchor="middle">{_text(label)}</text>'
        )
    parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{bottom}" y2="{bottom}"/></g>')
    for number, (name, values) in enumerate(drawn.items()):
        label = shown.get(name, name)
        parts.append(_series(number, label, values, x, y, bottom + AXIS_LABELS + 8, days))
    parts.append("</svg>")
    return Markup("".join(parts))


def _series(
    number: int,
    name: str,
    values: list[int],
    x: Callable[[int], float],
    y: Callable[[int], float],
    legend_top: int,
    days: int,
) -> str:
    """One series: its line, its markers (unless too many days) and its row of the legend."""
    style = f'class="series series-{number}"'
    dash = f' stroke-dasharray="{DASHES[number]}"' if DASHES[number] else ""
    marker = MARKERS[number]
    line = " ".join(f"{x(offset)},{y(value)}" for offset, value in enumerate(values))
    marks = "".join(f"M{x(offset)} {y(value)}{marker}" for offset, value in enumerate(values))
    row = legend_top + LEGEND_ROW * number
    return (
        f'<g {style} aria-hidden="true">'
        f'<polyline class="line" fill="none" points="{line}"{dash}/>'
        + (f'<path class="marker" d="{marks}"/>' if days <= MAX_MARKED_DAYS else "")
        + f'<line class="line" x1="{LEFT}" x2="{LEFT + 36}" y1="{row}" y2="{row}"{dash}/>'
        f'<path class="marker" d="M{LEFT + 18} {row}{marker}"/>'
        f'<text class="legend" x="{LEFT + 44}" y="{row}" dominant-baseline="middle">'
        f"{_text(name, MAX_NAME)}</text></g>"
    )
