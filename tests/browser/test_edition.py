"""The Chinese edition in Chromium, on a sample (conftest.py: edition_site): no axe violation, no page wider
than a phone, the calculator's count and words, the switch to a twin that keeps the anchor, and Chinese
characters drawn from a Chinese face on screen and on A4 paper; valid HTML. Each check opens a page of
every kind, or a sample drawn with a fixed seed: the English pages are checked whole, and CI's time is short."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from conftest import count_parameters
from generator.site import formats
from generator.site.soft_space import HAN, SOFT_SPACE

from .conftest import EDITION, PHONE, SAMPLE_SEED, WIDE, axe_violations, edition_pages, missing, one_of_each
from .test_accessibility import PAGES, axe_report, keep_screenshot
from .test_calculator import CONFIGS, address, read_result
from .test_layout import page_kind

TWIN = f"{EDITION}/"
MODEL = "models/bert-base-uncased/index.html"
HANDOUT = "handout/index.html"
CALCULATOR_SAMPLE = 6  # configs, drawn with SAMPLE_SEED: the English page checks one of every family and head


def kind(path: str) -> str:
    """A page's kind, as test_layout.py tells them, for a twin's path (zh/...)."""
    return page_kind(path.removeprefix(TWIN))


# One page of each kind PAGES opens (its three model pages and two family pages are one kind each), in the light
# scheme only: a translation changes the words, not the colours the dark scheme is checked for in English.
KINDS = [name for name in PAGES if name not in ("claims", "tf-names", "family-bert")]


@pytest.mark.parametrize("name", KINDS)
def test_no_axe_violations_on_the_twins(
    open_page: Any, edition_url: str, edition_site: Path, output_dir: Path, name: str
) -> None:
    scheme = "light"
    path = TWIN + PAGES[name]
    if not (edition_site / path.split("?")[0]).is_file():
        pytest.fail(f"{path} is not in the edition's build: add its card to EDITION_CARDS (conftest.py)")
    page = open_page(WIDE, scheme)
    response = page.goto(edition_url + path)
    assert response is not None and response.ok, path
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    keep_screenshot(page, output_dir / f"{EDITION}-{name}-{WIDE}-{scheme}.png")
    violations = axe_violations(page, scheme)
    assert not violations, f"axe-core on {path} ({scheme}): {len(violations)} violations" + axe_report(violations)


def test_no_twin_scrolls_sideways_on_a_phone(open_page: Any, edition_url: str, edition_site: Path) -> None:
    """A twin of every kind at 390 px, where Chinese words, wider than their English, would push a page out."""
    pages = edition_pages(edition_site)
    sample = one_of_each([p for p in pages if not p.endswith("/404.html")], kind)
    assert len(sample) >= 20
    page = open_page(PHONE)
    wide = {}
    for path in [*sample, f"{TWIN}404.html"]:
        page.goto(edition_url + path, wait_until="load")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE:
            wide[path] = width
    assert wide == {}, f"pages wider than a phone's {PHONE} px: {wide}"


def test_the_calculator_twin_counts_as_python_and_reads_the_total(open_page: Any, edition_url: str) -> None:
    page = open_page(WIDE)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    found, expected = [], []
    for card in random.Random(SAMPLE_SEED).sample(CONFIGS, CALCULATOR_SAMPLE):
        total = count_parameters(card).total
        page.goto(edition_url + TWIN + address(card), wait_until="commit")
        result = read_result(page)
        said = formats.reading(total, EDITION)
        shown = page.locator("#calc-summary .reading, #calc-summary .rounded").first.inner_text()
        found.append((card.id, result["total"], shown))
        expected.append((card.id, str(total), f"（约 {said}）" if said else shown))
        # A space the script fills in beside a value goes between two Han characters ("一个编码器层的张量").
        text = page.locator("main").inner_text()
        assert SOFT_SPACE not in text and not re.search(f"[{HAN}] +[{HAN}]", text), card.id
    assert errors == []
    assert found == expected


# What the answer check (static/check.js) reads in a typed figure: the counts it stands for, as [value, step].
READ = "texts => texts.map(t => { const f = atlasCheck.parse(t); return f && [String(f.value), String(f.step)]; })"


def test_the_answer_check_reads_a_figure_in_myriads_on_the_twin_only(open_page: Any, edition_url: str) -> None:
    typed = ["约 1.09 亿", "1.2亿", "10948.224万", "109.5M", "1.1 亿个"]
    read = {}
    for prefix in ("", TWIN):
        page = open_page(WIDE)
        page.goto(edition_url + prefix + "exercises/index.html")
        page.wait_for_function("() => window.atlasCheck")
        read[prefix] = page.evaluate(READ, typed)
    assert read[TWIN] == [
        ["109000000", "1000000"],  # every count from 108,500,000 up to 110,000,000
        ["120000000", "10000000"],
        ["109482240", "10"],
        ["109500000", "100000"],
        None,  # a count noun after the unit is not read
    ]
    assert read[""] == [None, None, None, ["109500000", "100000"], None]


def test_the_index_twin_counts_the_models_a_filter_shows_in_chinese(open_page: Any, edition_url: str) -> None:
    page = open_page(WIDE)
    page.goto(edition_url + TWIN + "index.html")
    every = page.locator("#all-models tr[data-total]").count()
    page.select_option("form.table-tools select[name=family]", "albert")
    shown = page.locator("#all-models tr[data-total]:visible").count()
    assert page.locator("form.table-tools output").inner_text() == f"显示 {shown} / {every} 个模型"


def test_the_switch_keeps_the_anchor_of_a_deep_link(open_page: Any, edition_url: str) -> None:
    page = open_page(WIDE)
    page.goto(f"{edition_url}{MODEL}#subtotals")
    page.locator("a.language").click()
    page.wait_for_url(re.compile(rf"/{TWIN}{re.escape(MODEL)}#subtotals$"))
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    assert page.evaluate("location.hash") == "#subtotals" and page.locator("#subtotals").count() == 1
    page.locator("a.language").click()
    page.wait_for_url(re.compile(rf"/(?<!{EDITION}/){re.escape(MODEL)}#subtotals$"))
    assert page.evaluate("document.documentElement.lang") == "en"


def _faces(page: Any, selector: str) -> set[str]:
    """The fonts Chromium drew the element's text with, as the DevTools protocol reports them."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    node = cdp.send(
        "DOM.querySelector", {"nodeId": cdp.send("DOM.getDocument")["root"]["nodeId"], "selector": selector}
    )
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
    return {font["familyName"] for font in fonts}


