"""Comparisons: parts, model-against-model diffs and the charts, with exact numbers (memory: tests/test_memory.py)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from conftest import ALL_CARD_PATHS, MODELS, count_card, reference_for
from generator.build.pipeline import build
from generator.cards.card import load_cards
from generator.counting.architecture import Param, Part, part_of
from generator.counting.inventory import Inventory
from generator.counting.parts import part_subtotals, shares
from generator.counting.poly import Poly, product
from generator.site import content
from generator.site.differences import PAIRS, Diff, available_pairs, compare
from generator.site.formats import percent
from generator.site.pages.charts import rule_rows, share_rows
from generator.site.svg import BarRow, Point, Series, log_scatter, stacked_bars
from generator.site.views import Model, model_of

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def models() -> dict[str, Model]:
    return {card.id: model_of(card) for card in load_cards(MODELS)}


def part_formulas(inventory: Inventory) -> dict[Part, Poly]:
    """Every part's count in symbols, from the declaration: each tensor's shape product, times its repeats."""
    formulas = dict.fromkeys(Part, Poly())
    for block in inventory.architecture.blocks:
        copies = block.copies()
        for module in block.modules:
            repeat = module.repeat if module.repeat is not None else Poly.constant(1)
            for param in module.params:
                part = part_of(block, module, param)
                if isinstance(param, Param) and part is not None:
                    formulas[part] = formulas[part] + product(param.shape) * repeat * copies
    return formulas


def diff_of(models: dict[str, Model], a: str, b: str) -> Diff:
    pair = next(p for p in PAIRS if (p.a, p.b) == (a, b))
    return compare(pair, models[a], models[b])


# Parts ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL_CARD_PATHS, ids=lambda p: p.stem)
def test_every_tensor_has_a_part_and_the_parts_add_up(path: Path) -> None:
    inventory = count_card(path)
    assert [t.name for t in inventory.tensors if t.part is None] == []
    subtotals = part_subtotals(inventory)
    assert sum(subtotals.values()) == inventory.total
    # Each part's formula, from the same declaration, evaluates to the same sum.
    formulas = part_formulas(inventory)
    assert {part: formulas[part].evaluate(inventory.values) for part in Part} == subtotals


def test_bert_base_parts() -> None:
    subtotals = part_subtotals(count_card(MODELS / "bert-base-uncased.yaml"))
    assert subtotals == {
        Part.EMBEDDINGS: 23_835_648,  # (30,522 + 512 + 2) × 768
        Part.ATTENTION: 28_348_416,  # 12 × (4 × 768² + 4 × 768)
        Part.FEED_FORWARD: 56_669_184,  # 12 × (2 × 768 × 3,072 + 3,072 + 768)
        Part.NORMS: 38_400,  # 2 × 768 + 12 × 4 × 768
        Part.POOLER: 590_592,  # 768² + 768
        Part.HEADS: 0,
    }


@pytest.mark.parametrize(
    ("card", "tensor", "part"),
    [
        ("albert-base-v2", "encoder.embedding_hidden_mapping_in.weight", Part.EMBEDDINGS),
        ("electra-small-discriminator", "electra.embeddings_project.weight", Part.EMBEDDINGS),
        ("deberta-v3-base", "encoder.rel_embeddings.weight", Part.ATTENTION),
        ("deberta-v3-base", "encoder.LayerNorm.weight", Part.NORMS),
        ("mobilebert-uncased", "embeddings.embedding_transformation.weight", Part.EMBEDDINGS),
        ("mobilebert-uncased", "encoder.layer.0.bottleneck.input.dense.weight", Part.FEED_FORWARD),
        ("mobilebert-uncased", "encoder.layer.0.bottleneck.attention.dense.weight", Part.ATTENTION),
        ("mobilebert-uncased", "encoder.layer.0.output.bottleneck.dense.weight", Part.FEED_FORWARD),
        ("mobilebert-uncased", "encoder.layer.0.ffn.0.intermediate.dense.weight", Part.FEED_FORWARD),
        ("mobilebert-uncased", "encoder.layer.0.ffn.0.output.LayerNorm.weight", Part.NORMS),
        ("bert-base-uncased", "embeddings.LayerNorm.weight", Part.NORMS),
        ("bert-base-uncased-pretraining", "cls.predictions.transform.LayerNorm.weight", Part.HEADS),
        ("bert-base-uncased-pretraining", "bert.pooler.dense.weight", Part.POOLER),
        ("modernbert-base", "layers.1.attn_norm.weight", Part.NORMS),
        ("transformer-base", "decoder.layer_stack.0.enc_attn.w_qs.weight", Part.ATTENTION),
    ],
)
def test_classification_choices(card: str, tensor: str, part: Part) -> None:
    assert count_card(MODELS / f"{card}.yaml").tensor(tensor).part is part


# Diffs ----------------------------------------------------------------------------------------


def test_every_declared_pair_is_in_the_catalog(models: dict[str, Model]) -> None:
    assert len(available_pairs(models.values(), content.load("diffs").section("topics"))) == len(PAIRS)
    assert len({p.slug for p in PAIRS}) == len(PAIRS)


def test_base_to_large(models: dict[str, Model]) -> None:
    diff = diff_of(models, "bert-base-uncased", "bert-large-uncased")
    assert diff.difference == 225_659_648  # 335,141,888 − 109,482,240
    assert {row.part: row.difference for row in diff.parts} == {
        Part.EMBEDDINGS: 7_945_216,  # (30,522 + 512 + 2) × (1,024 − 768)
        Part.ATTENTION: 72_413_184,  # 24 × (4 × 1,024² + 4 × 1,024) − 28,348,416
        Part.FEED_FORWARD: 144_780_288,  # 201,449,472 − 56,669,184
        Part.NORMS: 61_952,  # 100,352 − 38,400
        Part.POOLER: 459_008,  # 1,049,600 − 590,592
        Part.HEADS: 0,
    }
    assert sum(row.difference for row in diff.parts) == diff.difference
    assert [(r.symbol, r.a, r.b) for r in diff.changed_symbols] == [
        ("H", 768, 1024),
        ("I", 3072, 4096),
        ("L", 12, 24),
        ("A", 12, 16),
    ]
    # Layers 12–23 are new (16 tensors each); every one of the 199 shared tensors is wider.
    assert diff.count_of(diff.added) == 192 and diff.count_of(diff.removed) == 0
    assert diff.count_of(diff.reshaped) == 199 and diff.unchanged == 0
    assert diff.by_name == 199 and diff.by_role == 0
    query = next(r for r in diff.added if r.name_b == "encoder.layer.12–23.attention.self.query.weight")
    assert (query.shape_b, query.copies, query.count_b) == ((1024, 1024), 12, 12 * 1024 * 1024)
    assert diff.added_parameters == 151_154_688  # 12 × (4H² + 2HI + 9H + I) with H = 1,024, I = 4,096
    assert [c.row.part for c in diff.causes] == [Part.FEED_FORWARD, Part.ATTENTION]
    assert [r.symbol for r in diff.inert_changes] == ["A"]  # 12 → 16 heads: in no formula


def test_cased_to_uncased_is_only_the_vocabulary(models: dict[str, Model]) -> None:
    diff = diff_of(models, "bert-base-cased", "bert-base-uncased")
    assert diff.difference == 1_171_968  # (30,522 − 28,996) × 768
    assert [(r.symbol, r.a, r.b) for r in diff.changed_symbols] == [("V", 28996, 30522)]
    assert [(r.name_a, r.shape_a, r.shape_b) for r in diff.reshaped] == [
        ("embeddings.word_embeddings.weight", (28996, 768), (30522, 768))
    ]
    assert diff.unchanged == 198


def test_bert_to_distilbert_matches_by_role(models: dict[str, Model]) -> None:
    diff = diff_of(models, "bert-base-uncased", "distilbert-base-uncased")
    assert diff.difference == -43_119_360
    assert diff.by_name == 4 and diff.by_role == 96  # the embeddings share names; the layers do not
    examples = {e.part: (e.name_a, e.name_b) for e in diff.naming}
    assert examples[Part.ATTENTION] == (
        "encoder.layer.0.attention.self.query.weight",
        "transformer.layer.0.attention.q_lin.weight",
    )
    removed = {r.name_a for r in diff.removed}
    assert "embeddings.token_type_embeddings.weight" in removed and "pooler.dense.weight" in removed
    assert "encoder.layer.6–11.output.dense.weight" in removed
    assert {row.part: row.difference for row in diff.parts}[Part.POOLER] == -590_592


def test_bert_to_albert_shares_layers(models: dict[str, Model]) -> None:
    diff = diff_of(models, "bert-base-uncased", "albert-base-v2")
    assert diff.b.total == 11_683_584 and diff.difference == -97_798_656
    assert [(s.stored, s.stored_symbols, s.applied_symbol, s.applied) for s in diff.sharing] == [
        (1, ("G", "K"), "L", 12)
    ]
    parts = {row.part: row for row in diff.parts}
    assert (parts[Part.EMBEDDINGS].a, parts[Part.EMBEDDINGS].b) == (23_835_648, 4_004_864)
    assert parts[Part.ATTENTION].b == 2_362_368  # one stored layer: 4 × 768² + 4 × 768
    added = {r.name_b for r in diff.added}
    assert "encoder.embedding_hidden_mapping_in.weight" in added


def test_heads_added_with_no_shared_name(models: dict[str, Model]) -> None:
    diff = diff_of(models, "bert-base-uncased", "bert-base-uncased-pretraining")
    assert diff.by_name == 0 and diff.by_role == 199 and diff.unchanged == 199
    assert diff.difference == diff.added_parameters == 624_188  # MLM head without its tied decoder, and NSP
    assert {row.part: row.difference for row in diff.parts}[Part.HEADS] == 624_188


def test_identical_architectures(models: dict[str, Model]) -> None:
    diff = diff_of(models, "bert-base-uncased", "bert-uncased-l12-h768-a12")
    assert diff.difference == 0 and not diff.changed_symbols and not diff.causes
    assert diff.unchanged == 199 and not (diff.added or diff.removed or diff.reshaped)


# Charts ---------------------------------------------------------------------------------------


def test_shares_are_exact_and_add_up_to_one(models: dict[str, Model]) -> None:
    for row in share_rows(list(models.values())):
        assert sum(s.fraction for s in row.shares) == 1, row.model.id
    bert = next(r for r in share_rows(list(models.values())) if r.model.id == "bert-base-uncased")
    h, total = 768, reference_for("bert-base-uncased")["total"]
    # 25 LayerNorms (one in the embeddings, two in each of 12 layers) of 2H: 38,400, 0.035%, not "0.0%".
    assert [(s.part, percent(s.fraction)) for s in bert.shares] == [
        (Part.EMBEDDINGS, "21.8%"),  # 21.77%
        (Part.ATTENTION, "25.9%"),  # 25.89%
        (Part.FEED_FORWARD, "51.8%"),  # 51.76%
        (Part.NORMS, "0.035%"),
        (Part.POOLER, "0.5%"),  # 0.54%
        (Part.HEADS, "0.0%"),
    ]
    assert next(s.fraction for s in bert.shares if s.part is Part.NORMS) == Fraction(25 * 2 * h, total)


def test_thirds_are_rounded_each_on_its_own() -> None:
    thirds = shares({Part.EMBEDDINGS: 1, Part.ATTENTION: 1, Part.FEED_FORWARD: 1})
    assert [percent(s.fraction) for s in thirds] == ["33.3%", "33.3%", "33.3%"]  # 99.9%, not nudged to 100.0%


@pytest.mark.parametrize(
    ("value", "total", "expected"),
    [
        (98_304, 335_141_888, "0.029%"),  # BERT-Large's missing intermediate biases: 0.0293%
        (0, 1, "0.0%"),
        (1, 1, "100.0%"),
        (2_374, 10_000, "23.7%"),
        (5, 10_000, "0.1%"),  # 0.05% rounds half up
        (4, 10_000, "0.040%"),
        (9_997, 10_000, "99.97%"),  # short of the whole never shows 100.0%
        (99_999, 100_000, "99.999%"),
        (-7_732_352, 102_267_648, "\u22127.6%"),
        (0, 0, "\u2014"),  # a share of nothing (a card 0 wide does no FLOPs) is a dash, not a division by zero
    ],
)
def test_percent_rule(value: int, total: int, expected: str) -> None:
    assert percent(value, total) == expected


def test_albert_large_attention_share_agrees_between_table_and_chart(site: Path) -> None:
    """The table once said 23.8% (nudged to add up) where the chart's label said 23.7% (23.74%)."""
    h, total = 1024, reference_for("albert-large-v2")["total"]
    attention = 4 * (h * h + h)  # query, key, value and output, each H × H with an H bias; one stored layer
    names = [t["name"] for t in reference_for("albert-large-v2")["tensors"]]
    assert sum(".attention." in n and "LayerNorm" not in n for n in names) == 8
    assert f"{100 * attention / total:.2f}" == "23.74" and percent(attention, total) == "23.7%"
    html = (site / "charts" / "index.html").read_text(encoding="utf-8")
    row = re.search(r'<tr id="share-albert-large-v2">.*?</tr>', html)
    assert row is not None and f'<td class="n">23.7%<span class="count">{attention:,}</span></td>' in row.group(0)
    assert f"<title>albert-large-v2: attention 23.7% ({attention:,})</title>" in html
    assert "23.8%" not in row.group(0)


