"""Pagefind's default UI finds a model by name and takes the reader to its page, under a subpath."""

from __future__ import annotations

import re
from pathlib import Path
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
    # A family's name ranks its family page first; a model's full title, its model page.
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


def test_from_a_file_the_search_page_says_it_needs_a_server(open_page: Any, built_site: Path) -> None:
    """Opened as a file, Pagefind cannot load its index: the page must say so, not search for ever."""
    page = open_page(WIDE)
    page.goto((built_site / "search" / "index.html").as_uri() + "?q=bert")
    note = page.locator("#search-from-file")
    note.wait_for(state="visible")
    assert "make serve" in note.inner_text()
    assert page.locator("#search").inner_text() == ""  # no box that would never answer
    assert page.locator("ul.columns li").count() == len(list((built_site / "models").glob("*/index.html")))


def test_over_http_the_search_page_hides_the_note_for_files(open_page: Any, site_url: str) -> None:
    page = open_page(WIDE)
    page.goto(site_url + "search/index.html?q=bert")
    page.locator(".pagefind-ui__result-link").first.wait_for(state="visible")
    assert not page.locator("#search-from-file").is_visible()
