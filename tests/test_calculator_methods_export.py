"""The fine-tuning rules the calculator's export holds are the engine's, for every card.

The export reads where the base model sits from each head's class with every switch off; a card's
own class must agree, whatever its switches. A prompt's width is read from the keys the engine reads,
in its order. The browser test (tests/browser/test_calculator_methods.py) checks the page's figures.
"""

from __future__ import annotations

import pytest

from conftest import ALL_CARD_PATHS
from generator.analysis.calculator_data import family_export
from generator.cards.card import Card, load_card
from generator.counting.inventory import count_parameters
from generator.counting.methods import Method, Tuning, TuningError, tune

CARDS = [load_card(path) for path in ALL_CARD_PATHS]


@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.id)
def test_the_export_places_the_base_model_where_the_cards_class_does(card: Card) -> None:
    rules = family_export(card.family.name)["tuning"]
    assert rules["base"][card.head.value] == card.family.architecture(card.config, card.head).base
    assert rules["built"] is (card.family.ground_truth is not None)


@pytest.mark.parametrize("card", [c for c in CARDS if c.family.ground_truth is not None][::7], ids=lambda c: c.id)
def test_a_prompts_width_is_read_from_the_first_key_the_engine_reads(card: Card) -> None:
    keys = family_export(card.family.name)["tuning"]["width_keys"]
    given = [key for key in keys if card.config.get(key) is not None]
    try:
        tuned = tune(count_parameters(card), Tuning(Method.PROMPT_TUNING, virtual_tokens=1))
    except TuningError:
        assert given == []
        return
    assert tuned.added[0].shape == (1, int(card.config[given[0]]))