def test_rule_of_thumb_point(models: dict[str, Model]) -> None:
    row = next(r for r in rule_rows(list(models.values())) if r.model.id == "bert-base-uncased")
    assert (row.layers, row.hidden, row.lh2, row.rule) == (12, 768, 7_077_888, 84_934_656)
    assert (row.total, row.without_embeddings) == (109_482_240, 85_646_592)
    assert row.ratio == Fraction(109_482_240, 84_934_656)
    assert row.reason == "embeddings"
    albert = next(r for r in rule_rows(list(models.values())) if r.model.id == "albert-base-v2")
    assert (albert.stored_layers, albert.reason) == (1, "shared")


def layouts(svg: str) -> list[ET.Element]:
    """A chart's <svg> elements, one per layout, in the order written."""
    return list(ET.fromstring(f"<chart>{svg}</chart>"))


SCATTER: dict[str, Any] = {
    "x_label": "x",
    "y_label": "y",
    "slope": 12,
    "line_label": "12x",
    "marker_labels": ("total", "low"),
}


def test_log_scatter_coordinates() -> None:
    # x from 10³ to 10⁵ and y from 10⁴ to 10⁶ across a 900 × 600 chart: plot area 78–876 by 58–542.
    points = [Point("a", 1_000, 10_000, None, "a"), Point("b", 100_000, 1_000_000, 100_000, "b")]
    wide, _ = layouts(log_scatter("t", "T", "D", points, **SCATTER))
    assert (wide.get("id"), wide.get("class"), wide.get("viewBox")) == ("t", "chart chart-wide", "0 0 900 600")
    circles = [(c.get("cx"), c.get("cy"), c.get("class")) for c in wide.iter(f"{SVG}circle")]
    assert ("78", "542", "point") in circles  # (10³, 10⁴): bottom left
    assert ("876", "58", "point") in circles  # (10⁵, 10⁶): top right
    assert ("876", "300", "point hollow") in circles  # (10⁵, 10⁵): half way up


