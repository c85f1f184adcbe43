"""What a model page shows of a training step's compute and memory, read off the engine.

Every number comes from ``counting.compute`` (the declarations) and ``compute_derivation``: the
worked lines at b = 1, s = min(P, 512), a small grid of (b, s), and the rules of thumb (2N and 6N
FLOPs per token, Korthikanti et al. 2022's bytes per layer) set beside the exact step, their
differences taken apart as polynomials over the declared products and saved tensors. Nothing is
measured here and nothing is typed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from generator.analysis.calculator_compute import default_seq, longest_of
from generator.cards.problems import InputError, Problem
from generator.counting.architecture import Architecture, Block, Module, Op
from generator.counting.compute import (
    ACTIVATIONS,
    PRECISIONS,
    Compute,
    ModuleCompute,
    elements,
)
from generator.counting.compute_derivation import Line, ModuleLines, derive_compute, kept_at, worked_line
from generator.counting.expr import Expr
from generator.counting.inventory import Counted
from generator.counting.ops import is_mask
from generator.counting.poly import Poly
from generator.counting.step_totals import StepTotals
from generator.site.content import Text
from generator.site.thumb_view import ThumbRules, apart, compare_thumb_rules, in_s2

SEQ = 512  # the page's sequence length, or P when the position table is shorter
GRID_SEQS = (128, 512)  # the grid's lengths, with P; only those up to P
GRID_BATCHES = (1, 8, 32)
KINDS = ("steps", "products", "saved")  # the sections of content/<language>/compute.yaml
b, s = Poly.symbol("b"), Poly.symbol("s")


@dataclass(frozen=True)
class Words:
    """The display names of ops, products and saved storages (content/<language>/compute.yaml)."""

    text: Text
    names: Mapping[str, Mapping[str, str]]  # by kind, then key

    @staticmethod
    def of(text: Text) -> Words:
        """Read every name at once: a page uses a few; tests/test_content.py ties the keys to the declarations."""
        names = {}
        for kind in KINDS:
            section = text.section(kind)
            names[kind] = {str(key): section(str(key)) for key in text.document.data[kind]}
        return Words(text, names)

    def name(self, kind: str, key: str) -> str:
        """A name by kind and key; a key missing from the content is a located error."""
        if key not in self.names[kind]:
            where = self.text.document.where_key((kind,))
            raise InputError([Problem(where, kind, f"expected a text for {key!r} here, found none")])
        return self.names[kind][key]


def word_keys(architecture: Architecture) -> dict[str, set[str]]:
    """The keys of compute.yaml an architecture can ask for, by kind (what ``compute_view`` looks up)."""
    found: dict[str, set[str]] = {kind: set() for kind in KINDS}
    for block in architecture.blocks:
        items: tuple[Module | Op, ...] = (*block.modules, *block.ops)
        for item in items:
            if isinstance(item, Op):
                found["steps"].add(item.key)
            found["products"] |= {p.what for p in item.products if not _own_product(item, p.what)}
            found["saved"] |= {_storage(item.path, t.key) for t in item.saved}
            if isinstance(item, Op) and (item.activation or item.function):
                most = max(keeps.intermediates for keeps in ACTIVATIONS.values())
                found["saved"] |= {f"intermediate {n}" for n in range(most)}
    return found


@dataclass(frozen=True)
class Shown:
    """One product of the forward as shown: its name and its worked line (formula, numbers, FLOPs)."""

    name: str
    line: Line
    backward: int  # the backward's products for it: one per operand that needs a gradient (``Product.backward``)
    backward_only: bool = False  # counted by the backward alone (``Product.backward_only``)

    @property
    def backward_flops(self) -> int:
        return self.line.value * self.backward


@dataclass(frozen=True)
class SavedStorage:
    """One storage autograd keeps: its elements worked out, and its bytes in fp32 and in bf16."""

    name: str
    elements: Line
    bytes: Mapping[str, int]
    once: bool  # one storage for the whole model, not one per copy
    mask: bool  # a dropout's mask


@dataclass(frozen=True)
class ShownModule:
    anchor: str
    label: str
    products: tuple[Shown, ...]
    backward: Line | None
    saved: tuple[SavedStorage, ...]


@dataclass(frozen=True)
class ShownComponent:
    """A component worked for one instance, with its totals over all its copies."""

    anchor: str
    title: str
    repeat: tuple[str, ...]  # the symbols its runs are counted in (L; a layer shared across depth: L and K), or none
    copies: int
    modules: tuple[ShownModule, ...]
    forward: int  # all copies
    backward: int
    activations: Mapping[str, int]


@dataclass(frozen=True)
class Mask:
    """A dropout mask saved in one component: its storage and how many copies keep one."""

    component: ShownComponent
    module: ShownModule
    saved: SavedStorage

    @property
    def copies(self) -> int:
        return 1 if self.saved.once else self.component.copies


@dataclass(frozen=True)
class ComputeView:
    """The section's every figure at (b, s), the closed forms, the grid, and the rules worked."""

    batch: int
    seq: int
    positions: int | None  # the longest sequence the model takes (max_position_embeddings)
    totals: StepTotals
    components: tuple[ShownComponent, ...]
    forward: Expr  # closed forms in b and s
    backward: Expr
    activations: Mapping[str, Expr]
    batch_one: Mapping[str, Expr | None]  # what b = 1 adds, where anything
    seq_one: Mapping[str, Expr | None]  # what s = 1 takes off, where anything
    skipped: tuple[tuple[str, str, int], ...]  # (component, product, FLOPs) the backward does not spend
    extra: tuple[tuple[str, str, int], ...]  # (component, product, FLOPs) only the backward counts
    grid: tuple[StepTotals, ...]
    squared: tuple[tuple[ShownModule, str, int, str], ...]  # (module, name, value, unit) of every line in s²
    squared_saved: Line  # the bf16 bytes in s², the whole model
    masks: tuple[Mask, ...]
    rules: ThumbRules
    # Whether the figures read step symbols (a padded length): the lines by degree in s are then not worked.
    stepped: bool = False

    @property
    def mask_bytes(self) -> dict[str, int]:
        """The masks' bytes, every copy, by precision."""
        return {p: sum(x.saved.bytes[p] * x.copies for x in self.masks) for p in PRECISIONS}

    @property
    def mask_elements(self) -> int:
        """The masks' elements, every copy: their bytes were they saved at 1 byte each, as CUDA does."""
        return sum(x.saved.elements.value * x.copies for x in self.masks)

    @property
    def training_state(self) -> dict[str, int]:
        """The training memory without the activations: weights, gradients, Adam's moments (and master copy)."""
        memory = self.totals.training_memory
        saved = self.totals.activations
        return {"fp32": memory["fp32"] - saved["fp32"], "bf16_mixed": memory["bf16_mixed"] - saved["bf16"]}


