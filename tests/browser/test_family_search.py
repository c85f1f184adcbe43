"""Search over the built Pagefind index: a tensor name finds its family page and row, a name ranks
its own page first, every result says what kind of page it is; the handout prints on three pages at most."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote

import pytest

from conftest import ROOT

from .conftest import SUBPATH, WIDE


def _search(open_page: Any, site_url: str, query: str) -> Any:
    page = open_page(WIDE)
    response = page.goto(site_url + "search/index.html")
    assert response is not None and response.ok, f"search/index.html: HTTP {response and response.status}"
    box = page.locator("#search input").first
    box.wait_for(state="visible")
    box.fill(query)
    page.locator(".pagefind-ui__result-link").first.wait_for(state="visible")
    page.wait_for_timeout(400)  # Pagefind renders results as their fragments arrive; let the list settle
    return page


def _pages(page: Any) -> list[str]:
    """The addresses of the results (not their sub-results), in order, below the site root."""
    links = page.locator(".pagefind-ui__result > .pagefind-ui__result-inner > .pagefind-ui__result-title a")
    return [re.sub(rf"^.*/{SUBPATH}/", "", href) for href in links.evaluate_all("els => els.map(e => e.href)")]


def test_a_tensor_name_finds_its_family_page_and_the_row(open_page: Any, site_url: str) -> None:
    page = _search(open_page, site_url, "attention.self.query.weight")
    assert "families/bert/" in _pages(page)
    row = page.locator('a.pagefind-ui__result-link[href*="families/bert/#t-"]').first
    row.wait_for(state="visible")
    assert unquote(row.get_attribute("href") or "").endswith("#t-encoder.layer.{n}.attention.self.query.weight")
    row.click()
    page.wait_for_url(re.compile(r"/families/bert/(index\.html)?#t-"))
    target = page.evaluate("document.querySelector(':target') && document.querySelector(':target').id")
    assert target == "t-encoder.layer.{n}.attention.self.query.weight"


def test_the_tail_of_a_tensor_name_finds_family_pages_first(open_page: Any, site_url: str) -> None:
    found = _pages(_search(open_page, site_url, "query.weight"))
    assert found and all(url.startswith("families/") for url in found), found


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("BERT-Base, uncased", "models/bert-base-uncased/"),
        ("BERT-Large, cased", "models/bert-large-cased/"),
        ("ELECTRA-Small, discriminator", "models/electra-small-discriminator/"),
        ("bert", "families/bert/"),  # not the exercises page, which says "BERT" most often
        ("albert", "families/albert/"),
        ("deberta", "families/deberta-v2/"),
        ("MobileBERT", "families/mobilebert/"),
        ("calculator", "calculator/"),
        ("errata", "errata/"),
    ],
)
def test_a_name_ranks_its_own_page_first(open_page: Any, site_url: str, query: str, first: str) -> None:
    found = _pages(_search(open_page, site_url, query))
    assert found[0] == first, f"{query!r}: {found[:5]}"


def test_each_result_shows_its_kind_and_no_permalink_glyph(open_page: Any, site_url: str) -> None:
    page = _search(open_page, site_url, "ALBERT")
    results = page.locator(".pagefind-ui__result")
    count = results.count()
    assert count >= 5
    kinds = [results.nth(i).locator(".pagefind-ui__result-tag").inner_text() for i in range(count)]
    assert all(re.fullmatch(r"Kind: (model|family|diff|erratum|exercise|page)", k) for k in kinds), kinds
    assert {"Kind: model", "Kind: family"} <= set(kinds)
    excerpts = page.locator(".pagefind-ui__result-excerpt").all_inner_texts()
    assert excerpts and not any("#" in e for e in excerpts), excerpts


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_the_handout_prints_on_three_pages_at_most(open_page: Any, site_url: str, paper: str) -> None:
    page = open_page(WIDE)
    response = page.goto(site_url + "handout/index.html")
    assert response is not None and response.ok
    pdf = page.pdf(format=paper)
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf))
    assert 1 <= pages <= 3, f"the handout takes {pages} {paper} pages"  # the closed forms of nineteen families
    total = json.loads((ROOT / "tests" / "reference" / "bert-base-uncased.json").read_text(encoding="utf-8"))["total"]
    assert f"{total:,}" in page.locator("section[aria-labelledby=worked]").inner_text()
