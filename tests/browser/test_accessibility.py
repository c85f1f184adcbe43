"""axe-core in Chromium finds no violation on the index, a model page and the comparison, light and dark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import PAGES, WIDE, axe_violations

# Comparisons: the charts, the list of pairs and one pair across families.
PAGES = {
    **PAGES,
    "charts": "charts/index.html",
    "diffs": "diffs/index.html",
    "diff": "diffs/bert-base-uncased--albert-base-v2/index.html",
}
# Claims, errata, exercises and checkpoint names.
PAGES = {
    **PAGES,
    "errata": "errata/index.html",
    "exercises": "exercises/index.html",
    "claims": "models/deberta-v3-xsmall/index.html",
    "tf-names": "models/bert-base-uncased-pretraining/index.html",
}
# Family pages and the handout.
PAGES = {
    **PAGES,
    "families": "families/index.html",
    "family": "families/deberta-v2/index.html",
    "family-bert": "families/bert/index.html",
    "handout": "handout/index.html",
}
# The calculator: its page as loaded; test_calculator.py checks it again once drawn.
PAGES = {**PAGES, "calculator": "calculator/index.html?family=mobilebert&head=pretraining"}
# The frame: the page served for a missing address, with the header and every model.
PAGES = {**PAGES, "not-found": "404.html"}


def axe_report(violations: list[dict[str, Any]], limit: int = 8) -> str:
    """Each violation as a person reads it: the rule, why, where, and what to fix."""
    out = []
    for v in violations:
        out.append(f"\n[{v['impact']}] {v['id']}: {v['help']}\n  {v['helpUrl']}")
        for node in v["nodes"][:limit]:
            target = " ".join(str(t) for t in node["target"])
            html = " ".join(node["html"].split())
            out.append(f"  - {target}\n      {html[:200]}")
            out.extend(f"      {line.strip()}" for line in node.get("failureSummary", "").splitlines() if line.strip())
        if len(v["nodes"]) > limit:
            out.append(f"  ... and {len(v['nodes']) - limit} more elements")
    return "\n".join(out)


def keep_screenshot(page: Any, path: Path) -> None:
    """Save what the page looked like, for a person to look at; it checks nothing. On a loaded machine
    Chromium once answered "Unable to capture screenshot" (in CI): it is asked once more, and a
    second refusal fails the test as before."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        page.screenshot(path=path)
    except PlaywrightError as error:
        if "Unable to capture screenshot" not in str(error):
            raise
        page.wait_for_timeout(500)
        page.screenshot(path=path)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", list(PAGES))
def test_no_axe_violations(open_page: Any, site_url: str, output_dir: Path, name: str, scheme: str) -> None:
    page = open_page(WIDE, scheme)
    response = page.goto(site_url + PAGES[name])
    assert response is not None and response.ok, f"{PAGES[name]}: HTTP {response and response.status}"
    scheme_seen = page.evaluate(f"matchMedia('(prefers-color-scheme: {scheme})').matches")
    assert scheme_seen, f"the page does not see prefers-color-scheme: {scheme}"
    keep_screenshot(page, output_dir / f"{name}-{WIDE}-{scheme}.png")
    violations = axe_violations(page, scheme)
    assert not violations, f"axe-core on {PAGES[name]} ({scheme}): {len(violations)} violations" + axe_report(
        violations
    )
