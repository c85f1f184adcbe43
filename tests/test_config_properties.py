"""Random configs of every family and head: the card check, the count and the calculator agree.

Each config is drawn from the calculator's own list of inputs (``family_export(...)["inputs"]``:
every key the count or a rule reads), with the values transformers gives a special meaning
(0, -1, null, the legacy "p2c|c2p" string, a key left out) drawn far more often than their
share. The card check accepts a config exactly when the calculator does (its form's checks and
the exported rules, evaluated by tests/test_calculator.py), and for an accepted one the count
and the calculator's total are the same number. What transformers itself does with such configs
is pinned by tests/test_config_sample.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_calculator import calculator_accepts, document, evaluate

from generator.analysis.calculator_data import family_export
from generator.cards.card import load_card
from generator.cards.problems import InputError
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters

ABSENT = "<absent>"  # the key is left out of the card

# Values with a meaning of their own, repeated so that they come up more often than their share.
INT_VALUES = [-1, -1, 0, 0, None, 1, 2, 3, 4, 6]
KEY_VALUES: dict[str, list[Any]] = {
    "pad_token_id": [0, 0, 1, 3, None, -1, 500],
    "conv_groups": [1, 1, 2, 4, 0],
    "normalization_type": ["no_norm", "layer_norm", "rms_norm"],
    "norm_rel_ebd": ["none", "layer_norm", "layer_norm|none"],
    "pos_att_type": [None, None, "p2c|c2p", "p2c|c2p", "c2p", "none", [], ["c2p"], ["p2c", "c2p"], [1]],
    # Null here means "left out" to the calculator's form, so a card leaves the key out instead;
    # a null written into a card is refused (tests/test_config_sample.py has transformers' verdict).
    "true_hidden_size": [8, 16],
}
# Sizes that mostly fit together (heads divide widths) and stay small enough to list.
SYMBOL_VALUES: dict[str, list[int]] = {
    "V": [20, 40, 60],
    "P": [8, 16],
    "T": [0, 1, 2],
    "I": [12, 20],
    "H": [8, 16, 24],
    "A": [1, 2, 4],
    "B": [4, 8],
    "E": [4, 8, 16],
    "D": [2, 4],
    "W": [8, 12],
    "L": [1, 2, 3],
    "F": [1, 2, 3],
    "G": [1, 2],
    "K": [1, 2],
    "C": [1, 2, 3],
}


def value_for(item: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value for one input: mostly ordinary, often a sentinel, sometimes one the card must refuse."""
    kind = item["kind"]
    absent = [ABSENT] if item["optional"] or kind != "size" else []
    if item["key"] in KEY_VALUES:
        return st.sampled_from([*KEY_VALUES[item["key"]], ABSENT])
    if kind == "size":
        low = item["minimum"]
        ordinary = SYMBOL_VALUES.get(item["symbol"]) or [low, low, 12, 20, 40]
        if item["key"] == "num_labels":
            absent = [ABSENT, ABSENT]
        return st.sampled_from([*ordinary * 8, *absent * 2, low, low - 1])
    if kind == "int":
        return st.sampled_from([*INT_VALUES, ABSENT])
    if kind == "flag":
        return st.sampled_from([True, False, ABSENT])
    return st.sampled_from([item["default"], "something else", ABSENT])


@st.composite
def family_configs(draw: st.DrawFn) -> tuple[str, str, dict[str, Any]]:
    name = draw(st.sampled_from(sorted(FAMILIES)))
    head = draw(st.sampled_from([h.value for h in FAMILIES[name].heads]))
    config: dict[str, Any] = {}
    for item in family_export(name)["inputs"]:
        if item["group"] == "training":  # b and s: a training step's, not config keys
            continue
        found = draw(value_for(item))
        if found != ABSENT:
            config[item["key"]] = found
    if name == "transformer" and draw(st.booleans()):
        # The 2017 Transformer's two rules, kept most of the time: embeddings d_model wide, and one
        # vocabulary when the tables are shared (generator/counting/families/transformer.py).
        config["d_word_vec"] = config.get("d_model", 512)
        config["n_tgt_vocab"] = config.get("n_src_vocab", 512)
    return name, head, config


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], max_examples=300)
@given(drawn=family_configs())
def test_the_card_check_the_count_and_the_calculator_agree(
    drawn: tuple[str, str, dict[str, Any]], tmp_path: Path
) -> None:
    name, head, config = drawn
    path = tmp_path / "card.yaml"
    path.write_text(yaml.safe_dump({"title": "t", "family": name, "head": head, "config": config}), encoding="utf-8")
    data = document(name)
    try:
        card = load_card(path)
    except InputError as error:
        resolved = {**_defaults(name), **config}
        assert not calculator_accepts(data, head, resolved), [str(p) for p in error.problems]
        event(f"refused: {name}")
        return
    event(f"accepted: {name}")
    assert calculator_accepts(data, card.head.value, card.config), config
    assert evaluate(data, head, card.config).total == count_parameters(card).total


def _defaults(name: str) -> dict[str, Any]:
    """What the calculator's form starts from: every input's default."""
    return {item["key"]: item["default"] for item in family_export(name)["inputs"]}
