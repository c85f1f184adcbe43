"""The frame and the tables on a phone and in print: header, no sideways page, counts in view, deep links."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, card_by_id
from generator.counting.compute import count_compute
from generator.site.formats import binary
from generator.site.views import START_HERE

from .conftest import PHONE, WIDE, one_of_each
from .test_calculator import read_result

# The header's sections, as a reader sees them.
SECTIONS = {
    "Models": "index.html",
    "Families": "families/index.html",
    "Compare": "compare/index.html",
    "Calculator": "calculator/index.html",
    "Charts": "charts/index.html",
    "Errata": "errata/index.html",
    "Exercises": "exercises/index.html",
    "Handout": "handout/index.html",
}


def site_pages(site: Path) -> list[str]:
    """Every HTML page of the build but 404.html (whose links are absolute; see test_not_found_has_the_header)."""
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.name != "404.html")


# A phone; a tablet held upright, just below where tables stop stacking (768 px); a laptop, where the
# table of contents takes a column beside the text (from 1,200 px).
SCREENS = (PHONE, 700, 1280)


def page_kind(path: str) -> str:
    """Pages of one kind share a template: a model page's widest rows are its family's tensor names."""
    parts = path.split("/")
    if parts[0] == "models" and len(parts) == 3:
        return f"model of {card_by_id(parts[1]).family.name}"
    return "comparison of two models" if parts[0] == "diffs" else path


def test_no_page_scrolls_sideways(open_page: Any, site_url: str, built_site: Path) -> None:
    """A page of every kind, at each of SCREENS: the page is never wider than the screen.

    Every page that is one of a kind is opened; of the model pages, one of each family, and one
    comparison of two models, drawn with a fixed seed (tests/browser/conftest.py).
    Each page is loaded once and the window resized to each width, as a tablet turned sideways would
    be: the layout is CSS alone (no script of the site reads the window's width), so a resize lays the
    page out as a load at that width does, at a third of the cost of loading every page three times.
    """
    page = open_page(SCREENS[0])
    wide = {}
    sample = one_of_each(site_pages(built_site), page_kind)
    assert len(sample) >= 20
    for path in [*sample, "404.html"]:  # 404.html's links lead off the subpath; its layout is checked
        page.set_viewport_size({"width": SCREENS[0], "height": 800})
        page.goto(site_url + path, wait_until="load")
        for screen in SCREENS:
            page.set_viewport_size({"width": screen, "height": 800})
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > screen:
                wide[f"{path} at {screen} px"] = width
    assert wide == {}, f"pages wider than the screen: {wide}"


def test_a_calculator_message_with_a_long_number_wraps_on_a_phone(open_page: Any, site_url: str) -> None:
    """A 61-digit hidden size is refused with the number in the message: it wraps, and the page stays
    as wide as the phone (it was 708 px wide at 390)."""
    page = open_page(PHONE)
    page.goto(f"{site_url}calculator/index.html?family=bert&head=base&hidden_size=1{'0' * 60}")
    page.wait_for_selector(".calc-problems")
    assert "1" + "0" * 60 in page.locator("body").inner_text().replace(",", "")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE


def test_no_script_of_the_site_reads_the_window_s_width(built_site: Path) -> None:
    """What lets test_no_page_scrolls_sideways resize a page instead of loading it again: a script that laid
    a page out by the window's width would lay it out once, at load, and no resize would show it."""
    scripts = {p.name: p.read_text(encoding="utf-8") for p in (built_site / "static").glob("*.js")}
    assert scripts, "the built site has no scripts to check"
    readers = {name for name, code in scripts.items() if re.search(r"innerWidth|outerWidth|matchMedia|resize", code)}
    assert readers == set()


def test_the_header_links_every_section_on_every_page(built_site: Path) -> None:
    for path in site_pages(built_site):
        html = (built_site / path).read_text(encoding="utf-8")
        header = re.search(r'<header class="site">(.*?)</header>', html, re.S)
        assert header, path
        root = "../" * path.count("/")
        links = {label: href for href, label in re.findall(r'<li><a href="([^"]+)"[^>]*>([^<]+)</a></li>', header[1])}
        assert links == {label: root + target for label, target in SECTIONS.items()}, path
        for label, target in SECTIONS.items():
            assert (built_site / target).is_file(), f"{path}: the header's {label} leads nowhere"
        assert f'action="{root}search/index.html"' in header[1], path
        current = re.findall(r'<a href="([^"]+)" aria-current="(page|true)">', header[1])
        section = path.split("/")[0]
        expected = {
            "index.html": [(root + "index.html", "page")],
            "models": [(root + "index.html", "true")],
            "compare": [(root + "compare/index.html", "page")],
            "diffs": [(root + "compare/index.html", "true")],
            "search": [],
        }.get(section, [(root + f"{section}/index.html", "page" if path == f"{section}/index.html" else "true")])
        assert current == expected, path


def test_the_header_links_work_from_a_page(open_page: Any, site_url: str) -> None:
    page = open_page(PHONE)
    page.goto(site_url + "models/bert-base-uncased/index.html")
    for label, target in SECTIONS.items():
        link = page.get_by_role("navigation", name="Site").get_by_role("link", name=label, exact=True)
        assert link.is_visible(), label
        response = page.request.get(link.evaluate("a => a.href"))
        assert response.ok, f"{label}: HTTP {response.status}"
        assert response.url.endswith(target), response.url


@pytest.mark.parametrize("width", [PHONE, WIDE])
def test_the_header_search_shows_its_whole_hint(open_page: Any, site_url: str, width: int) -> None:
    """The placeholder says what can be searched; at 390 px it was cut to "model, family, t"."""
    page = open_page(width)
    page.goto(site_url + "index.html")
    room, needed = page.evaluate(
        """() => {
            const box = document.getElementById("site-search-q"), style = getComputedStyle(box);
            const text = document.createElement("span");
            text.style.font = style.font;
            text.style.whiteSpace = "pre";
            text.textContent = box.placeholder;
            document.body.append(text);
            const width = text.getBoundingClientRect().width;
            text.remove();
            return [box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight), width];
        }"""
    )
    assert needed <= room, f"the hint needs {needed:.0f} px, the box has {room:.0f} at {width} px"
    button = page.locator(".site-search button").bounding_box()
    assert button is not None and button["x"] + button["width"] <= width  # Go stays on the screen


def test_not_found_has_the_header_search_and_every_model(built_site: Path) -> None:
    html = (built_site / "404.html").read_text(encoding="utf-8")
    assert '<nav class="sections" aria-label="Site">' in html
    assert 'action="/search/index.html"' in html
    for card in (built_site / "models").glob("*/index.html"):
        assert f'<a href="/models/{card.parent.name}/">' in html, card.parent.name
    assert html.index("<h3>BERT</h3>") < html.index("<h3>ALBERT</h3>")  # grouped by family, BERT first


# The first rows of each kind of table on a model page, by CSS selector, and the model pages checked.
MODEL_PAGES = ["bert-base-uncased", "deberta-v3-base", "mobilebert-uncased", "modernbert-base", "transformer-big"]


@pytest.mark.parametrize("card_id", MODEL_PAGES)
def test_name_and_count_of_the_first_rows_are_on_screen(open_page: Any, site_url: str, card_id: str) -> None:
    """At 390 px, the first rows of every table with a count: name and count inside the viewport's width."""
    page = open_page(PHONE)
    page.goto(site_url + f"models/{card_id}/index.html")
    found = page.evaluate(
        """() => [...document.querySelectorAll('table')].filter(t => t.querySelector('tbody .count')).map(t => {
            const rows = [...t.querySelectorAll('tbody tr')].filter(r => r.querySelector('.count')).slice(0, 3);
            return rows.map(r => {
                const name = r.firstElementChild.getBoundingClientRect(), count = r.querySelector('.count').getBoundingClientRect();
                return {table: t.className, row: r.id || r.firstElementChild.textContent.trim().slice(0, 40),
                        name: [name.left, name.right], count: [count.left, count.right]};
            });
        }).flat()"""
    )
    assert len(found) >= 12, found  # symbols, derivation, tensors, memory: several tables of several rows
    outside = [
        r for r in found if r["name"][0] < 0 or r["count"][1] > PHONE or r["count"][0] < 0 or r["name"][1] > PHONE
    ]
    assert outside == [], f"rows whose name or count is off the screen at {PHONE} px: {outside}"
    tables = {r["table"] for r in found}
    assert {"symbols stack", "derivation stack", "tensors stack", "memory stack"} <= tables


# The other pages whose tables must show each row's name and count on a phone,
# with the tables each must have: a page that stopped marking its counts would otherwise pass.
TABLE_PAGES = {
    "index.html": {"start stack", "models wide"},
    "compare/index.html": {"compare wide", "memory wide", "lora-all wide", "methods wide"},
    "charts/index.html": {"shares wide", "rule wide"},
    "families/bert/index.html": {"tensors stack", "models stack"},
    "families/deberta-v2/index.html": {"tensors stack", "models stack"},
    # A comparison: its configs, parts and tensors stack (MobileBERT's names are the longest).
    "diffs/bert-large-uncased--mobilebert-uncased/index.html": {
        "diff-config stack",
        "diff-parts stack",
        "diff-tensors stack",
    },
}


@pytest.mark.parametrize("path", list(TABLE_PAGES))
def test_name_and_count_on_screen_on_the_other_pages(open_page: Any, site_url: str, path: str) -> None:
    """At 390 px, the first rows of every table of the index, comparison, family and model-against-model pages:
    name and count in view."""
    page = open_page(PHONE)
    page.goto(site_url + path)
    found = page.evaluate(
        """() => [...document.querySelectorAll('main table')].filter(t => t.querySelector('tbody tr > .count')).map(t => {
            const rows = [...t.querySelectorAll('tbody tr')].filter(r => r.querySelector(':scope > .count')).slice(0, 3);
            return rows.map(r => {
                const name = r.firstElementChild.getBoundingClientRect();
                const count = r.querySelector(':scope > .count').getBoundingClientRect();
                return {table: t.className, row: r.id || r.firstElementChild.textContent.trim().slice(0, 40),
                        name: [name.left, name.right], count: [count.left, count.right]};
            });
        }).flat()"""
    )
    assert TABLE_PAGES[path] <= {r["table"] for r in found}, found
    outside = [r for r in found if min(r["name"][0], r["count"][0]) < 0 or max(r["name"][1], r["count"][1]) > PHONE]
    assert outside == [], f"{path}: rows whose name or count is off the screen at {PHONE} px: {outside}"


def test_the_memory_by_length_table_shows_its_first_model_beside_each_length_on_a_phone(
    open_page: Any, site_url: str
) -> None:
    """At 390 px, the charts' table of training memory by sequence length, whose rows a number heads, keeps its
    first model's figures in view: a length takes no model name's width (it took 11rem, and the first
    figures ran 16 px off the screen)."""
    page = open_page(PHONE)
    page.goto(site_url + "charts/index.html")
    found = page.evaluate(
        """() => [...document.querySelectorAll('table.lengths tbody tr')].map(r => {
            const box = r.querySelector('td').getBoundingClientRect();
            return [r.firstElementChild.textContent.trim(), box.left, box.right];
        })"""
    )
    assert [length for length, _, _ in found] == [str(s) for s in range(64, 513, 64)], found
    off = [row for row in found if row[1] < 0 or row[2] > PHONE]
    assert off == [], f"lengths whose first figures are off the screen at {PHONE} px: {off}"


# The pages a student or a lecturer works through on a phone, each with the tables of figures it must
# have (a page whose tables went missing would pass the check below by having nothing to check). The
# exercises are read with every answer open, the calculator once it has counted BERT-Base.
READING_PAGES = {
    "exercises/index.html": {"derivation stack", "keras stack"},
    "errata/index.html": {"errata stack", "errata compute-errata stack"},
    "handout/index.html": {"handout-worked stack", "memory stack"},
    "diffs/index.html": {"diffs stack"},
    "calculator/index.html?family=bert&head=base": {"derivation stack", "subtotals stack", "symbols stack"},
    "models/mobilebert-uncased/index.html": {"derivation stack", "tensors stack", "compute stack"},
}
# Every figure in a table's cells: a count, a signed difference, a size in bytes (not a symbol's digit in a formula).
FIGURES_OFF_SCREEN = r"""(width) => [...document.querySelectorAll('main table')].filter(t => !t.classList.contains('wide')).map(t => {
    const off = [];
    for (const cell of t.querySelectorAll('td, th')) {
        const text = cell.textContent.trim();
        if (!/^[+\u2212-]?\d{1,3}(,\d{3})+\b|^[+\u2212-]?\d+$/.test(text)) continue;
        const range = document.createRange();
        range.selectNodeContents(cell);
        const box = range.getBoundingClientRect();
        if (box.width > 0 && (box.left < 0 || box.right > width)) off.push(text.slice(0, 30));
    }
    return {table: t.className, off: off};
})"""


@pytest.mark.parametrize("path", list(READING_PAGES))
def test_no_figure_of_a_table_is_off_a_phone_s_screen(open_page: Any, site_url: str, path: str) -> None:
    """At 390 px, every figure in every table of the pages people work through is inside the screen's width,
    without scrolling a box sideways. Only the tables marked wide (the index's, the comparison's, the
    charts'), which keep their name column in view as they scroll, are left to the checks above."""
    page = open_page(PHONE)
    page.goto(site_url + path)
    if path.startswith("calculator/"):
        read_result(page)
    page.evaluate("document.querySelectorAll('main details').forEach(d => { d.open = true; })")
    tables = page.evaluate(FIGURES_OFF_SCREEN, PHONE)
    assert READING_PAGES[path] <= {t["table"] for t in tables}, tables
    off = {t["table"]: t["off"] for t in tables if t["off"]}
    assert off == {}, f"{path}: figures off the screen at {PHONE} px: {off}"


def test_the_index_offers_bert_base_on_the_first_screen_of_a_phone(open_page: Any, site_url: str) -> None:
    """BERT-Base and BERT-Large open the "Start here" list, above the 24 compact BERTs."""
    page = open_page(PHONE, height=844)
    page.goto(site_url + "index.html")
    rows = page.locator("table.start tbody tr")
    listed = [
        href.split("/")[1] for href in rows.locator("th a").evaluate_all("as => as.map(a => a.getAttribute('href'))")
    ]
    assert listed == list(START_HERE)
    first = rows.first
    box = first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 844, f"BERT-Base's row is below the first screen: {box}"
    for i, card_id in enumerate(START_HERE[:2]):  # BERT-Base and BERT-Large, with transformers' totals
        total = json.loads((ROOT / "tests" / "reference" / f"{card_id}.json").read_text(encoding="utf-8"))["total"]
        assert rows.nth(i).locator(".count").inner_text() == f"{total:,}", card_id
    # Each family's link lands on its rows in the full table.
    page.locator("section[aria-labelledby=start-here] a[href='#family-albert']").click()
    assert page.evaluate("location.hash") == "#family-albert"


@pytest.mark.parametrize("family", ["bert", "mobilebert", "deberta-v2", "transformer"])
def test_the_calculators_symbols_do_not_scroll_on_a_phone(open_page: Any, site_url: str, family: str) -> None:
    """The symbols table stacks at 390 px: each symbol's value is beside it, nothing scrolls sideways."""
    page = open_page(PHONE)
    page.goto(site_url + f"calculator/index.html?family={family}")
    read_result(page)
    seen = page.evaluate(
        """() => {
            const table = document.querySelector('#calc-body table.symbols'), box = table.closest('.scroll') || table;
            const rows = [...table.tBodies[0].rows].map(r => [r.cells[0].getBoundingClientRect(), r.querySelector('.count').getBoundingClientRect()]);
            return {scroll: box.scrollWidth - box.clientWidth, rows: rows.length,
                    outside: rows.filter(([n, c]) => n.left < 0 || c.right > innerWidth).length};
        }"""
    )
    assert seen["rows"] >= 4 and seen["scroll"] <= 0 and seen["outside"] == 0, seen


# A model page's regions that scroll sideways: the closed-form total overflows a phone, its subtotals do not.
TOTAL, SUBTOTALS = '.scroll[aria-label="Closed-form total"]', '.scroll[aria-label="Component subtotals"]'
EDGE = 12  # px of each side of a region that the cue's shadow darkens (or lightens, in the dark)


def edges(page: Any, region: str) -> dict[str, bytes]:
    """Screenshots of a region's left and right edges, EDGE px wide: with the page's styles, and without the
    region's backgrounds (the cue's shadows and their covers)."""
    box = page.locator(region).bounding_box()
    height = min(box["height"], 300)
    shots = {}
    for cue in (True, False):
        page.evaluate(
            "([region, cue]) => document.querySelector(region).style.background = cue ? '' : 'none'", [region, cue]
        )
        for side, x in (("left", box["x"]), ("right", box["x"] + box["width"] - EDGE)):
            clip = {"x": x, "y": box["y"], "width": EDGE, "height": height}
            shots[f"{side}{'' if cue else ' bare'}"] = page.screenshot(clip=clip, animations="disabled")
    page.evaluate("region => document.querySelector(region).style.background = ''", region)
    return shots


def cued(page: Any, region: str) -> dict[str, bool]:
    """Which edges of a region show the cue that its content goes on: where it differs from the bare region."""
    shots = edges(page, region)
    return {side: shots[side] != shots[f"{side} bare"] for side in ("left", "right")}


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_region_that_scrolls_sideways_shows_where_it_goes_on(open_page: Any, site_url: str, scheme: str) -> None:
    """A fading shadow at each edge past which a .scroll region's content continues (CSS alone), none where it ends."""
    page = open_page(PHONE, scheme, height=1200)
    page.goto(site_url + "models/bert-base-uncased/index.html#d-total")
    overflow = "region => { const e = document.querySelector(region); return e.scrollWidth - e.clientWidth; }"
    assert page.evaluate(overflow, TOTAL) > 0 and page.evaluate(overflow, SUBTOTALS) == 0
    assert cued(page, TOTAL) == {"left": False, "right": True}  # at its start, the formula goes on to the right
    page.locator(TOTAL).evaluate("e => { e.scrollLeft = 60; }")
    assert cued(page, TOTAL) == {"left": True, "right": True}
    page.locator(TOTAL).evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    assert cued(page, TOTAL) == {"left": True, "right": False}
    page.locator(SUBTOTALS).scroll_into_view_if_needed()
    assert cued(page, SUBTOTALS) == {"left": False, "right": False}
    page.set_viewport_size({"width": WIDE, "height": 1200})  # where the closed form fits, no cue
    page.locator(TOTAL).scroll_into_view_if_needed()
    assert page.evaluate(overflow, TOTAL) == 0 and cued(page, TOTAL) == {"left": False, "right": False}


def test_on_paper_the_closed_form_fits_without_the_cue(open_page: Any, site_url: str) -> None:
    page = open_page(PHONE)
    page.goto(site_url + "models/transformer-big/index.html")
    page.emulate_media(media="print")
    printed = page.locator(TOTAL).evaluate(
        "e => ({background: getComputedStyle(e).backgroundImage, overflow: e.scrollWidth - e.clientWidth})"
    )
    assert printed == {"background": "none", "overflow": 0}


@pytest.mark.parametrize("width", [PHONE, WIDE])
@pytest.mark.parametrize(
    "anchor",
    ["d-layer-feed-forward-in", "d-layer-feed-forward", "t-encoder.layer.0.attention.self.query.weight", "claim-1"],
)
def test_a_deep_link_lands_a_third_down_with_its_header(open_page: Any, site_url: str, anchor: str, width: int) -> None:
    page = open_page(width, height=800)
    page.goto(site_url + f"models/bert-base-uncased/index.html#{anchor}")
    seen = page.evaluate(
        """id => {
            const target = document.getElementById(id), r = target.getBoundingClientRect();
            const table = target.closest('table'), head = table && table.tHead.rows[0].cells[0].getBoundingClientRect();
            const row = target.tagName === 'TBODY' ? target.rows[0] : target;
            const cell = getComputedStyle(row).backgroundColor, page = getComputedStyle(document.body).backgroundColor;
            return {top: r.top / innerHeight, head: head && [head.top, head.bottom], bottom: r.bottom,
                    highlighted: cell !== page && cell !== 'rgba(0, 0, 0, 0)', viewport: innerHeight};
        }""",
        anchor,
    )
    assert 0.15 <= seen["top"] <= 0.6, f"#{anchor} at {seen['top']:.0%} of the viewport's height: {seen}"
    assert seen["highlighted"], f"#{anchor}: the target row is not highlighted: {seen}"
    if seen["head"] is not None:
        top, bottom = seen["head"]
        assert top >= 0 and bottom <= seen["top"] * seen["viewport"] + 1, (
            f"#{anchor}: its table's header is not in view: {seen}"
        )


def test_the_feed_forward_anchor_covers_both_steps(built_site: Path) -> None:
    html = (built_site / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    block = re.search(r'<tbody id="d-layer-feed-forward">(.*?)</tbody>', html, re.S)
    assert block is not None
    assert re.findall(r'<tr id="([^"]+)">', block[1]) == ["d-layer-feed-forward-in", "d-layer-feed-forward-out"]


def test_print_folds_the_repeated_layers(open_page: Any, site_url: str) -> None:
    page = open_page(WIDE)
    page.goto(site_url + "models/bert-base-uncased/index.html")
    page.emulate_media(media="print")
    printed = page.evaluate(
        """() => ({
            copies: [...document.querySelectorAll('[id^="t-encoder.layer."]')].filter(e => e.getClientRects().length).map(e => e.id),
            folded: [...document.querySelectorAll('.print-only')].filter(e => e.getClientRects().length).map(e => e.textContent.trim()),
            source: getComputedStyle(document.querySelector('section[aria-labelledby="sources"] a[href^="http"]'), '::after').content,
        })"""
    )
    assert printed["copies"] and all(i.startswith("t-encoder.layer.0.") for i in printed["copies"]), printed["copies"]
    assert len(printed["copies"]) == 16  # one layer of BERT: 16 tensors; the 176 of the 11 others are folded
    assert printed["folded"] == [
        "The other 11 copies of the encoder layer (176 tensors, the same shapes) are folded and not printed;"
        " the page online lists them."
    ]
    assert "https://" in printed["source"]  # source addresses are printed


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_model_pages_print_within_the_paper(open_page: Any, site_url: str, paper: str) -> None:
    """No table or formula wider than the printable width of A4 or Letter (Chromium's default margins)."""
    printable = {"A4": 210 / 25.4 * 96, "Letter": 8.5 * 96}[paper] - 2 * 0.4 * 96
    for card_id in ("bert-base-uncased", "bert-base-uncased-pretraining", "transformer-big"):
        page = open_page(int(printable))
        page.goto(site_url + f"models/{card_id}/index.html")
        page.emulate_media(media="print")
        widest = page.evaluate(
            """() => Math.max(...[...document.querySelectorAll('main table, main math')].map(e => e.getBoundingClientRect().right))"""
        )
        assert widest <= printable + 1, (
            f"{card_id} on {paper}: something is {widest:.0f} px wide, the paper {printable:.0f}"
        )


def test_the_index_sorts_and_filters(open_page: Any, site_url: str) -> None:
    page = open_page(WIDE)
    page.goto(site_url + "index.html")

    def totals() -> list[int]:
        return [
            int(t)
            for t in page.eval_on_selector_all(
                "#all-models tbody tr[data-total]:not([hidden])",
                "rs => rs.filter(r => r.offsetParent).map(r => r.dataset.total)",
            )
        ]

    grouped = totals()
    assert len(grouped) == page.locator("#all-models tr[data-total]").count()
    page.select_option("form.table-tools select[name=order]", "-total")
    assert totals() == sorted(grouped, reverse=True)
    page.select_option("form.table-tools select[name=family]", "albert")
    albert = totals()
    assert albert == sorted(albert, reverse=True) and len(albert) == 5
    assert page.locator("form.table-tools output").inner_text() == f"5 of {len(grouped)} models shown"
    page.select_option("form.table-tools select[name=order]", "family")
    assert totals() == sorted(albert)


def test_the_comparison_shows_its_totals_on_a_wide_screen(open_page: Any, site_url: str) -> None:
    """At 1,366 px the comparison's totals and embedding shares are in view without scrolling the table."""
    page = open_page(1366)
    page.goto(site_url + "compare/index.html")
    seen = page.evaluate(
        """() => {
            const box = document.querySelector('#compare-models').closest('.scroll').getBoundingClientRect();
            const heads = [...document.querySelectorAll('#compare-models thead th')];
            const at = name => heads.find(h => h.textContent.trim() === name).getBoundingClientRect().right;
            return {box: box.right, total: at('Total'), share: at('Embedding share')};
        }"""
    )
    assert seen["total"] <= seen["box"] and seen["share"] <= seen["box"], seen


def test_without_script_no_dead_controls(browser: Any, site_url: str) -> None:
    """The sort and filter form shows only when script runs; without it the grouped table is all there is."""
    context = browser.new_context(java_script_enabled=False, viewport={"width": WIDE, "height": 800})
    try:
        page = context.new_page()
        page.goto(site_url + "index.html")
        assert not page.locator("form.table-tools").is_visible()
        assert (
            page.locator("#all-models tr[data-total]").count()
            == page.locator("#all-models tr[data-total]:visible").count()
        )
    finally:
        context.close()


def test_formulas_in_prose_and_tables_share_one_type(open_page: Any, site_url: str) -> None:
    page = open_page(WIDE)
    page.goto(site_url + "models/bert-base-uncased/index.html")
    fonts = page.evaluate(
        """() => ({
            prose: getComputedStyle(document.querySelector('#d-layer-heads var')).fontFamily,
            table: getComputedStyle(document.querySelector('table.derivation math mi')).fontFamily,
        })"""
    )
    assert fonts["prose"] == fonts["table"], fonts


def _from_home_on_a_phone(open_page: Any, site_url: str, name: str, card_id: str) -> tuple[Any, Any]:
    """Open the home page on a phone, follow "Start here" to a model, and open its "On this page"."""
    page = open_page(PHONE, height=844)
    page.goto(site_url + "index.html")
    page.locator("table.start").get_by_role("link", name=name, exact=True).click()
    page.wait_for_url(re.compile(rf"/models/{re.escape(card_id)}/(index\.html)?$"))
    toc = page.locator("nav.toc")
    toc.locator("summary").click()
    return page, toc


def test_the_lecturers_two_links_from_the_home_page_on_a_phone(open_page: Any, site_url: str) -> None:
    """Home -> BERT-Base -> "On this page": the feed-forward steps, then layer 0's query weight, in a few taps."""
    page, toc = _from_home_on_a_phone(open_page, site_url, "BERT-Base, uncased", "bert-base-uncased")
    toc.get_by_role("link", name="Feed-forward (2 steps)").first.click()
    assert page.evaluate("location.hash") == "#d-layer-feed-forward"
    steps = page.locator("#d-layer-feed-forward-in, #d-layer-feed-forward-out")
    assert steps.count() == 2 and all(s.is_visible() for s in steps.all())
    top = page.evaluate("document.getElementById('d-layer-feed-forward').getBoundingClientRect().top / innerHeight")
    assert 0.15 <= top <= 0.6, top
    toc.locator("summary").scroll_into_view_if_needed()
    if toc.locator("details").get_attribute("open") is None:
        toc.locator("summary").click()
    toc.get_by_role("link", name="Encoder layer").last.click()  # under "Every tensor"
    assert page.evaluate("location.hash") == "#tensors-layer"
    row = page.locator('[id="t-encoder.layer.0.attention.self.query.weight"]')
    box = row.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844, box
    reference = json.loads((ROOT / "tests" / "reference" / "bert-base-uncased.json").read_text(encoding="utf-8"))
    query = next(t for t in reference["tensors"] if t["name"] == "encoder.layer.0.attention.self.query.weight")
    assert row.locator(".count").inner_text() == f"{query['count']:,}"


def test_the_engineers_fine_tuning_question_from_the_home_page_on_a_phone(open_page: Any, site_url: str) -> None:
    """Home -> BERT-Large -> "On this page" -> batch sizes and lengths: fine-tuning at b = 32, s = 512, on screen."""
    page, toc = _from_home_on_a_phone(open_page, site_url, "BERT-Large, uncased", "bert-large-uncased")
    toc.get_by_role("link", name="Batch sizes and lengths").click()
    assert page.evaluate("location.hash") == "#c-grid"
    batch, seq = 32, 512  # the question
    row = page.locator(f"#c-grid-b{batch}-s{seq}")
    row.scroll_into_view_if_needed()
    cell = row.locator(".count")
    # The figure the generator computes: Adam in bf16 mixed precision with the activations (a lower bound).
    compute = count_compute(card_by_id("bert-large-uncased"))
    step = compute.at(batch, seq)
    memory = step.training_memory["bf16_mixed"]
    assert cell.get_attribute("data-value") == str(memory)
    assert cell.inner_text() == binary(memory)
    # Weights, gradients and Adam's state are 16 bytes a parameter (ZeRO, section 3.1), all of BERT-Large's
    # fine-tuned (the committed reference's total); the bf16 activations of the step come on top.
    total = json.loads((ROOT / "tests" / "reference" / "bert-large-uncased.json").read_text(encoding="utf-8"))["total"]
    assert memory == 16 * total + step.activations["bf16"]
    box = cell.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE, box
    assert box["y"] >= 0 and box["y"] + box["height"] <= 844, box


def test_a_wrapped_formula_in_a_derivation_keeps_its_lines_apart(open_page: Any, site_url: str) -> None:
    """The decoder layer's "× 6" formula, L(4HAK + … + 9H + I), wraps in its column at 1366 px: its lines of
    terms must stand apart (at least 3 px between one line's letters and the next's), where they touched."""
    page = open_page(1366)
    page.goto(site_url + "models/transformer-base/index.html")
    boxes = page.evaluate(
        """() => {
            const cell = document.querySelector("#d-decoder-layer ~ table tfoot tr:nth-child(2) td:nth-child(2)");
            const items = [...cell.querySelectorAll("mi, mn")];  // letters and digits: one height a line
            return items.map(e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; });
        }"""
    )
    lines: dict[float, float] = {}
    for top, bottom in boxes:  # the letters and digits of one line share their top within a pixel or two
        key = next((t for t in lines if abs(t - top) < 3), top)
        lines[key] = max(lines.get(key, bottom), bottom)
    tops = sorted(lines)
    assert len(tops) >= 3, "the formula is expected to wrap at this width"
    for upper, lower in itertools.pairwise(tops):
        gap = lower - lines[upper]
        assert gap >= 3, f"a line ending at {lines[upper]:.1f} px touches the next, at {lower:.1f} px"
