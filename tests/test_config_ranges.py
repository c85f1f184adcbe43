"""Dropout probabilities below 0, above 1 and NaN, against what transformers and torch did with them.

nn.Dropout refuses a probability below 0 or above 1 when it is made, so a model that builds that
dropout is never built; nn.functional.dropout refuses it when it runs, in the training step. NaN
passes nn.Dropout's check (no comparison holds for it) and raises wherever the step runs a dropout.
``tests/reference/sample/ranges.json`` (``tools/config_sample.py``, ``make reference``) gives each
probability key of every family and head -0.1, 1.5 and NaN, in a model with 2 layers and in one with
none, with transformers' verdict and, for a model it built, whether a step ran on the meta device.
The card check must refuse exactly the models transformers did not build, the step checks name
exactly the steps that raised, and the calculator agrees with both. No torch needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_calculator import calculator_accepts, document, holds
from test_config_sample import refused_though_built, write_sample_card

from conftest import REFERENCE
from generator.cards.card import load_card
from generator.cards.problems import InputError
from generator.counting.compute import step_refusal
from generator.counting.conditions import HEAD

RANGES: list[dict[str, Any]] = json.loads((REFERENCE / "sample" / "ranges.json").read_text(encoding="utf-8"))["configs"]
FAMILIES = sorted({entry["family"] for entry in RANGES})
DROPOUT_RANGE = "is a dropout probability, and dropout takes one from 0 to 1"  # content/en/families.yaml
# nn.Dropout's refusals: a number out of range, or text given for a key no config class types (cls_dropout).
NN_DROPOUT_REFUSES = ("ValueError: dropout probability", "TypeError: '<' not supported")

# Families whose classes make no nn.Dropout: nn.functional.dropout reads each probability in the forward.
WITHOUT_DROPOUT_MODULES = ("eurobert",)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_checks_refuse_exactly_the_probabilities_transformers_refused(family: str, tmp_path: Path) -> None:
    data = document(family)
    defaults = {item["key"]: item["default"] for item in data["inputs"]}
    wrong, built, refused = [], 0, 0
    for entry in (e for e in RANGES if e["family"] == family):
        form = calculator_accepts(data, entry["head"], {**defaults, **entry["config"]})
        try:
            card = load_card(write_sample_card(tmp_path, entry))
        except InputError as error:
            refused += 1
            if entry["accepted"] and not refused_though_built(entry, error):
                wrong.append(("refused, though transformers built it", entry["config"], str(error.problems[0])))
            dropout = not entry["accepted"] and entry["error"].startswith(NN_DROPOUT_REFUSES)
            if dropout and not refused_though_built(entry, error):
                # nn.Dropout's refusal: the range rule says it, at the key, and so does the calculator
                # (unless the card check refused a size first: MobileBERT without layers)
                located = [p for p in error.problems if p.key == f"config.{entry['key']}"]
                assert len(located) == 1 and DROPOUT_RANGE in located[0].message, [str(p) for p in error.problems]
                assert not form, entry["config"]
            continue
        built += 1
        if not entry["accepted"]:
            wrong.append(("accepted, though transformers refused it", entry["config"], entry["error"]))
            continue
        checked = {**card.config, HEAD: card.head.value}
        exported = [r for r in data["compute"]["cannot_run"] if holds(r["fails"], checked)]
        if (step_refusal(card) is None) != (entry["step_error"] is None) or (exported == []) != (
            step_refusal(card) is None
        ):
            wrong.append(("the step checks disagree with torch", entry["config"], entry["step_error"]))
        assert form, entry["config"]
    assert wrong == []
    # Both verdicts, for every family with an nn.Dropout; one without (EuroBERT) reads its only
    # probability in the forward, so every config builds, and the step refuses.
    assert built > 0 and (refused > 0) is (family not in WITHOUT_DROPOUT_MODULES)


def test_a_probability_the_forward_reads_is_refused_in_the_step_not_the_card(tmp_path: Path) -> None:
    """ModernBERT's attention makes its output dropout only above 0; below 0 the model builds, and the
    step raises (nn.functional.dropout in the attention): ``count`` and the page say so."""
    (entry,) = [
        e
        for e in RANGES
        if e["family"] == "modernbert"
        and e["head"] == "base"
        and e["key"] == "attention_dropout"
        and e["config"]["num_hidden_layers"] == 2
        and e["config"]["attention_dropout"] < 0
    ]
    assert entry["accepted"] and entry["step_error"].startswith("ValueError: dropout probability")
    refusal = step_refusal(load_card(write_sample_card(tmp_path, entry)))
    assert refusal is not None and f"attention_dropout {DROPOUT_RANGE}" in refusal and refusal.endswith("found -0.1")
