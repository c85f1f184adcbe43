"""ALBERT: factorized embeddings and layers shared across depth, pinned to exact figures."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conftest import TEST_CARDS, card_by_id, reference_for
from generator.cards.card import Card, load_card
from generator.cards.problems import InputError
from generator.counting.architecture import Kind
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters


def albert_card(name: str) -> Card:
    return load_card(TEST_CARDS / f"{name}.yaml")


def with_config(card: Card, **changes: int) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


@pytest.mark.parametrize(
    ("card_id", "class_name", "total"),
    [
        ("albert-base-v2", "AlbertModel", 11_683_584),
        ("albert-large-v2", "AlbertModel", 17_683_968),
        ("albert-xlarge-v2", "AlbertModel", 58_724_864),
        ("albert-xxlarge-v2", "AlbertModel", 222_595_584),
        ("albert-base-v2-pretraining", "AlbertForPreTraining", 11_813_810),
    ],
)
def test_catalog_totals(card_id: str, class_name: str, total: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert (inventory.class_name, inventory.total) == (class_name, total)
    assert total == reference_for(card_id)["total"]


def test_albert_model_closed_form() -> None:
    derivation = derive(count_parameters(card_by_id("albert-base-v2")))
    # The encoder term is G·K stored layers; L, the number of steps, appears nowhere.
    assert to_text(derivation.closed_form) == "(V + P + T + 2)E + (E + 1)H + GK(4H² + 2HI + 9H + I) + H² + H"
    assert to_text(derivation.substituted) == (
        "(30,000 + 512 + 2 + 2) · 128 + (128 + 1) · 768 + 1 · 1 · (4 · 768² + 2 · 768 · 3,072 + 9 · 768 + 3,072)"
        " + 768² + 768"
    )
    assert "L" not in derivation.formula.symbols()


@pytest.mark.parametrize("card_id", ["albert-base-v2", "albert-xxlarge-v2"])
@pytest.mark.parametrize("steps", [1, 2, 12, 24, 96])
def test_catalog_total_does_not_depend_on_depth(card_id: str, steps: int) -> None:
    card = card_by_id(card_id)
    assert count_parameters(with_config(card, num_hidden_layers=steps)).total == count_parameters(card).total


@pytest.mark.parametrize("steps", [1, 2, 3, 4, 5, 8, 40])
def test_groups_total_does_not_depend_on_depth(steps: int) -> None:
    # Two groups of three stored layers; transformers builds all six whatever L is.
    card = albert_card("test-albert-groups")
    changed = count_parameters(with_config(card, num_hidden_layers=steps))
    original = count_parameters(card)
    assert changed.total == original.total == 1_713
    assert [t.name for t in changed.tensors] == [t.name for t in original.tensors]


def test_stored_layers_are_groups_times_inner_layers() -> None:
    inventory = count_parameters(albert_card("test-albert-groups"))
    derivation = derive(inventory)
    layer = next(b for b in derivation.blocks if b.block.kind is Kind.ENCODER)
    assert (layer.value, layer.repeat, layer.subtotal) == (263, 2 * 3, 1_578)
    assert layer.block.applied == "L"
    prefixes = sorted({t.name.split(".full_layer_layer_norm")[0] for t in inventory.tensors if "full_layer" in t.name})
    assert prefixes == [f"encoder.albert_layer_groups.{g}.albert_layers.{k}" for g in range(2) for k in range(3)]


def test_factorized_embeddings() -> None:
    inventory = count_parameters(card_by_id("albert-xxlarge-v2"))
    vocab, width, hidden = 30_000, 128, 4_096
    assert inventory.tensor("embeddings.word_embeddings.weight").shape == (vocab, width)
    assert inventory.tensor("encoder.embedding_hidden_mapping_in.weight").shape == (hidden, width)
    # V·E + E·H (+ the projection bias) instead of the V·H table a BERT of this width would have.
    word_table = inventory.tensor("embeddings.word_embeddings.weight").count
    projection = inventory.count_of(block="embedding-projection")
    assert (word_table, projection) == (3_840_000, 528_384)
    assert word_table + projection == vocab * width + width * hidden + hidden == 4_368_384
    assert inventory.count_of(kind=Kind.EMBEDDINGS) == 4_434_432  # all tables, LayerNorm and projection
    assert vocab * hidden == 122_880_000


def test_projection_exists_even_when_embedding_equals_hidden() -> None:
    inventory = count_parameters(albert_card("test-albert-pretraining"))
    assert inventory.card.config["embedding_size"] == inventory.card.config["hidden_size"] == 6
    assert inventory.tensor("albert.encoder.embedding_hidden_mapping_in.weight").shape == (6, 6)


def test_sentence_order_head_is_sized_by_num_labels() -> None:
    sop = count_parameters(albert_card("test-albert-pretraining")).tensor("sop_classifier.classifier.weight")
    assert sop.shape == (3, 6)
    pretraining = count_parameters(card_by_id("albert-base-v2-pretraining"))
    head_steps = {s.label: s.value for b in derive(pretraining).blocks if b.block.kind is Kind.HEAD for s in b.lines}
    assert head_steps == {
        "output bias": 30_000,
        "transform LayerNorm": 256,
        "transform dense (H to E)": 98_432,
        "decoder (tied)": 0,
        "sentence-order classifier": 1_538,
    }
    assert [(t.name, t.tied_to) for t in pretraining.tied] == [
        ("predictions.decoder.weight", "albert.embeddings.word_embeddings.weight"),
        ("predictions.decoder.bias", "predictions.bias"),
    ]


def test_heads_must_divide_hidden(write_card) -> None:  # type: ignore[no-untyped-def]
    path: Path = write_card(
        """
        title: Uneven heads
        family: albert
        head: base
        config:
          hidden_size: 10
          num_attention_heads: 3
        """
    )
    with pytest.raises(InputError) as caught:
        load_card(path)
    [problem] = caught.value.problems
    assert problem.message == (
        "the hidden size (10) is not a multiple of the number of attention heads (3); transformers would build "
        "9-wide query, key and value projections that its forward pass cannot use"
    )
