"""MobileBERT: bottlenecks, stacked FFNs, NoNorm, the trigram projection and the MLM head's extra matrix."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import pytest

from conftest import card_by_id
from generator.cards.card import Card, load_cards
from generator.cards.problems import InputError
from generator.counting.architecture import Kind
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import Inventory, count_parameters


def with_config(card: Card, **changes: Any) -> Inventory:
    return count_parameters(dataclasses.replace(card, config={**card.config, **changes}))


@pytest.mark.parametrize(
    ("card_id", "class_name", "total"),
    [
        ("mobilebert-uncased", "MobileBertModel", 24_581_888),
        ("mobilebert-uncased-pretraining", "MobileBertForPreTraining", 36_597_564),
    ],
)
def test_published_models(card_id: str, class_name: str, total: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert (inventory.class_name, inventory.total) == (class_name, total)


def test_closed_form() -> None:
    derivation = derive(count_parameters(card_by_id("mobilebert-uncased")))
    assert to_text(derivation.closed_form) == "L(2BIF + 4HB + 3B² + 3BF + IF + 3H + 12B) + VE + PH + TH + 3HE + 3H"
    layer = next(b for b in derivation.blocks if b.block.kind is Kind.ENCODER)
    ffn = layer.lines[-1]
    assert (ffn.label, to_text(ffn.symbolic)) == (
        "extra feed-forward network",
        "(F − 1)(I × B + I + B × I + B + B + B)",
    )
    assert ffn.names[0] == "encoder.layer.0.ffn.0.intermediate.dense.weight"
    assert ffn.names[-1] == "encoder.layer.0.ffn.2.output.LayerNorm.weight"  # NoNorm: bias, then weight


def test_bottleneck_narrows_attention_and_widens_back() -> None:
    inventory = count_parameters(card_by_id("mobilebert-uncased"))
    shapes = {t.name: t.shape for t in inventory.tensors}
    assert shapes["encoder.layer.0.bottleneck.input.dense.weight"] == (128, 512)  # H -> B
    assert shapes["encoder.layer.0.bottleneck.attention.dense.weight"] == (128, 512)
    assert shapes["encoder.layer.0.attention.self.query.weight"] == (128, 128)
    assert shapes["encoder.layer.0.attention.self.value.weight"] == (128, 512)  # reads the wide input
    assert shapes["encoder.layer.0.output.bottleneck.dense.weight"] == (512, 128)  # B -> H
    assert shapes["embeddings.embedding_transformation.weight"] == (512, 3 * 128)  # trigram: 3E -> H
    assert "pooler.dense.weight" not in shapes  # classifier_activation is false


def test_each_extra_feed_forward_network_adds_the_same_amount() -> None:
    card = card_by_id("mobilebert-uncased")
    totals = [with_config(card, num_feedforward_networks=f).total for f in (1, 2, 3, 4)]
    steps = {b - a for a, b in itertools.pairwise(totals)}
    assert steps == {24 * (2 * 512 * 128 + 512 + 3 * 128)}  # L(2IB + I + 3B) per extra network
    assert totals[-1] == 24_581_888
    single = with_config(card, num_feedforward_networks=1)
    assert not any(".ffn." in t.name for t in single.tensors)


def test_no_norm_and_layer_norm_count_the_same_but_register_differently() -> None:
    card = card_by_id("mobilebert-uncased")
    no_norm = count_parameters(card)
    layer_norm = with_config(card, normalization_type="layer_norm")
    assert no_norm.total == layer_norm.total
    names = [t.name for t in no_norm.tensors[:7]]
    assert names[5:] == ["embeddings.LayerNorm.bias", "embeddings.LayerNorm.weight"]
    assert [t.name for t in layer_norm.tensors[5:7]] == ["embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]


def test_without_bottleneck_the_layer_works_at_the_hidden_size() -> None:
    card = card_by_id("mobilebert-uncased")
    inventory = with_config(card, use_bottleneck=False, true_hidden_size=None)
    shapes = {t.name: t.shape for t in inventory.tensors}
    assert shapes["encoder.layer.0.attention.self.query.weight"] == (512, 512)
    assert not any("bottleneck" in name for name in shapes)


def test_the_mlm_head_adds_a_vocabulary_sized_matrix_even_when_tied() -> None:
    inventory = count_parameters(card_by_id("mobilebert-uncased-pretraining"))
    dense = inventory.tensor("cls.predictions.dense.weight")
    table = inventory.tensor("mobilebert.embeddings.word_embeddings.weight")
    assert (dense.shape, table.shape) == ((512 - 128, 30522), (30522, 128))
    assert dense.count > table.count
    head = next(b for b in derive(inventory).blocks if b.block.key == "mlm-head")
    step = next(s for s in head.lines if s.names == ("cls.predictions.dense.weight",))
    assert (to_text(step.symbolic), to_text(step.substituted)) == ("(H − E) × V", "(512 − 128) × 30,522")
    # The E-wide table and the (H − E)-row matrix make up one full V × H output matrix between them.
    assert to_text(derive(inventory).closed_form).startswith("L(2BIF + 4HB + 3B² + 3BF + IF + 3H + 12B) + VH + ")
    assert [(t.name, t.tied_to) for t in inventory.tied] == [
        ("cls.predictions.decoder.weight", "mobilebert.embeddings.word_embeddings.weight"),
        ("cls.predictions.decoder.bias", "cls.predictions.bias"),
    ]


@pytest.mark.parametrize("heads", [1, 2, 4, 8, 16, 32, 64, 128])
def test_number_of_heads_does_not_change_the_count(heads: int) -> None:
    assert with_config(card_by_id("mobilebert-uncased"), num_attention_heads=heads).total == 24_581_888


CARD = """\
title: Broken MobileBERT
family: mobilebert
head: masked-lm
config:
{config}
"""


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            "  normalization_type: rms_norm",
            "config.normalization_type: normalization_type must be 'no_norm' or 'layer_norm', found 'rms_norm'",
        ),
        (
            "  use_bottleneck: false\n  true_hidden_size: 128",
            "config.true_hidden_size: true_hidden_size (128) disagrees with the value MobileBertConfig derives "
            "(512, from hidden_size, as use_bottleneck is false); delete the key or make the two agree",
        ),
        (
            "  intra_bottleneck_size: 130",
            "config.intra_bottleneck_size: the bottleneck size intra_bottleneck_size (130) is not a multiple of "
            "the number of attention heads (4); attention runs at the bottleneck width when use_bottleneck is true",
        ),
        (
            "  embedding_size: 600",
            "config.embedding_size: the embedding size (600) is larger than the hidden size (512); the masked-LM "
            "head's extra output matrix would need H − E < 0 rows, and transformers cannot build it",
        ),
    ],
)
def test_configs_transformers_cannot_build_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "card.yaml").write_text(CARD.format(config=config), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_cards(tmp_path / "models")
    assert [str(p).split(": ", 1)[1] for p in caught.value.problems] == [message]


def test_an_embedding_wider_than_the_hidden_size_is_refused_only_where_a_head_needs_h_minus_e(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only MobileBertLMPredictionHead (masked-LM and pretraining) builds the H − E matrix; the bare
    # model and the classifier build with E > H (tests/reference/sample/configs.json has both).
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    text = CARD.format(config="  embedding_size: 600")
    (tmp_path / "models" / "card.yaml").write_text(text.replace("head: masked-lm", "head: base"), encoding="utf-8")
    (card,) = load_cards(tmp_path / "models")
    assert card.config["embedding_size"] == 600
    (tmp_path / "models" / "card.yaml").write_text(text.replace("head: masked-lm", "head: pretraining"), "utf-8")
    with pytest.raises(InputError) as caught:
        load_cards(tmp_path / "models")
    assert [p.key for p in caught.value.problems] == ["config.embedding_size"]
