"""ERNIE: BERT's classes with a task type table, checked against transformers' own lists and torch's step."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from conftest import REFERENCE, TEST_CARDS, card_by_id, count_card, reference_for
from generator.cards.card import Card, load_card
from generator.counting.compute import count_compute, step_refusal
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters

CATALOG = ("ernie-3.0-base-zh", "ernie-3.0-medium-zh", "ernie-3.0-mini-zh")


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


def measured(card_id: str) -> list[dict[str, int]]:
    """torch's figures for the card's step at each (b, s) (tools/compute_reference.py)."""
    points: list[dict[str, int]] = json.loads((REFERENCE / "compute" / f"{card_id}.json").read_text("utf-8"))["points"]
    return points


@pytest.mark.parametrize("card_id", CATALOG)
def test_catalog_totals_are_transformers_own(card_id: str) -> None:
    inventory = count_parameters(card_by_id(card_id))
    reference = reference_for(card_id)
    assert (inventory.class_name, inventory.total) == ("ErnieModel", reference["total"])
    assert [(t.name, list(t.shape)) for t in inventory.tensors] == [
        (t["name"], t["shape"]) for t in reference["tensors"]
    ]


def test_closed_form_is_berts_with_one_more_table() -> None:
    derivation = derive(count_parameters(card_by_id("ernie-3.0-base-zh")))
    assert to_text(derivation.closed_form) == "(V + P + T + K + 2)H + L(4H² + 2HI + 9H + I) + H² + H"
    assert to_text(derivation.substituted) == (
        "(40,000 + 2,048 + 4 + 3 + 2) · 768 + 12 · (4 · 768² + 2 · 768 · 3,072 + 9 · 768 + 3,072) + 768² + 768"
    )


def test_the_task_type_table_comes_after_the_embedding_layernorm() -> None:
    names = [t["name"] for t in reference_for("ernie-3.0-base-zh")["tensors"]]
    assert names[3:6] == [
        "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias",
        "embeddings.task_type_embeddings.weight",
    ]
    inventory = count_parameters(card_by_id("ernie-3.0-medium-zh"))
    assert inventory.tensor("embeddings.task_type_embeddings.weight").shape == (16, 768)


def test_use_task_id_off_drops_exactly_the_task_table() -> None:
    card = card_by_id("ernie-3.0-base-zh")
    without = count_parameters(with_config(card, use_task_id=False))
    assert "embeddings.task_type_embeddings.weight" not in [t.name for t in without.tensors]
    assert count_parameters(card).total - without.total == 3 * 768
    # The test card leaves use_task_id to ErnieConfig's default, off: transformers built no table either.
    names = [t["name"] for t in reference_for("test-ernie-classifier-no-task-types")["tensors"]]
    assert not [name for name in names if "task_type" in name]


def test_pretraining_keeps_next_sentence_prediction_and_an_untied_decoder() -> None:
    inventory = count_card(TEST_CARDS / "test-ernie-untied-pretraining.yaml")
    assert inventory.class_name == "ErnieForPreTraining" == reference_for("test-ernie-untied-pretraining")["class"]
    assert inventory.tensor("cls.seq_relationship.weight").shape == (2, 16)
    assert inventory.tensor("cls.predictions.decoder.weight").shape == (157, 16)
    assert inventory.tied == ()


def test_masked_lm_ties_the_decoder_to_the_token_table() -> None:
    inventory = count_card(TEST_CARDS / "test-ernie-masked-lm.yaml")
    expected = reference_for("test-ernie-masked-lm")["tied"]
    assert [{"name": t.name, "tied_to": t.tied_to} for t in inventory.tied] == expected
    assert inventory.total == reference_for("test-ernie-masked-lm")["total"]


def test_the_task_ids_are_the_only_storage_the_step_adds() -> None:
    """torch keeps 8·b·s bytes more with the table than without: the task type ids, int64 zeros."""
    card = card_by_id("ernie-3.0-mini-zh")
    with_table, without = count_compute(card), count_compute(with_config(card, use_task_id=False))
    for point in measured("ernie-3.0-mini-zh"):
        b, s = point["batch"], point["seq"]
        ours = with_table.at(b, s)
        assert (ours.forward, ours.backward, ours.activations["fp32"]) == (
            point["forward"],
            point["backward"],
            point["fp32"],
        )
        plain = without.at(b, s)
        for precision in ("fp32", "bf16"):
            assert ours.activations[precision] - plain.activations[precision] == 8 * b * s
        assert (ours.forward, ours.backward) == (plain.forward, plain.backward)  # a lookup: no product


def test_an_empty_task_table_trains_no_step() -> None:
    card = load_card(TEST_CARDS / "test-ernie-masked-lm.yaml")
    assert step_refusal(card) is None
    refusal = step_refusal(with_config(card, task_type_vocab_size=0))
    assert refusal is not None and refusal.startswith("task_type_vocab_size is 0 with use_task_id on")
    assert step_refusal(with_config(card, task_type_vocab_size=0, use_task_id=False)) is None
