"""A reader on the site served under a subpath: follows links and a permalink, on a wide screen and a phone."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from .conftest import PAGES, PHONE, SUBPATH, WIDE

TENSOR = "encoder.layer.0.attention.self.query.weight"
MODEL_URL = re.compile(rf"/{SUBPATH}/models/bert-base-uncased/(index\.html)?$")


def watch_failures(page: Any) -> list[str]:
    """Requests the page makes that fail (a 404 of a stylesheet, a favicon...) and script errors."""
    failures: list[str] = []
    page.on("response", lambda r: failures.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None)
    page.on("requestfailed", lambda r: failures.append(f"failed {r.url}: {r.failure}"))
    page.on("pageerror", lambda e: failures.append(f"script error: {e}"))
    return failures


def test_follow_a_link_then_a_permalink_to_a_tensor_row(open_page: Any, site_url: str) -> None:
    page = open_page(WIDE)
    failures = watch_failures(page)
    # Each page is left only once its requests are done: a favicon still loading when the next
    # address is opened is aborted by the browser, which says nothing about the site.
    page.goto(site_url + "index.html", wait_until="networkidle")
    page.locator('a[href*="models/bert-base-uncased/"]').first.click()
    page.wait_for_url(MODEL_URL)
    page.wait_for_load_state("networkidle")
    assert "BERT-Base" in page.locator("h1").inner_text()

    page.goto(site_url + f"models/bert-base-uncased/index.html#t-{TENSOR}")
    target = page.evaluate("document.querySelector(':target')?.id ?? null")
    assert target == f"t-{TENSOR}", f"the :target is {target!r}"
    row = page.locator(f'[id="t-{TENSOR}"]')
    assert TENSOR in row.inner_text()
    seen = page.evaluate(
        """id => {
            const row = document.getElementById(id), r = row.getBoundingClientRect();
            const hit = document.elementFromPoint(r.left + Math.min(r.width, innerWidth) / 2, (r.top + r.bottom) / 2);
            return {top: r.top, bottom: r.bottom, viewport: innerHeight, uncovered: row.contains(hit)};
        }""",
        f"t-{TENSOR}",
    )
    # A pixel of slack: scrolling to a fragment may leave the row a fraction of a pixel above the top.
    assert seen["top"] >= -1 and seen["bottom"] <= seen["viewport"] + 1, f"the row is not in the viewport: {seen}"
    assert seen["uncovered"], f"the row is in the viewport but something covers it (a sticky header?): {seen}"
    assert not failures, "under /" + SUBPATH + "/:\n" + "\n".join(failures)


@pytest.mark.parametrize("name", list(PAGES))
def test_screenshots_and_no_sideways_scrolling_on_a_phone(
    open_page: Any, site_url: str, output_dir: Path, name: str
) -> None:
    for width in (WIDE, PHONE):
        page = open_page(width)
        failures = watch_failures(page)
        response = page.goto(site_url + PAGES[name])
        assert response is not None and response.ok, f"{PAGES[name]}: HTTP {response and response.status}"
        # A model page at 390 px is some 40,000 px tall: its full-page picture (for a person to look at, not an
        # assertion) took over 15 s with two test workers on two processors, so it gets a minute.
        page.screenshot(path=output_dir / f"{name}-{width}.png", full_page=True, timeout=60_000)
        assert not failures, f"{PAGES[name]} at {width} px:\n" + "\n".join(failures)
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= PHONE, f"{PAGES[name]} scrolls sideways at {PHONE} px: the page is {scroll_width} px wide"
