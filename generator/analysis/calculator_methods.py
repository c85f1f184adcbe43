"""A family's fine-tuning rules, exported as data for the calculator page.

The method engine (``counting/methods.py``) decides what each method trains from a model's
inventory: the modules peft walks, their Layer classes, peft's suffix matching and the modules
a classifier trains whole. The calculator rebuilds the inventory in the browser from the
exported blocks, whose tensors name their Layer (``calculator_data.block_json``), and applies
these rules to it, as ``methods.tune`` does. Everything here is read off the engine's own
declarations: nothing is restated.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from generator.counting.architecture import Family, Head, Layer
from generator.counting.methods import (
    ADAPTER,
    ADAPTS,
    CLASSIFIER_NAMES,
    Method,
    Tuning,
    TuningError,
    _parameterless,
    _token_width,
)
from generator.counting.step_totals import parameter_memory

JSON = Any


def methods_export(family: Family, keys: list[str]) -> JSON:
    """The family's part of the rules: peft's defaults, where the base model sits for each head, the modules
    without parameters that no target may name, and the config keys a prompt's width is read from."""
    off = dict.fromkeys((s.name for s in family.switches), False)
    tuning = Tuning()
    return {
        "built": family.ground_truth is not None,  # the methods are defined on transformers classes only
        "methods": [m.value for m in Method],
        "peft": {
            "lora": _names(family.peft.lora),
            "ia3": _names(family.peft.ia3),
            "feedforward": _names(family.peft.feedforward),
        },
        "defaults": {"rank": tuning.rank, "virtual_tokens": tuning.virtual_tokens},
        "adapts": {method.value: [layer.value for layer in layers] for method, layers in ADAPTS.items()},
        "linear": Layer.LINEAR.value,
        "embedding": Layer.EMBEDDING.value,
        "conv1d": Layer.CONV1D.value,
        "classifier_names": list(CLASSIFIER_NAMES),
        "classifier_head": Head.SEQUENCE_CLASSIFICATION.value,  # whose peft model trains a copy of them
        "adapter": ADAPTER,
        "base": {head.value: family.declared(off, head).base for head in family.heads},
        "parameterless": {head.value: list(_parameterless(family.name, head.value)) for head in family.heads},
        "width_keys": width_keys(keys),
        "per_parameter": {"trainable": parameter_memory(1, 1), "frozen": parameter_memory(1, 0)},
    }


def _names(names: tuple[str, ...] | None) -> list[str] | None:
    return list(names) if names is not None else None


def width_keys(keys: list[str]) -> list[str]:
    """The config keys peft may read a prompt's width from, among ``keys``, in the order it tries them:
    asked of the engine's own rule, one distinct value per key."""
    found: list[str] = []
    left = list(keys)
    while left:
        config = {key: index + 1 for index, key in enumerate(left)}
        try:
            width = _token_width(SimpleNamespace(card=SimpleNamespace(config=config)))  # type: ignore[arg-type]
        except TuningError:
            break
        key = left[width - 1]
        found.append(key)
        left.remove(key)
    return found
