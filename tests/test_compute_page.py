"""The "Compute and memory" section of the model pages, read off the built pages.

Each catalog page's figures are parsed from the HTML and compared with torch's: the reference file
(tests/reference/compute/, measured by tools/compute_reference.py) where it has the (b, s) point,
else the closed form that tests/test_compute.py proves against those files at every point. The
training memory is worked here from the issue's definition (Adam: 16 bytes per trained parameter
beside the activations), with the parameter count of the parameter reference files.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from conftest import MODELS, REFERENCE, card_by_id, reference_for
from generator.analysis.calculator_compute import longest_of
from generator.cards.card import load_card
from generator.counting.compute import count_compute, step_inexact
from generator.site import thumb_view

COMPUTE = REFERENCE / "compute"
# A card whose step no polynomial says (Family.inexact_steps) shows no step to check.
CATALOG = [
    p.stem
    for p in sorted(MODELS.glob("*.yaml"))
    if load_card(p).family.name != "transformer" and step_inexact(load_card(p)) is None
]
# A card whose step pads its length (Longformer) works no rule of thumb by token: its page says why.
RULED = [card_id for card_id in CATALOG if not count_compute(load_card(MODELS / f"{card_id}.yaml")).per_step]
TRANSFORMERS = [p.stem for p in sorted(MODELS.glob("*.yaml")) if load_card(p).family.name == "transformer"]


def _page(site: Path, card_id: str) -> str:
    return (site / "models" / card_id / "index.html").read_text(encoding="utf-8")


def _value(page: str, anchor: str) -> int:
    """The exact integer of the row ``anchor``: its first cell with a data-value."""
    row = re.search(rf'<tr id="{re.escape(anchor)}">(.*?)</tr>', page, re.S)
    assert row is not None, anchor
    found = re.search(r'data-value="(-?\d+)"', row.group(1))
    assert found is not None, anchor
    return int(found.group(1))


def _values(page: str, anchor: str) -> list[int]:
    row = re.search(rf'<(tr|tbody) id="{re.escape(anchor)}">(.*?)</\1>', page, re.S)
    assert row is not None, anchor
    return [int(x) for x in re.findall(r'data-value="(-?\d+)"', row.group(2))]


def _torch(card_id: str, batch: int, seq: int) -> dict[str, int]:
    """forward, backward, fp32 and bf16 at (b, s): torch's measurement, or the closed form proved against it."""
    points = json.loads((COMPUTE / f"{card_id}.json").read_text(encoding="utf-8"))["points"]
    for point in points:
        if (point["batch"], point["seq"]) == (batch, seq):
            return {k: point[k] for k in ("forward", "backward", "fp32", "bf16")}
    figures = count_compute(card_by_id(card_id)).at(batch, seq)
    return {
        "forward": figures.forward,
        "backward": figures.backward,
        "fp32": figures.activations["fp32"],
        "bf16": figures.activations["bf16"],
    }


def _page_seq(card_id: str) -> int:
    return min(card_by_id(card_id).config["max_position_embeddings"], 512)


def _weights_and_adam(card_id: str, precision: str) -> int:
    """Adam's bytes for the card's parameters, from the parameter reference: 16 per trained parameter;
    a frozen one (requires_grad False) keeps only its weight, 4 bytes in fp32 and 2 in bf16."""
    reference = reference_for(card_id)
    trained = reference.get("trainable", reference["total"])
    return 16 * trained + {"fp32": 4, "bf16": 2}[precision] * (reference["total"] - trained)


@pytest.mark.parametrize("card_id", CATALOG)
def test_the_step_equals_torch(site: Path, card_id: str) -> None:
    page = _page(site, card_id)
    expected = _torch(card_id, 1, _page_seq(card_id))
    found = {
        "forward": _value(page, "c-forward"),
        "backward": _value(page, "c-backward"),
        "fp32": _value(page, "c-activations-fp32"),
        "bf16": _value(page, "c-activations-bf16"),
        "training fp32": _value(page, "c-training-fp32"),
        "training bf16": _value(page, "c-training-bf16"),
    }
    # Adam: fp32 weights, gradients and two moments (16 bytes); or bf16 weights and gradients with an
    # fp32 master copy and moments (2 + 2 + 4 + 8 = 16 bytes): per parameter, every one trained here.
    assert found == {
        **expected,
        "training fp32": _weights_and_adam(card_id, "fp32") + expected["fp32"],
        "training bf16": _weights_and_adam(card_id, "bf16") + expected["bf16"],
    }