def longest(card: Counted) -> int | None:
    """The longest sequence the model takes: ``max_position_embeddings``, a table's rows (less those before the
    first token: 514 rows may hold 512) or, with rotary positions, the length the config declares."""
    found = longest_of(card.family, card.config)
    return found if found is not None and found > 0 else None


def grid_points(positions: int | None) -> tuple[tuple[int, int], ...]:
    """The grid's (b, s): s in 128, 512 and P (each once, none above P), b in 1, 8 and 32."""
    seqs = sorted({x for x in (*GRID_SEQS, positions or SEQ) if x <= (positions or SEQ)})
    return tuple((batch, seq) for seq in seqs for batch in GRID_BATCHES)


def compute_view(card: Counted, compute: Compute, words: Words) -> ComputeView:
    """A card's compute section at b = 1 and s = min(P, 512), from its counted ``compute``."""
    positions = longest(card)
    seq = default_seq(card.family, card.config)
    derivation = derive_compute(compute, 1, seq)
    shapes: dict[Poly, Line] = {}  # a storage's elements, worked once a shape: a layer keeps b·s·H many times
    components = []
    for block, lines in zip(compute.blocks, derivation.components, strict=True):
        items: tuple[Module | Op, ...] = (*block.block.modules, *block.block.ops)
        modules = tuple(
            _module(compute, f"c-{block.block.key}-{item.key}", item, computed, worked, words, seq, shapes)
            for item, computed, worked in zip(items, block.modules, lines.modules, strict=True)
            if worked.forward or any(worked.saved.values())
        )
        components.append(
            ShownComponent(
                f"c-{block.block.key}",
                block.block.title,
                _applied(block.block),
                lines.copies,
                modules,
                lines.forward,
                lines.backward,
                lines.activations,
            )
        )
    masks = tuple(Mask(c, module, k) for c in components for module in c.modules for k in module.saved if k.mask)
    names = {(c.title, x.line.what): x.name for c in components for module in c.modules for x in module.products}
    named = [(x.component, names.get((x.component, x.what), x.what), x.flops) for x in derivation.skipped]
    skipped = tuple(x for x in named if x[2] > 0)
    extra = tuple((component, name, -flops) for component, name, flops in named if flops < 0)
    return ComputeView(
        1,
        seq,
        positions,
        compute.at(1, seq),
        tuple(components),
        derivation.forward,
        derivation.backward,
        derivation.activations,
        {p: _written(compute, compute.saved_bytes(p).batch_one) for p in PRECISIONS},
        {p: _written(compute, compute.saved_bytes(p).seq_one) for p in PRECISIONS},
        skipped,
        extra,
        tuple(compute.at(batch, x) for batch, x in grid_points(positions)),
        _squared(components),
        worked_line(compute, apart(compute).kept_s2, 1, seq),
        masks,
        compare_thumb_rules(compute, seq, sum(x.flops for x in derivation.skipped)),
        bool(compute.per_step),
    )


