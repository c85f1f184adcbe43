"""BigBird: BERT's tensors under ``bert``, full attention on short inputs, checked against transformers and torch."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from conftest import REFERENCE, TEST_CARDS, card_by_id, reference_for
from generator.cards.card import Card, load_card
from generator.cards.problems import InputError
from generator.counting.compute import count_compute, declared_compute, step_inexact, step_refusal
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters
from generator.counting.poly import product

CATALOG = ("bigbird-roberta-base", "bigbird-roberta-large")


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


def measured(card_id: str) -> list[dict[str, int]]:
    """torch's figures for the card's step at each (b, s) (tools/compute_reference.py)."""
    points: list[dict[str, int]] = json.loads((REFERENCE / "compute" / f"{card_id}.json").read_text("utf-8"))["points"]
    return points


def fallback_length(card: Card) -> int:
    """(5 + 2·num_random_blocks)·block_size: the longest input BigBirdModel runs with full attention."""
    return (5 + 2 * card.config["num_random_blocks"]) * card.config["block_size"]


@pytest.mark.parametrize("card_id", CATALOG)
def test_catalog_totals_are_transformers_own(card_id: str) -> None:
    inventory = count_parameters(card_by_id(card_id))
    reference = reference_for(card_id)
    assert (inventory.class_name, inventory.total) == ("BigBirdModel", reference["total"])
    assert [(t.name, list(t.shape)) for t in inventory.tensors] == [
        (t["name"], t["shape"]) for t in reference["tensors"]
    ]


def test_closed_form_is_berts() -> None:
    """Sparse attention adds no tensor: the closed form is BERT-Base's, pooler included."""
    derivation = derive(count_parameters(card_by_id("bigbird-roberta-base")))
    assert to_text(derivation.closed_form) == "(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + H² + H"


def test_the_difference_from_roberta_base_is_three_tables() -> None:
    """RoBERTa's "same size" holds for the layers: the whole difference is rows of the three tables, H wide."""
    bigbird, roberta = card_by_id("bigbird-roberta-base").config, card_by_id("roberta-base").config
    rows = sum(bigbird[key] - roberta[key] for key in ("vocab_size", "max_position_embeddings", "type_vocab_size"))
    assert (bigbird["max_position_embeddings"], roberta["max_position_embeddings"]) == (4_096, 514)
    difference = reference_for("bigbird-roberta-base")["total"] - reference_for("roberta-base")["total"]
    assert difference == rows * 768 == 2_823_168


def test_the_pooler_is_one_linear_that_only_pretraining_reads() -> None:
    """``bert.pooler`` is the Linear itself; the masked LM runs it, and its backward never reaches it."""
    names = [t["name"] for t in reference_for("test-big-bird-masked-lm")["tensors"]]
    assert [n for n in names if "pooler" in n] == ["bert.pooler.weight", "bert.pooler.bias"]
    for stem, backward in (("test-big-bird-masked-lm", 0), ("test-big-bird-pretraining", 2)):
        figures = count_compute(load_card(TEST_CARDS / f"{stem}.yaml"))
        pooler = next(block for block in figures.blocks if block.block.key == "pooler")
        width = load_card(TEST_CARDS / f"{stem}.yaml").config["hidden_size"]
        values = {"H": width, "b": 3}
        assert (pooler.forward.evaluate(values), pooler.backward.evaluate(values)) == (
            2 * 3 * width * width,
            backward * 2 * 3 * width * width,
        )


def test_use_bias_drops_the_query_key_and_value_biases() -> None:
    card = load_card(TEST_CARDS / "test-big-bird-masked-lm.yaml")
    names = [t["name"] for t in reference_for("test-big-bird-masked-lm")["tensors"]]
    assert not [n for n in names if n.endswith(("query.bias", "key.bias", "value.bias"))]
    with_biases = count_parameters(with_config(card, use_bias=True)).total
    assert with_biases - reference_for("test-big-bird-masked-lm")["total"] == 3 * 12 * 2


def test_one_set_of_formulas_holds_on_both_pieces() -> None:
    """Full attention for s ≤ (5 + 2r)·block, block-sparse past it: one declaration, in the pieces' 0/1
    symbols and the padded length, matches torch to the FLOP and byte at every point of each piece."""
    card = load_card(TEST_CARDS / "test-big-bird-block-sparse.yaml")
    last = fallback_length(card)
    assert last == 14 and card.config["max_position_embeddings"] > last
    figures = declared_compute(card)
    for point in measured("test-big-bird-block-sparse"):
        found = figures.at(point["batch"], point["seq"])
        assert (found.forward, found.backward, found.activations["fp32"], found.activations["bf16"]) == (
            point["forward"],
            point["backward"],
            point["fp32"],
            point["bf16"],
        ), point
    assert {p["seq"] for p in measured("test-big-bird-block-sparse")} >= {last, last + 1, last + 2}