def test_log_scatter_narrow_coordinates() -> None:
    # The narrow layout is 360 × 480 with its plot area 56–344 by 58–422 (one line of legend: "total", "low",
    # "12x" fit in 360 units), so the same points land at the corners of that smaller area.
    points = [Point("a", 1_000, 10_000, None, "a", labelled=True), Point("b", 100_000, 1_000_000, 100_000, "b")]
    _, root = layouts(log_scatter("t", "T", "D", points, **SCATTER))
    assert (root.get("id"), root.get("class"), root.get("viewBox")) == ("t-narrow", "chart chart-narrow", "0 0 360 480")
    circles = [(c.get("cx"), c.get("cy"), c.get("class")) for c in root.iter(f"{SVG}circle")]
    assert ("56", "422", "point") in circles
    assert ("344", "58", "point") in circles
    assert ("344", "240", "point hollow") in circles
    labels = [(t.get("x"), t.get("y"), t.text) for t in root.iter(f"{SVG}text") if t.get("class") == "point-label"]
    assert labels == [("64", "426", "a")]  # right of its point, on its line


def test_stacked_bars_narrow_puts_labels_above_full_width_bars() -> None:
    series = [Series("embeddings", "embeddings", "solid"), Series("feed-forward", "feed-forward", "dots")]
    svg = stacked_bars("s", "T", "D", series, [BarRow("first", (1, 3)), BarRow("second", (1, 1))])
    wide, root = layouts(svg)
    assert (wide.get("id"), wide.get("class")) == ("s", "chart chart-wide")
    assert (root.get("id"), root.get("viewBox")) == ("s-narrow", "0 0 360 149")
    labels = [(t.get("x"), t.get("y"), t.get("text-anchor"), t.text) for t in root.iter(f"{SVG}text")]
    # Legend on one line (20 units), ticks 36 units below it, then rows of 32: a label, 15 units down a bar
    # 12 high; the last bar ends at 115, the percent axis below it (34): 149 in all. Bars span 16 to 340.
    assert [label for label in labels if label[3] in ("first", "second")] == [
        ("16", "67", None, "first"),
        ("16", "99", None, "second"),
    ]
    bars = [(r.get("x"), r.get("y"), r.get("width")) for r in root.iter(f"{SVG}rect") if r.get("class") == "segment"]
    assert bars == [("16", "71", "81"), ("97", "71", "243"), ("16", "103", "162"), ("178", "103", "162")]
    assert (
        next(r.get("fill") for r in root.iter(f"{SVG}rect") if r.get("class") == "segment")
        == "url(#s-narrow-embeddings)"
    )


