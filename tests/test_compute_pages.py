"""Compute on the comparison, the charts and the errata: the built pages, parsed.

Every figure a page shows is checked against the compute engine, whose polynomials
tests/test_compute.py proves equal to torch at every committed (b, s) point; for BERT-Base and
BERT-Large the figures at b = 32 are also taken straight from the reference files (torch's own
numbers at b = 1 and 2, s = 512), since FLOPs and activation bytes are linear in b for BERT.
"""

from __future__ import annotations

import html
import itertools
import json
import os
import re
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import MODELS, REFERENCE, ROOT, card_by_id
from generator.build.pipeline import build
from generator.cards.card import load_card
from generator.counting.compute import count_compute, measured, step_inexact
from generator.site.comparison_step import BATCH, SEQ, comparison_seq
from generator.site.formats import decimal

GOLDEN = ROOT / "tests" / "golden"


def read(site: Path, path: str) -> str:
    return (site / path).read_text(encoding="utf-8")


def cells(page: str, row_id: str) -> list[str]:
    """The data-value of each cell of one row (<tr id=row_id>), in order."""
    row = re.search(rf'<tr id="{re.escape(row_id)}"[^>]*>(.*?)</tr>', page, re.S)
    assert row is not None, row_id
    return re.findall(r'<td[^>]*data-value="([^"]*)"', row.group(1))


def torch_at_32(card_id: str) -> dict[str, int]:
    """Torch's figures at b = 32, s = 512, from its points at b = 1 and b = 2 (linear in b for BERT)."""
    data = json.loads((REFERENCE / "compute" / f"{card_id}.json").read_text(encoding="utf-8"))
    one, two = ({p["batch"]: p for p in data["points"] if p["seq"] == SEQ}[n] for n in (1, 2))
    return {key: one[key] + (BATCH - 1) * (two[key] - one[key]) for key in ("forward", "backward", "fp32", "bf16")}


# The comparison ------------------------------------------------------------------------------------


def test_compare_shows_every_cards_step_as_the_engine_counts_it(site: Path) -> None:
    page = read(site, "compare/index.html")
    rows = dict(re.findall(r'<tr id="([^"]+)" data-family[^>]*>(.*?)</tr>', page, re.S))
    cards = [load_card(path) for path in sorted(MODELS.glob("*.yaml"))]
    assert set(rows) == {card.id for card in cards}
    for card in cards:
        row = rows[card.id]
        if not measured(card.family) or step_inexact(card):  # no step figure: BigBird's block-sparse models
            assert row.count('<td class="not-measured">not measured</td>') == 2, card.id
            assert "data-value" not in row, card.id
            continue
        seq = comparison_seq(card)
        step = count_compute(card).at(BATCH, seq)
        flops, memory = (Fraction(v) for v in cells(page, card.id))
        assert flops == Fraction(step.forward + step.backward, BATCH * seq), card.id
        assert memory == step.training_memory["bf16_mixed"], card.id
        assert f"forward {decimal(Fraction(step.forward, BATCH * seq))}" in row, card.id
        assert f"{step.training_memory['bf16_mixed']:,} bytes" in row, card.id
        assert (f"at s = {seq} (P)" in row) == (seq < SEQ), card.id


def test_the_2017_transformer_is_not_measured(site: Path) -> None:
    page = read(site, "compare/index.html")
    row = re.search(r'<tr id="transformer-base"([^>]*)>(.*?)</tr>', page, re.S)
    assert row is not None
    assert "data-flops" not in row.group(1) and "data-memory" not in row.group(1)
    assert row.group(2).count("not measured") == 2


@pytest.mark.parametrize("card_id", ["bert-base-uncased", "bert-large-uncased"])
def test_compare_figures_equal_torchs(site: Path, card_id: str) -> None:
    """BERT's figures on the comparison, straight from torch's reference points."""
    torch = torch_at_32(card_id)
    flops, memory = (Fraction(v) for v in cells(read(site, "compare/index.html"), card_id))
    assert flops == Fraction(torch["forward"] + torch["backward"], BATCH * SEQ)
    parameters = json.loads((REFERENCE / f"{card_id}.json").read_text(encoding="utf-8"))["total"]
    assert memory == 16 * parameters + torch["bf16"]  # every BERT parameter is trained: 2 + 2 + 4 + 8 bytes


def test_compare_rows_carry_the_sort_keys(site: Path) -> None:
    """tables.js sorts by data-flops and data-memory: the same numbers as the cells."""
    page = read(site, "compare/index.html")
    for card_id, flops, memory in re.findall(r'<tr id="([^"]+)"[^>]* data-flops="([^"]+)" data-memory="(\d+)"', page):
        assert cells(page, card_id) == [flops, memory]
    assert '<option value="-flops">' in page and '<option value="-memory">' in page


# The charts ------------------------------------------------------------------------------------------


