"""The index and the comparison without script: every model, grouped by family, smallest first."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import MODELS, reference_for
from generator.analysis.choices import load_choices
from generator.cli import main
from generator.counting.families import FAMILIES

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
    pairs = [pair for pair in load_choices().pairs if "bert-base-uncased" in pair]  # every comparison it is in
    assert "../../diffs/bert-base-uncased--bert-large-uncased/index.html" in diffs and len(diffs) == len(pairs)
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


def _lede(html: str) -> str:
    found = re.search(r'<p class="lede">(.*?)</p>', html, re.S)
    assert found is not None
    return found[1]


def test_the_index_counts_the_catalog_part_by_part(site: Path) -> None:
    """The 2017 Transformer is not of BERT's family and transformers does not build it: the opening line says so."""
    transformer = [c for c in CARD_IDS if c.startswith("transformer-")]
    exercises = [c for c in CARD_IDS if c.startswith("exercise-")]
    variants = len(CARD_IDS) - len(transformer) - len(exercises)
    # Counted another way: the cards of families transformers builds, less the exercises (BERT cards).
    built = [
        c
        for c in CARD_IDS
        if FAMILIES[yaml.safe_load((MODELS / f"{c}.yaml").read_text("utf-8"))["family"]].own_config is None
    ]
    assert (variants, len(exercises), len(transformer)) == (len(built) - len(exercises), 5, 3)
    lede = _lede((site / "index.html").read_text(encoding="utf-8"))
    assert lede.startswith(
        f"Exact parameter counts for {variants} BERT-family models, {len(exercises)} textbook exercises and "
        f"{len(transformer)} configurations of the 2017 Transformer, derived step by step"
    )
    assert lede.endswith(
        "exactly as the code builds them: Hugging Face transformers for BERT's family, the 2018 "
        "attention-is-all-you-need-pytorch code for the Transformer. Every model transformers builds also gets a "
        "training step's FLOPs and memory, checked against torch."
    )


def test_start_here_names_the_base_model_of_every_family_that_changed_bert(site: Path) -> None:
    """The table says it lists "the base model of each family that changed BERT": every family of the
    variants' table has a row in it, and only those families."""
    html = (site / "index.html").read_text(encoding="utf-8")
    start = re.search(r'<section aria-labelledby="start-here">(.*?)</section>', html, re.S)
    variants = re.search(r'<section aria-labelledby="variants">(.*?)</section>', html, re.S)
    assert start is not None and variants is not None
    assert "The base model of each family, grouped by what it changed." in start[1]
    in_start = re.findall(r'<td><a href="families/([\w-]+)/index.html">', start[1])
    jumps = re.findall(r'<a href="#family-([\w-]+)">', start[1])
    # Every family of the catalog but those shown apart is one link in the jump line.
    families = {yaml.safe_load(path.read_text(encoding="utf-8"))["family"] for path in MODELS.glob("*.yaml")}
    assert sorted(jumps) == sorted(families - set(load_choices().apart_families))
    assert in_start[:2] == ["bert", "bert"]  # BERT-Base and BERT-Large come first
    assert sorted(set(in_start)) == sorted(jumps)


def _site_of_one(tmp_path: Path, card: str) -> Path:
    """The site built from the catalog's one card ``card`` alone."""
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(MODELS / f"{card}.yaml", models)
    out = tmp_path / "site"
    assert main(["build", "--models", str(models), "--out", str(out), "--no-search", "--jobs", "1", "--quiet"]) == 0
    return out


def test_a_catalog_of_one_bert_model_is_counted_as_one(tmp_path: Path) -> None:
    out = _site_of_one(tmp_path, "bert-base-uncased")
    assert _lede((out / "index.html").read_text(encoding="utf-8")) == (
        "Exact parameter counts for 1 BERT-family model, derived step by step from the configuration and listed "
        "tensor by tensor, exactly as Hugging Face transformers builds them. Every model transformers builds also "
        "gets a training step's FLOPs and memory, checked against torch."
    )


def test_a_catalog_of_the_transformer_alone_promises_no_training_step(tmp_path: Path) -> None:
    """No transformers class runs the 2017 Transformer, so its pages work out no step: the lede must not say they do."""
    out = _site_of_one(tmp_path, "transformer-base")
    lede = _lede((out / "index.html").read_text(encoding="utf-8"))
    assert lede.startswith("Exact parameter counts for 1 configuration of the 2017 Transformer")
    assert "training step" not in lede
    assert 'id="c-forward"' not in (out / "models" / "transformer-base" / "index.html").read_text(encoding="utf-8")
