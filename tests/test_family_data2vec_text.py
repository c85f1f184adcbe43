"""data2vec-text: RoBERTa's classes under another name, the backbone stored as ``data2vec_text``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import REFERENCE, TEST_CARDS, card_by_id, count_card, reference_for
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters

# Each test card of this family has the config of a RoBERTa test card, so the two can be compared.
TWINS = [
    ("data2vec-text-base", "roberta-base"),
    ("test-data2vec-text-masked-lm", "test-roberta-masked-lm"),
    ("test-data2vec-text-untied-mlm", "test-roberta-untied-mlm"),
    ("test-data2vec-text-classifier-3", "test-roberta-classifier-3"),
]


def _measured(card_id: str) -> list[dict[str, Any]]:
    points: list[dict[str, Any]] = json.loads((REFERENCE / "compute" / f"{card_id}.json").read_text("utf-8"))["points"]
    return points


def test_catalog_total_is_transformers() -> None:
    inventory = count_parameters(card_by_id("data2vec-text-base"))
    reference = reference_for("data2vec-text-base")
    assert inventory.class_name == reference["class"] == "Data2VecTextModel"
    assert inventory.total == reference["total"]
    assert to_text(derive(inventory).closed_form) == "(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + H² + H"


@pytest.mark.parametrize(("card_id", "twin"), TWINS, ids=[card_id for card_id, _ in TWINS])
def test_robertas_tensors_under_another_backbone_name(card_id: str, twin: str) -> None:
    ours, theirs = reference_for(card_id), reference_for(twin)
    renamed = [t["name"].replace("data2vec_text.", "roberta.") for t in ours["tensors"]]
    assert renamed == [t["name"] for t in theirs["tensors"]]
    assert ours["total"] == theirs["total"]
    assert ours["class"] == theirs["class"].replace("Roberta", "Data2VecText")


@pytest.mark.parametrize(("card_id", "twin"), TWINS, ids=[card_id for card_id, _ in TWINS])
def test_a_training_step_is_robertas(card_id: str, twin: str) -> None:
    assert _measured(card_id) == _measured(twin)


def test_masked_lm_ties_the_decoder_to_the_data2vec_text_table() -> None:
    inventory = count_card(TEST_CARDS / "test-data2vec-text-masked-lm.yaml")
    reference = reference_for("test-data2vec-text-masked-lm")
    assert [(t.name, t.tied_to) for t in inventory.tied] == [(t["name"], t["tied_to"]) for t in reference["tied"]]
    assert inventory.tied[0].tied_to == "data2vec_text.embeddings.word_embeddings.weight"