@pytest.mark.parametrize("card_id", CATALOG)
def test_the_grid_equals_torch(site: Path, card_id: str) -> None:
    """Rows for s in 128, 512 and the longest the model takes (once each, none above it) times b in 1, 8,
    32, and no others. The longest is P, less the positions before the first token for the families that
    number them after a padding row (RoBERTa's and MPNet's 514 rows hold 512 tokens)."""
    page = _page(site, card_id)
    card = card_by_id(card_id)
    positions = longest_of(card.family, card.config)
    assert positions is not None
    seqs = sorted({x for x in (128, 512, positions) if x <= positions})
    points = [(batch, seq) for seq in seqs for batch in (1, 8, 32)]
    assert re.findall(r'<tr id="c-grid-b(\d+)-s(\d+)">', page) == [(str(b), str(s)) for b, s in points]
    for batch, seq in points:
        torch = _torch(card_id, batch, seq)
        assert _values(page, f"c-grid-b{batch}-s{seq}") == [
            _weights_and_adam(card_id, "bf16") + torch["bf16"],
            _weights_and_adam(card_id, "fp32") + torch["fp32"],
            torch["bf16"],
            torch["forward"] + torch["backward"],
        ], (batch, seq)


def test_bert_large_answers_fine_tuning_at_batch_32_and_512_tokens(site: Path) -> None:
    page = _page(site, "bert-large-uncased")
    row = re.search(r'<tr id="c-grid-b32-s512">(.*?)</tr>', page, re.S)
    assert row is not None
    torch = _torch("bert-large-uncased", 32, 512)
    parameters = reference_for("bert-large-uncased")["total"]
    assert f"{(16 * parameters + torch['bf16']) / 2**30:.1f} GiB" in row.group(1)


@pytest.mark.parametrize("card_id", RULED)
def test_the_rules_of_thumb_add_up(site: Path, card_id: str) -> None:
    """2N·b·s plus its parts is the exact forward; 6N·b·s plus three times that gap, less what the
    backward skips, is the exact forward and backward; the backward skips twice the forward less itself.
    A model whose figures follow a padded length (step symbols) says instead why the rules are not worked."""
    page = _page(site, card_id)
    if count_compute(card_by_id(card_id)).per_step:
        assert 'id="c-rules-stepped"' in page and 'id="c-rule-2n"' not in page
        return
    seq = _page_seq(card_id)
    torch = _torch(card_id, 1, seq)
    parameters = reference_for(card_id)["total"]
    rule, forward, *parts = _values(page, "c-rule-2n")
    assert (rule, forward) == (2 * parameters * seq, torch["forward"])
    assert rule + sum(parts) == forward
    rule6, total, thrice, skipped = _values(page, "c-rule-6n")
    assert (rule6, total) == (6 * parameters * seq, torch["forward"] + torch["backward"])
    assert thrice == 3 * (forward - rule)
    assert skipped == torch["backward"] - 2 * torch["forward"]
    assert rule6 + thrice + skipped == total


@pytest.fixture(scope="module")
def bert_base(site: Path) -> str:
    return _page(site, "bert-base-uncased")


def test_korthikanti_gap_of_bert_base(bert_base: str) -> None:
    """Per layer in bf16, BertLayer keeps Korthikanti's 34·s·b·H + 5·A·s²·b bytes plus, exactly,
    2·b·s·H (two hidden dropout masks at 2 bytes, not 1), b·A·s² (the attention's mask likewise)
    and 16·b·s (two LayerNorms' mean and reciprocal deviation in fp32)."""
    b, s, H, A, I = 1, 512, 768, 12, 3072  # BERT-Base's config, in the paper's symbols
    rule, exact, masks, statistics, rest = _values(bert_base, "c-korthikanti")
    assert rule == 34 * s * b * H + 5 * A * s * s * b
    assert (masks, statistics, rest) == (2 * b * s * H + b * A * s * s, 16 * b * s, 0)
    # Worked from the modeling file as tests/test_compute.py does, in bf16: ten b·s·H storages, two
    # of b·s·I, three of b·A·s² at 2 bytes, and four fp32 statistics per token.
    assert exact == 2 * (10 * b * s * H + 2 * b * s * I + 3 * b * A * s * s) + 16 * b * s
    assert exact == rule + masks + statistics + rest