def test_memory_chart_table_equals_the_engine(site: Path) -> None:
    page = read(site, "charts/index.html")
    header = re.search(r'<table class="lengths wide">.*?<thead>(.*?)</thead>', page, re.S)
    assert header is not None
    models = re.findall(r"models/([^/]+)/index.html", header.group(1))
    assert models == [
        "distilbert-base-uncased",
        "albert-base-v2",
        "bert-base-uncased",
        "modernbert-base",
        "bert-large-uncased",
    ]
    computes = [count_compute(card_by_id(m)) for m in models]
    seqs = [int(s) for s in re.findall(r'<tr id="memory-s(\d+)">', page)]
    assert seqs == list(range(64, 513, 64))
    for seq in seqs:
        found = [int(v) for v in cells(page, f"memory-s{seq}")]
        assert found == [c.at(BATCH, seq).training_memory["bf16_mixed"] for c in computes], seq


def test_memory_chart_bends_upwards(site: Path) -> None:
    """The s² term is visible: at equal steps of s, each model's memory grows by more each step."""
    page = read(site, "charts/index.html")
    columns = list(zip(*(map(int, cells(page, f"memory-s{s}")) for s in range(64, 513, 64)), strict=True))
    for column in columns:
        steps = [b - a for a, b in itertools.pairwise(column)]
        assert all(b > a for a, b in itertools.pairwise(steps)), column


def test_memory_chart_names_the_largest_growth_and_the_largest_rise(site: Path) -> None:
    """The chart's description names the model whose memory grows most against its own at s = 64 (a ratio)
    and, apart, the one whose line rises the most in GiB: on the chart's axis that one is the steepest."""
    page = read(site, "charts/index.html")
    columns = list(zip(*(map(int, cells(page, f"memory-s{s}")) for s in range(64, 513, 64)), strict=True))
    header = re.search(r'<table class="lengths wide">.*?<thead>(.*?)</thead>', page, re.S)
    assert header is not None
    titles = [html.unescape(t) for t in re.findall(r'<a href="[^"]*models/[^"]*">([^<]+)</a>', header.group(1))]
    by_ratio = max(range(len(columns)), key=lambda n: Fraction(columns[n][-1], columns[n][0]))
    by_rise = max(range(len(columns)), key=lambda n: columns[n][-1] - columns[n][0])
    assert by_ratio != by_rise  # else the two sentences would name one model
    desc = html.unescape(re.search(r'id="chart-memory-desc">([^<]*)<', page)[1])  # type: ignore[index]
    assert f"at 64 tokens, {titles[by_ratio]} grows the most" in desc
    rise = round((columns[by_rise][-1] - columns[by_rise][0]) / 2**30, 1)
    assert f"In GiB, {titles[by_rise]} rises the most, by {rise} GiB." in desc
    assert "steepest" not in desc


def test_memory_chart_draws_the_tables_numbers(site: Path) -> None:
    """Each line has a point per sequence length, its tooltip giving the table's bytes."""
    page = html.unescape(read(site, "charts/index.html"))
    wide = page[page.index('id="chart-memory"') : page.index('id="chart-memory-narrow"')]
    for seq in range(64, 513, 64):
        for value in cells(read(site, "charts/index.html"), f"memory-s{seq}"):
            assert f"s = {seq}, b = {BATCH}: " in wide and f"({int(value):,} bytes)" in wide
    assert wide.count("<polyline") == 5 and wide.count('class="point line-') == 5 * 8


# The errata ------------------------------------------------------------------------------------------


def errata_value(page: str, row_id: str) -> list[Fraction]:
    return [Fraction(v) for v in cells(page, row_id)]


def errata_values(page: str, erratum: str, column: int, keys: str) -> dict[str, Fraction]:
    """One model's column of an erratum's rows, by row key (keys separated by spaces)."""
    return {key: errata_value(page, f"{erratum}-{key}")[column] for key in keys.split()}


def test_sixteen_bytes_per_parameter(site: Path) -> None:
    page = read(site, "errata/index.html")
    row = "sixteen-bytes-per-parameter-"
    for n, card_id in enumerate(("bert-base-uncased", "bert-large-uncased")):
        torch = torch_at_32(card_id)
        parameters = json.loads((REFERENCE / f"{card_id}.json").read_text(encoding="utf-8"))["total"]
        assert errata_value(page, row + "published")[n] == 16 * parameters
        assert errata_value(page, row + "state")[n] == 16 * parameters
        assert errata_value(page, row + "activations")[n] == torch["bf16"]
        assert errata_value(page, row + "memory")[n] == 16 * parameters + torch["bf16"]
        assert errata_value(page, row + "fp32")[n] == 16 * parameters + torch["fp32"]
        # The s² terms: probabilities, their mask and the dropped probabilities, b·A·s² values of 2 bytes, per layer.
        config = card_by_id(card_id).symbol_values()
        assert errata_value(page, row + "square")[n] == 3 * 2 * config["L"] * BATCH * config["A"] * SEQ**2


