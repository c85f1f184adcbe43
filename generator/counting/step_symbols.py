"""Step symbols: compute symbols worked out at each training step's b and s, not once per card.

Some classes pad the sequence (to a multiple of a window, of a block) or switch path by length.
Their figures are then no polynomial in b and s, but they stay one polynomial in a symbol derived
from s: the padded length, or a piece's 0 or 1. Such a symbol is a family's compute symbol whose
``value`` reads the step's inputs, ``batch`` or ``seq``, beside config keys. ``Compute.values_at``
works it out at each (b, s); the calculator does the same with the exported value. Each piece is
proved by reference points on it (``GroundTruth.lengths``).

Examples, with ``conditions``' values: a length padded up to a multiple of W is
``neg(mul(div(neg("seq"), "W key"), "W key"))``; 1 from s = X + 1 on, else 0, is
``minimum(1, maximum(0, sub("seq", X)))``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.counting.architecture import Family, Symbol
from generator.counting.conditions import Value

# The step's own inputs, as the config keys a step symbol's value reads.
STEP_BATCH, STEP_LENGTH = "batch", "seq"


def step_symbols(family: Family) -> tuple[Symbol, ...]:
    """The family's compute symbols whose value reads the step's b or s."""
    return tuple(
        s for s in family.compute_symbols if s.value is not None and s.value.reads() & {STEP_BATCH, STEP_LENGTH}
    )


def work_out(
    per_step: tuple[tuple[str, Value], ...], config: Mapping[str, Any], batch: int, seq: int
) -> dict[str, int]:
    """Each step symbol's number at this (b, s); one whose value cannot be worked out is left out."""
    inputs = {**config, STEP_BATCH: batch, STEP_LENGTH: seq}
    found = {}
    for name, value in per_step:
        worked = value.evaluate(inputs)
        if isinstance(worked, int):
            found[name] = worked
    return found
