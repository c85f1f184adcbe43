"""Step symbols: compute symbols worked out at each (b, s), for a length that pads or a path that switches."""

from __future__ import annotations

import dataclasses

from conftest import card_by_id
from generator.counting.architecture import Symbol
from generator.counting.compute import declared_compute
from generator.counting.conditions import div, largest, length, maximum, minimum, mul, neg, smallest, sub
from generator.counting.families import common
from generator.counting.families.blocks.padded import padded, substitute
from generator.counting.layouts import b, s
from generator.counting.poly import Poly
from generator.counting.step_symbols import step_symbols

PADDED = Symbol("S", "s padded to a multiple of 8", value=neg(mul(div(neg("seq"), 8), 8)))
PAST_FOUR = Symbol("F", "1 past s = 4, else 0", value=minimum(1, maximum(0, sub("seq", 4))))


def test_a_padded_length_and_a_piece_are_worked_out_at_each_length() -> None:
    card = card_by_id("roberta-base")
    family = dataclasses.replace(card.family, compute_symbols=(PADDED, PAST_FOUR))
    compute = declared_compute(dataclasses.replace(card, family=family))
    assert step_symbols(family) == (PADDED, PAST_FOUR)
    assert [(compute.values_at(2, s)["S"], compute.values_at(2, s)["F"]) for s in (1, 4, 5, 8, 9)] == [
        (8, 0),
        (8, 0),
        (8, 1),
        (8, 1),
        (16, 1),
    ]
    # A step symbol has no value of the card's own: the page shows it by s.
    assert "S" not in compute.values


def test_a_symbol_of_the_config_alone_is_no_step_symbol() -> None:
    family = card_by_id("modernbert-base").family
    assert family.compute_symbols and step_symbols(family) == ()


def test_a_value_given_per_layer_is_read_through_its_ends_and_length() -> None:
    windows = {"w": [2, 8, 4]}
    assert (largest("w").evaluate(windows), smallest("w").evaluate(windows), length("w").evaluate(windows)) == (8, 2, 3)
    assert (largest("w").evaluate({"w": 6}), length("w").evaluate({"w": 6})) == (6, None)
    assert largest("w").evaluate({"w": [2, "x"]}) is None
    assert largest("w").to_json() == {"largest": {"key": "w"}}
    assert minimum("a", 3).to_json() == {"min": [{"key": "a"}, {"const": 3}]}


def test_a_padded_block_runs_on_the_padded_length() -> None:
    length = Poly.symbol("w") * Poly.symbol("N") * 2
    pooler = padded(common.bert_pooler(""), length)
    assert pooler.modules[0].saved[0].shape == (b, length, common.H)
    assert substitute(s * s + s, Poly.constant(3)) == Poly.constant(12)
    # A product that reads no s keeps its size: the pooler's dense layer runs on b rows.
    assert pooler.modules[0].products == common.bert_pooler("").modules[0].products
