"""ELECTRA: the embedding projection, and discriminator versus generator, pinned to exact figures."""

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


def electra_card(name: str) -> Card:
    return load_card(TEST_CARDS / f"{name}.yaml")


@pytest.mark.parametrize(
    ("card_id", "class_name", "total"),
    [
        ("electra-small-discriminator", "ElectraForPreTraining", 13_549_057),
        ("electra-small-generator", "ElectraForMaskedLM", 13_546_682),
        ("electra-base-discriminator", "ElectraForPreTraining", 109_483_009),
        ("electra-base-generator", "ElectraForMaskedLM", 33_740_602),
        ("electra-large-discriminator", "ElectraForPreTraining", 335_142_913),
        ("electra-large-generator", "ElectraForMaskedLM", 51_295_290),
    ],
)
def test_catalog_totals(card_id: str, class_name: str, total: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert (inventory.class_name, inventory.total) == (class_name, total)
    assert total == reference_for(card_id)["total"]


def test_electra_model_closed_form_with_and_without_projection() -> None:
    projected = derive(count_parameters(electra_card("test-electra-projection")))
    assert to_text(projected.closed_form) == "(V + P + T + 2)E + (E + 1)H + L(4H² + 2HI + 9H + I)"
    plain = derive(count_parameters(electra_card("test-electra-no-projection")))
    assert to_text(plain.closed_form) == "(V + P + T + 2)E + L(4H² + 2HI + 9H + I)"


def test_projection_exists_only_when_embedding_differs_from_hidden() -> None:
    def projection_names(card: Card) -> list[str]:
        return [t.name for t in count_parameters(card).tensors if "embeddings_project" in t.name]

    small = card_by_id("electra-small-discriminator")  # E = 128, H = 256
    assert projection_names(small) == ["electra.embeddings_project.weight", "electra.embeddings_project.bias"]
    assert count_parameters(small).count_of(block="embedding-projection") == 128 * 256 + 256
    assert projection_names(card_by_id("electra-base-discriminator")) == []  # E = H = 768
    same_width = dataclasses.replace(small, config={**small.config, "embedding_size": 256})
    assert projection_names(same_width) == []


def test_base_discriminator_is_bert_base_without_pooler_plus_its_head() -> None:
    electra = count_parameters(card_by_id("electra-base-discriminator"))
    bert = count_parameters(card_by_id("bert-base-uncased"))
    assert electra.count_of(kind=Kind.POOLER) == 0
    assert electra.count_of(kind=Kind.EMBEDDINGS) == bert.count_of(kind=Kind.EMBEDDINGS)
    assert electra.count_of(kind=Kind.ENCODER) == bert.count_of(kind=Kind.ENCODER)
    # The discriminator head is a pooler-sized dense layer plus H + 1 for the per-token score.
    assert electra.count_of(kind=Kind.HEAD) == bert.count_of(kind=Kind.POOLER) + 768 + 1
    assert electra.total - bert.total == 769


@pytest.mark.parametrize(("size", "width_ratio"), [("small", 1), ("base", 3), ("large", 4)])
def test_generator_is_narrower_and_shares_the_embedding_width(size: str, width_ratio: int) -> None:
    discriminator = card_by_id(f"electra-{size}-discriminator").config
    generator = card_by_id(f"electra-{size}-generator").config
    assert generator["embedding_size"] == discriminator["embedding_size"]
    assert generator["num_hidden_layers"] == discriminator["num_hidden_layers"]
    for key in ("hidden_size", "intermediate_size", "num_attention_heads"):
        assert discriminator[key] == width_ratio * generator[key]


def test_generator_head_is_tied_and_keeps_its_bias() -> None:
    inventory = count_parameters(card_by_id("electra-base-generator"))
    assert [(t.name, t.tied_to) for t in inventory.tied] == [
        ("generator_lm_head.weight", "electra.embeddings.word_embeddings.weight")
    ]
    head_steps = {s.label: s.value for b in derive(inventory).blocks if b.block.kind is Kind.HEAD for s in b.lines}
    assert head_steps == {
        "transform LayerNorm": 1_536,
        "transform dense (H to E)": 256 * 768 + 768,
        "output projection (tied) and bias": 30_522,
    }
    untied = count_parameters(electra_card("test-electra-untied-generator"))
    assert untied.tied == ()
    assert untied.tensor("generator_lm_head.weight").shape == (13, 6)


def test_cross_attention_needs_a_decoder(write_card) -> None:  # type: ignore[no-untyped-def]
    path: Path = write_card(
        """
        title: Cross-attention without a decoder
        family: electra
        head: base
        config:
          add_cross_attention: true
        """
    )
    with pytest.raises(InputError) as caught:
        load_card(path)
    assert [p.message for p in caught.value.problems] == [
        "add_cross_attention is true but is_decoder is false; transformers refuses this"
    ]