@pytest.mark.parametrize(
    ("seq", "pieces"),
    [
        (704, {"f": 0, "n": 11, "m": 704, "q": 0}),
        (705, {"f": 1, "n": 12, "m": 768, "q": 1}),
        (768, {"f": 1, "n": 12, "m": 768, "q": 0}),
    ],
)
def test_the_step_symbols_switch_at_the_fallback_length(seq: int, pieces: dict[str, int]) -> None:
    """f turns to 1 one token past 704; m, the layers' length, is then s rounded up to whole blocks of
    64, and q says whether that pads."""
    values = declared_compute(card_by_id("bigbird-roberta-base")).values_at(1, seq)
    assert {name: values[name] for name in pieces} == pieces


@pytest.mark.parametrize("card_id", CATALOG)
def test_a_published_model_shows_its_step_at_its_full_length(card_id: str) -> None:
    """Both published models reach block-sparse attention at s = P = 4,096: their pages show that step."""
    card = card_by_id(card_id)
    assert step_inexact(card) is None and step_refusal(card) is None
    point = next(p for p in measured(card_id) if (p["batch"], p["seq"]) == (2, 4_096))
    found = count_compute(card).at(2, 4_096)
    assert (found.forward, found.backward, found.activations["fp32"], found.activations["bf16"]) == (
        point["forward"],
        point["backward"],
        point["fp32"],
        point["bf16"],
    )


@pytest.mark.parametrize(("batch", "seq", "copied"), [(2, 15, True), (1, 15, False), (2, 16, False), (2, 14, False)])
def test_the_masked_lm_head_copies_its_input_only_from_a_padded_batch(batch: int, seq: int, copied: bool) -> None:
    """The heads read the first s of m tokens. Only when the model padded (s = 15) and b > 1 is that slice
    strided, and the masked LM's dense layer copies it; at s = 16 there is no padding, at 14 no block."""
    figures = declared_compute(load_card(TEST_CARDS / "test-big-bird-block-sparse-pretraining.yaml"))
    module = next(x for block in figures.blocks for x in block.modules if x.path.endswith("transform.dense"))
    copy = next(t for t in module.saved if t.key == "transform input copy")
    values = figures.values_at(batch, seq)
    elements = product(copy.shape).evaluate(values) if batch > 1 or not copy.batch_above_one else 0
    assert elements == (batch * seq * 16 if copied else 0)


@pytest.mark.parametrize(("attention_type", "built"), [("block_sparse", True), ("original_full", False)])
def test_attention_dropout_is_made_only_by_full_attention(write_card: Any, attention_type: str, built: bool) -> None:
    """Block-sparse attention makes no dropout, so transformers builds a probability of 1.5 there; its
    first (short) step switches to full attention, which makes nn.Dropout with it and raises."""
    text = f"""
        title: BigBird with an attention dropout of 1.5
        family: big_bird
        head: base
        config: {{hidden_size: 8, num_attention_heads: 2, num_hidden_layers: 1, intermediate_size: 8,
                  attention_type: {attention_type}, attention_probs_dropout_prob: 1.5}}
        """
    path = write_card(text)
    if built:
        assert step_refusal(load_card(path)) is not None
    else:
        with pytest.raises(InputError, match="attention_probs_dropout_prob is a dropout probability"):
            load_card(path)


def test_block_sparse_flops_are_one_polynomial_in_the_padded_length() -> None:
    """Random blocks are drawn afresh each step, but their number is fixed, so torch's FLOPs past the
    fallback length are deterministic. Worked from the modeling file, with s' = s rounded up to a
    whole block and n = s'/block: the first and last query blocks read all s' keys, the second and
    second-last (4 + r) blocks, the n − 4 middle ones (5 + r). QKᵀ and the product by V cost 2·d per
    query-key pair and head each. Every layer runs at s'; the backward doubles all but the unread pooler."""
    for card_id in ("test-big-bird-block-sparse", *CATALOG):
        path = TEST_CARDS / f"{card_id}.yaml"
        card = load_card(path) if path.exists() else card_by_id(card_id)
        config = card.config
        width, inner, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
        block, r = config["block_size"], config["num_random_blocks"]
        for point in measured(card_id):
            b, s = point["batch"], point["seq"]
            if s <= fallback_length(card):
                continue
            padded = -(-s // block) * block
            pairs = 2 * block * padded + 2 * block * (4 + r) * block + (padded // block - 4) * block * (5 + r) * block
            attention = 4 * b * width * pairs  # 2·d·A = 2·H a pair, for QKᵀ and again for the product by V
            layer = 2 * b * padded * (4 * width * width + 2 * width * inner) + attention
            pooler = 2 * b * width * width
            assert (point["forward"], point["backward"]) == (layers * layer + pooler, 2 * layers * layer), point


@pytest.mark.parametrize(("length", "refused"), [(24, False), (25, True), (14, False), (15, True)])
def test_a_table_of_no_whole_number_of_blocks_cannot_run_its_full_length(length: int, refused: bool) -> None:
    """Past 14 tokens the model pads s to whole blocks of 2: at s = P an odd table is one position short,
    and the step raises (the sample's config with P = 19 records torch's error)."""
    card = with_config(load_card(TEST_CARDS / "test-big-bird-block-sparse.yaml"), max_position_embeddings=length)
    assert (step_refusal(card) is not None) is refused
    assert step_refusal(with_config(card, attention_type="original_full")) is None
