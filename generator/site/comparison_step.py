"""A training step.s numbers per token as the comparison, the charts and the errata show them.

Every number comes from ``counting.compute`` (``Compute.at``), whose polynomials
tests/test_compute.py checks against torch at every committed (b, s) point. A family that
transformers does not implement (one with its own config) has no class to measure, so it gets no
figure here: the pages say "not measured" instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from generator.analysis.calculator_compute import default_seq
from generator.cards.card import Card
from generator.counting.compute import Compute, StepCannotRunError, UndeclaredActivationError, count_compute, measured
from generator.counting.inventory import Counted

# The comparison's step: a batch of 32 sequences of one length, for FLOPs per token and for the memory (per token,
# the FLOPs depend on the batch only where a model computes something once per batch: relative positions).
BATCH = 32
SEQ = 512


def compute_of(card: Counted) -> Compute | None:
    """A card's compute, or None when it has none to show: no transformers class (``measured``), an
    activation function whose saved tensors are not declared (the card checks accept any ``hidden_act``),
    or a config whose step transformers cannot run (``step_refusal``: the page says why)."""
    if not measured(card.family):
        return None
    try:
        return count_compute(card)
    except (UndeclaredActivationError, StepCannotRunError):
        return None


def comparison_seq(card: Card) -> int:
    """The comparison's sequence length: 512, or the longest the model takes where it is shorter (0 or less:
    no token fits, and there is no step)."""
    return default_seq(card.family, card.config)


@dataclass(frozen=True)
class ComparisonStep:
    """FLOPs per token and the bf16 mixed-precision training memory, at b = 32 and s."""

    seq: int
    forward_per_token: Fraction
    training_per_token: Fraction  # forward and backward
    training_memory: int  # bytes: Adam, bf16 mixed, at b = BATCH

    @property
    def clamped(self) -> bool:
        """Whether s is the position table's length rather than 512."""
        return self.seq < SEQ


def count_comparison_step(card: Card, compute: Compute | None) -> ComparisonStep | None:
    """A card's comparison step from its compute (``compute_of``), or None when it has none."""
    seq = comparison_seq(card)
    if compute is None or seq < 1:  # a card may have an empty position table (P = 0): no token to count
        return None
    step = compute.at(BATCH, seq)
    tokens = step.tokens
    return ComparisonStep(
        seq,
        Fraction(step.forward, tokens),
        Fraction(step.forward + step.backward, tokens),
        step.training_memory["bf16_mixed"],
    )
