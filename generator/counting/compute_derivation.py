"""The worked derivation of a training step's compute and memory, read off ``compute.Compute``.

Like the parameter derivation: per component and per step, the formula in the config's symbols
and b, s, the same with the numbers put in, and the result; then each component's subtotal (one
instance, times its copies) and the closed forms in b and s. Nothing is counted here that
``compute.py`` did not count: every line is one declared product or saved tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.counting.architecture import Block, Saved
from generator.counting.compute import PRECISIONS, BlockCompute, Compute, stored_bytes
from generator.counting.expr import Expr
from generator.counting.poly import Poly


@dataclass(frozen=True)
class Line:
    """One product or one saved tensor: what it is, its formula, the numbers put in, the result."""

    what: str
    formula: Poly
    symbolic: Expr
    substituted: Expr
    value: int
    once: bool = False  # a storage the whole model shares: counted once, not once per copy


def worked_line(compute: Compute, poly: Poly, batch: int, seq: int, what: str = "") -> Line:
    """A polynomial at (b, s): its closed form, the card's numbers put in, the result."""
    value = poly.evaluate(compute.values_at(batch, seq))
    return Line(what, poly, compute.closed_form(poly), compute.substituted(poly, batch, seq), value)


@dataclass(frozen=True)
class ModuleLines:
    """One module or op of a component: its forward products, backward, and saved tensors by precision."""

    path: str
    label: str
    forward: tuple[Line, ...]
    backward: Line | None  # None when the step performs no product
    saved: dict[str, tuple[Line, ...]]  # by precision


@dataclass(frozen=True)
class ComponentLines:
    """A component's steps, and its totals for one instance and for all its copies."""

    block: Block
    modules: tuple[ModuleLines, ...]
    copies: int
    forward: int  # all copies
    backward: int
    activations: dict[str, int]  # all copies, by precision


@dataclass(frozen=True)
class Skipped:
    """A forward product whose backward does less than twice its work, and the FLOPs it saves; or,
    with ``flops`` below 0, a product only the backward counts (``Product.backward_only``)."""

    component: str
    what: str
    flops: int


@dataclass(frozen=True)
class ComputeDerivation:
    """Every component worked at (b, s), the closed forms in b and s, and what the backward skips."""

    batch: int
    seq: int
    components: tuple[ComponentLines, ...]
    forward: Expr  # closed form in b and s, the card's numbers put in
    backward: Expr
    activations: dict[str, Expr]
    skipped: tuple[Skipped, ...]


def kept_at(tensor: Saved, batch: int, seq: int) -> bool:
    """Whether a storage is kept at this (b, s): some are kept only at b = 1, only above it, or only for s > 1."""
    return (
        (batch == 1 or not tensor.batch_one)
        and (batch > 1 or not tensor.batch_above_one)
        and (seq > 1 or not tensor.seq_above_one)
    )


def derive_compute(compute: Compute, batch: int, seq: int) -> ComputeDerivation:
    """Work a card's training step at batch size ``batch`` and sequence length ``seq``."""
    values = compute.values_at(batch, seq)

    worked: dict[Poly, Line] = {}  # a layer repeats a few shapes (b·s·H) many times

    def line(what: str, formula: Poly, *, once: bool = False) -> Line:
        if formula not in worked:
            worked[formula] = worked_line(compute, formula, batch, seq)
        found = worked[formula]
        return Line(what, formula, found.symbolic, found.substituted, found.value, once)

    components = []
    skipped = []
    for block in compute.blocks:
        copies = block.copies.evaluate(values)
        modules = []
        for module in block.modules:
            saved = {
                p: tuple(
                    line(t.key, stored_bytes(t.shape, t.dtype, p), once=t.shared)
                    for t in module.saved
                    if kept_at(t, batch, seq)
                )
                for p in PRECISIONS
            }
            backward = line("backward", module.backward) if module.products else None
            modules.append(
                ModuleLines(
                    module.path, module.label, tuple(line(p.what, p.flops) for p in module.products), backward, saved
                )
            )
            for item in module.products:
                done = 0 if module.backward.is_zero() else item.backward
                lost = ((0 if item.backward_only else 2) - done) * item.flops.evaluate(values) * copies
                if lost:
                    skipped.append(Skipped(block.block.title, item.what, lost))
        components.append(_component(block, tuple(modules), copies, values, batch, seq))
    return ComputeDerivation(
        batch,
        seq,
        tuple(components),
        compute.closed_form(compute.in_batch(compute.forward)),
        compute.closed_form(compute.in_batch(compute.backward)),
        {p: compute.closed_form(compute.in_batch(compute.activations(p))) for p in PRECISIONS},
        tuple(skipped),
    )


def _component(
    block: BlockCompute, modules: tuple[ModuleLines, ...], copies: int, values: dict[str, int], batch: int, seq: int
) -> ComponentLines:
    saved = {p: block.saved_bytes(p).at(batch, seq) for p in PRECISIONS}
    return ComponentLines(
        block.block,
        modules,
        copies,
        block.forward.evaluate(values) * copies,
        block.backward.evaluate(values) * copies,
        {p: saved[p].evaluate(values) for p in PRECISIONS},
    )
