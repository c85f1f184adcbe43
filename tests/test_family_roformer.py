"""RoFormer: rotary positions from a frozen sinusoid table, and an optional embedding projection, pinned to exact figures."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from conftest import REFERENCE, TEST_CARDS, card_by_id, reference_for
from generator.cards.card import Card, load_card
from generator.counting.compute import count_compute
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


def measured(card_id: str) -> dict[tuple[int, int], dict[str, int]]:
    """torch's figures for a card, by (b, s)."""
    data = json.loads((REFERENCE / "compute" / f"{card_id}.json").read_text(encoding="utf-8"))
    return {(p["batch"], p["seq"]): p for p in data["points"]}


@pytest.mark.parametrize("card_id", ["roformer-chinese-base", "roformer-chinese-small"])
def test_catalog_totals(card_id: str) -> None:
    inventory, reference = count_parameters(card_by_id(card_id)), reference_for(card_id)
    assert (inventory.class_name, inventory.total) == ("RoFormerForMaskedLM", reference["total"])


def test_sinusoid_table_is_frozen_and_head_size_wide() -> None:
    inventory = count_parameters(card_by_id("roformer-chinese-base"))
    table = inventory.tensor("roformer.encoder.embed_positions.weight")
    assert table.shape == (1_536, 64)  # P rows of d = H / A = 768 / 12
    assert not [t.name for t in inventory.tensors if "position_embeddings" in t.name]
    names = [t["name"] for t in reference_for("roformer-chinese-base")["tensors"]]
    # The table comes after the embeddings and before layer 0, as RoFormerEncoder registers it.
    assert (
        names.index("roformer.encoder.embed_positions.weight")
        == names.index("roformer.encoder.layer.0.attention.self.query.weight") - 1
    )


def test_closed_form_with_and_without_projection() -> None:
    projected = derive(count_parameters(load_card(TEST_CARDS / "test-roformer-projection.yaml")))
    # Tables E wide, the projection, BERT's layer, the sinusoid table P·d, the head back down to E.
    assert to_text(projected.closed_form) == "(V + T + 2)E + (E + 1)H + L(4H² + 2HI + 9H + I) + Pd + EH + V + 3E"
    plain = derive(count_parameters(card_by_id("roformer-chinese-small")))
    assert to_text(plain.closed_form) == "(V + T + 2)H + L(4H² + 2HI + 9H + I) + Pd + H² + V + 3H"


def test_projection_exists_only_when_embedding_size_differs() -> None:
    small = card_by_id("roformer-chinese-small")
    assert count_parameters(with_config(small, embedding_size=None)).total == reference_for(small.id)["total"]  # E = H
    narrow = count_parameters(with_config(small, embedding_size=128))
    assert narrow.tensor("roformer.embeddings_project.weight").shape == (384, 128)
    assert narrow.tensor("cls.predictions.transform.dense.weight").shape == (128, 384)


def test_rotary_value_changes_neither_count_nor_compute() -> None:
    card = load_card(TEST_CARDS / "test-roformer-projection.yaml")  # rotary_value: true
    plain = with_config(card, rotary_value=False)
    assert count_parameters(plain).total == count_parameters(card).total == reference_for(card.id)["total"]
    rotated, unrotated = count_compute(card).at(2, 7), count_compute(plain).at(2, 7)
    assert (rotated.forward, rotated.activations) == (unrotated.forward, unrotated.activations)
    assert (rotated.forward, rotated.activations["fp32"]) == (
        measured(card.id)[(2, 7)]["forward"],
        measured(card.id)[(2, 7)]["fp32"],
    )


def test_every_layer_keeps_its_own_cos_and_sin_tables() -> None:
    """A layer more keeps what a BERT layer of the same sizes keeps, and its own two s × d tables."""
    sizes = {"hidden_size": 384, "num_attention_heads": 6, "intermediate_size": 1_536}
    roformer, bert = card_by_id("roformer-chinese-small"), with_config(card_by_id("bert-base-uncased"), **sizes)
    s, d, fp32 = 3, 64, 4

    def one_layer_more(card: Card, layers: int) -> int:
        deeper = with_config(card, num_hidden_layers=layers + 1)
        return count_compute(deeper).at(1, s).activations["fp32"] - count_compute(card).at(1, s).activations["fp32"]

    assert one_layer_more(roformer, 6) == one_layer_more(bert, 12) + 2 * s * d * fp32