def _applied(block: Block) -> tuple[str, ...]:
    """The symbols a component's runs are counted in: its repeat, or, for a layer shared across depth
    the times it is applied and the inner repeat (``compute.applied_copies``)."""
    return block.repeat if block.applied is None else (block.applied, *block.repeat[1:])


def _module(
    compute: Compute,
    anchor: str,
    item: Module | Op,
    computed: ModuleCompute,
    worked: ModuleLines,
    words: Words,
    seq: int,
    shapes: dict[Poly, Line],
) -> ShownModule:
    """One module or op: its products named, its storages worked out as elements and bytes."""
    label = words.name("steps", item.key) if isinstance(item, Op) else computed.label
    differentiated = not computed.backward.is_zero()
    products = tuple(
        Shown(
            label if _own_product(item, line.what) else words.name("products", line.what),
            line,
            declared.backward if differentiated else 0,
            declared.backward_only,
        )
        for declared, line in zip(computed.products, worked.forward, strict=True)
    )
    kept = tuple(t for t in computed.saved if kept_at(t, 1, seq))  # the storages the derivation works out
    saved = tuple(
        SavedStorage(
            words.name("saved", _storage(computed.path, tensor.key)),
            _elements(compute, tensor.shape, seq, tensor.key, shapes),
            {p: line.value for p, line in zip(PRECISIONS, lines, strict=True)},
            tensor.shared,
            is_mask(computed.path, tensor.key),
        )
        for tensor, *lines in zip(kept, *(worked.saved[p] for p in PRECISIONS), strict=True)
    )
    return ShownModule(anchor, label, products, worked.backward, saved)


def _elements(compute: Compute, shape: tuple[Poly, ...], seq: int, key: str, shapes: dict[Poly, Line]) -> Line:
    """A storage's number of elements at b = 1 and ``seq``, worked once for each shape (``shapes``)."""
    poly = elements(shape)
    if poly not in shapes:
        shapes[poly] = worked_line(compute, poly, 1, seq)
    found = shapes[poly]
    return Line(key, poly, found.symbolic, found.substituted, found.value)


def _squared(components: list[ShownComponent]) -> tuple[tuple[ShownModule, str, int, str], ...]:
    """Every product and storage in s², with its value at the page's (b, s) and its unit."""
    modules = [module for component in components for module in component.modules]
    products = tuple(
        (module, x.name, x.line.value, "FLOPs") for module in modules for x in module.products if in_s2(x.line)
    )
    saved = tuple(
        (module, k.name, k.bytes["bf16"], "bytes in bf16")
        for module in modules
        for k in module.saved
        if in_s2(k.elements)
    )
    return products + saved


def _own_product(item: Module | Op, what: str) -> bool:
    """Whether a product is its module's one projection, named by the module's own label."""
    return isinstance(item, Module) and what == item.key


def _storage(path: str, key: str) -> str:
    """A storage's content key: what follows its module's path when it is named after the module."""
    prefix = f"{path} "
    return key[len(prefix) :] if key.startswith(prefix) else key


def _written(compute: Compute, poly: Poly) -> Expr | None:
    """A figure's closed form in b and s, or None when it is 0 (what b = 1 adds, what s = 1 takes off)."""
    found = compute.in_batch(poly)
    return None if found.is_zero() else compute.closed_form(found)
