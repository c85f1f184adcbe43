"""CamemBERT: RoBERTa's tensors under another model_type, a French vocabulary, and heads listed first."""

from __future__ import annotations

import pytest

from conftest import TEST_CARDS, card_by_id, count_card, reference_for
from generator.counting.inventory import count_parameters


@pytest.mark.parametrize("card_id", ["camembert-base", "camembert-large"])
def test_catalog_cards_count_what_transformers_builds(card_id: str) -> None:
    inventory = count_parameters(card_by_id(card_id))
    reference = reference_for(card_id)
    assert inventory.class_name == reference["class"] == "CamembertModel"
    assert inventory.total == reference["total"]


@pytest.mark.parametrize(
    ("camembert", "roberta"), [("camembert-base", "roberta-base"), ("camembert-large", "roberta-large")]
)
def test_only_the_vocabulary_differs_from_roberta(camembert: str, roberta: str) -> None:
    ours = count_parameters(card_by_id(camembert))
    theirs = count_parameters(card_by_id(roberta))
    table = "embeddings.word_embeddings.weight"
    assert [(t.name, t.shape) for t in ours.tensors if t.name != table] == [
        (t.name, t.shape) for t in theirs.tensors if t.name != table
    ]
    (ours_rows, width), (their_rows, _) = ours.tensor(table).shape, theirs.tensor(table).shape
    assert (ours_rows, their_rows) == (32_005, 50_265)
    assert theirs.total - ours.total == (their_rows - ours_rows) * width


def test_classifier_is_listed_before_the_backbone() -> None:
    inventory = count_card(TEST_CARDS / "test-camembert-classifier.yaml")
    reference = reference_for("test-camembert-classifier")
    assert inventory.class_name == "CamembertForSequenceClassification"
    assert [t.name for t in inventory.tensors] == [t["name"] for t in reference["tensors"]]
    assert inventory.tensors[0].name == "classifier.dense.weight"
    assert inventory.tensor("classifier.out_proj.weight").shape == (3, 12)