def test_svgs_are_accessible_images(site: Path) -> None:
    html = (site / "charts" / "index.html").read_text(encoding="utf-8")
    svgs = re.findall(r"<svg .*?</svg>", html, re.S)
    # Each chart in its wide and its narrow layout, which say the same thing.
    assert [ET.fromstring(svg).get("id") for svg in svgs] == [
        "chart-shares",
        "chart-shares-narrow",
        "chart-rule",
        "chart-rule-narrow",
        "chart-memory",
        "chart-memory-narrow",
    ]
    named = []
    for svg in svgs:
        root = ET.fromstring(svg)
        assert root.get("role") == "img"
        title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
        assert title is not None and title.text and desc is not None and desc.text
        assert root.get("aria-labelledby") == title.get("id")
        assert root.get("aria-describedby") == desc.get("id")
        named.append((title.text, desc.text))
    assert named[0] == named[1] and named[2] == named[3] and named[4] == named[5]
    assert len({named[0], named[2], named[4]}) == 3
    ids = re.findall(r' id="([^"]+)"', html)
    assert len(ids) == len(set(ids))  # the two layouts' titles, descriptions and patterns do not share an id
    # The charts need no script; the page's only one copies a formula's TeX (static/tex.js).
    assert re.findall(r'<script src="([^"]+)"', html) == ["../static/tex.js"]
    # The numbers beside the chart: bert-base-uncased's row of shares.
    row = re.search(r'<tr id="share-bert-base-uncased">(.*?)</tr>', html, re.S)
    assert row and "21.8%" in row.group(1) and "23,835,648" in row.group(1)
    rule = re.search(r'<tr id="rule-bert-base-uncased">(.*?)</tr>', html, re.S)
    assert rule and "7,077,888" in rule.group(1) and "84,934,656" in rule.group(1)


