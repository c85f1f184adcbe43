"""The tensor tables' rows: a table is its rows written one by one, every copy of a repeated layer under its own names."""

from __future__ import annotations

import pytest

from conftest import ALL_CARD_PATHS, TEST_CARDS
from generator.cards.card import load_card
from generator.counting.inventory import TiedTensor, count_parameters
from generator.site import content, model_rows
from generator.site.model_rows import RowWords, tensor_rows

WORDS = RowWords.of(content.load("site").section("rendering"))


@pytest.mark.parametrize("path", ALL_CARD_PATHS, ids=lambda path: path.stem)
def test_the_rows_of_every_copy_are_those_written_one_by_one(path) -> None:  # type: ignore[no-untyped-def]
    entries = count_parameters(load_card(path)).entries
    one_by_one = "".join(model_rows._tensor_row(entry, WORDS, {}) for entry in entries)
    assert tensor_rows(entries, WORDS) == one_by_one


def test_a_copy_is_its_first_rows_with_its_own_numbers_at_every_level() -> None:
    """ALBERT's groups hold layers: two indices a copy, each put in where it belongs, and only there."""
    entries = count_parameters(load_card(TEST_CARDS / "test-albert-groups.yaml")).entries
    table = tensor_rows(entries, WORDS)
    assert "\x00" not in table
    for group, layer in ((0, 1), (1, 0), (1, 2)):
        name = f"encoder.albert_layer_groups.{group}.albert_layers.{layer}.attention.query.weight"
        shown = f"encoder.<wbr>albert_layer_groups.<wbr>{group}.<wbr>albert_layers.<wbr>{layer}.<wbr>attention"
        assert f'<tr id="t-{name}"><th scope="row"><code>{shown}' in table
        assert f'href="#t-{name}" aria-label="Link to {name}"' in table


def test_a_copy_with_a_tied_slot_is_written_row_by_row() -> None:
    card = next(load_card(p) for p in ALL_CARD_PATHS if p.stem == "bert-base-uncased-pretraining")
    entries = count_parameters(card).entries
    tied = next(e for e in entries if isinstance(e, TiedTensor))
    moved = [e for e in entries if e is not tied]
    layer = next(i for i, e in enumerate(moved) if e.index == (1,))  # a tied slot inside the second layer's copy
    moved.insert(layer + 1, type(tied)(**{**vars(tied), "block": moved[layer].block, "index": (1,)}))
    one_by_one = "".join(model_rows._tensor_row(entry, WORDS, {}) for entry in moved)
    assert tensor_rows(moved, WORDS) == one_by_one
