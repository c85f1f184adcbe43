"""DistilBERT: half of BERT-Base's layers, no token types, no pooler, its own key names."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import TEST_CARDS, card_by_id, count_card
from generator.cards.card import load_card
from generator.cards.problems import InputError
from generator.counting.architecture import Kind
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters


@pytest.mark.parametrize(
    ("card_id", "total"),
    [
        ("distilbert-base-uncased", 66_362_880),
        ("distilbert-base-cased", 65_190_912),
        ("distilbert-base-multilingual-cased", 134_734_080),
    ],
)
def test_catalog_totals(card_id: str, total: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert inventory.class_name == "DistilBertModel"
    assert inventory.total == total


def test_closed_form_has_no_token_types_and_no_pooler() -> None:
    derivation = derive(count_parameters(card_by_id("distilbert-base-uncased")))
    assert to_text(derivation.closed_form) == "(V + P + 2)H + L(4H² + 2HI + 9H + I)"
    assert to_text(derivation.substituted) == (
        "(30,522 + 512 + 2) · 768 + 6 · (4 · 768² + 2 · 768 · 3,072 + 9 · 768 + 3,072)"
    )


def test_symbols_read_distilberts_own_keys() -> None:
    card = card_by_id("distilbert-base-uncased")
    assert {s.name: s.key for s in card.family.symbols} == {
        "V": "vocab_size",
        "P": "max_position_embeddings",
        "H": "dim",
        "I": "hidden_dim",
        "L": "n_layers",
        "A": "n_heads",
        "C": "num_labels",
    }
    assert card.symbol_values() == {"V": 30522, "P": 512, "H": 768, "I": 3072, "L": 6, "A": 12, "C": 2}


def test_half_the_layers_of_bert_base_and_what_else_is_gone() -> None:
    distil = count_parameters(card_by_id("distilbert-base-uncased"))
    bert = count_parameters(card_by_id("bert-base-uncased"))
    # The same layer, tensor for tensor, six times instead of twelve.
    assert 2 * distil.count_of(kind=Kind.ENCODER) == bert.count_of(kind=Kind.ENCODER)
    # The embeddings lose the two-row token-type table; there is no pooler.
    assert bert.count_of(kind=Kind.EMBEDDINGS) - distil.count_of(kind=Kind.EMBEDDINGS) == 2 * 768
    assert distil.count_of(kind=Kind.POOLER) == 0
    assert not any("token_type" in t.name for t in distil.tensors)


def test_masked_lm_ties_the_projector_weight_but_not_its_bias() -> None:
    inventory = count_card(TEST_CARDS / "test-distilbert-masked-lm.yaml")
    assert [(t.name, t.tied_to) for t in inventory.tied] == [
        ("vocab_projector.weight", "distilbert.embeddings.word_embeddings.weight")
    ]
    assert inventory.tensor("vocab_projector.bias").count == 113
    assert to_text(derive(inventory).closed_form) == "(V + P + 2)H + L(4H² + 2HI + 9H + I) + H² + V + 3H"


def test_classifier_has_a_pre_classifier_in_place_of_the_pooler() -> None:
    inventory = count_card(TEST_CARDS / "test-distilbert-classifier-5.yaml")
    assert [(t.name, t.shape) for t in inventory.tensors if t.block.kind is Kind.HEAD] == [
        ("pre_classifier.weight", (27, 27)),
        ("pre_classifier.bias", (27,)),
        ("classifier.weight", (5, 27)),
        ("classifier.bias", (5,)),
    ]


def test_sinusoidal_positions_change_neither_the_tensors_nor_the_count() -> None:
    # transformers 5.23 only fills the position table with sines and cosines; it stays a parameter.
    card = load_card(TEST_CARDS / "test-distilbert-sinusoidal.yaml")
    assert card.config["sinusoidal_pos_embds"] is True
    learned = dataclasses.replace(card, config={**card.config, "sinusoidal_pos_embds": False})
    a, b = count_parameters(card), count_parameters(learned)
    assert [(t.name, t.shape) for t in a.tensors] == [(t.name, t.shape) for t in b.tensors]
    assert a.tensor("embeddings.position_embeddings.weight").shape == (40, 16)


def test_heads_must_divide_dim(write_card) -> None:  # type: ignore[no-untyped-def]
    path = write_card("title: bad\nfamily: distilbert\nhead: base\nconfig:\n  dim: 770\n  n_heads: 12\n")
    with pytest.raises(InputError) as caught:
        load_card(path)
    assert [(p.key, p.message) for p in caught.value.problems] == [
        ("config.n_heads", "n_heads (12) does not divide dim (770) evenly; transformers refuses this")
    ]
