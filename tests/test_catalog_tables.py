"""The index and the comparison without script (issue 12): every model, grouped by family, smallest first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import MODELS, reference_for

CARD_IDS = sorted(p.stem for p in MODELS.glob("*.yaml"))


def groups(html: str, table_id: str) -> list[tuple[str, list[tuple[str, int]]]]:
    """Each tbody of a table: its family and its rows as (card id, total), in page order."""
    table = re.search(rf'<table [^>]*id="{table_id}">(.*?)</table>', html, re.S)
    assert table is not None, table_id
    found = []
    for family, body in re.findall(r'<tbody data-family="([^"]+)">(.*?)</tbody>', table[1], re.S):
        rows = re.findall(r'<tr id="([^"]+)" data-family="[^"]+" data-total="(\d+)"', body)
        found.append((family, [(card_id, int(total)) for card_id, total in rows]))
    return found


@pytest.mark.parametrize(("page", "table_id"), [("index.html", "all-models"), ("compare/index.html", "compare-models")])
def test_grouped_by_family_and_ordered_by_total(site: Path, page: str, table_id: str) -> None:
    html = (site / page).read_text(encoding="utf-8")
    found = groups(html, table_id)
    for family, rows in found:
        totals = [total for _, total in rows]
        assert totals == sorted(totals), f"{page}: {family} is not smallest first"
        for card_id, total in rows:
            assert total == reference_for(card_id)["total"], card_id  # transformers' own count
    listed = [card_id for _, rows in found for card_id, _ in rows]
    assert len(listed) == len(set(listed))
    if page == "index.html":  # the 2017 Transformer and the exercises have sections of their own
        assert found[0][0] == "bert" and "transformer" not in {f for f, _ in found}
        assert set(listed) == {c for c in CARD_IDS if not c.startswith(("exercise-", "transformer-"))}
        assert html.index('id="variants"') < html.index('id="transformer"') < html.index('id="exercise-models"')
        for card_id in ("transformer-base", "transformer-big", "transformer-seed-one-layer"):
            assert f'<tr id="{card_id}" data-family="transformer"' in html
    else:
        assert set(listed) == set(CARD_IDS)


def test_the_index_puts_the_total_beside_the_name(site: Path) -> None:
    """On a phone only the first columns fit: the count comes right after the name."""
    html = (site / "index.html").read_text(encoding="utf-8")
    row = re.search(
        r'<tr id="bert-base-uncased"[^>]*>\s*<th scope="row">(.*?)</th>\s*<td class="n count">([^<]+)</td>', html
    )
    assert row is not None and row[2] == "109,482,240"
    compare = (site / "compare" / "index.html").read_text(encoding="utf-8")
    row = re.search(
        r'<tr id="bert-base-uncased"[^>]*>\s*<th scope="row">.*?</th>\s*<td class="n count"><strong>([^<]+)<', compare
    )
    assert row is not None and row[1] == "109,482,240"


def test_a_model_page_links_what_is_related(site: Path) -> None:
    html = (site / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    related = re.search(r'<section aria-labelledby="related" class="related">(.*?)</section>', html, re.S)
    assert related is not None
    links = re.findall(r'<a href="([^"]+)">', related[1])
    assert links[:2] == ["../../families/bert/index.html", "../../calculator/index.html?family=bert&amp;head=base"]
    diffs = [link for link in links if "/diffs/" in link]
    assert "../../diffs/bert-base-uncased--bert-large-uncased/index.html" in diffs and len(diffs) == 12
    assert (
        "../../errata/index.html#lha-product" in links and "../../errata/index.html#per-head-projections" not in links
    )
    exercise = (site / "models" / "exercise-bert-40k-8l-8h" / "index.html").read_text(encoding="utf-8")
    assert '<a href="../../exercises/index.html#forty-k-eight-layers">' in exercise
    assert '<a href="../../errata/index.html#per-head-projections">' in exercise


def test_the_fold_of_repeated_layers_says_what_it_holds(site: Path) -> None:
    html = (site / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    summary = re.search(
        r'<details class="all-copies" id="all-layer">\s*<summary>([^<]+)</summary>(.*?)</details>', html, re.S
    )
    assert summary is not None
    rows = re.findall(r'<tr id="t-encoder\.layer\.(\d+)\.', summary[2])
    assert len(rows) == 176 and set(rows) == {str(n) for n in range(1, 12)}
    assert summary[1] == "The other 11 copies: 176 more tensors, the same shapes"
