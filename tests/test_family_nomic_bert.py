"""NomicBERT: rotary positions, a gated feed-forward without biases, and a pooler only for the classifier."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from conftest import REFERENCE, TEST_CARDS, card_by_id, reference_for
from generator.cards.card import Card, load_card
from generator.counting.compute import count_compute
from generator.counting.inventory import count_parameters

CARD = "nomic-embed-text-v1.5"


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


def measured(card_id: str) -> dict[tuple[int, int], dict[str, int]]:
    """torch's figures for a card, by (b, s)."""
    data = json.loads((REFERENCE / "compute" / f"{card_id}.json").read_text(encoding="utf-8"))
    return {(p["batch"], p["seq"]): p for p in data["points"]}


def test_catalog_total_is_the_bare_model_without_a_pooler() -> None:
    inventory, reference = count_parameters(card_by_id(CARD)), reference_for(CARD)
    assert (inventory.class_name, inventory.total) == ("NomicBertModel", reference["total"])
    assert not [t.name for t in inventory.tensors if "pooler" in t.name or "position" in t.name]
    assert round(inventory.total / 10**6) == 137  # the model card's figure, rounded


def test_layer_lists_the_feed_forward_before_the_attention_and_no_bias() -> None:
    names = [t["name"] for t in reference_for(CARD)["tensors"]]
    layer = [n.removeprefix("layers.0.") for n in names if n.startswith("layers.0.")]
    assert layer == [
        "post_attention_layernorm.weight",
        "post_attention_layernorm.bias",
        "mlp.gate_proj.weight",
        "mlp.up_proj.weight",
        "mlp.down_proj.weight",
        "self_attn.q_proj.weight",
        "self_attn.k_proj.weight",
        "self_attn.v_proj.weight",
        "self_attn.o_proj.weight",
        "post_mlp_layernorm.weight",
        "post_mlp_layernorm.bias",
    ]
    assert [t.name for t in count_parameters(card_by_id(CARD)).tensors] == names


def test_only_the_classifier_is_pooled_and_its_pooler_comes_before_the_layers() -> None:
    card = load_card(TEST_CARDS / "test-nomic-bert-classifier.yaml")
    names = [t.name for t in count_parameters(card).tensors]
    assert names == [t["name"] for t in reference_for(card.id)["tensors"]]
    assert names.index("nomic_bert.pooler.dense.bias") < names.index(
        "nomic_bert.layers.0.post_attention_layernorm.weight"
    )
    masked = load_card(TEST_CARDS / "test-nomic-bert-masked-lm.yaml")
    assert not [n for n in (t.name for t in count_parameters(masked).tensors) if "pooler" in n]


def test_head_dim_widens_the_attention_and_the_rotary_tables() -> None:
    card = load_card(TEST_CARDS / "test-nomic-bert-head-dim.yaml")  # H = 8, A = 2, head_dim = 6
    inventory = count_parameters(card)
    assert inventory.tensor("nomic_bert.layers.0.self_attn.q_proj.weight").shape == (12, 8)
    assert inventory.tensor("nomic_bert.layers.0.self_attn.o_proj.weight").shape == (8, 12)
    assert inventory.total == reference_for(card.id)["total"]
    points = measured(card.id)
    assert {point: count_compute(card).at(*point).activations["fp32"] for point in points} == {
        point: figures["fp32"] for point, figures in points.items()
    }


def test_uneven_heads_span_a_times_the_rounded_head_size() -> None:
    # No head check: 3 heads of ⌊8/3⌋ = 2 make 6-wide projections, which o_proj maps back to 8.
    card = with_config(load_card(TEST_CARDS / "test-nomic-bert-masked-lm.yaml"), num_attention_heads=3)
    inventory = count_parameters(card)
    assert inventory.tensor("nomic_bert.layers.0.self_attn.k_proj.weight").shape == (6, 8)
    assert inventory.tensor("nomic_bert.layers.0.self_attn.o_proj.weight").shape == (8, 6)


@pytest.mark.parametrize("card_id", [CARD, "test-nomic-bert-masked-lm"])
def test_tables_made_afresh_each_step_need_no_piece_by_length(card_id: str) -> None:
    """The reference measures s = 4, 5 and P/2 + 1 besides 1, 2, 3 and P: one polynomial covers them all."""
    card = card_by_id(card_id) if card_id == CARD else load_card(TEST_CARDS / f"{card_id}.yaml")
    points = measured(card_id)
    longest = card.config["max_position_embeddings"]
    assert {s for _, s in points} == {1, 2, 3, 4, 5, longest // 2 + 1, longest}
    compute = count_compute(card)
    for (b, s), figures in points.items():
        found = compute.at(b, s)
        assert (found.forward, found.backward, found.activations["fp32"]) == (
            figures["forward"],
            figures["backward"],
            figures["fp32"],
        )
