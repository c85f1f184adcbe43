"""The comparison's compute columns: sorted by the script, and readable on a phone."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import PHONE, WIDE


@pytest.mark.parametrize("key", ["flops", "memory"])
def test_the_comparison_sorts_by_a_compute_column(open_page: Any, site_url: str, key: str) -> None:
    """Largest first by the column's exact figure; the models with no step figure come last."""
    page = open_page(WIDE)
    page.goto(site_url + "compare/index.html")
    page.select_option("form.table-tools select[name=order]", f"-{key}")
    shown = page.eval_on_selector_all(
        "#compare-models tbody tr[data-total]:not([hidden])",
        f"rs => rs.filter(r => r.offsetParent).map(r => [r.id, r.dataset.{key} ?? null])",
    )
    assert len(shown) == page.locator("#compare-models tr[data-total]").count()
    figures = [float(v) for _, v in shown if v is not None]
    assert figures == sorted(figures, reverse=True) and len(figures) >= 60
    unmeasured = [card for card, v in shown if v is None]
    assert unmeasured and [card for card, _ in shown[-len(unmeasured) :]] == unmeasured
    # The 2017 Transformer has no class to run; BigBird's block-sparse models no polynomial step.
    assert all(card.startswith(("transformer", "bigbird")) for card in unmeasured)
    # The cell holds the same figure as the row's key.
    first = shown[0][0]
    column = {"flops": "flops", "memory": "memory"}[key]
    cell = page.locator(f"#compare-models tr#{first} td.{column}").get_attribute("data-value")
    assert cell == shown[0][1]


def test_the_compute_columns_read_on_a_phone(open_page: Any, site_url: str) -> None:
    """At 390 px the page does not scroll sideways; the name stays in view while the table's box scrolls to the
    compute columns, each a figure and its exact value on two lines."""
    page = open_page(PHONE)
    page.goto(site_url + "compare/index.html")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE
    page.locator("#bert-large-uncased td.memory").scroll_into_view_if_needed()
    seen = page.evaluate(
        """() => {
            const row = document.getElementById('bert-large-uncased');
            const name = row.querySelector('th').getBoundingClientRect();
            const range = document.createRange();
            range.selectNodeContents(row.querySelector('td.memory'));
            const cell = range.getBoundingClientRect();
            return {name: [name.left, name.right], cell: [cell.left, cell.right], lines: row.querySelector('td.memory').innerText.split('\\n')};
        }"""
    )
    assert seen["name"][0] >= 0 and seen["cell"][1] <= PHONE, seen
    assert seen["name"][1] <= seen["cell"][0], seen  # the sticky name does not cover the figures
    assert seen["lines"][0].endswith("GiB") and seen["lines"][1].endswith("bytes"), seen
