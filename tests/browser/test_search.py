"""Pagefind's default UI finds a model by name and takes the reader to its page, under a subpath."""

from __future__ import annotations

import re
from typing import Any

from .conftest import SUBPATH, WIDE


def test_search_finds_mobilebert_and_reaches_it(open_page: Any, site_url: str) -> None:
    page = open_page(WIDE)
    response = page.goto(site_url + "search/index.html")
    assert response is not None and response.ok, f"search/index.html: HTTP {response and response.status}"
    box = page.locator("#search input").first
    box.wait_for(state="visible")
    box.press_sequentially("MobileBERT", delay=20)
    result = page.locator(".pagefind-ui__result-link").first
    result.wait_for(state="visible")
    result.click()
    # A family's name ranks its family page first (issue 12); a model's full title, its model page.
    page.wait_for_url(re.compile(rf"/{SUBPATH}/(models/mobilebert[^/]*|families/mobilebert)/(index\.html)?(#.*)?$"))
    assert "MobileBERT" in page.locator("h1").inner_text()


def test_header_search_box_on_a_model_page_leads_to_results(open_page: Any, site_url: str) -> None:
    page = open_page(WIDE)
    page.goto(site_url + "models/bert-base-uncased/index.html")
    page.fill("#site-search-q", "ALBERT")
    page.click(".site-search button")
    page.wait_for_url(re.compile(rf"/{SUBPATH}/search/index\.html\?q=ALBERT$"))
    result = page.locator(".pagefind-ui__result-link").first
    result.wait_for(state="visible")
    assert "ALBERT" in result.inner_text()
