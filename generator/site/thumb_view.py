"""The rules of thumb a model page sets beside its exact training step.

2N FLOPs per token for the forward and 6N for a training step, against the exact forward, the
difference split by its monomials in b and s (the weights a token meets, the products in s², the
rest); and Korthikanti et al. 2022's 34·s·b·H + 5·A·s²·b bytes per layer, against one layer's
declared storages, the gap taken apart (2-byte masks, fp32 statistics, the rest). What is taken
apart is symbolic and the same for every card that shares a step's blocks, so it is worked out
once for all of them (``apart``); a card puts its numbers in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from generator.analysis.thumb_rules import FORWARD_FLOPS, KORTHIKANTI, TRAINING_FLOPS, LayerGap, b, find_layer_gap, s
from generator.counting.compute import STEPS_MEMO, Compute, StepBlocks
from generator.counting.compute_derivation import Line, worked_line
from generator.counting.memo import IdentityMemo
from generator.counting.poly import Monomial, Poly, product


@dataclass(frozen=True)
class ThumbRules:
    """The rules of thumb at the page's (b, s), each beside the exact figure, the gap taken apart."""

    parameters: int
    multiplied: int  # weights a token is multiplied by in the forward's products, a shared layer each time
    forward_rule: int  # 2·N·b·s
    training_rule: int  # 6·N·b·s
    weights_gap: Line  # 2·(M − N)·b·s
    squared: Line  # the products in s² (attention scores and weighted values)
    per_sequence: Line  # every other product: once per sequence (a pooler) or per batch (relative positions)
    skipped: int  # FLOPs the backward does not spend (twice the forward less the backward)
    korthikanti: Korthikanti | None


@dataclass(frozen=True)
class Korthikanti:
    """34·s·b·H + 5·A·s²·b bytes per layer (Korthikanti et al. 2022, 16-bit, 1-byte masks) against one layer here."""

    layer: str
    rule: Line
    exact: Line
    masks: Line  # what 2-byte masks add over 1-byte ones
    statistics: Line  # the fp32 storages (LayerNorm statistics, softmax in fp32)
    rest: Line  # whatever else this implementation keeps that the rule does not, or the reverse
    # What the layer keeps at b = 1 alone, beside ``exact`` (for any b): a family with a fused QKV output
    # may keep the rest of it whole then. The rows are worked at b = 1, so the layer holds exact + this there.
    batch_one: Line | None = None

    @property
    def softmax_fp32(self) -> bool:
        """Whether the fp32 storages include attention probabilities (b·A·s² of them: a softmax computed in
        fp32), not only the LayerNorms' statistics, which are per token."""
        return in_s2(self.statistics)


@dataclass(frozen=True)
class Apart:
    """What the rules of thumb and the s² lines take apart, in symbols: the same for every card that shares
    a step's blocks (``compute.StepBlocks``), so worked out once for all of them (``apart``)."""

    per_token: Poly  # the forward's terms in b·s: the weights each token is multiplied by, twice
    squared: Poly  # the forward's terms in s²
    rest: Poly  # the forward's other terms
    kept_s2: Poly  # the bf16 activations' terms in s²
    layer: LayerGap | None  # the per-layer rule's layer, the gap to the rule taken apart


_APART: IdentityMemo[StepBlocks, Apart] = IdentityMemo(STEPS_MEMO)


def in_s2(line: Line) -> bool:
    """Whether a worked figure has a term in s²."""
    return any(("s", 2) in mono for mono, _ in line.formula.terms)


def apart(compute: Compute) -> Apart:
    """What ``rules`` and the page's s² line take apart for this card's step, found again for each card
    that shares the step's blocks."""
    found = _APART.get(compute.steps)
    if found is not None:
        return found
    forward = compute.forward
    per_token = _terms(forward, lambda mono: _degrees(mono) == (1, 1))
    squared = _terms(forward, lambda mono: _degrees(mono)[1] == 2)
    kept_s2 = _terms(compute.activations("bf16"), lambda mono: _degrees(mono)[1] == 2)
    made = Apart(per_token, squared, forward + per_token * -1 + squared * -1, kept_s2, find_layer_gap(compute))
    return _APART.keep(compute.steps, made)


def compare_thumb_rules(compute: Compute, seq: int, skipped: int) -> ThumbRules:
    """2N and 6N FLOPs per token against the exact forward, its difference split by the monomials in b and s."""
    parts = apart(compute)
    multiplied = parts.per_token.evaluate({**compute.values, "b": 1, "s": 1}) // 2
    N = compute.parameters
    tokens = seq  # b = 1
    return ThumbRules(
        N,
        multiplied,
        FORWARD_FLOPS * N * tokens,
        TRAINING_FLOPS * N * tokens,
        worked_line(compute, FORWARD_FLOPS * (multiplied - N) * b * s, 1, seq),
        worked_line(compute, parts.squared, 1, seq),
        worked_line(compute, parts.rest, 1, seq),
        skipped,
        _korthikanti(compute, parts, seq),
    )


def _degrees(mono: Monomial) -> tuple[int, int]:
    """A monomial's degrees in b and in s."""
    found = dict(mono)
    return found.get("b", 0), found.get("s", 0)


def _terms(poly: Poly, keep: Callable[[Monomial], bool]) -> Poly:
    """The terms of a polynomial whose monomial ``keep`` accepts."""
    chosen = Poly()
    for mono, coeff in poly.terms:
        if keep(mono):
            term = Poly.constant(coeff)
            for symbol, exp in mono:
                term = term * product([Poly.symbol(symbol)] * exp)
            chosen = chosen + term
    return chosen


def _korthikanti(compute: Compute, parts: Apart, seq: int) -> Korthikanti | None:
    """One layer's bf16 activations against 34·s·b·H + 5·A·s²·b, the gap taken apart by the declarations."""
    if parts.layer is None or not {"H", "A"} <= set(compute.values):
        return None
    gap = parts.layer
    return Korthikanti(
        gap.layer.block.title,
        worked_line(compute, KORTHIKANTI, 1, seq),
        worked_line(compute, gap.exact, 1, seq),
        worked_line(compute, gap.masks, 1, seq),
        worked_line(compute, gap.statistics, 1, seq),
        worked_line(compute, gap.rest, 1, seq),
        worked_line(compute, gap.batch_one, 1, seq) if gap.batch_one.terms else None,
    )
