"""The Chinese edition in Chromium, on a sample of its pages (conftest.py: edition_site)."""

from __future__ import annotations

import random
from typing import Any

from conftest import count_parameters
from generator.site import formats

from .conftest import EDITION, SAMPLE_SEED, WIDE
from .test_calculator import CONFIGS, address, read_result
from .test_layout import page_kind

TWIN = f"{EDITION}/"
MODEL = "models/bert-base-uncased/index.html"
HANDOUT = "handout/index.html"
CALCULATOR_SAMPLE = 6  # configs, drawn with SAMPLE_SEED: the English page checks one of every family and head


def kind(path: str) -> str:
    """A page's kind, as test_layout.py tells them, for a twin's path (zh/...)."""
    return page_kind(path.removeprefix(TWIN))


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
