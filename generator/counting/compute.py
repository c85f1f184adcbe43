"""Compute and memory of one training step, read off the same declarations as the parameters.

For a card, a batch size b and a sequence length s (the project's training step): the FLOPs of the
forward (loss included) and of the backward, as torch's FlopCounterMode counts them (matrix
products only, 2·m·n·k each); the bytes of the distinct storages autograd keeps for the backward,
with the model in fp32 and in bf16; and the training memory with Adam. Every figure is first a
polynomial in the config's symbols and b, s (a closed form), then a number. Each module and op
declares its products and saved tensors (``architecture.Product``, ``Saved``); nothing here is
specific to a family.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from generator.counting.architecture import (
    Architecture,
    Block,
    Dtype,
    Family,
    Head,
    Kind,
    Module,
    Op,
    Param,
    Product,
    Saved,
)
from generator.counting.conditions import Value
from generator.counting.expr import Expr, poly_expr, substitute
from generator.counting.inventory import Counted, count_totals
from generator.counting.memo import IdentityMemo
from generator.counting.poly import Coefficients, Poly, add_into, partially_evaluated, product, total
from generator.counting.step_refusals import StepCannotRunError as StepCannotRunError
from generator.counting.step_refusals import StepNotExactError as StepNotExactError
from generator.counting.step_refusals import step_inexact as step_inexact
from generator.counting.step_refusals import step_refusal as step_refusal
from generator.counting.step_symbols import step_symbols, work_out
from generator.counting.step_totals import StepTotals

PRECISIONS = ("fp32", "bf16")
# Bytes per element of each kind of saved tensor, with the model in fp32 and cast to bf16.
ELEMENT_BYTES: Mapping[Dtype, Mapping[str, int]] = {
    Dtype.ACTIVATION: {"fp32": 4, "bf16": 2},
    Dtype.FLOAT32: {"fp32": 4, "bf16": 4},
    Dtype.INT64: {"fp32": 8, "bf16": 8},
    Dtype.BOOL: {"fp32": 1, "bf16": 1},
    Dtype.CAST: {"fp32": 0, "bf16": 2},
    Dtype.UNCAST: {"fp32": 4, "bf16": 0},
}


@dataclass(frozen=True)
class Saves:
    """What an activation function keeps for its backward (torch's derivative formulas)."""

    input: bool
    output: bool
    intermediates: int = 0  # further tensors of the same shape a function written in Python keeps


# hidden_act values (transformers' ACT2FN) and what autograd keeps for each, measured with
# tools/compute_reference.py --explain: gelu and silu keep their input, relu and tanh their output;
# NewGELUActivation (gelu_new), 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))), keeps x, the tanh's output,
# 0.5·x and 1 + tanh; QuickGELU, x·sigmoid(1.702x), keeps x and the sigmoid's output.
ACTIVATIONS: Mapping[str, Saves] = {
    "gelu": Saves(input=True, output=False),
    "gelu_pytorch_tanh": Saves(input=True, output=False),
    "silu": Saves(input=True, output=False),
    "swish": Saves(input=True, output=False),
    "relu": Saves(input=False, output=True),
    "tanh": Saves(input=False, output=True),
    "gelu_new": Saves(input=True, output=False, intermediates=3),
    "quick_gelu": Saves(input=True, output=False, intermediates=1),
}


class UndeclaredActivationError(ValueError):
    """A config names an activation function whose saved tensors are not declared."""


@dataclass(frozen=True)
class SavedBytes:
    """The bytes autograd keeps, in symbols: ``every`` for every b but 1 and every s but 1;
    ``batch_one`` is what b = 1 adds (views torch folds without a copy; less the copies it then
    does not make, so it may be negative) and ``seq_one`` what s = 1
    takes off (copies that are their input's storage then). Both are zero for most families."""

    every: Poly
    batch_one: Poly
    seq_one: Poly

    def at(self, batch: int, seq: int) -> Poly:
        """The bytes saved at this batch size and sequence length."""
        saved = self.every + self.batch_one if batch == 1 else self.every
        return saved + self.seq_one * -1 if seq == 1 else saved

    @staticmethod
    def sum(parts: Iterable[SavedBytes]) -> SavedBytes:
        listed = tuple(parts)
        return SavedBytes(
            total(k.every for k in listed), total(k.batch_one for k in listed), total(k.seq_one for k in listed)
        )


@dataclass(frozen=True)
class ModuleCompute:
    """One module or op: its forward and backward FLOPs and the tensors it keeps, in symbols."""

    path: str
    label: str  # a module's label from content/, else its key (an op's, until its words are content)
    products: tuple[Product, ...]
    backward: Poly
    saved: tuple[Saved, ...]  # only those it is the first to keep (a shared storage counts once)

    @functools.cached_property
    def forward(self) -> Poly:
        return total(p.forward_flops for p in self.products)

    def saved_bytes(self, precision: str) -> Poly:
        """Bytes of its own storages (per instance) saved at every b and s: neither the model-wide
        shared ones nor those saved only when b = 1 (``BlockCompute.saved_bytes`` sums every kind)."""
        own = (t for t in self.saved if not t.shared and not t.batch_one)
        return total(stored_bytes(t.shape, t.dtype, precision) for t in own)


@dataclass(frozen=True)
class BlockCompute:
    """One component: its modules and ops for one instance, and how many instances there are."""

    block: Block
    modules: tuple[ModuleCompute, ...]
    copies: Poly

    # Summed once: a step's blocks are shared by every card that reads the same (StepBlocks), each card's
    # page asks for them.
    @functools.cached_property
    def forward(self) -> Poly:
        return total(module.forward for module in self.modules)

    @functools.cached_property
    def backward(self) -> Poly:
        return total(module.backward for module in self.modules)

    def saved_bytes(self, precision: str) -> SavedBytes:
        """Every copy's own storages and the shared ones once (a rotary table all layers read), with
        what every copy keeps in addition at b = 1 and for s > 1 only."""
        return self._saved_bytes[precision]

    @functools.cached_property
    def _saved_bytes(self) -> dict[str, SavedBytes]:
        """The sums by precision, once: the totals, the derivation and a page each ask for them.

        One pass over the storages, each added to what it counts for: a copy's own (or the model's
        shared) storages, those saved only at b = 1 (never shared), and those saved only for s > 1."""
        sums: dict[str, tuple[Coefficients, ...]] = {p: ({}, {}, {}, {}) for p in PRECISIONS}
        for module in self.modules:
            for tensor in module.saved:
                for p in PRECISIONS:
                    own, shared, single, short = sums[p]
                    size = stored_bytes(tensor.shape, tensor.dtype, p)
                    if not tensor.batch_one:
                        add_into(shared if tensor.shared else own, size)
                    elif not tensor.shared:
                        add_into(single, size)
                    if tensor.seq_above_one:
                        add_into(short, size)
                    if tensor.batch_above_one:
                        add_into(single, size * -1)  # counted at every b, taken off at b = 1
        found = {}
        for p, (own, shared, single, short) in sums.items():
            every = Poly.of_terms(own) * self.copies + Poly.of_terms(shared)
            found[p] = SavedBytes(every, Poly.of_terms(single) * self.copies, Poly.of_terms(short) * self.copies)
        return found


@dataclass(frozen=True)
class StepBlocks:
    """A step's blocks in symbols and their sums: the same for every card of one declaration whose config
    agrees on the keys the step's rules read (``rule_keys``), so counted once for all of them."""

    blocks: tuple[BlockCompute, ...]

    @functools.cached_property
    def forward(self) -> Poly:
        return total(block.forward * block.copies for block in self.blocks)

    @functools.cached_property
    def backward(self) -> Poly:
        return total(block.backward * block.copies for block in self.blocks)

    @functools.cached_property
    def symbols(self) -> frozenset[str]:
        """Every symbol the step's formulas read: its copies, its products and the shapes it keeps (b and s too)."""
        found = {name for block in self.blocks for name in block.copies.symbols()}
        for module in (module for block in self.blocks for module in block.modules):
            found |= module.forward.symbols() | module.backward.symbols()
            found |= {name for tensor in module.saved for size in tensor.shape for name in size.symbols()}
        return frozenset(found)

    @functools.cached_property
    def saved_bytes(self) -> dict[str, SavedBytes]:
        """The byte polynomials by precision, summed once: a page evaluates them at many (b, s)."""
        return {p: SavedBytes.sum(block.saved_bytes(p) for block in self.blocks) for p in PRECISIONS}


@dataclass(frozen=True)
class Compute:
    """A card's training step in closed form: polynomials in the config's symbols and b, s."""

    steps: StepBlocks
    values: Mapping[str, int]  # the card's symbols; b and s are put in by ``at``
    order: tuple[str, ...]  # the symbols in the order formulas write them, then b and s
    parameters: int
    trainable: int
    # The step symbols' values (step_symbols.py) and the config they read: worked out at each (b, s).
    per_step: tuple[tuple[str, Value], ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)

    def values_at(self, batch: int, seq: int) -> dict[str, int]:
        """Every symbol's number at this batch size and sequence length: the card's, b, s and the step symbols'."""
        return {**self.values, "b": batch, "s": seq, **work_out(self.per_step, self.config, batch, seq)}

    @property
    def blocks(self) -> tuple[BlockCompute, ...]:
        return self.steps.blocks

    @property
    def forward(self) -> Poly:
        return self.steps.forward

    @property
    def backward(self) -> Poly:
        return self.steps.backward

    def saved_bytes(self, precision: str) -> SavedBytes:
        """Bytes autograd keeps, in symbols: every block's storages times its copies, shared ones once."""
        return self.steps.saved_bytes[precision]

    def activations(self, precision: str) -> Poly:
        """The bytes saved for every b but 1 and every s but 1 (``SavedBytes.every``)."""
        return self.steps.saved_bytes[precision].every

    def in_batch(self, poly: Poly) -> Poly:
        """A figure with the card's numbers put in: a polynomial in b and s alone."""
        return partially_evaluated(poly, tuple(self.values.items()))

    def closed_form(self, poly: Poly) -> Expr:
        return _written(poly, self.order)

    def substituted(self, poly: Poly, batch: int, seq: int) -> Expr:
        return substitute(_written(poly, self.order), self.values_at(batch, seq))

    def at(self, batch: int, seq: int) -> StepTotals:
        """Every figure as a number at batch size ``batch`` and sequence length ``seq``."""
        values = self.values_at(batch, seq)
        activations = {p: self.saved_bytes(p).at(batch, seq).evaluate(values) for p in PRECISIONS}
        return StepTotals(
            batch=batch,
            seq=seq,
            parameters=self.parameters,
            trainable=self.trainable,
            forward=self.forward.evaluate(values),
            backward=self.backward.evaluate(values),
            activations=activations,
        )


def count_compute(card: Counted) -> Compute:
    """A card's compute and memory in closed form, from its family's declaration; StepCannotRunError for a
    config whose step transformers cannot run (``step_refusal``), or one no polynomial says (``step_inexact``)."""
    why = step_refusal(card)
    if why is not None:
        raise StepCannotRunError(why)
    why = step_inexact(card)
    if why is not None:
        raise StepNotExactError(why)
    return declared_compute(card)


def declared_compute(card: Counted) -> Compute:
    """What the family's declaration gives for the card's step, whether transformers can run it or not
    (``count_compute`` asks first): the meta device, which checks no index, runs some such steps."""
    architecture = card.family.architecture(card.config, card.head)
    values = card.symbol_values()
    for symbol in card.family.compute_symbols:
        found = symbol.value.evaluate(card.config) if symbol.value is not None else None
        if isinstance(found, int):
            values[symbol.name] = found
    order = (*(s.name for s in (*card.family.symbols, *card.family.compute_symbols)), "b", "s")
    totals = count_totals(card)
    trainable = totals.total - _frozen(architecture.blocks, values)
    per_step = tuple((s.name, s.value) for s in step_symbols(card.family) if s.value is not None)
    steps = _step_blocks(architecture, card.head, card.config)
    return Compute(steps, values, order, totals.total, trainable, per_step, card.config if per_step else {})


# Kept step blocks, by declaration (an Architecture is built once per setting of the switches and head,
# see Family.architecture), head, and the value of each key the rules read. Bounded: cards with
# thousands of dropout settings keep the latest only.
STEPS_MEMO = 256
_steps: IdentityMemo[Architecture, StepBlocks] = IdentityMemo(STEPS_MEMO)


def _step_blocks(architecture: Architecture, head: Head, config: Mapping[str, Any]) -> StepBlocks:
    """The step's blocks for this declaration and config, made once for every config that reads the same."""
    read = config_read(architecture, config)
    found = _steps.get(architecture, head, read)
    if found is not None:
        return found
    seen: set[str] = set()
    blocks = []
    for block in architecture.blocks:
        modules = _block_modules(block, config, seen, differentiated=differentiated(head, block.kind))
        blocks.append(BlockCompute(block, modules, applied_copies(block)))
    return _steps.keep(architecture, StepBlocks(tuple(blocks)), head, read)


# The config keys each declaration's step rules read, sorted: found once per declaration.
_RULE_KEYS: IdentityMemo[Architecture, tuple[str, ...]] = IdentityMemo(STEPS_MEMO)


def config_read(architecture: Architecture, config: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The values of the config keys a declaration's step rules read: cards that agree on them share its step."""
    keys = _RULE_KEYS.get(architecture) or _RULE_KEYS.keep(architecture, tuple(sorted(rule_keys(architecture.blocks))))
    return tuple((key, repr(config.get(key))) for key in keys)


def rule_keys(blocks: Iterable[Block]) -> set[str]:
    """The config keys a step's rules read in these blocks: the conditions of its products and saved
    tensors, and the activation functions (all that ``_block_modules`` reads of a config)."""
    keys: set[str] = set()
    for block in blocks:
        items: tuple[Module | Op, ...] = (*block.modules, *block.ops)
        for item in items:
            for when in [p.when for p in item.products] + [t.when for t in item.saved]:
                keys |= when.reads() if when is not None else set()
            if isinstance(item, Op) and item.activation is not None:
                keys.add(item.activation)
    return keys


def shows_step(card: Counted) -> bool:
    """Whether a card's step is worked out: torch checks its family, transformers runs it, and one
    polynomial in b and s says it."""
    return measured(card.family) and step_refusal(card) is None and step_inexact(card) is None


def measured(family: Family) -> bool:
    """Whether torch checks the family's compute: not for one transformers does not implement
    (one with a config of its own), whose declarations nothing has verified."""
    return family.own_config is None


def _block_modules(
    block: Block, config: Mapping[str, Any], seen: set[str], *, differentiated: bool
) -> tuple[ModuleCompute, ...]:
    """A block's modules and ops, each with its compute; keys in ``seen`` (shared storages) are saved only once."""
    local: set[str] = set()
    modules = []
    items: tuple[Module | Op, ...] = (*block.modules, *block.ops)
    for item in items:
        saved = []
        for tensor in saved_of(item, config):
            if tensor.when is not None and not tensor.when.evaluate(config):
                continue
            scope = seen if tensor.shared else local
            if tensor.key in scope:
                continue
            scope.add(tensor.key)
            saved.append(tensor)
        repeat = item.repeat if item.repeat is not None else Poly.constant(1)
        applied = (p for p in item.products if p.when is None or p.when.evaluate(config))
        products = tuple(_repeated(p, repeat) for p in applied)
        backward = total(p.flops * p.backward for p in products) if differentiated else Poly()
        once = repeat == Poly.constant(1)
        # A shared storage is one storage however often the step runs.
        scaled = tuple(t if once or t.shared else replace(t, shape=(repeat, *t.shape)) for t in saved)
        label = item.label if isinstance(item, Module) and item.label else item.key
        modules.append(ModuleCompute(item.path, label, products, backward, tuple(scaled)))
    return tuple(modules)


def differentiated(head: Head, kind: Kind) -> bool:
    """Whether the backward runs through a block of this kind: with no labels it starts from the
    encoder's output (last_hidden_state.sum()), so nothing after it, such as the pooler, is."""
    return not (head is Head.BASE and kind is Kind.POOLER)


def applied_copies(block: Block) -> Poly:
    """How many times a block runs: its copies, or, for shared layers, L steps of a group's K layers."""
    if block.applied is None:
        return block.copies()
    return product((Poly.symbol(block.applied), *block.counts()[1:]))


def _repeated(item: Product, repeat: Poly) -> Product:
    return replace(item, m=item.m * repeat, when=None) if repeat != Poly.constant(1) else item


def saved_of(item: Module | Op, config: Mapping[str, Any]) -> tuple[Saved, ...]:
    """What a module or op keeps; for an activation function, what that function keeps."""
    if not isinstance(item, Op) or (item.activation is None and item.function is None):
        return item.saved
    name = item.function or config.get(item.activation or "")
    saves = ACTIVATIONS.get(name) if isinstance(name, str) else None
    if saves is None:
        raise UndeclaredActivationError(
            f"{item.activation}: {name!r} is not an activation function whose saved tensors are declared "
            f"(declared: {', '.join(sorted(ACTIVATIONS))})"
        )
    before, after = item.saved
    saved = ((before,) if saves.input else ()) + ((after,) if saves.output else ())
    extra = tuple(Saved(f"{item.path} intermediate {n}", before.shape) for n in range(saves.intermediates))
    return saved + extra


def _frozen(blocks: tuple[Block, ...], values: Mapping[str, int]) -> int:
    """Parameters nothing trains, over every instance of every block."""
    frozen = Poly()
    for block in blocks:
        for module in block.modules:
            repeat = module.repeat if module.repeat is not None else Poly.constant(1)
            for param in module.params:
                if isinstance(param, Param) and param.frozen:
                    frozen = frozen + product(param.shape) * repeat * block.copies()
    return frozen.evaluate(values)


@functools.lru_cache(maxsize=4096)
def elements(shape: tuple[Poly, ...]) -> Poly:
    """A saved tensor's elements, multiplied out once per shape (keyed by value): a layer keeps
    b·s·H again and again, and the sums, the worked lines and a page's rules each ask for it."""
    return product(shape)


@functools.lru_cache(maxsize=4096)
def stored_bytes(shape: tuple[Poly, ...], dtype: Dtype, precision: str) -> Poly:
    """A saved tensor's bytes at a precision (its elements times ELEMENT_BYTES), once per value."""
    return elements(shape) * ELEMENT_BYTES[dtype][precision]


@functools.lru_cache(maxsize=8192)
def _written(poly: Poly, order: tuple[str, ...]) -> Expr:
    """A polynomial as a formula, written once (keyed by value): a family's formulas recur in every
    layer of every card, and a page writes each both as it is and with the numbers put in."""
    return poly_expr(poly, order)
