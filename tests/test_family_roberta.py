"""RoBERTa: BERT's layers, a padded 514-row position table, one token type, a larger vocabulary."""

from __future__ import annotations

import pytest

from conftest import TEST_CARDS, card_by_id, count_card
from generator.cards.card import load_card
from generator.cards.problems import InputError
from generator.counting.architecture import Kind
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters
from generator.counting.switches import FirstOf


@pytest.mark.parametrize(
    ("card_id", "total"),
    [("roberta-base", 124_645_632), ("roberta-large", 355_359_744)],
)
def test_catalog_totals(card_id: str, total: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert inventory.class_name == "RobertaModel"
    assert inventory.total == total


def test_closed_form_is_berts_with_robertas_numbers() -> None:
    derivation = derive(count_parameters(card_by_id("roberta-base")))
    assert to_text(derivation.closed_form) == "(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + H² + H"
    assert to_text(derivation.substituted) == (
        "(50,265 + 514 + 1 + 2) · 768 + 12 · (4 · 768² + 2 · 768 · 3,072 + 9 · 768 + 3,072) + 768² + 768"
    )


def test_position_table_has_514_rows_and_one_token_type() -> None:
    inventory = count_parameters(card_by_id("roberta-base"))
    assert inventory.tensor("embeddings.position_embeddings.weight").shape == (514, 768)
    assert inventory.tensor("embeddings.token_type_embeddings.weight").shape == (1, 768)
    # RobertaEmbeddings creates the position table last, after the LayerNorm.
    names = [t.name for t in inventory.tensors]
    assert names[:5] == [
        "embeddings.word_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
        "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias",
        "embeddings.position_embeddings.weight",
    ]


def test_difference_from_bert_base_is_all_in_the_embeddings() -> None:
    roberta = count_parameters(card_by_id("roberta-base"))
    bert = count_parameters(card_by_id("bert-base-uncased"))
    for kind in (Kind.ENCODER, Kind.POOLER):
        assert roberta.count_of(kind=kind) == bert.count_of(kind=kind)
    # 19,743 more vocabulary rows, 2 more position rows, 1 token type fewer; 768 numbers each.
    assert roberta.total - bert.total == (50_265 - 30_522 + 514 - 512 + 1 - 2) * 768 == 15_163_392


def test_masked_lm_head_is_lm_head_with_tied_decoder_and_no_pooler() -> None:
    inventory = count_card(TEST_CARDS / "test-roberta-masked-lm.yaml")
    assert inventory.class_name == "RobertaForMaskedLM"
    assert [(t.name, t.tied_to) for t in inventory.tied] == [
        ("lm_head.decoder.weight", "roberta.embeddings.word_embeddings.weight"),
        ("lm_head.decoder.bias", "lm_head.bias"),
    ]
    assert inventory.count_of(kind=Kind.POOLER) == 0
    assert to_text(derive(inventory).closed_form) == "(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + H² + V + 3H"


def test_untied_decoder_has_its_own_weight_and_bias() -> None:
    inventory = count_card(TEST_CARDS / "test-roberta-untied-mlm.yaml")
    assert inventory.tied == ()
    assert inventory.tensor("lm_head.decoder.weight").shape == (211, 21)
    assert inventory.tensor("lm_head.decoder.bias").shape == (211,)


def test_classifier_reads_the_first_token_through_its_own_dense_layer() -> None:
    inventory = count_card(TEST_CARDS / "test-roberta-classifier-3.yaml")
    assert [t.name for t in inventory.tensors if t.block.kind is Kind.HEAD] == [
        "classifier.dense.weight",
        "classifier.dense.bias",
        "classifier.out_proj.weight",
        "classifier.out_proj.bias",
    ]
    assert inventory.count_of(kind=Kind.HEAD) == 33 * 33 + 33 + 3 * 33 + 3


def test_padding_index_must_be_a_row_of_both_tables(write_card) -> None:  # type: ignore[no-untyped-def]
    # pad_token_id (1 by default) is the padding row of the token table and of the position table.
    padding_fits_tables = next(  # as the registry words it (its message is content)
        c for c in FAMILIES["roberta"].build_rules if isinstance(c, FirstOf) and c.rules[0].name == "padding-fits"
    )
    assert padding_fits_tables({"pad_token_id": 1, "vocab_size": 50_265, "max_position_embeddings": 1}) == (
        "max_position_embeddings (1) leaves no row for pad_token_id (1); "
        "nn.Embedding refuses a padding index outside its table",
        ("max_position_embeddings", "pad_token_id"),
    )
    assert padding_fits_tables({"pad_token_id": None, "vocab_size": 1, "max_position_embeddings": 1}) is None
    path = write_card("title: bad\nfamily: roberta\nhead: base\nconfig:\n  vocab_size: 1\n")
    with pytest.raises(InputError) as caught:
        load_card(path)
    assert [(p.key, p.message) for p in caught.value.problems] == [
        (
            "config.vocab_size",
            "vocab_size (1) leaves no row for pad_token_id (1); nn.Embedding refuses a padding index outside its table",
        )
    ]
