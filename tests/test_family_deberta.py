"""DeBERTa v1: a fused in_proj, position projections per layer and its own LayerNorm, pinned to exact figures."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from conftest import TEST_CARDS, card_by_id, reference_for
from generator.cards.card import Card, load_card
from generator.counting.architecture import Kind
from generator.counting.compute import StepNotExactError, count_compute, step_inexact
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters

# bert-base-uncased's encoder layer, for comparison: 4H² + 2HI + 9H + I at H = 768, I = 3,072.
BERT_BASE_LAYER = 7_087_872


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


@pytest.mark.parametrize(
    ("card_id", "total"),
    [("deberta-base", 138_601_728), ("deberta-large", 405_163_008), ("deberta-xlarge", 757_804_032)],
)
def test_catalog_totals(card_id: str, total: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert (inventory.class_name, inventory.total) == ("DebertaModel", total)
    assert total == reference_for(card_id)["total"]


def test_base_closed_form() -> None:
    # The token table and a LayerNorm; twelve layers, BERT's and two H × H position projections
    # (the fused in_proj has one bias fewer, pos_q_proj's bias makes it up); the 2P-row relative table.
    derivation = derive(count_parameters(card_by_id("deberta-base")))
    assert to_text(derivation.closed_form) == "(V + 2)H + L(6H² + 2HI + 9H + I) + 2PH"
    layer = next(b for b in derivation.blocks if b.block.key == "layer")
    assert (layer.value, layer.repeat) == (BERT_BASE_LAYER + 2 * 768 * 768, 12)


def test_backbone_is_the_readmes_100m() -> None:
    # microsoft/DeBERTa's README: 100M backbone parameters for the base model, 50K vocabulary.
    inventory = count_parameters(card_by_id("deberta-base"))
    assert inventory.count_of(kind=Kind.EMBEDDINGS) == 50_265 * 768 + 2 * 768 == 38_605_056
    assert inventory.count_of(kind=Kind.ENCODER) == 99_996_672


def test_attention_tensors_in_registration_order() -> None:
    names = [t["name"] for t in reference_for("deberta-base")["tensors"]]
    layer = [n.removeprefix("encoder.layer.0.attention.self.") for n in names if ".layer.0.attention.self." in n]
    assert layer == ["q_bias", "v_bias", "in_proj.weight", "pos_proj.weight", "pos_q_proj.weight", "pos_q_proj.bias"]
    inventory = count_parameters(card_by_id("deberta-base"))
    assert [t.name for t in inventory.tensors] == names
    assert inventory.tensor("encoder.layer.0.attention.self.in_proj.weight").shape == (3 * 768, 768)
    assert names.count("encoder.rel_embeddings.weight") == 1
    assert inventory.tensor("encoder.rel_embeddings.weight").shape == (1024, 768)


@pytest.mark.parametrize(
    "stem",
    [
        "test-deberta-masked-lm",
        "test-deberta-classifier",
        "test-deberta-talking-heads",
        "test-deberta-clamped-span",
        "test-deberta-c2p-only",
        "test-deberta-talking-heads-no-dropout",
    ],
)
def test_test_cards_match_transformers_tensor_by_tensor(stem: str) -> None:
    card = load_card(TEST_CARDS / f"{stem}.yaml")
    inventory = count_parameters(card)
    reference = reference_for(stem)
    assert inventory.class_name == reference["class"]
    assert [(t.name, list(t.shape)) for t in inventory.tensors] == [
        (t["name"], t["shape"]) for t in reference["tensors"]
    ]
    assert inventory.total == reference["total"]


def test_talking_heads_add_two_square_projections_per_layer() -> None:
    card = card_by_id("deberta-base")
    talking = count_parameters(with_config(card, talking_head=True))
    assert talking.total - count_parameters(card).total == 12 * 2 * 12 * 12
    assert talking.tensor("encoder.layer.0.attention.self.head_logits_proj.weight").shape == (12, 12)


def test_each_position_term_has_its_own_projection() -> None:
    card = card_by_id("deberta-base")
    c2p = count_parameters(with_config(card, pos_att_type="c2p"))
    assert count_parameters(card).total - c2p.total == 12 * (768 * 768 + 768)  # pos_q_proj and its bias
    without = count_parameters(with_config(card, relative_attention=False))
    assert not any("pos_" in t.name or "rel_embeddings" in t.name for t in without.tensors)


def test_only_the_piecewise_steps_are_declared_inexact() -> None:
    """Every catalog card's step is one polynomial; a clamped span, one position term, and talking heads
    without attention dropout are not, and count_compute gives no figure for them."""
    exact = ["test-deberta-masked-lm", "test-deberta-classifier", "test-deberta-talking-heads"]
    inexact = ["test-deberta-clamped-span", "test-deberta-c2p-only", "test-deberta-talking-heads-no-dropout"]
    assert [step_inexact(card_by_id(c)) for c in ("deberta-base", "deberta-large", "deberta-xlarge")] == [None] * 3
    assert [step_inexact(load_card(TEST_CARDS / f"{stem}.yaml")) for stem in exact] == [None] * 3
    reasons = [step_inexact(load_card(TEST_CARDS / f"{stem}.yaml")) or "" for stem in inexact]
    assert [r.split(" ")[0] for r in reasons] == ["max_relative_positions", "the", "talking_head"]
    with pytest.raises(StepNotExactError):
        count_compute(load_card(TEST_CARDS / "test-deberta-clamped-span.yaml"))
