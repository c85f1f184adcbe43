"""The architecture figures in Chromium, a model's, a family's and a comparison's: they fit a phone, their labels read, links focus."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import PHONE, WIDE, axe_violations
from .test_accessibility import axe_report

MIN_LABEL = 11  # px: the smallest readable label
MAX_LABEL = 16  # px: on a wide screen a label grows at most to the body text's size
# BERT-Base; ALBERT's shared layer and factorized embeddings; a masked-LM decoder tied to the token table.
CARDS = ("bert-base-uncased", "albert-base-v2", "bert-base-uncased-pretraining")
# Family figures in symbols, whose formulas are the widest texts: MobileBERT's layer, DeBERTa-v2's, Longformer's;
# XLM-RoBERTa XL's pre-norm layer, whose second skip leaves right below the first sum.
FAMILIES = ("mobilebert", "deberta-v2", "longformer", "albert", "xlm-roberta-xl")

# The figure's box, each <text>'s rendered size (computed size times the viewBox's scale) and box, and
# whether each link takes the keyboard's focus.
MEASURE = """(selector) => {
    // The layout the screen shows: the wide one from 48rem on, else the narrow one.
    const shown = [...document.querySelectorAll(selector || 'figure#architecture svg.diagram')]
        .filter(s => s.getBoundingClientRect().width > 0);
    const svg = shown[0], box = svg.getBoundingClientRect();
    const top = box.top + window.scrollY;  // on the page: focusing the links below scrolls it
    const texts = [...svg.querySelectorAll('text')].map(t => {
        const m = t.getScreenCTM(), r = t.getBoundingClientRect();
        return {text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b),
                left: r.left, right: r.right};
    });
    const links = [...svg.querySelectorAll('a')];
    const focused = links.filter(a => { a.focus(); return document.activeElement === a; }).length;
    return {left: box.left, right: box.right, top, page: document.documentElement.scrollWidth, texts,
            links: links.length, focused, shown: shown.map(s => s.classList[1]), width: box.width};
}"""


@pytest.mark.parametrize("width", [PHONE, WIDE])
@pytest.mark.parametrize("edition", ["", "zh/"])
def test_the_figure_fits_reads_and_takes_the_keyboard(
    open_page: Any, edition_url: str, width: int, edition: str
) -> None:
    paths = [f"models/{card}/index.html" for card in CARDS] + [f"families/{name}/index.html" for name in FAMILIES]
    for path in paths:
        page = open_page(width)
        page.goto(f"{edition_url}{edition}{path}", wait_until="load")
        found = page.evaluate(MEASURE)
        where = f"{edition}{path} at {width} px"
        assert found["left"] >= 0 and found["right"] <= width and found["page"] <= width, where
        small = [t for t in found["texts"] if t["size"] < MIN_LABEL - 0.01]
        assert small == [], f"{where}: labels under {MIN_LABEL} px: {small[:5]}"
        large = [t for t in found["texts"] if t["size"] > MAX_LABEL + 0.01]
        assert large == [], f"{where}: labels over {MAX_LABEL} px: {large[:5]}"
        outside = [t for t in found["texts"] if t["left"] < found["left"] - 1 or t["right"] > found["right"] + 1]
        assert outside == [], f"{where}: labels cut off: {outside[:5]}"
        assert found["links"] >= 2 and found["focused"] == found["links"], where  # a figure of two blocks at least
        # One layout at a time: the narrow one on a phone; on a wide screen the wide one, 50rem across.
        assert found["shown"] == ["diagram-narrow" if width == PHONE else "diagram-wide"], where
        if width == WIDE:
            assert found["width"] == 800, where


# BERT to ALBERT in both editions: the figures that differ most in shape. BERT-Large to MobileBERT, in the
# whole catalog's English build only: the most steps in a layer.
COMPARISONS = [
    ("edition", "diffs/bert-base-uncased--albert-base-v2/index.html"),
    ("edition", "zh/diffs/bert-base-uncased--albert-base-v2/index.html"),
    ("site", "diffs/bert-large-uncased--mobilebert-uncased/index.html"),
]


@pytest.mark.parametrize("width", [PHONE, WIDE])
@pytest.mark.parametrize(("build", "path"), COMPARISONS)
def test_a_comparisons_two_figures_fit_read_and_sit_side_by_side_on_a_wide_screen(
    open_page: Any, edition_url: str, site_url: str, width: int, build: str, path: str
) -> None:
    page = open_page(width)
    page.goto(f"{edition_url if build == 'edition' else site_url}{path}", wait_until="load")
    where = f"{path} at {width} px"
    a, b = (page.evaluate(MEASURE, f"figure#architecture-{side} svg.diagram") for side in "ab")
    for found in (a, b):
        assert found["left"] >= 0 and found["right"] <= width and found["page"] <= width, where
        sizes = [t["size"] for t in found["texts"]]
        assert min(sizes) >= MIN_LABEL - 0.01 and max(sizes) <= MAX_LABEL + 0.01, (where, min(sizes), max(sizes))
        assert found["links"] >= 2 and found["focused"] == found["links"], where
    if width == WIDE:  # side by side, A on the left, each block level with its partner or a dotted box
        assert a["top"] == b["top"] and a["right"] <= b["left"], where
        levels = [page.evaluate(LEVELS, f"figure#architecture-{side} svg.diagram") for side in "ab"]
        assert levels[0] == levels[1], where
    else:  # one below the other, A first
        assert a["top"] < b["top"] and a["left"] == b["left"], where
    assert page.locator("svg.diagram .lacked .bar").count() >= 1, where
    if "albert-base-v2" in path:  # a shared layer's heading: two lines, its count clear of its title
        title, total, *below = page.evaluate(HEADING, "figure#architecture-b a.block[href$='#d-layer'] text")
        assert total["line"] == title["line"] and total["left"] > title["right"] and len(below) == 1, where


# Where each block of a figure starts on the screen, and each dotted box facing a block only the other has.
LEVELS = """(selector) => [...document.querySelector(selector).querySelectorAll('a.block > rect:first-child, rect.absent')]
    .map(r => Math.round(r.getBoundingClientRect().top)).sort((x, y) => x - y)"""
HEADING = """(selector) => [...document.querySelectorAll(selector)].map(t => {
    const r = t.getBoundingClientRect(); return {line: t.getAttribute('y'), left: r.left, right: r.right}; })"""


def test_the_printed_figure_is_black_on_white(open_page: Any, edition_url: str) -> None:
    page = open_page(WIDE)
    page.goto(f"{edition_url}models/bert-base-uncased/index.html", wait_until="load")
    page.emulate_media(media="print")
    colours = page.evaluate(
        """() => { const svg = document.querySelector('svg.diagram-wide');  // on paper: the wide one alone
            const shown = [...document.querySelectorAll('svg.diagram')].map(s => getComputedStyle(s).display);
            const lines = [...svg.querySelectorAll('.skip-line, .join path, .join circle')].map(p => getComputedStyle(p));
            return {shown, text: [...new Set([...svg.querySelectorAll('text')].map(t => getComputedStyle(t).fill))],
                    boxes: [...new Set([...svg.querySelectorAll('.box, .frame')].map(r => getComputedStyle(r).fill))],
                    lines: [...new Set(lines.map(s => `${s.display} ${s.stroke}`))]}; }"""
    )
    # The sums and their skips too: drawn, in black (the page's .skip link is hidden in print; these are not).
    assert colours == {
        "shown": ["block", "none"],
        "text": ["rgb(0, 0, 0)"],
        "boxes": ["rgb(255, 255, 255)"],
        "lines": ["inline rgb(0, 0, 0)"],
    }


# A family's figures with one switch set the other way, opened: MobileBERT's six, DeBERTa-v2's relative table.
VARIANT_FAMILIES = ("mobilebert", "deberta-v2")
OPEN_VARIANTS = "() => document.querySelectorAll('details.diagram-variant').forEach(d => { d.open = true; })"
MEASURE_VARIANTS = """() => [...document.querySelectorAll('details.diagram-variant svg.diagram')]
  .filter(svg => svg.getBoundingClientRect().width > 0).map(svg => {
    const box = svg.getBoundingClientRect();
    const sizes = [...svg.querySelectorAll('text')].map(t =>
        parseFloat(getComputedStyle(t).fontSize) * Math.hypot(svg.getScreenCTM().a, svg.getScreenCTM().b));
    const links = [...svg.querySelectorAll('a')];
    const focused = links.filter(a => { a.focus(); return document.activeElement === a; }).length;
    return {id: svg.getAttribute('aria-labelledby'), left: box.left, right: box.right, smallest: Math.min(...sizes),
            links: links.length, focused, page: document.documentElement.scrollWidth};
})"""


@pytest.mark.parametrize("edition", ["", "zh/"])
def test_a_familys_switch_figures_open_fit_a_phone_and_take_the_keyboard(
    open_page: Any, edition_url: str, edition: str
) -> None:
    for name in VARIANT_FAMILIES:
        page = open_page(PHONE)
        page.goto(f"{edition_url}{edition}families/{name}/index.html", wait_until="load")
        closed = page.evaluate("() => [...document.querySelectorAll('details.diagram-variant')].map(d => d.open)")
        assert closed and not any(closed), name  # folded until a reader opens one
        page.evaluate(OPEN_VARIANTS)
        for found in page.evaluate(MEASURE_VARIANTS):
            where = f"{edition}{name}: {found['id']} at {PHONE} px"
            assert found["left"] >= 0 and found["right"] <= PHONE and found["page"] <= PHONE, where
            assert found["smallest"] >= MIN_LABEL - 0.01, where
            assert found["links"] >= 2 and found["focused"] == found["links"], where


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_familys_opened_switch_figures_have_no_axe_violations(open_page: Any, edition_url: str, scheme: str) -> None:
    for name in VARIANT_FAMILIES:
        page = open_page(WIDE, scheme)
        page.goto(f"{edition_url}families/{name}/index.html", wait_until="load")
        page.evaluate(OPEN_VARIANTS)
        violations = axe_violations(page, scheme)
        assert not violations, f"axe-core on {name}'s opened figures ({scheme})" + axe_report(violations)
