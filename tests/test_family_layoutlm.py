"""LayoutLM: BERT's layers with four 2-D position tables, checked against transformers' own lists and torch's step."""

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

CATALOG = ("layoutlm-base-uncased", "layoutlm-large-uncased")
TABLES = ("x_position_embeddings", "y_position_embeddings", "h_position_embeddings", "w_position_embeddings")


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
    assert (inventory.class_name, inventory.total) == ("LayoutLMModel", reference["total"])
    assert [(t.name, list(t.shape)) for t in inventory.tensors] == [
        (t["name"], t["shape"]) for t in reference["tensors"]
    ]


def test_closed_form_adds_four_tables_of_d_rows() -> None:
    derivation = derive(count_parameters(card_by_id("layoutlm-base-uncased")))
    assert to_text(derivation.closed_form) == "(V + P + 4D + T + 2)H + L(4H² + 2HI + 9H + I) + H² + H"


def test_the_layout_is_the_whole_difference_from_bert_base() -> None:
    layout = reference_for("layoutlm-base-uncased")
    bert = reference_for("bert-base-uncased")
    added = [t for t in layout["tensors"] if t["name"].split(".")[1] in TABLES]
    assert [t["name"] for t in added] == [f"embeddings.{table}.weight" for table in TABLES]
    assert all(t["shape"] == [1_024, 768] for t in added)
    assert layout["total"] - bert["total"] == sum(t["count"] for t in added)
    assert [t["name"] for t in layout["tensors"] if t not in added] == [t["name"] for t in bert["tensors"]]


def test_masked_lm_keeps_the_pooler_and_runs_it_unread() -> None:
    """LayoutLMModel always builds its pooler: the masked LM pays its forward product, no backward."""
    card = load_card(TEST_CARDS / "test-layoutlm-masked-lm.yaml")
    assert count_card(TEST_CARDS / "test-layoutlm-masked-lm.yaml").tensor("layoutlm.pooler.dense.weight").shape == (
        24,
        24,
    )
    assert "layoutlm.pooler.dense.weight" in [t["name"] for t in reference_for("test-layoutlm-masked-lm")["tensors"]]
    compute = count_compute(card)
    pooler = next(block for block in compute.blocks if block.block.key == "pooler")
    values = {"H": 24, "b": 3}
    assert (pooler.forward.evaluate(values), pooler.backward.evaluate(values)) == (2 * 3 * 24 * 24, 0)
    point = measured("test-layoutlm-masked-lm")[-1]
    figures = compute.at(point["batch"], point["seq"])
    assert (figures.forward, figures.backward) == (point["forward"], point["backward"])


def test_the_fp32_softmax_keeps_a_bf16_copy_only_without_attention_dropout() -> None:
    """In bf16 the product by V keeps the probabilities cast back, b·A·s² values a layer, unless a dropout
    follows; the untied card, without attention dropout, was measured so."""
    card = load_card(TEST_CARDS / "test-layoutlm-untied-mlm.yaml")
    dropped = count_compute(with_config(card, attention_probs_dropout_prob=0.1))
    kept = count_compute(card)
    for point in measured("test-layoutlm-untied-mlm"):
        b, s = point["batch"], point["seq"]
        assert kept.at(b, s).activations["bf16"] == point["bf16"]
        cast = 1 * b * 2 * s * s * 2  # L · b · A · s² bf16 values of 2 bytes
        dropout = 1 * b * 2 * s * s * (2 + 2)  # the mask (of the input's type) and the dropped probabilities
        assert dropped.at(b, s).activations["bf16"] - kept.at(b, s).activations["bf16"] == dropout - cast


def test_no_box_row_trains_no_step() -> None:
    card = load_card(TEST_CARDS / "test-layoutlm-regression.yaml")
    assert step_refusal(card) is None
    refusal = step_refusal(with_config(card, max_2d_position_embeddings=0))
    assert refusal is not None and refusal.startswith("max_2d_position_embeddings is 0")


def test_the_classifier_drops_out_with_the_hidden_dropout() -> None:
    card = load_card(TEST_CARDS / "test-layoutlm-regression.yaml")
    assert count_card(TEST_CARDS / "test-layoutlm-regression.yaml").tensor("classifier.weight").shape == (1, 12)
    without, with_dropout = count_compute(card), count_compute(with_config(card, hidden_dropout_prob=0.1))
    classifier = {
        name: next(block for block in compute.blocks if block.block.key == "classifier")
        for name, compute in (("without", without), ("with", with_dropout))
    }
    # With the hidden dropout on, the classifier keeps its mask and its dropped input, (b, H) each in fp32;
    # without it, the Linear reads the pooled output, which the pooler's tanh keeps already.
    values = {"b": 2, "H": 12, "C": 1}
    kept = {name: block.saved_bytes("fp32").every.evaluate(values) for name, block in classifier.items()}
    assert kept["with"] - kept["without"] == 2 * (2 * 12 * 4)