def test_six_n_flops_per_token(site: Path) -> None:
    page = read(site, "errata/index.html")
    row = "six-n-flops-per-token"
    for n, card_id in enumerate(("bert-base-uncased", "bert-large-uncased")):
        torch = torch_at_32(card_id)
        tokens = BATCH * SEQ
        total = json.loads((REFERENCE / f"{card_id}.json").read_text(encoding="utf-8"))["total"]
        values = errata_values(
            page, row, n, "published no-product once-per-sequence attention exact forward-published forward skipped"
        )
        assert values["published"] == 6 * total and values["forward-published"] == 2 * total
        assert values["exact"] == Fraction(torch["forward"] + torch["backward"], tokens)
        assert values["forward"] == Fraction(torch["forward"], tokens)
        assert values["skipped"] == Fraction(2 * torch["forward"] - torch["backward"], tokens)
        assert (
            values["published"] + values["no-product"] + values["once-per-sequence"] + values["attention"]
            == (values["exact"])
        )
        # Attention's two products, b·A of s × (H/A) by (H/A) × s each, 2·s·H FLOPs per token and layer, thrice.
        config = card_by_id(card_id).symbol_values()
        assert values["attention"] == 3 * 2 * 2 * SEQ * config["H"] * config["L"]


def test_korthikanti_per_layer(site: Path) -> None:
    page = read(site, "errata/index.html")
    row = "korthikanti-activations"
    for n, card_id in enumerate(("bert-base-uncased", "bert-large-uncased")):
        config = card_by_id(card_id).symbol_values()
        h, a, s, b = config["H"], config["A"], SEQ, BATCH
        values = errata_values(
            page, row, n, "published published-square exact exact-square masks masks-square statistics rest"
        )
        assert values["published"] == 34 * s * b * h + 5 * a * s**2 * b
        assert values["published-square"] == 5 * a * s**2 * b
        # The layers' bytes of torch's activations: everything but the embeddings' and the encoder output's.
        layer = next(blk for blk in count_compute(card_by_id(card_id)).blocks if blk.block.key == "layer")
        assert values["exact"] * config["L"] == layer.saved_bytes("bf16").every.evaluate({**config, "b": b, "s": s})
        # Three masks of 2 bytes on CPU: the attention probabilities' (b·A·s²) and two of b·s·H.
        assert values["masks"] == a * s**2 * b + 2 * s * b * h and values["masks-square"] == a * s**2 * b
        assert values["exact-square"] == 6 * a * s**2 * b
        assert values["statistics"] == 2 * 2 * 4 * s * b  # two LayerNorms, mean and reciprocal deviation, fp32
        assert values["rest"] == 0


def test_errata_anchors_are_pinned(site: Path) -> None:
    """Every pinned anchor of the errata page is still there (new ones may be added; none removed or renamed).

    Regenerate after a deliberate addition with: UPDATE_GOLDEN=1 make test
    """
    anchors = re.findall(r' id="([^"]+)"', read(site, "errata/index.html"))
    golden = GOLDEN / "errata.anchors"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text("\n".join(anchors) + "\n", encoding="utf-8")
    pinned = golden.read_text(encoding="utf-8").split()
    assert [a for a in pinned if a not in anchors] == []
    for key in ("sixteen-bytes-per-parameter", "six-n-flops-per-token", "korthikanti-activations"):
        assert key in pinned


def test_decimal_is_exact_where_the_decimals_end() -> None:
    assert decimal(Fraction(1_962_938_368)) == "1,962,938,368"
    assert decimal(Fraction(2_465, 2)) == "1,232.5"
    assert decimal(Fraction(-143_746_560)) == "\u2212143,746,560"
    assert decimal(Fraction(-143_746_560), "") == "-143746560"
    assert decimal(Fraction(1, 3)) == "≈0.33" and decimal(Fraction(1, 3), "") == "0.333333"


@pytest.mark.parametrize(
    "odd",
    ["hidden_act: mish", "max_position_embeddings: 0"],
    ids=["activation-not-declared", "no-positions"],
)
def test_a_card_without_a_step_to_show_builds(write_card, tmp_path: Path, odd: str) -> None:  # type: ignore[no-untyped-def]
    """The card checks accept any hidden_act transformers names (Mish's saved tensors are not declared),
    and P = 0: such a card builds, its step "not measured"."""
    write_card(
        f"""
        id: odd
        title: Odd
        family: bert
        head: base
        config: {{hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 2, intermediate_size: 128,
                 vocab_size: 100, {odd}}}
        """
    )
    out = tmp_path / "site"
    build(tmp_path / "models", out)
    row = re.search(r'<tr id="odd"[^>]*>(.*?)</tr>', read(out, "compare/index.html"), re.S)
    assert row is not None and row.group(1).count("not measured") == 2
    page = read(out, "models/odd/index.html")
    why = {
        "hidden_act: mish": "This config has no training step to work here: its activation function's saved tensors "
        "are not declared",
        "max_position_embeddings: 0": "transformers builds this model, but a training step of it raises: "
        "max_position_embeddings is 0: the longest sequence this model takes has no token, so no step runs.",
    }[odd]
    assert f'<p id="c-not-measured">Not measured. {why}' in page
    assert 'id="c-grid"' not in page
