"""GTE: NomicBERT's layer with biases and a dropout in the feed-forward network, RoBERTa's masked-LM head."""

from __future__ import annotations

import dataclasses
from typing import Any

from conftest import TEST_CARDS, card_by_id, reference_for
from generator.cards.card import Card, load_card
from generator.counting.compute import count_compute
from generator.counting.inventory import count_parameters

CARD = "gte-multilingual-base"


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


def test_catalog_total_is_the_bare_model_without_a_pooler() -> None:
    inventory, reference = count_parameters(card_by_id(CARD)), reference_for(CARD)
    assert (inventory.class_name, inventory.total) == ("GteModel", reference["total"])
    assert not [t.name for t in inventory.tensors if "pooler" in t.name or "position" in t.name]
    assert round(inventory.total / 10**6) == 305  # the model card's figure, rounded
    assert inventory.tensor("embeddings.word_embeddings.weight").shape == (250_048, 768)


def test_biases_on_the_attention_and_down_projection_only() -> None:
    names = [t["name"] for t in reference_for(CARD)["tensors"]]
    biased = [n.removeprefix("layers.0.") for n in names if n.startswith("layers.0.") and n.endswith("_proj.bias")]
    assert biased == [
        "mlp.down_proj.bias",
        "self_attn.q_proj.bias",
        "self_attn.k_proj.bias",
        "self_attn.v_proj.bias",
        "self_attn.o_proj.bias",
    ]
    assert [t.name for t in count_parameters(card_by_id(CARD)).tensors] == names


def test_masked_lm_decoder_holds_its_own_bias() -> None:
    card = load_card(TEST_CARDS / "test-gte-masked-lm.yaml")
    reference = reference_for(card.id)
    names = [t.name for t in count_parameters(card).tensors]
    assert names == [t["name"] for t in reference["tensors"]]
    assert names[-5:] == [
        "lm_head.dense.weight",
        "lm_head.dense.bias",
        "lm_head.layer_norm.weight",
        "lm_head.layer_norm.bias",
        "lm_head.decoder.bias",
    ]
    assert reference["tied"] == [{"name": "lm_head.decoder.weight", "tied_to": "gte.embeddings.word_embeddings.weight"}]


def test_no_token_type_table_when_type_vocab_size_is_zero() -> None:
    card = load_card(TEST_CARDS / "test-gte-classifier.yaml")  # type_vocab_size: 0
    inventory = count_parameters(card)
    assert not [t.name for t in inventory.tensors if "token_type" in t.name]
    assert inventory.total == reference_for(card.id)["total"]
    with_types = count_parameters(with_config(card, type_vocab_size=2))
    assert with_types.total - inventory.total == 2 * card.config["hidden_size"]


def test_hidden_dropout_keeps_a_mask_inside_the_feed_forward_network_too() -> None:
    card = load_card(TEST_CARDS / "test-gte-masked-lm.yaml")  # hidden and attention dropout on
    b, s = 2, 3
    layers, hidden, size = (card.config[k] for k in ("num_hidden_layers", "hidden_size", "intermediate_size"))
    on = count_compute(card).at(b, s).activations["fp32"]
    off = count_compute(with_config(card, hidden_dropout_prob=0.0)).at(b, s).activations["fp32"]
    # An fp32 mask after the embeddings, two of b·s·H a layer around the sub-layers, and one of b·s·I
    # on the gate's product: that last one is GTE's, which NomicBERT does not have.
    assert on - off == 4 * b * s * (hidden + layers * (2 * hidden + size))
