"""Longformer: RoBERTa's classes with global projections in every layer, checked against transformers' own lists."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from conftest import REFERENCE, TEST_CARDS, card_by_id, count_card, reference_for
from generator.cards.card import Card, load_card
from generator.counting.compute import count_compute, step_inexact
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters
from generator.counting.switches import Rule

CATALOG = ("longformer-base-4096", "longformer-large-4096")
TESTS = (
    "test-longformer-masked-lm",
    "test-longformer-classifier-3",
    "test-longformer-untied-mlm",
    "test-longformer-one-head",
    "test-longformer-classifier-one-head",
)


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


def measured(stem: str) -> list[dict[str, int]]:
    points: list[dict[str, int]] = json.loads((REFERENCE / "compute" / f"{stem}.json").read_text("utf-8"))["points"]
    return points


@pytest.mark.parametrize(
    ("stem", "views"),
    [
        ("test-longformer-masked-lm", {0}),
        ("test-longformer-untied-mlm", {0}),
        ("test-longformer-one-head", {0, 1}),
        ("test-longformer-classifier-3", {0}),
        ("test-longformer-classifier-one-head", {0, 1}),
    ],
)
def test_the_step_is_torchs_on_every_piece_of_the_padding(stem: str, views: set[int]) -> None:
    compute = count_compute(load_card(TEST_CARDS / f"{stem}.yaml"))
    points = measured(stem)
    values = [compute.values_at(p["batch"], p["seq"]) for p in points]
    pieces = {(at[name], name) for at in values for name in "Nck"}
    # One, two and three windows; one sequence and several; one token and several.
    assert {(n, "N") for n in (1, 2, 3)} <= pieces and {(0, "c"), (1, "c"), (0, "k"), (1, "k")} <= pieces
    # With one head (o = 1), one sequence reads its chunks as views; several sequences copy them.
    assert {at["o"] * (1 - at["c"]) for at in values} == views
    for point in points:
        figures = compute.at(point["batch"], point["seq"])
        assert (figures.forward, figures.backward, figures.activations["fp32"], figures.activations["bf16"]) == (
            point["forward"],
            point["backward"],
            point["fp32"],
            point["bf16"],
        )


def test_the_sliding_products_grow_with_the_windows_not_with_s_squared() -> None:
    compute = count_compute(card_by_id("longformer-base-4096"))
    attention = next(m for block in compute.blocks for m in block.modules if m.path == "attention.self")
    # Scores 8bHw²(2N − 1), the product by the values 12bHNw²: linear in N, where full attention is s².
    assert to_text(compute.closed_form(attention.forward)) == "28Hw²Nb − 8Hw²b"
    # 4,096 tokens are 8 windows of 512: a length of 4,097 pads to 9 windows, 4,608 tokens.
    assert [compute.values_at(1, s)["N"] for s in (4096, 4097)] == [8, 9]


def test_windows_that_differ_are_declared_inexact_and_the_global_token_is_not() -> None:
    assert "differ" in (step_inexact(load_card(TEST_CARDS / "test-longformer-windows-per-layer.yaml")) or "")
    assert step_inexact(load_card(TEST_CARDS / "test-longformer-classifier-3.yaml")) is None
    assert [step_inexact(card_by_id(card_id)) for card_id in CATALOG] == [None, None]
