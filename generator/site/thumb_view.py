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

from generator.counting.architecture import Dtype, Kind
from generator.counting.compute import (
    ELEMENT_BYTES,
    STEPS_MEMO,
    BlockCompute,
    Compute,
    StepBlocks,
    elements,
    stored_bytes,
)
from generator.counting.compute_derivation import Line, worked_line
from generator.counting.memo import IdentityMemo
from generator.counting.ops import is_mask
from generator.counting.poly import Monomial, Poly, product

b, s = Poly.symbol("b"), Poly.symbol("s")
_RULE = 34 * s * b * Poly.symbol("H") + 5 * Poly.symbol("A") * s * s * b  # Korthikanti et al.'s bytes per layer


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
    # The per-layer rule's layer: its title, its exact bytes, what masks and statistics add, the rest of the
    # gap, and what it keeps at b = 1 only.
    layer: tuple[str, Poly, Poly, Poly, Poly, Poly] | None


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
    made = Apart(per_token, squared, forward + per_token * -1 + squared * -1, kept_s2, _layer_bytes(compute))
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
        2 * N * tokens,
        6 * N * tokens,
        worked_line(compute, 2 * (multiplied - N) * b * s, 1, seq),
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


def _layer(compute: Compute) -> BlockCompute | None:
    """The first repeated encoder block: the layer the per-layer rule describes."""
    return next((x for x in compute.blocks if x.block.kind is Kind.ENCODER and x.block.repeat), None)


def _layer_bytes(compute: Compute) -> tuple[str, Poly, Poly, Poly, Poly, Poly] | None:
    """The first repeated encoder layer's bf16 bytes kept per layer at any b; of them, what 2-byte masks add
    over 1-byte ones and what the fp32 storages take; what is left of the gap to the rule; and what the
    layer keeps at b = 1 only. None without such a layer."""
    layer = _layer(compute)
    if layer is None:
        return None
    exact = Poly()
    masks = Poly()
    statistics = Poly()
    batch_one = Poly()
    for module in layer.modules:
        for tensor in module.saved:
            if tensor.shared:  # kept once for every layer, not per layer
                continue
            if tensor.batch_one:  # the rule is per layer, for any b: shown apart
                batch_one = batch_one + stored_bytes(tensor.shape, tensor.dtype, "bf16")
                continue
            kept = stored_bytes(tensor.shape, tensor.dtype, "bf16")
            exact = exact + kept
            # The rule counts a dropout mask at 1 byte an element (CUDA's); on CPU it has the activation's type.
            if is_mask(module.path, tensor.key):
                masks = masks + elements(tensor.shape) * (ELEMENT_BYTES[tensor.dtype]["bf16"] - 1)
            elif tensor.dtype is Dtype.FLOAT32:
                statistics = statistics + kept
    rest = exact + masks * -1 + statistics * -1 + _RULE * -1
    return layer.block.title, exact, masks, statistics, rest, batch_one


def _korthikanti(compute: Compute, parts: Apart, seq: int) -> Korthikanti | None:
    """One layer's bf16 activations against 34·s·b·H + 5·A·s²·b, the gap taken apart by the declarations."""
    if parts.layer is None or not {"H", "A"} <= set(compute.values):
        return None
    title, exact, masks, statistics, rest, batch_one = parts.layer
    return Korthikanti(
        title,
        worked_line(compute, _RULE, 1, seq),
        worked_line(compute, exact, 1, seq),
        worked_line(compute, masks, 1, seq),
        worked_line(compute, statistics, 1, seq),
        worked_line(compute, rest, 1, seq),
        worked_line(compute, batch_one, 1, seq) if batch_one.terms else None,
    )
