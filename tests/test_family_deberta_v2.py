"""DeBERTa-v2/v3: relative positions instead of an absolute table, pinned to exact figures."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from conftest import TEST_CARDS, card_by_id, reference_for
from generator.cards.card import Card, load_card, load_cards
from generator.cards.config import load_schema
from generator.cards.problems import InputError
from generator.counting.architecture import Kind
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters

# bert-base-uncased's encoder layer, for comparison: 4H² + 2HI + 9H + I at H = 768, I = 3,072.
BERT_BASE_LAYER = 7_087_872


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


@pytest.mark.parametrize(
    ("card_id", "total"),
    [
        ("deberta-v3-xsmall", 70_682_112),
        ("deberta-v3-small", 141_304_320),
        ("deberta-v3-base", 183_831_552),
        ("deberta-v3-large", 434_012_160),
    ],
)
def test_catalog_totals(card_id: str, total: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert (inventory.class_name, inventory.total) == ("DebertaV2Model", total)
    assert total == reference_for(card_id)["total"]


def test_base_closed_form() -> None:
    derivation = derive(count_parameters(card_by_id("deberta-v3-base")))
    # Token table and LayerNorm, twelve BERT-shaped layers, then the shared relative table 2B × H
    # and its LayerNorm. No P: there is no absolute position table.
    assert to_text(derivation.closed_form) == "(V + 2)H + L(4H² + 2HI + 9H + I) + (2B + 2)H"
    assert to_text(derivation.substituted) == (
        "(128,100 + 2) · 768 + 12 · (4 · 768² + 2 · 768 · 3,072 + 9 · 768 + 3,072) + (2 · 256 + 2) · 768"
    )
    assert "P" not in derivation.formula.symbols()


def test_base_splits_like_the_model_card() -> None:
    # The model card: "86M backbone parameters" and "98M parameters in the Embedding layer".
    inventory = count_parameters(card_by_id("deberta-v3-base"))
    assert inventory.count_of(kind=Kind.EMBEDDINGS) == 128_100 * 768 + 2 * 768 == 98_382_336
    assert inventory.count_of(kind=Kind.ENCODER) == 12 * BERT_BASE_LAYER + 514 * 768 == 85_449_216
    assert inventory.count_of(kind=Kind.POOLER) == inventory.count_of(kind=Kind.HEAD) == 0


def test_layer_counts_like_bert_and_positions_are_shared() -> None:
    inventory = count_parameters(card_by_id("deberta-v3-base"))
    derivation = derive(inventory)
    layer = next(b for b in derivation.blocks if b.block.key == "layer")
    assert (layer.value, layer.repeat) == (BERT_BASE_LAYER, 12)
    relative = inventory.tensor("encoder.rel_embeddings.weight")
    assert relative.shape == (512, 768)  # two rows per bucket, B = 256
    assert to_text(derive(inventory).blocks[2].expression) == "2BH + 2H"
    names = [t.name for t in inventory.tensors]
    assert not any("position_embeddings" in n or "token_type" in n or "pos_key_proj" in n for n in names)
    assert names.count("encoder.rel_embeddings.weight") == 1


def test_unshared_keys_add_two_projections_per_layer() -> None:
    card = card_by_id("deberta-v3-base")
    shared = count_parameters(card)
    unshared = count_parameters(with_config(card, share_att_key=False))
    assert unshared.total - shared.total == 12 * 2 * (768 * 768 + 768)
    layer0 = [t.name for t in unshared.tensors if t.name.startswith("encoder.layer.0.attention.self.")]
    assert [n.split(".")[-2] for n in layer0[::2]] == [
        "query_proj",
        "key_proj",
        "value_proj",
        "pos_key_proj",
        "pos_query_proj",
    ]
    only_c2p = count_parameters(with_config(card, share_att_key=False, pos_att_type=["c2p"]))
    assert only_c2p.total - shared.total == 12 * (768 * 768 + 768)


def test_absolute_positions_come_back_with_position_biased_input() -> None:
    card = card_by_id("deberta-v3-base")
    biased = count_parameters(with_config(card, position_biased_input=True))
    assert biased.total - count_parameters(card).total == 512 * 768
    assert biased.tensor("embeddings.position_embeddings.weight").shape == (512, 768)


@pytest.mark.parametrize(
    ("changes", "rows", "formula"),
    [
        ({}, 512, "2BH + 2H"),
        ({"position_buckets": -1}, 1_024, "2PH + 2H"),  # max_relative_positions -1: 2P
        # 2R rows for R = max_relative_positions = 100: a symbol, so that the calculator can vary it
        ({"position_buckets": -1, "max_relative_positions": 100}, 200, "2RH + 2H"),
        ({"position_buckets": 0, "norm_rel_ebd": "none"}, 1_024, "2PH"),
    ],
)
def test_relative_table_rows(changes: dict[str, Any], rows: int, formula: str) -> None:
    inventory = count_parameters(with_config(card_by_id("deberta-v3-base"), **changes))
    assert inventory.tensor("encoder.rel_embeddings.weight").shape == (rows, 768)
    relative = next(b for b in derive(inventory).blocks if b.block.key == "relative")
    assert to_text(relative.expression) == formula


def test_factorized_embeddings_and_untied_decoder() -> None:
    inventory = count_parameters(load_card(TEST_CARDS / "test-deberta-v2-factorized-mlm.yaml"))
    assert inventory.tensor("deberta.embeddings.word_embeddings.weight").shape == (503, 20)
    assert inventory.tensor("deberta.embeddings.embed_proj.weight").shape == (36, 20)
    assert inventory.tensor("cls.predictions.decoder.weight").shape == (503, 20)
    # attention_head_size 14 with 3 heads: the projections are 42 wide, not H = 36.
    assert inventory.tensor("deberta.encoder.layer.0.attention.self.query_proj.weight").shape == (42, 36)
    assert inventory.tied == ()


def test_legacy_head_ties_and_new_head_has_no_decoder() -> None:
    legacy = count_parameters(load_card(TEST_CARDS / "test-deberta-v2-v3-masked-lm.yaml"))
    assert [(t.name, t.tied_to) for t in legacy.tied] == [
        ("cls.predictions.decoder.weight", "deberta.embeddings.word_embeddings.weight"),
        ("cls.predictions.decoder.bias", "cls.predictions.bias"),
    ]
    new = count_parameters(load_card(TEST_CARDS / "test-deberta-v2-new-mlm-head.yaml"))
    head = [t.name for t in new.tensors if t.block.kind is Kind.HEAD]
    assert head == [
        "lm_predictions.lm_head.bias",
        "lm_predictions.lm_head.dense.weight",
        "lm_predictions.lm_head.dense.bias",
        "lm_predictions.lm_head.LayerNorm.weight",
        "lm_predictions.lm_head.LayerNorm.bias",
    ]
    assert new.tied == ()


def test_keys_read_by_the_modeling_code_are_accepted() -> None:
    schema = load_schema(FAMILIES["deberta-v2"])
    for key in ("position_buckets", "norm_rel_ebd", "share_att_key", "embedding_size", "conv_kernel_size"):
        assert schema.known(key)
    assert schema.defaults["share_att_key"] is False
    assert schema.defaults["vocab_size"] == 128_100  # the config class's own defaults still win


def problems_of(text: str, write_card) -> list[str]:  # type: ignore[no-untyped-def]
    path = write_card(text)
    with pytest.raises(InputError) as caught:
        load_cards(path.parent)
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("hidden_size: 50\n  num_attention_heads: 4", "the hidden size (50) is not a multiple"),
        ("vocab_size: 100\n  pad_token_id: 100", "pad_token_id (100) is not a row of the 100-row token"),
        (
            "hidden_size: 48\n  num_attention_heads: 4\n  conv_kernel_size: 3\n  conv_groups: 5",
            "conv_groups (5) does not divide the hidden size (48)",
        ),
        ("type_vocab_size: 1.5", "type_vocab_size must be a whole number, 0 or less for no token types"),
        ("norm_rel_ebd: 1", "norm_rel_ebd must be a string"),
        # transformers compares these with 0 and fails on null (tests/reference/sample/configs.json)
        ("relative_attention: true\n  position_buckets: null", "position_buckets must be a whole number"),
        ("conv_kernel_size: null", "conv_kernel_size must be a whole number, 0 or less for no convolution"),
        ("embedding_size: null", "config.embedding_size: expected a whole number or no key at all"),
        ("share_att_key: 1", "config.share_att_key: expected true or false"),
    ],
)
def test_bad_values(write_card, config: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    found = problems_of(f"title: t\nfamily: deberta-v2\nhead: base\nconfig:\n  {config}\n", write_card)
    assert len(found) == 1
    assert expected in found[0]


def test_a_negative_pooler_width_is_refused_only_for_the_head_that_has_a_pooler(write_card) -> None:  # type: ignore[no-untyped-def]
    # ContextPooler, in DebertaV2ForSequenceClassification alone, reads pooler_hidden_size.
    text = "title: t\nfamily: deberta-v2\nhead: {head}\nconfig:\n  pooler_hidden_size: -1\n"
    assert load_card(write_card(text.format(head="masked-lm"))).config["pooler_hidden_size"] == -1
    found = problems_of(text.format(head="sequence-classification"), write_card)
    assert [problem.split("/models/", 1)[1] for problem in found] == [
        "card.yaml:5:23: config.pooler_hidden_size: pooler_hidden_size (-1) is below 0; the classification "
        "head's context pooler would be a Linear of negative size, which torch refuses"
    ]
