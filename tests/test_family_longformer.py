"""Longformer: RoBERTa's classes with global projections in every layer, checked against transformers' own lists."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from conftest import TEST_CARDS, card_by_id, count_card, reference_for
from generator.cards.card import Card
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters
from generator.counting.switches import Rule

CATALOG = ("longformer-base-4096", "longformer-large-4096")
TESTS = ("test-longformer-masked-lm", "test-longformer-classifier-3", "test-longformer-untied-mlm")


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


@pytest.mark.parametrize("card_id", CATALOG)
def test_catalog_totals_are_transformers_own(card_id: str) -> None:
    inventory = count_parameters(card_by_id(card_id))
    reference = reference_for(card_id)
    assert (inventory.class_name, inventory.total) == ("LongformerModel", reference["total"])
    assert [(t.name, list(t.shape)) for t in inventory.tensors] == [
        (t["name"], t["shape"]) for t in reference["tensors"]
    ]


@pytest.mark.parametrize("stem", TESTS)
def test_each_head_is_transformers_own(stem: str) -> None:
    inventory = count_card(TEST_CARDS / f"{stem}.yaml")
    reference = reference_for(stem)
    assert (inventory.class_name, inventory.total) == (reference["class"], reference["total"])
    assert [[t.name, t.tied_to] for t in inventory.tied] == [[t["name"], t["tied_to"]] for t in reference["tied"]]


def test_a_layer_holds_three_more_projections_than_robertas() -> None:
    longformer = derive(count_parameters(card_by_id("longformer-base-4096")))
    roberta = derive(count_parameters(card_by_id("roberta-base")))
    assert to_text(longformer.closed_form) == "(V + P + T + 2)H + L(7H² + 2HI + 12H + I) + H² + H"
    assert to_text(roberta.closed_form) == "(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + H² + H"


def test_the_global_projections_follow_the_local_ones() -> None:
    names = [t["name"] for t in reference_for("longformer-base-4096")["tensors"]]
    layer = [n.removeprefix("encoder.layer.0.attention.self.") for n in names if ".layer.0.attention.self." in n]
    assert layer[::2] == [
        "query.weight",
        "key.weight",
        "value.weight",
        "query_global.weight",
        "key_global.weight",
        "value_global.weight",
    ]


def test_the_window_sizes_no_tensor() -> None:
    card = card_by_id("longformer-base-4096")
    assert count_parameters(with_config(card, attention_window=8)).total == count_parameters(card).total


@pytest.mark.parametrize(
    ("window", "rule"),
    [
        (3, "longformer-window-even"),
        ([512] * 11 + [511], "longformer-window-even"),
        ([0] * 12, "longformer-window-positive"),
        ([512] * 11, "longformer-window-per-layer"),
    ],
)
def test_a_window_transformers_refuses_is_refused(window: object, rule: str) -> None:
    card = card_by_id("longformer-base-4096")
    config = with_config(card, attention_window=window).config
    failed = [check.name for check in card.family.build_rules if isinstance(check, Rule) and check(config)]
    assert failed == [rule]