# The faces a Chinese page asks for, in order (style.css): those of Simplified Chinese, never left to the system.
CHINESE_FACES = ["PingFang SC", "Hiragino Sans GB", "Noto Sans CJK SC", "Source Han Sans SC", "Microsoft YaHei"]


@pytest.mark.parametrize("width", [WIDE, PHONE])
def test_chinese_characters_come_from_a_chinese_face(open_page: Any, edition_url: str, width: int) -> None:
    """The twin asks for Simplified Chinese faces, and Chromium draws its characters with the one CI installs."""
    stacks = []
    for prefix in ("", TWIN):
        page = open_page(width)
        page.goto(edition_url + prefix + MODEL)
        stacks.append(
            [face.strip().strip('"') for face in page.evaluate("getComputedStyle(document.body).fontFamily").split(",")]
        )
    english, chinese = stacks
    assert not set(CHINESE_FACES) & set(english)
    assert [face for face in chinese if face in CHINESE_FACES] == CHINESE_FACES
    assert chinese[-1] == "sans-serif"
    assert "Noto Sans CJK SC" in _faces(page, "p.total .reading")  # （约 1.09 亿）


def test_the_handout_twin_prints_on_a4_in_a_chinese_face(open_page: Any, edition_url: str) -> None:
    """On paper as on screen, and on as many A4 sheets as the English handout."""
    if shutil.which("pdfinfo") is None:
        missing("pdfinfo", "apt-get install poppler-utils")
    sheets = {}
    for prefix in ("", TWIN):
        page = open_page(WIDE)
        page.goto(edition_url + prefix + HANDOUT)
        page.emulate_media(media="print")
        if prefix:
            assert "Noto Sans CJK SC" in _faces(page, "tr.sum .reading")  # （约 1.09 亿）
        info = subprocess.run(["pdfinfo", "-"], input=page.pdf(format="A4"), capture_output=True, check=True)
        text = info.stdout.decode()
        assert "(A4)" in text, text
        sheets[prefix] = int(re.findall(r"Pages:\s+(\d+)", text)[0])
    assert sheets[TWIN] == sheets[""], sheets


def test_the_twins_are_valid_html(edition_site: Path, vnu_jar: Path) -> None:
    """A twin of every kind (test_html.py checks every English page), in one run of the Nu HTML Checker."""
    pages = [edition_site / path for path in one_of_each(edition_pages(edition_site), kind)]
    assert len(pages) >= 20
    checked = subprocess.run(
        ["java", "-Xss4m", "-jar", str(vnu_jar), "--format", "json", *map(str, pages)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    messages = json.loads(checked.stderr)["messages"]  # vnu reports on standard error
    errors = [
        f"{Path(unquote(urlparse(m.get('url', '')).path)).relative_to(edition_site)}:{m.get('lastLine')}: {m['message']}"
        for m in messages
        if m.get("type") in ("error", "non-document-error")
    ]
    assert errors == [] and checked.returncode == 0, errors
