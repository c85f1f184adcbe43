"""The ``compute`` of each models/<id>.json: coefficients in b and s that give torch's figures.

A reader evaluates the exported terms with nothing but arithmetic; these tests do the same and
work out a padded model's step symbols from their exported rules (``step_symbols``), and
compare with the reference files torch wrote (tests/reference/compute/), at every point of every
card measured there, and the training memory with the engine's own rule (``StepTotals.training_memory``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import pytest
from test_calculator import value
from test_compute import COMPUTE
from test_compute import _cases as measured_cases

from conftest import MODELS, TEST_CARDS, count_card
from generator.counting.compute import count_compute
from generator.counting.inventory import Inventory, count_parameters
from generator.site.comparison_step import compute_of
from generator.site.exports import to_json

FIGURES = (
    *("forward", "backward", "activations_fp32", "activations_bf16", "batch_one_fp32", "batch_one_bf16"),
    *("seq_one_fp32", "seq_one_bf16"),
    *("training_memory_fp32", "training_memory_bf16_mixed"),
)


def _json(inventory: Inventory) -> dict[str, Any]:
    """A model's JSON as the build writes it: with the compute the page counts too."""
    data: dict[str, Any] = json.loads(to_json(inventory, compute_of(inventory.card)))
    return data


def _evaluate(terms: list[dict[str, int]], b: int, s: int, steps: dict[str, int] | None = None) -> int:
    """The terms at (b, s), each exponent's symbol given its value: b, s, or a step symbol."""
    at = {"b": b, "s": s, **(steps or {})}
    return sum(t["coefficient"] * math.prod(at[k] ** e for k, e in t.items() if k != "coefficient") for t in terms)


def _steps(compute: dict[str, Any], config: dict[str, Any], b: int, s: int) -> dict[str, int]:
    """Each step symbol's value at (b, s), from its exported rule, which reads the config, batch and seq."""
    return {
        name: value(rule, {**config, "batch": b, "seq": s}) for name, rule in compute.get("step_symbols", {}).items()
    }


def _at(compute: dict[str, Any], figure: str, precision: str, b: int, s: int, steps: dict[str, int]) -> int:
    """A memory figure as docs/site.md says to read it: the terms, plus the b = 1 terms when b is 1, less
    the s = 1 terms when s is 1."""
    single = _evaluate(compute[f"batch_one_{precision}"], b, s, steps) if b == 1 else 0
    short = _evaluate(compute[f"seq_one_{precision}"], b, s, steps) if s == 1 else 0
    return _evaluate(compute[figure], b, s, steps) + single - short


@pytest.mark.parametrize("path", measured_cases())
def test_exported_terms_give_the_reference(path: Path) -> None:
    inventory = count_card(path)
    compute = _json(inventory)["compute"]
    steps = compute.pop("step_symbols", {})
    assert sorted(compute) == sorted(FIGURES)
    for terms in compute.values():
        assert all(type(t["coefficient"]) is int and t["coefficient"] != 0 for t in terms)
        assert all({"b", "s", "coefficient"} <= set(t) <= {"b", "s", "coefficient", *steps} for t in terms)
    compute["step_symbols"] = steps
    reference = json.loads((COMPUTE / f"{path.stem}.json").read_text(encoding="utf-8"))
    engine = count_compute(inventory.card)
    found, expected = [], []
    for point in reference["points"]:
        b, s = point["batch"], point["seq"]
        at = _steps(compute, dict(inventory.card.config), b, s)
        found.append(
            (
                _evaluate(compute["forward"], b, s, at),
                _evaluate(compute["backward"], b, s, at),
                _at(compute, "activations_fp32", "fp32", b, s, at),
                _at(compute, "activations_bf16", "bf16", b, s, at),
                _at(compute, "training_memory_fp32", "fp32", b, s, at),
                _at(compute, "training_memory_bf16_mixed", "bf16", b, s, at),
            )
        )
        memory = engine.at(b, s).training_memory
        expected.append(
            (point["forward"], point["backward"], point["fp32"], point["bf16"], memory["fp32"], memory["bf16_mixed"])
        )
    assert found == expected


def test_modernbert_keeps_more_at_batch_one() -> None:
    """ModernBERT keeps the whole fused QKV output at b = 1 (a view, no copy): 2·s·H elements more."""
    compute = _json(count_card(MODELS / "modernbert-base.yaml"))["compute"]
    assert compute["batch_one_fp32"] == [{"b": 0, "s": 1, "coefficient": 4 * 2 * 768 * 22}]
    assert compute["batch_one_bf16"] == [{"b": 0, "s": 1, "coefficient": 2 * 2 * 768 * 22}]
    assert _json(count_card(MODELS / "bert-base-uncased.yaml"))["compute"]["batch_one_fp32"] == []


def test_a_deberta_convolution_keeps_no_copy_of_a_one_token_input() -> None:
    """ConvLayer's transposed copy of its (b, s, H) input: at s = 1 that is the input's own storage."""
    compute = _json(count_card(TEST_CARDS / "test-deberta-v2-conv-regression.yaml"))["compute"]
    assert compute["seq_one_fp32"] == [{"b": 1, "s": 1, "coefficient": 4 * 48}]
    assert compute["seq_one_bf16"] == [{"b": 1, "s": 1, "coefficient": 2 * 48}]
    assert _json(count_card(MODELS / "deberta-v3-base.yaml"))["compute"]["seq_one_fp32"] == []


def test_the_2017_transformer_has_no_compute() -> None:
    """No transformers class runs it, so torch never measured it: the export says null, not a guess."""
    data = _json(count_card(MODELS / "transformer-base.yaml"))
    assert "compute" in data
    assert data["compute"] is None


def test_an_activation_nobody_declared_gives_no_compute() -> None:
    """A card may name any activation function; one whose saved tensors are not declared gets null, not a guess."""
    card = count_card(MODELS / "bert-base-uncased.yaml").card
    odd = dataclasses.replace(card, config={**card.config, "hidden_act": "mish"})
    data = _json(count_parameters(odd))
    assert data["total"] == 109_482_240
    assert data["compute"] is None
