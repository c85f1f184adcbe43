"""ModernBERT: no biases, a gated feed-forward network, rotary positions, pinned to exact figures."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from conftest import TEST_CARDS, card_by_id, reference_for
from generator.cards.card import Card, load_card, load_cards
from generator.cards.problems import InputError
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


@pytest.mark.parametrize(
    ("card_id", "total"),
    [("modernbert-base", 149_014_272), ("modernbert-large", 394_781_696)],
)
def test_catalog_totals(card_id: str, total: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert (inventory.class_name, inventory.total) == ("ModernBertModel", total)
    assert total == reference_for(card_id)["total"]


def test_base_closed_form() -> None:
    derivation = derive(count_parameters(card_by_id("modernbert-base")))
    # Token table and its norm; layer 0 without an attention norm; L − 1 later layers; the final norm.
    assert to_text(derivation.closed_form) == "(V + 1)H + (4H + 3I + 1)H + (L − 1)(4H² + 3HI + 2H) + H"
    assert to_text(derivation.substituted) == (
        "(50,368 + 1) · 768 + (4 · 768 + 3 · 1,152 + 1) · 768 + (22 − 1) · (4 · 768² + 3 · 768 · 1,152 + 2 · 768) + 768"
    )
    later = next(b for b in derivation.blocks if b.block.key == "layer")
    assert (later.repeat, later.value, later.subtotal) == (21, 5_015_040, 21 * 5_015_040)
    assert to_text(later.subtotal_expression) == "(L − 1)(4H² + 3HI + 2H)"  # type: ignore[arg-type]


def test_no_bias_no_position_table() -> None:
    inventory = count_parameters(card_by_id("modernbert-base"))
    assert not [t.name for t in inventory.tensors if t.name.endswith(".bias")]
    assert not [t.name for t in inventory.tensors if "position" in t.name]
    longer = count_parameters(with_config(card_by_id("modernbert-base"), max_position_embeddings=512))
    assert longer.total == inventory.total  # rotary positions: P changes nothing


def test_fused_attention_and_gated_feed_forward() -> None:
    inventory = count_parameters(card_by_id("modernbert-base"))
    assert inventory.tensor("layers.5.attn.Wqkv.weight").shape == (3 * 768, 768)
    assert inventory.tensor("layers.5.mlp.Wi.weight").shape == (2 * 1_152, 768)
    assert inventory.tensor("layers.5.mlp.Wo.weight").shape == (768, 1_152)


def test_layer_zero_has_no_attention_norm() -> None:
    inventory = count_parameters(card_by_id("modernbert-base"))
    names = [t.name for t in inventory.tensors]
    assert [n for n in names if n.endswith("attn_norm.weight")] == [
        f"layers.{i}.attn_norm.weight" for i in range(1, 22)
    ]
    assert names[2:4] == ["layers.0.attn.Wqkv.weight", "layers.0.attn.Wo.weight"]
    assert names[-1] == "final_norm.weight"


def test_one_layer_has_no_later_layers() -> None:
    inventory = count_parameters(load_card(TEST_CARDS / "test-modernbert-single-layer-untied.yaml"))
    assert {t.block.key for t in inventory.tensors} == {"embeddings", "layer-0", "final-norm", "mlm-head"}
    assert inventory.tied == ()
    assert "decoder.bias" not in [t.name for t in inventory.tensors]


@pytest.mark.parametrize(
    ("flag", "added"),
    [
        ("attention_bias", 22 * (3 * 768 + 768)),  # Wqkv and Wo in every layer
        ("mlp_bias", 22 * (2 * 1_152 + 768)),  # Wi and Wo in every layer
        ("norm_bias", (1 + 1 + 2 * 21 + 1) * 768),  # embedding norm, layer 0's mlp_norm, 2 per later layer, final
        ("classifier_bias", 0),  # only the heads' dense layer has it
    ],
)
def test_each_bias_flag(flag: str, added: int) -> None:
    card = card_by_id("modernbert-base")
    assert count_parameters(with_config(card, **{flag: True})).total - count_parameters(card).total == added


def test_masked_lm_ties_the_decoder_weight_but_not_its_bias() -> None:
    inventory = count_parameters(load_card(TEST_CARDS / "test-modernbert-masked-lm.yaml"))
    assert [(t.name, t.tied_to) for t in inventory.tied] == [
        ("decoder.weight", "model.embeddings.tok_embeddings.weight")
    ]
    head = [t.name for t in inventory.tensors if t.block.key == "mlm-head"]
    assert head == ["head.dense.weight", "head.norm.weight", "decoder.bias"]


def test_padding_id_must_be_in_the_vocabulary(write_card) -> None:  # type: ignore[no-untyped-def]
    path = write_card("title: t\nfamily: modernbert\nhead: base\nconfig:\n  vocab_size: 1000\n")
    with pytest.raises(InputError) as caught:
        load_cards(path.parent)
    found = [str(p) for p in caught.value.problems]
    assert len(found) == 1
    assert "pad_token_id (50283) is not a row of the 1000-row token embedding table" in found[0]
