"""Charts that read on a phone: every label at 11 px or more, inside the screen, at every width and in print."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from .conftest import PHONE

MIN_LABEL = 11  # px: the smallest readable label
MAX_LABEL = 16  # px: on a wide screen a label grows at most to the body text's size
A4 = 718  # px: the printable width of A4 at Chromium's default margins (210 mm less 2 × 10 mm, at 96 px per inch)

# For every chart shown: its box, and each <text>'s rendered font size and box. The size is the computed
# font size times the scale from the text's user units to the screen (its getScreenCTM: the viewBox's
# scaling and any rotation of the text itself).
MEASURE = """() => [...document.querySelectorAll('figure')].filter(f => f.querySelector('svg.chart')).map(figure => {
    const shown = [...figure.querySelectorAll('svg.chart')].filter(svg => svg.getClientRects().length > 0);
    return {figure: figure.querySelector('svg.chart').id, shown: shown.map(svg => {
        const box = svg.getBoundingClientRect();
        return {id: svg.id, left: box.left, right: box.right, texts: [...svg.querySelectorAll('text')].map(t => {
            const m = t.getScreenCTM(), r = t.getBoundingClientRect();
            return {text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b),
                    left: r.left, right: r.right};
        })};
    })};
})"""


def chart_pages(site: Path) -> list[str]:
    """Every page of the build that draws a chart."""
    return sorted(
        p.relative_to(site).as_posix() for p in site.rglob("*.html") if '<svg class="chart' in p.read_text("utf-8")
    )


def measure(page: Any, url: str) -> list[dict[str, Any]]:
    page.goto(url, wait_until="load")
    figures: list[dict[str, Any]] = page.evaluate(MEASURE)
    return figures


# Each page's charts, in its order.
FIGURES = {
    "charts/index.html": ["chart-shares", "chart-rule", "chart-memory"],
    "compare/index.html": ["chart-methods"],
}


def test_the_charts_page_and_the_comparison_are_the_pages_with_charts(built_site: Path) -> None:
    assert chart_pages(built_site) == sorted(FIGURES)


@pytest.mark.parametrize("width", [PHONE, 360, 600, 959, 960, 1366])
def test_every_chart_label_is_readable_and_on_screen(
    open_page: Any, site_url: str, built_site: Path, width: int
) -> None:
    """One layout of each chart is shown; its labels are at least 11 px, inside the chart and the screen."""
    page = open_page(width)
    for path in chart_pages(built_site):
        figures = measure(page, site_url + path)
        assert [f["figure"] for f in figures] == FIGURES[path], path
        for figure in figures:
            assert len(figure["shown"]) == 1, f"{path} at {width} px: {figure['figure']} shows {figure['shown']}"
            chart = figure["shown"][0]
            expected = "-narrow" if width < 960 else ""
            assert chart["id"] == figure["figure"] + expected, f"{path} at {width} px: {chart['id']}"
            assert chart["left"] >= 0 and chart["right"] <= width, f"{path} at {width} px: {chart}"
            assert len(chart["texts"]) >= 15, chart["id"]  # legend, ticks, axis and model labels
            small = [t for t in chart["texts"] if t["size"] < MIN_LABEL - 0.01]
            assert small == [], f"{path} at {width} px, {chart['id']}: labels under {MIN_LABEL} px: {small[:5]}"
            large = [t for t in chart["texts"] if t["size"] > MAX_LABEL]
            assert large == [], f"{path} at {width} px, {chart['id']}: labels over {MAX_LABEL} px: {large[:5]}"
            outside = [t for t in chart["texts"] if t["left"] < chart["left"] - 1 or t["right"] > chart["right"] + 1]
            assert outside == [], f"{path} at {width} px, {chart['id']}: labels cut off: {outside[:5]}"
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{path} scrolls sideways"


def test_the_charts_do_not_scroll_inside_a_box(open_page: Any, site_url: str, built_site: Path) -> None:
    """At 390 px no chart sits in a box that scrolls sideways: the chart is as wide as its column, or narrower."""
    page = open_page(PHONE)
    for path in chart_pages(built_site):
        page.goto(site_url + path)
        boxes = page.evaluate(
            """() => [...document.querySelectorAll('svg.chart')].filter(s => s.getClientRects().length).map(svg => {
                let e = svg.parentElement;
                while (e && e.scrollWidth <= e.clientWidth) e = e.parentElement;
                return e && e !== document.documentElement && e !== document.body ? e.outerHTML.slice(0, 80) : null;
            })"""
        )
        assert boxes == [None] * len(FIGURES[path]), f"{path}: charts inside a sideways-scrolling box: {boxes}"


def test_print_shows_the_wide_charts_within_an_a4_page(open_page: Any, site_url: str, built_site: Path) -> None:
    page = open_page(A4)
    page.emulate_media(media="print")
    for path in chart_pages(built_site):
        for figure in measure(page, site_url + path):
            [chart] = figure["shown"]
            assert chart["id"] == figure["figure"], path  # the wide layout: labels beside the bars, every label
            assert chart["left"] >= 0 and chart["right"] <= A4, chart
            sizes = [t["size"] for t in chart["texts"]]
            assert min(sizes) >= 9.5, f"{chart['id']}: smallest printed label {min(sizes):.1f} px"  # 7 pt and more


def test_each_chart_is_followed_by_its_table(built_site: Path) -> None:
    """The numbers stay readable as text: after each chart's figure, a table with a caption, before the next chart."""
    for path in chart_pages(built_site):
        html = (built_site / path).read_text(encoding="utf-8")
        parts = re.split(r'<figure class="chart-figure">', html)[1:]
        assert len(parts) == len(FIGURES[path]), path
        for part in parts:
            figure, after = part.split("</figure>", 1)
            assert (
                figure.count('<svg class="chart chart-wide"') == 1
                and figure.count('<svg class="chart chart-narrow"') == 1
            )
            assert re.match(
                r'\s*(<p>.*?</p>\s*)*<div class="scroll" role="region"[^>]*>\s*<table class="\w+ wide"[^>]*>\s*<caption>',
                after,
                re.S,
            ), path
