"""Inline SVG charts, written at build time: stacked horizontal bars and a log-log scatter plot.

No plotting library and no script: each chart is a string of SVG that a page includes as is.
Every chart is an image with a <title> and a <desc> (``role="img"``, named and described by
them); series differ by pattern as well as by color, and the page puts the numbers in a
table beside it. Colors come from ``static/charts.css``, which has a light, a dark and a print
palette; the SVG itself names only classes.

Each chart is written in two layouts, so that it fits a phone: a wide one (labels beside the bars, 900 units
across) and a narrow one (labels above the bars, NARROW units across, fewer point labels) whose
natural width fits a 390 px phone, so that no label is drawn under 11 CSS px. ``static/charts.css``
shows one of them by the width of the screen: a viewBox cannot change with the screen, and a
single layout either shrinks its labels on a phone or wastes a wide screen.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from html import escape

from generator.site import formats

# The fill pattern of each series, drawn over its color: enough to tell series apart in grey.
PATTERNS = {
    "solid": "",
    "diagonal": '<path d="M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4" class="mark"/>',
    "dots": '<circle cx="2" cy="2" r="1.2" class="mark dot"/><circle cx="6" cy="6" r="1.2" class="mark dot"/>',
    "vertical": '<path d="M2,0 v8 M6,0 v8" class="mark"/>',
    "horizontal": '<path d="M0,2 h8 M0,6 h8" class="mark"/>',
    "grid": '<path d="M0,4 h8 M4,0 v8" class="mark"/>',
}
PATTERN_NAMES = {
    "solid": "solid",
    "diagonal": "diagonal lines",
    "dots": "dots",
    "vertical": "vertical lines",
    "horizontal": "horizontal lines",
    "grid": "a grid",
}


@dataclass(frozen=True)
class Series:
    """One stacked series: its CSS class suffix, its name, and its pattern (a key of PATTERNS)."""

    key: str
    label: str
    pattern: str

    @property
    def pattern_name(self) -> str:
        return PATTERN_NAMES[self.pattern]


@dataclass(frozen=True)
class BarRow:
    """One bar: a label and one value per series (in the series' order)."""

    label: str
    values: tuple[int, ...]


@dataclass(frozen=True)
class Point:
    """One model in the scatter plot: a filled marker at (x, y), a hollow one at (x, low)."""

    label: str
    x: int
    y: int
    low: int | None
    tooltip: str
    labelled: bool = False  # write the label beside the point


NARROW = 360  # the narrow layout's width: the content column of a 390 px screen is 366 px (style.css)
CHAR = 7.9  # a character's width at 13 px in DejaVu Sans (Debian's system-ui): enough to lay out legends and labels


def _num(value: float) -> str:
    """A coordinate, short and stable."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _layouts(chart_id: str, draw: Callable[[str, bool], str]) -> str:
    """Both layouts of a chart, wide then narrow (``draw(id, narrow)``); static/charts.css shows the one that fits."""
    return "\n".join(draw(f"{chart_id}-narrow" if narrow else chart_id, narrow) for narrow in (False, True))


def _open(
    chart_id: str, title: str, desc: str, width: int, height: int, narrow: bool, body: Iterable[str]
) -> list[str]:
    """A chart's opening: the <svg> of its layout, named and described, then ``body`` (its defs and legend)."""
    layout = "narrow" if narrow else "wide"
    return [
        f'<svg class="chart chart-{layout}" id="{chart_id}" role="img" viewBox="0 0 {width} {height}" '
        f'aria-labelledby="{chart_id}-title" aria-describedby="{chart_id}-desc" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{chart_id}-title">{escape(title)}</title>',
        f'<desc id="{chart_id}-desc">{escape(desc)}</desc>',
        *body,
    ]


@dataclass(frozen=True)
class _Plot:
    """The area inside a chart's axes (the scatter plot's and the line chart's), in the chart's units."""

    left: int
    right: int
    top: int
    bottom: int

    def grid(
        self, x_ticks: Iterable[tuple[float, str | None]], y_ticks: Iterable[tuple[float, str]], y_tick_gap: int
    ) -> list[str]:
        """A gridline at each tick, with its label below the plot (x; None: no label) or left of it (y)."""
        out = []
        for gx, label in x_ticks:
            out.append(f'<line x1="{_num(gx)}" y1="{self.top}" x2="{_num(gx)}" y2="{self.bottom}" class="grid"/>')
            if label is not None:
                out.append(
                    f'<text x="{_num(gx)}" y="{self.bottom + 18}" class="tick" text-anchor="middle">{label}</text>'
                )
        for gy, label in y_ticks:
            out.append(f'<line x1="{self.left}" y1="{_num(gy)}" x2="{self.right}" y2="{_num(gy)}" class="grid"/>')
            out.append(
                f'<text x="{self.left - y_tick_gap}" y="{_num(gy + 4)}" class="tick" text-anchor="end">{label}</text>'
            )
        return out

    def axis_labels(self, x_label: str, y_label: str, width: int, height: int, narrow: bool, y_x: int) -> list[str]:
        """The axes' names: x under the ticks, y turned up the left edge at ``y_x``."""
        # The narrow layout centres the x label on the whole width: it is about as wide as the chart.
        return [
            f'<text x="{_num(width / 2 if narrow else (self.left + self.right) / 2)}" y="{height - 14}" '
            f'class="axis-label" text-anchor="middle">{escape(x_label)}</text>',
            f'<text transform="translate({y_x} {_num((self.top + self.bottom) / 2)}) rotate(-90)" class="axis-label" '
            f'text-anchor="middle">{escape(y_label)}</text>',
        ]


def _patterns(chart_id: str, series: Sequence[Series]) -> str:
    tiles = "".join(
        f'<pattern id="{chart_id}-{s.key}" class="series-{s.key}" width="8" height="8" patternUnits="userSpaceOnUse">'
        f'<rect width="8" height="8" class="fill"/>{PATTERNS[s.pattern]}</pattern>'
        for s in series
    )
    return f"<defs>{tiles}</defs>"


def _legend(items: Sequence[tuple[str, str, int]], width: int) -> tuple[list[str], int]:
    """Lay out legend entries (key markup at the origin, label, key width) in lines; return them and their bottom."""
    out: list[str] = []
    x, y = 0.0, 0
    for key, label, key_width in items:
        wide = sum(unicodedata.east_asian_width(c) in "WF" for c in label)  # a Chinese character: a full em
        size = key_width + 6 + CHAR * (len(label) - wide) + 13 * wide
        if x and x + size > width:
            x, y = 0.0, y + 20
        out.append(
            f'<g transform="translate({_num(x)} {y})">{key}'
            f'<text x="{key_width + 6}" y="15" class="legend">{escape(label)}</text></g>'
        )
        x += size + 18
    return out, y + 20


def stacked_bars(
    chart_id: str, title: str, desc: str, series: Sequence[Series], rows: Sequence[BarRow], *, label_width: int = 250
) -> str:
    """Horizontal bars, each split into its series' shares of the bar's total (all bars 100% long), in both layouts."""
    bars = [_segments(series, row) for row in rows]
    return _layouts(chart_id, lambda id_, narrow: _stacked_bars(id_, title, desc, series, bars, label_width, narrow))


@dataclass(frozen=True)
class _Bar:
    """A bar as both layouts draw it: its label, escaped, and each segment's series, start and end as shares
    of the bar (whole numbers over ``total``), with its tooltip, escaped."""

    label: str
    total: int
    segments: tuple[tuple[Series, int, int, str], ...]


def _segments(series: Sequence[Series], row: BarRow) -> _Bar:
    """The segments of one bar, worked out once for the wide and the narrow layout (and in whole numbers: at
    a thousand models, fractions for each segment were most of the charts page)."""
    total = sum(row.values)
    segments = []
    start = 0
    for s, value in zip(series, row.values, strict=True):
        if not value:
            continue
        tip = f"{row.label}: {s.label} {formats.percent(value, total)} ({value:,})"
        segments.append((s, start, start + value, escape(tip)))
        start += value
    return _Bar(escape(row.label), total, tuple(segments))


def _stacked_bars(
    chart_id: str,
    title: str,
    desc: str,
    series: Sequence[Series],
    bars: Sequence[_Bar],
    label_width: int,
    narrow: bool,
) -> str:
    width = 900
    if narrow:
        # Each label on a line of its own above its bar, and the bars the whole width.
        width, label_width = NARROW, 0
        row_height, bar_height, bar_top = 32, 12, 15
    else:
        row_height, bar_height, bar_top = 20, 13, 0
    left, right = max(label_width, 16), width - 20
    span = right - left
    legend, legend_bottom = _legend(
        [
            (f'<rect y="2" width="22" height="14" fill="url(#{chart_id}-{s.key})" class="swatch"/>', s.label, 22)
            for s in series
        ],
        width,
    )
    top = legend_bottom + 36
    bottom = top + row_height * len(bars) - (row_height - bar_top - bar_height)
    height = bottom + 34
    out = _open(chart_id, title, desc, width, height, narrow, [_patterns(chart_id, series), *legend])
    # Gridlines and the percent axis, above and below the bars.
    for percent in range(0, 101, 25):
        gx = left + span * percent / 100
        out.append(f'<line x1="{_num(gx)}" y1="{top - 6}" x2="{_num(gx)}" y2="{bottom}" class="grid"/>')
        for ty in (top - 12, bottom + 16):
            out.append(f'<text x="{_num(gx)}" y="{ty}" class="tick" text-anchor="middle">{percent}%</text>')
    for number, bar in enumerate(bars):
        y = top + number * row_height
        if narrow:
            out.append(f'<text x="{left}" y="{y + 11}" class="label">{bar.label}</text>')
        else:
            out.append(
                f'<text x="{left - 8}" y="{y + bar_height - 2}" class="label" text-anchor="end">{bar.label}</text>'
            )
        for s, start, end, tip in bar.segments:
            x0, w = left + start / bar.total * span, (end - start) / bar.total * span
            out.append(
                f'<rect x="{_num(x0)}" y="{y + bar_top}" width="{_num(w)}" height="{bar_height}" '
                f'fill="url(#{chart_id}-{s.key})" class="segment"><title>{tip}</title></rect>'
            )
    out.append("</svg>")
    return "\n".join(out)


def _decade_label(exponent: int) -> str:
    """10³ → 1K, 10⁷ → 10M: the way parameter counts are spoken."""
    for power, suffix in ((9, "B"), (6, "M"), (3, "K")):
        if exponent >= power:
            return f"{10 ** (exponent - power)}{suffix}"
    return str(10**exponent)


def _decades(values: Sequence[int]) -> tuple[int, int]:
    low = math.floor(math.log10(min(values)))
    high = math.ceil(math.log10(max(values)))
    return low, max(high, low + 1)


def log_scatter(
    chart_id: str,
    title: str,
    desc: str,
    points: Sequence[Point],
    *,
    x_label: str,
    y_label: str,
    slope: int,
    line_label: str,
    marker_labels: tuple[str, str],
) -> str:
    """Points on log-log axes with the line y = slope · x, each paired with a hollow marker below, both layouts."""
    axes = (x_label, y_label)
    return _layouts(
        chart_id,
        lambda id_, narrow: _log_scatter(id_, title, desc, points, axes, slope, line_label, marker_labels, narrow),
    )


def _log_scatter(
    chart_id: str,
    title: str,
    desc: str,
    points: Sequence[Point],
    axes: tuple[str, str],
    slope: int,
    line_label: str,
    marker_labels: tuple[str, str],
    narrow: bool,
) -> str:
    width, height = (NARROW, 480) if narrow else (900, 600)
    filled, hollow = marker_labels
    legend, legend_bottom = _legend(
        [
            ('<circle cx="8" cy="12" r="4.5" class="point"/>', filled, 12),
            ('<circle cx="8" cy="12" r="4.5" class="point hollow"/>', hollow, 12),
            ('<line x1="0" y1="12" x2="28" y2="12" class="rule"/>', line_label, 28),
        ],
        width,
    )
    plot = _Plot((56 if narrow else 78), width - (16 if narrow else 24), legend_bottom + 38, height - 58)
    left, right, top, bottom = plot.left, plot.right, plot.top, plot.bottom
    xs = [p.x for p in points]
    ys = [p.y for p in points] + [p.low for p in points if p.low]
    x0, x1 = _decades(xs)
    y0, y1 = _decades(ys)

    def px(value: float) -> float:
        return left + (math.log10(value) - x0) / (x1 - x0) * (right - left)

    def py(value: float) -> float:
        return bottom - (math.log10(value) - y0) / (y1 - y0) * (bottom - top)

    out = _open(chart_id, title, desc, width, height, narrow, legend)
    # Decade gridlines and labels on both axes.
    out += plot.grid(
        [(px(10**e), _decade_label(e)) for e in range(x0, x1 + 1)],
        [(py(10**e), _decade_label(e)) for e in range(y0, y1 + 1)],
        8,
    )
    out += plot.axis_labels(*axes, width, height, narrow, 16)
    # The rule y = slope · x, clipped to the plot.
    start = max(10.0**x0, 10.0**y0 / slope)
    end = min(10.0**x1, 10.0**y1 / slope)
    if start < end:
        out.append(
            f'<line x1="{_num(px(start))}" y1="{_num(py(slope * start))}" x2="{_num(px(end))}" '
            f'y2="{_num(py(slope * end))}" class="rule"/>'
        )
    for p in points:
        cx, cy = px(p.x), py(p.y)
        group = [f"<g><title>{escape(p.tooltip)}</title>"]
        if p.low:
            ly = py(p.low)
            group.append(f'<line x1="{_num(cx)}" y1="{_num(cy)}" x2="{_num(cx)}" y2="{_num(ly)}" class="gap"/>')
            group.append(f'<circle cx="{_num(cx)}" cy="{_num(ly)}" r="4" class="point hollow"/>')
        group.append(f'<circle cx="{_num(cx)}" cy="{_num(cy)}" r="4" class="point"/>')
        group.append("</g>")
        out.append("".join(group))
    # Labels last, on top of every marker, each moved up or down a line when it would overlap another.
    # A label that finds no free place is left out (the table lists every model).
    placed: list[tuple[float, float, float]] = []  # left, right, baseline
    # The narrow layout puts a label only right of its point and at most a line away, so that it stays
    # beside its point: on a phone a label far from its point, across others, would mislead.
    char, line, shifts = (CHAR * 12 / 13, 15, 3) if narrow else (6.4, 13, 5)
    for p in sorted((p for p in points if p.labelled), key=lambda p: py(p.y)):
        cx, cy = px(p.x), py(p.y)
        size = char * len(p.label)
        left_side = cx + 8 + size > width
        start = cx - 8 - size if left_side else cx + 8
        if start < 0 or (narrow and left_side):
            continue
        for shift in (0, line, -line, 2 * line, -2 * line)[:shifts]:
            y = cy + 4 + shift
            if all(start > r or start + size < lft or abs(y - base) >= line for lft, r, base in placed):
                placed.append((start, start + size, y))
                anchor = ' text-anchor="end"' if left_side else ""
                tx = cx - 8 if left_side else cx + 8
                out.append(f'<text x="{_num(tx)}" y="{_num(y)}" class="point-label"{anchor}>{escape(p.label)}</text>')
                break
    out.append("</svg>")
    return "\n".join(out)


# Line charts (training memory against the sequence length) ------------------------------------------

# Each line's dash pattern, so that lines differ without their color too (CSS: .line-<n> colors them).
DASHES = ("", "9 4", "2 3", "12 3 3 3", "5 5")


@dataclass(frozen=True)
class Line:
    """One line: its name and its (x, y) points, x increasing."""

    label: str
    points: tuple[tuple[int, int], ...]
    tooltips: tuple[str, ...]  # one per point


def _nice_step(top: float, ticks: int) -> float:
    """A step of 1, 2 or 5 times a power of ten that covers ``top`` in at most ``ticks`` steps."""
    power = 10 ** math.floor(math.log10(top / ticks)) if top > 0 else 1
    return next(power * m for m in (1, 2, 5, 10) if power * m * ticks >= top)


def line_chart(
    chart_id: str, title: str, desc: str, lines: Sequence[Line], *, x_label: str, y_label: str, y_scale: int
) -> str:
    """Lines on linear axes from 0, x ticks at the points, y ticks in ``y_scale`` units (2³⁰: GiB), both layouts."""
    axes = (x_label, y_label)
    return _layouts(chart_id, lambda id_, narrow: _line_chart(id_, title, desc, lines, axes, y_scale, narrow))


def _line_chart(
    chart_id: str, title: str, desc: str, lines: Sequence[Line], axes: tuple[str, str], scale: int, narrow: bool
) -> str:
    width, height = (NARROW, 440) if narrow else (900, 520)
    sample = '<line x1="0" y1="12" x2="28" y2="12" class="line line-{n}"{dash}/>'
    legend, legend_bottom = _legend(
        [(sample.format(n=n, dash=_dash(n)), line.label, 28) for n, line in enumerate(lines)], width
    )
    xs = sorted({x for line in lines for x, _ in line.points})
    step = _nice_step(max(y for line in lines for _, y in line.points) / scale, 6 if narrow else 8)
    top_value = step * math.ceil(max(y for line in lines for _, y in line.points) / scale / step)
    plot = _Plot((44 if narrow else 64), width - (14 if narrow else 24), legend_bottom + 30, height - 58)
    left, right, top, bottom = plot.left, plot.right, plot.top, plot.bottom

    def px(x: float) -> float:
        return left + (x - xs[0]) / (xs[-1] - xs[0]) * (right - left)

    def py(y: float) -> float:
        return bottom - y / scale / top_value * (bottom - top)

    out = _open(chart_id, title, desc, width, height, narrow, legend)
    every = 2 if narrow and len(xs) > 6 else 1  # on a phone every other tick label, the last one always
    out += plot.grid(
        [(px(x), str(x) if (len(xs) - 1 - number) % every == 0 else None) for number, x in enumerate(xs)],
        [(py(n * step * scale), f"{n * step:g}") for n in range(round(top_value / step) + 1)],
        6,
    )
    out += plot.axis_labels(*axes, width, height, narrow, 14)
    for n, line in enumerate(lines):
        path = " ".join(f"{_num(px(x))},{_num(py(y))}" for x, y in line.points)
        group = [f'<g class="series"><polyline points="{path}" class="line line-{n}"{_dash(n)}/>']
        for (x, y), tip in zip(line.points, line.tooltips, strict=True):
            group.append(
                f'<circle cx="{_num(px(x))}" cy="{_num(py(y))}" r="3.5" class="point line-{n}">'
                f"<title>{escape(tip)}</title></circle>"
            )
        out.append("".join(group) + "</g>")
    out.append("</svg>")
    return "\n".join(out)


def _dash(n: int) -> str:
    pattern = DASHES[n % len(DASHES)]
    return f' stroke-dasharray="{pattern}"' if pattern else ""
