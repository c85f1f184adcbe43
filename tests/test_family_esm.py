"""ESM-2: pre-LayerNorm layers, rotary positions, token dropout and a contact head, pinned to exact figures."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from conftest import REFERENCE, TEST_CARDS, card_by_id, reference_for
from generator.cards.card import Card, load_card
from generator.counting.compute import count_compute
from generator.counting.inventory import count_parameters


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


def measured(card_id: str) -> dict[tuple[int, int], dict[str, int]]:
    """torch's figures for a card, by (b, s)."""
    data = json.loads((REFERENCE / "compute" / f"{card_id}.json").read_text(encoding="utf-8"))
    return {(p["batch"], p["seq"]): p for p in data["points"]}


CARDS = ["esm2-t6-8m-ur50d", "esm2-t12-35m-ur50d", "esm2-t30-150m-ur50d", "esm2-t33-650m-ur50d", "esm2-t36-3b-ur50d"]


@pytest.mark.parametrize("card_id", CARDS)
def test_catalog_totals(card_id: str) -> None:
    inventory, reference = count_parameters(card_by_id(card_id)), reference_for(card_id)
    assert (inventory.class_name, inventory.total) == ("EsmForMaskedLM", reference["total"])


@pytest.mark.parametrize(
    ("card_id", "layers", "heads"), [("esm2-t33-650m-ur50d", 33, 20), ("esm2-t36-3b-ur50d", 36, 40)]
)
def test_contact_head_reads_every_layer_and_head(card_id: str, layers: int, heads: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert inventory.tensor("esm.contact_head.regression.weight").shape == (1, layers * heads)
    assert inventory.count_of(block="contact-head") == layers * heads + 1


def test_pre_layernorm_order_and_final_norm() -> None:
    names = [t["name"] for t in reference_for("esm2-t6-8m-ur50d")["tensors"]]
    layer = [n.removeprefix("esm.encoder.layer.0.") for n in names if n.startswith("esm.encoder.layer.0.")]
    # Each norm is registered after the sub-layer it normalizes the input of.
    assert layer.index("attention.LayerNorm.weight") == layer.index("attention.output.dense.bias") + 1
    assert layer[-2:] == ["LayerNorm.weight", "LayerNorm.bias"]
    assert (
        names.index("esm.encoder.emb_layer_norm_after.weight") == names.index("esm.encoder.layer.5.LayerNorm.bias") + 1
    )
    declared = [t.name for t in count_parameters(card_by_id("esm2-t6-8m-ur50d")).tensors]
    assert declared == [n for n in names if n != "lm_head.decoder.weight"]  # the decoder is the token table


def test_rotary_has_no_position_table_and_absolute_has_one() -> None:
    rotary = count_parameters(card_by_id("esm2-t6-8m-ur50d"))
    assert not [t.name for t in rotary.tensors if "position" in t.name]
    absolute = load_card(TEST_CARDS / "test-esm-absolute.yaml")
    inventory = count_parameters(absolute)
    assert inventory.tensor("embeddings.position_embeddings.weight").shape == (9, 8)
    assert inventory.tensor("embeddings.layer_norm.weight").shape == (8,)  # emb_layer_norm_before
    assert inventory.total == reference_for(absolute.id)["total"]


def test_token_dropout_keeps_a_mask_and_a_share_per_sequence() -> None:
    card = load_card(TEST_CARDS / "test-esm-rotary-classifier.yaml")  # token_dropout: true
    b, s = 2, 3
    on, off = count_compute(card).at(b, s), count_compute(with_config(card, token_dropout=False)).at(b, s)
    assert on.activations["fp32"] - off.activations["fp32"] == b * s + 4 * b  # a bool per token, an fp32 per sequence
    assert on.activations["fp32"] == measured(card.id)[(b, s)]["fp32"]


def test_esm_gelu_keeps_three_tensors_of_its_size() -> None:
    """ESM's gelu keeps x/√2, x/2 and 1 + erf(x/√2): a wider feed-forward keeps 4 values more per token and
    unit of I (those three and the second projection's input), where BERT's nn.GELU keeps 2."""
    card = card_by_id("esm2-t6-8m-ur50d")
    b, s, layers, fp32 = 1, 3, 6, 4
    wider = with_config(card, intermediate_size=1_281)
    extra = count_compute(wider).at(b, s).activations["fp32"] - count_compute(card).at(b, s).activations["fp32"]
    assert extra == 4 * b * s * layers * fp32