def test_s_squared_and_masks_of_bert_base(bert_base: str) -> None:
    b, s, H, A = 1, 512, 768, 12
    section = re.search(r'id="c-s2".*?<ul>(.*?)</ul>', bert_base, re.S)
    assert section is not None
    items = [html.unescape(re.sub(r"<[^>]+>", "", x)) for x in re.findall(r"<li>(.*?)</li>", section.group(1), re.S)]
    scores = 2 * b * s * s * H  # b·A products of s × (H/A) by (H/A) × s
    probabilities = 2 * b * A * s * s  # bytes in bf16
    assert [x.split(": ", 1)[1] for x in items] == [
        f"scores QKᵀ, {scores:,} FLOPs",
        f"probabilities × V, {scores:,} FLOPs",
        f"attention probabilities, {probabilities:,} bytes in bf16",
        f"attention dropout mask, {probabilities:,} bytes in bf16",
        f"dropped probabilities, {probabilities:,} bytes in bf16",
    ]
    masks = re.search(r'id="c-masks".*?<ul>(.*?)</ul>\s*<p>(.*?)</p>', bert_base, re.S)
    assert masks is not None
    # The embeddings' dropout, and per layer the attention's and the two hidden dropouts.
    elements = b * s * H + 12 * (b * A * s * s + 2 * b * s * H)
    assert f"Together {elements:,} elements: {2 * elements:,} bytes in bf16" in masks.group(2)


def test_each_component_adds_up_to_the_step(bert_base: str) -> None:
    """The footers of the worked components add up to the summary's forward, backward and bytes."""
    footers = re.findall(
        r'<tfoot>\s*<tr><th scope="row">[^<]*</th><td></td><td></td>'
        r'<td class="n count" data-value="(\d+)">[^<]*</td><td class="n" data-value="(\d+)">[^<]*</td>'
        r'<td class="n" data-fp32="(\d+)" data-bf16="(\d+)">',
        bert_base,
    )
    assert len(footers) == 3  # embeddings, layer, pooler
    forward, backward, fp32, bf16 = ([int(row[i]) for row in footers] for i in range(4))
    assert sum(forward) == _value(bert_base, "c-forward")
    assert sum(backward) == _value(bert_base, "c-backward")
    assert sum(fp32) == _value(bert_base, "c-activations-fp32")
    assert sum(bf16) == _value(bert_base, "c-activations-bf16")


def test_the_memory_row_excludes_activations_and_links_here(bert_base: str) -> None:
    row = re.search(r'<tr id="memory-training"><th scope="row">(.*?)</th>', bert_base, re.S)
    assert row is not None
    assert "without activations" in row.group(1)
    assert 'href="#compute"' in row.group(1)
    assert '<li><a href="#compute">' in bert_base  # On this page


@pytest.mark.parametrize("card_id", TRANSFORMERS)
def test_a_model_no_transformers_class_runs_shows_no_figure(site: Path, card_id: str) -> None:
    page = _page(site, card_id)
    section = re.search(r'<section aria-labelledby="compute">(.*?)</section>', page, re.S)
    assert section is not None
    assert 'id="c-not-measured"' in section.group(1) and "Not measured" in section.group(1)
    assert "data-value" not in section.group(1)


def test_what_the_rules_take_apart_is_shared_by_cards_of_one_step_and_equals_a_fresh_count() -> None:
    """The rules of thumb's symbolic parts are worked out once per step's blocks: BERT-Base and BERT-Large
    share them, and a card's rules are the same once they are worked out afresh."""
    base, large = (count_compute(card_by_id(name)) for name in ("bert-base-uncased", "bert-large-uncased"))
    assert base.steps is large.steps
    assert thumb_view.apart(base) is thumb_view.apart(large)
    kept = thumb_view.compare_thumb_rules(large, 512, 0)
    H, A = large.values["H"], large.values["A"]
    assert kept.korthikanti is not None and kept.korthikanti.rule.value == 34 * 512 * H + 5 * A * 512 * 512
    thumb_view._APART.clear()
    assert thumb_view.compare_thumb_rules(large, 512, 0) == kept


@pytest.mark.parametrize("card_id", sorted(set(CATALOG) - set(RULED)))
def test_a_padded_step_says_why_it_works_no_rule_of_thumb(site: Path, card_id: str) -> None:
    """The rules sort a step's terms by their degree in s; a padded length has none, so the page says so."""
    page = _page(site, card_id)
    assert 'id="c-stepped"' in page and 'id="c-rules-stepped"' in page
    assert 'id="c-rule-2n"' not in page and 'id="c-rule-6n"' not in page