# Pages and links ------------------------------------------------------------------------------


def test_diff_pages_are_built_and_linked(site: Path) -> None:
    index = (site / "index.html").read_text(encoding="utf-8")
    compare = (site / "compare" / "index.html").read_text(encoding="utf-8")
    assert 'href="diffs/index.html"' in index and 'href="charts/index.html"' in index  # under "Learn"
    assert 'href="../diffs/index.html"' in compare and 'href="../charts/index.html"' in compare
    listing = (site / "diffs" / "index.html").read_text(encoding="utf-8")
    topics = content.load("diffs").section("topics")
    for pair in PAIRS:
        page = (site / "diffs" / pair.slug / "index.html").read_text(encoding="utf-8")
        topic = str(escape(topics(pair.slug)))
        assert f'<p class="lede">{topic[:1].upper()}{topic[1:]}. A is ' in page  # the topic, from content/en
        assert f'href="{pair.slug}/index.html"' in listing.replace("../diffs/", "")


def test_diff_page_marks_changes_in_words(site: Path) -> None:
    html = (site / "diffs" / "bert-base-uncased--bert-large-uncased" / "index.html").read_text(encoding="utf-8")
    row = re.search(r'<tr id="sym-L" class="changed">(.*?)</tr>', html, re.S)
    assert row and "<mark>" in row.group(1) and "<strong>changed</strong> (+12)" in row.group(1)
    same = re.search(r'<tr id="sym-V">(.*?)</tr>', html, re.S)
    assert same and "same" in same.group(1)
    assert "225,659,648 more" in html
    assert "+144,780,288" in html  # the feed-forward difference, in the parts table and the summary
    assert "encoder.layer.12–23.attention.self.query.weight" in html


