"""What a printed page shows, in Chromium's print media: formulas whose brackets hold what they enclose and
whose products stay whole, notes smaller than the text, no controls or words for a screen, no heading alone
at a page's foot, and addresses for the links inside the site only when the build knows where it is."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import catalog_copy
from generator.build.pipeline import build
from generator.site.render import SiteOptions

from .conftest import missing

A4 = round((210 / 25.4 - 2 * 0.4) * 96)  # the printable width of A4 with Chromium's default margins, in px
MODEL = "models/bert-base-uncased/index.html"
HANDOUT = "handout/index.html"
BASE = "https://example.github.io/atlas/"


def printed(open_page: Any, url: str) -> Any:
    page = open_page(A4)
    response = page.goto(url)
    assert response is None or response.ok, url  # file:// has no response
    page.emulate_media(media="print")
    return page


# Every bracket of every formula on the page: its size, the box of what it encloses (the siblings between the
# pair in their mrow) and how far its middle is from the middle of the nearest letter or digit it encloses.
BRACKETS = """selector => [...document.querySelectorAll(selector)]
    .filter(mo => ['(', ')'].includes(mo.textContent) && mo.getClientRects().length)
    .map(mo => {
        const group = mo.parentElement, math = mo.closest('math');
        const inside = [...group.children].filter(e => e.tagName !== 'mo' || !['(', ')'].includes(e.textContent));
        const boxes = inside.map(e => e.getBoundingClientRect()).filter(b => b.height > 0);
        const letters = [...group.querySelectorAll('mi, mn')]
            .filter(e => e.parentElement.tagName !== 'msup' || e === e.parentElement.firstElementChild);
        const mid = e => { const b = e.getBoundingClientRect(); return (b.top + b.bottom) / 2; };
        const b = mo.getBoundingClientRect();
        return {formula: math.getAttribute('alttext'), top: b.top, bottom: b.bottom,
                inner_top: Math.min(...boxes.map(x => x.top)), inner_bottom: Math.max(...boxes.map(x => x.bottom)),
                off_line: Math.min(...letters.map(e => Math.abs(mid(e) - mid(mo)))),
                size: getComputedStyle(mo).fontSize, math_size: getComputedStyle(math).fontSize};
    })"""


@pytest.mark.parametrize("url", [HANDOUT, MODEL])
def test_printed_brackets_sit_on_the_line_at_full_size(open_page: Any, site_url: str, url: str) -> None:
    """They were dropped below the line (their middle 4 to 7 px under the letters'), and looked shrunk."""
    brackets = printed(open_page, site_url + url).evaluate(BRACKETS, "main mo")
    assert len(brackets) >= 10, brackets  # the closed forms and their substitutions have brackets
    wrong = [b for b in brackets if b["off_line"] > 2.5 or b["size"] != b["math_size"]]
    assert not wrong, f"{url}: {len(wrong)} of {len(brackets)} brackets are off the line or smaller: {wrong[:3]}"


@pytest.mark.parametrize(("url", "formulas"), [(HANDOUT, "table.handout-forms"), (MODEL, "table.total tr:first-child")])
def test_printed_closed_forms_stretch_their_brackets(open_page: Any, site_url: str, url: str, formulas: str) -> None:
    """A closed form's bracket is as tall as what it holds (4H² and its exponent), as MathML draws it on screen."""
    brackets = printed(open_page, site_url + url).evaluate(BRACKETS, f"{formulas} mo")
    assert len(brackets) >= 4, brackets
    short = [b for b in brackets if b["top"] > b["inner_top"] + 0.5 or b["bottom"] < b["inner_bottom"] - 0.5]
    assert not short, f"{url}: {len(short)} of {len(brackets)} brackets are shorter than what they hold: {short[:3]}"


def test_a_printed_product_stays_on_one_line(open_page: Any, site_url: str) -> None:
    """The compute tables' "2 · 768² · 1 · 512" broke before its last factor, which ran into the line above."""
    lines = printed(open_page, site_url + MODEL).evaluate(
        """() => [...document.querySelectorAll('table.compute td math')].map(m => {
            const boxes = [...m.querySelectorAll('mn, mi')].filter(e => e.parentElement.tagName !== 'msup'
                || e === e.parentElement.firstElementChild).map(e => e.getBoundingClientRect());
            return {formula: m.getAttribute('alttext'), lowest_top: Math.max(...boxes.map(b => b.top)),
                    highest_bottom: Math.min(...boxes.map(b => b.bottom))};
        })"""
    )
    products = [x for x in lines if not re.search("[+−]", x["formula"])]
    assert len(products) > 50, len(products)
    broken = [x["formula"] for x in products if x["lowest_top"] >= x["highest_bottom"]]
    assert not broken, f"{len(broken)} products printed on two lines: {sorted(set(broken))[:5]}"


def test_the_handout_prints_its_notes_smaller_than_its_text(open_page: Any, site_url: str) -> None:
    sizes = printed(open_page, site_url + HANDOUT).evaluate(
        """() => ({text: getComputedStyle(document.querySelector('.handout p.symbol-list')).fontSize,
                   notes: [...document.querySelectorAll('.handout .small')].map(e => getComputedStyle(e).fontSize)})"""
    )
    assert len(sizes["notes"]) == 2
    assert all(float(n[:-2]) < float(sizes["text"][:-2]) for n in sizes["notes"]), sizes


def test_a_printed_model_page_has_nothing_to_click(open_page: Any, site_url: str) -> None:
    """Built without a base URL: no summary marker, no words about opening folds, no links that lead nowhere."""
    page = printed(open_page, site_url + MODEL)
    markers = page.evaluate(
        """() => [...document.querySelectorAll('details.worked > summary')]
            .map(s => getComputedStyle(s).display === 'list-item' && getComputedStyle(s).listStyleType !== 'none')"""
    )
    assert len(markers) == 3 and not any(markers), markers  # the embeddings, the encoder layer, the pooler
    text = page.locator("main").inner_text()
    assert "Each component as the parameter derivation shows it, one instance worked" in text
    assert "open one" not in text
    assert "Related pages" not in text and "Download them" not in text


def test_printed_exercises_do_not_ask_for_the_box(open_page: Any, site_url: str) -> None:
    page = printed(open_page, site_url + "exercises/index.html")
    lede = page.locator("p.lede").inner_text()
    assert lede.endswith(
        "Below are the questions; each answer, with the steps a single model page cannot show, follows its question."
    )
    assert "box" not in page.locator("main").inner_text()


def test_no_printed_page_ends_with_a_heading(open_page: Any, site_url: str) -> None:
    """The pooler's h4 was alone at the foot of page 7 of BERT-Base's page, its table on page 8."""
    if shutil.which("pdftotext") is None:
        missing("pdftotext", "apt-get install poppler-utils")
    page = printed(open_page, site_url + MODEL)
    headings = set(
        page.evaluate(
            "() => [...document.querySelectorAll('main h2, main h3, main h4')].map(h => h.firstChild.textContent.trim())"
        )
    )
    text = subprocess.run(
        ["pdftotext", "-layout", "-", "-"], input=page.pdf(format="A4"), capture_output=True, check=True
    ).stdout
    last_lines = [
        [line.strip() for line in sheet.decode("utf-8").splitlines() if line.strip()][-1]
        for sheet in text.split(b"\f")
        if sheet.strip()
    ]
    assert len(last_lines) > 10
    assert not headings & set(last_lines), [line for line in last_lines if line in headings]


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """BERT-Base and BERT-Large built for a site at BASE."""
    folder = tmp_path_factory.mktemp("print-hosted")
    models = catalog_copy(folder / "models", ["bert-base-uncased", "bert-large-uncased"])
    build(models, folder / "site", SiteOptions(base_url=BASE, date=None, search=False))
    return folder / "site"


def test_printed_links_give_the_address_the_build_knows(open_page: Any, hosted: Path) -> None:
    page = printed(open_page, (hosted / MODEL).as_uri())
    addresses = page.evaluate(
        """() => [...document.querySelectorAll('section.related li a, .downloads a')]
            .map(a => [a.getAttribute('href'), getComputedStyle(a, '::after').content])"""
    )
    assert (
        [
            (
                "architecture.svg",
                f'" ({BASE}models/bert-base-uncased/architecture.svg)"',
            ),  # the figure's, in the summary
            ("../../families/bert/index.html", f'" ({BASE}families/bert/)"'),
            ("../../calculator/index.html?family=bert&head=base", f'" ({BASE}calculator/?family=bert&head=base)"'),
        ]
        == [tuple(a) for a in addresses[:3]]
    )
    assert [content for href, content in addresses[-2:]] == [
        f'" ({BASE}models/bert-base-uncased.json)"',
        f'" ({BASE}models/bert-base-uncased.csv)"',
    ]
    assert all(content.startswith(f'" ({BASE}') for href, content in addresses), addresses
    text = page.locator("main").inner_text()
    assert "Related pages" in text and "Download them" in text


def test_the_printed_handout_says_where_the_site_is(open_page: Any, hosted: Path, site_url: str) -> None:
    link = "() => getComputedStyle(document.querySelector('.handout p.small:last-child a'), '::after').content"
    assert printed(open_page, (hosted / HANDOUT).as_uri()).evaluate(link) == f'" ({BASE})"'
    assert printed(open_page, site_url + HANDOUT).evaluate(link) == "none"  # built without a base URL: no address
