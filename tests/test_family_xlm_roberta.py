"""XLM-RoBERTa: RoBERTa's tensors, a 250,002-piece vocabulary, and heads registered first."""

from __future__ import annotations

import pytest

from conftest import TEST_CARDS, card_by_id, count_card
from generator.counting.architecture import Kind
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters


@pytest.mark.parametrize(
    ("card_id", "total"),
    [("xlm-roberta-base", 278_043_648), ("xlm-roberta-large", 559_890_432)],
)
def test_catalog_totals(card_id: str, total: int) -> None:
    inventory = count_parameters(card_by_id(card_id))
    assert inventory.class_name == "XLMRobertaModel"
    assert inventory.total == total


def test_closed_form_and_the_token_table_outweighs_the_encoder() -> None:
    inventory = count_parameters(card_by_id("xlm-roberta-base"))
    assert to_text(derive(inventory).closed_form) == "(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + H² + H"
    assert inventory.tensor("embeddings.word_embeddings.weight").count == 250_002 * 768 == 192_001_536
    assert inventory.count_of(kind=Kind.EMBEDDINGS) > inventory.count_of(kind=Kind.ENCODER) == 85_054_464
    assert inventory.tensor("embeddings.position_embeddings.weight").shape == (514, 768)


def test_same_layers_as_roberta_only_the_vocabulary_differs() -> None:
    xlmr = count_parameters(card_by_id("xlm-roberta-large"))
    roberta = count_parameters(card_by_id("roberta-large"))
    assert [t.name for t in xlmr.tensors] == [t.name for t in roberta.tensors]
    assert xlmr.total - roberta.total == (250_002 - 50_265) * 1024


def test_masked_lm_lists_the_head_first_so_the_decoder_holds_the_shared_table() -> None:
    inventory = count_card(TEST_CARDS / "test-xlm-roberta-masked-lm.yaml")
    assert inventory.class_name == "XLMRobertaForMaskedLM"
    assert inventory.tensors[0].name == "lm_head.bias"
    assert [(t.name, t.tied_to) for t in inventory.tied] == [
        ("lm_head.decoder.bias", "lm_head.bias"),
        ("roberta.embeddings.word_embeddings.weight", "lm_head.decoder.weight"),
    ]
    # Counted where transformers first lists it, but filed with the embeddings: it is the token table.
    shared = inventory.tensor("lm_head.decoder.weight")
    assert (shared.shape, shared.block.kind) == ((131, 14), Kind.EMBEDDINGS)
    assert inventory.count_of(kind=Kind.EMBEDDINGS) == (131 + 18 + 1 + 2) * 14
    assert to_text(derive(inventory).closed_form) == "(P + T + 2)H + L(4H² + 2HI + 9H + I) + VH + H² + V + 3H"


def test_untied_masked_lm_keeps_both_tables() -> None:
    inventory = count_card(TEST_CARDS / "test-xlm-roberta-untied-mlm.yaml")
    assert inventory.tied == ()
    assert inventory.tensor("lm_head.decoder.weight").block.kind is Kind.HEAD
    assert inventory.tensor("roberta.embeddings.word_embeddings.weight").block.kind is Kind.EMBEDDINGS


def test_classifier_comes_before_the_backbone() -> None:
    inventory = count_card(TEST_CARDS / "test-xlm-roberta-classifier-id2label.yaml")
    assert inventory.class_name == "XLMRobertaForSequenceClassification"
    assert [t.name for t in inventory.tensors[:4]] == [
        "classifier.dense.weight",
        "classifier.dense.bias",
        "classifier.out_proj.weight",
        "classifier.out_proj.bias",
    ]
    assert inventory.tensor("classifier.out_proj.weight").shape == (4, 20)  # four labels from id2label
