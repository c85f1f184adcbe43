"""Values of every JSON kind given to each key a config class checks the type of, against transformers.

transformers 5's config classes are strict dataclasses: a value of the wrong type (text for a
float, 1 where a float is declared, true for a whole number) stops the model from being built.
``tests/reference/sample/types.json`` (``tools/config_sample.py``, ``make reference``) gives each
typed key of every family each of a set of values, with transformers' verdict. The card check
must accept exactly what transformers accepted, the calculator's form likewise for the keys it
shows, and a refusal must name the key and what it expected. No torch needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_calculator import calculator_accepts
from test_config_sample import refused_though_built, write_sample_card

from conftest import REFERENCE
from generator.analysis.calculator_data import family_export
from generator.cards import types
from generator.cards.card import load_card
from generator.cards.config import load_schema
from generator.cards.problems import InputError
from generator.counting.families import family_in

TYPED: list[dict[str, Any]] = json.loads((REFERENCE / "sample" / "types.json").read_text(encoding="utf-8"))["configs"]
FAMILIES = sorted({entry["family"] for entry in TYPED})


def _verdicts(entry: dict[str, Any], folder: Path) -> tuple[bool, InputError | None]:
    try:
        load_card(write_sample_card(folder, entry))
    except InputError as error:
        return False, error
    return True, None


@pytest.mark.parametrize("family", FAMILIES)
def test_the_card_check_accepts_exactly_the_types_transformers_accepted(family: str, tmp_path: Path) -> None:
    wrong = []
    for entry in (e for e in TYPED if e["family"] == family):
        accepted, error = _verdicts(entry, tmp_path)
        if accepted != entry["accepted"] and not (error is not None and refused_though_built(entry, error)):
            shown = [str(p) for p in error.problems] if error else "accepted"
            wrong.append((entry["config"], entry["error"], shown))
    assert wrong == []


@pytest.mark.parametrize("family", FAMILIES)
def test_a_refused_type_names_its_key_and_what_the_class_declares(family: str, tmp_path: Path) -> None:
    schema = load_schema(family_in(family))
    # Sizes say their range, flags "true or false", and a family rule that tests a type its own words.
    declared = family_in(family)
    own_words = {symbol.key for symbol in declared.symbols} | {*declared.flag_keys, *declared.kind_keys}
    checked = 0
    for entry in TYPED:
        if entry["family"] != family or f"for field '{entry['key']}'" not in (entry["error"] or ""):
            continue  # refused for another reason than the type of the key given a value
        key, value = entry["key"], entry["config"][entry["key"]]
        _, error = _verdicts(entry, tmp_path)
        assert error is not None
        located = [p for p in error.problems if p.key == f"config.{key}"]
        assert len(located) == 1, (key, value, [str(p) for p in error.problems])
        if key not in own_words:
            assert (
                f"expected {types.shown(schema.types[key])}, as {schema.config_class} declares it" in located[0].message
            )
        checked += 1
    assert checked > 100  # every family's typed keys, each refused several times


@pytest.mark.parametrize("family", FAMILIES)
def test_the_calculator_form_refuses_the_types_the_card_check_refuses(family: str, tmp_path: Path) -> None:
    """For the keys the calculator shows: what the card check accepts the calculator counts, and a value
    of the wrong type it refuses, by its form or by the family's rule that names the type."""
    data = family_export(family)
    schema = load_schema(family_in(family))
    shown = {item["key"] for item in data["inputs"]}
    defaults = {item["key"]: item["default"] for item in data["inputs"]}
    compared = 0
    for entry in TYPED:
        key = entry["key"]
        if entry["family"] != family or key not in shown:
            continue
        form = calculator_accepts(data, entry["head"], {**defaults, **entry["config"]})
        if _verdicts(entry, tmp_path)[0]:
            assert form, entry["config"]
        if not types.matches(entry["config"][key], schema.types[key]):
            assert not form, entry["config"]
        compared += 1
    assert compared >= 8 * 3  # every value, for at least three of the family's inputs


@pytest.mark.parametrize(
    ("written", "message"),
    [
        (  # YAML 1.1 reads an exponent without a decimal point as text
            "layer_norm_eps: 1e-12",
            "config.layer_norm_eps: expected a number with a decimal point (1.0, not 1), as BertConfig declares it, "
            "found the string '1e-12' (YAML reads 1e-12 as text; write 1.0e-12)",
        ),
        (
            'initializer_range: "0.02"',
            "config.initializer_range: expected a number with a decimal point (1.0, not 1), as BertConfig declares "
            "it, found the string '0.02' (in quotes: write the number without them)",
        ),
        (  # without the quotes it would be 1, which a float refuses too: no advice
            'initializer_range: "1"',
            "config.initializer_range: expected a number with a decimal point (1.0, not 1), as BertConfig declares "
            "it, found the string '1'",
        ),
        (
            "hidden_dropout_prob: true",
            "config.hidden_dropout_prob: expected a number, as BertConfig declares it, found the boolean true",
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_located_and_explained(write_card, written: str, message: str) -> None:  # type: ignore[no-untyped-def]
    path = write_card(
        f"""
        id: typed
        title: Typed
        family: bert
        head: base
        config:
          {written}
        """
    )
    with pytest.raises(InputError) as raised:
        load_card(path)
    assert [f"{p.key}: {p.message}" for p in raised.value.problems] == [message]
    assert raised.value.problems[0].location.line == 6  # the value's line