def test_card_without_pairs_still_builds(tmp_path: Path) -> None:
    models_dir = tmp_path / "models"
    models_dir.mkdir()
    (models_dir / "bert-base-uncased.yaml").write_text((MODELS / "bert-base-uncased.yaml").read_text())
    out = tmp_path / "site"
    build(models_dir, out)
    assert "None of the compared pairs" in (out / "diffs" / "index.html").read_text(encoding="utf-8")
    assert (out / "charts" / "index.html").is_file()


def test_charts_sentences_on_order_and_ties_follow_transformers(site: Path) -> None:
    """RoBERTa's masked-LM class lists the word embeddings first; XLM-RoBERTa's lists the decoder first."""
    roberta, xlmr = reference_for("test-roberta-masked-lm"), reference_for("test-xlm-roberta-masked-lm")
    names = [t["name"] for t in roberta["tensors"]]
    assert names[0] == "roberta.embeddings.word_embeddings.weight" and "lm_head.decoder.weight" not in names
    assert {"name": "lm_head.decoder.weight", "tied_to": names[0]} in roberta["tied"]
    xlmr_names = [t["name"] for t in xlmr["tensors"]]
    first_encoder = next(i for i, n in enumerate(xlmr_names) if n.startswith("roberta."))
    assert xlmr_names.index("lm_head.decoder.weight") < first_encoder
    assert "roberta.embeddings.word_embeddings.weight" not in xlmr_names
    assert {"name": "roberta.embeddings.word_embeddings.weight", "tied_to": "lm_head.decoder.weight"} in xlmr["tied"]
    for card_id in ("transformer-base", "transformer-big", "transformer-seed-one-layer"):
        tied = reference_for(card_id)["tied"]
        assert {"name": "tgt_word_prj.weight", "tied_to": "encoder.src_word_emb.weight"} in tied
    html = (site / "charts" / "index.html").read_text(encoding="utf-8")
    assert "first listed as the decoder" not in html
    assert (
        "<code>RobertaForMaskedLM</code> lists it first as <code>roberta.embeddings.word_embeddings.weight</code>, "
        "and <code>lm_head.decoder.weight</code> is the tie; <code>XLMRobertaForMaskedLM</code> registers its head "
        "first, so there <code>lm_head.decoder.weight</code> comes first and the word embeddings are the tie."
    ) in html
    assert "whose output projection <code>tgt_word_prj.weight</code> is the shared token table" in html
