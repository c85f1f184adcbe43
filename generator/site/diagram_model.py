"""A model's architecture figure before it is drawn: its blocks, their boxes and every number they show.

The figure draws what the family declares and nothing else: the blocks in the order the model runs
them (embeddings, encoder, pooler, heads), and inside each block its derivation's steps, grouped into
the runs the derivation heads (``runs.line_runs``). They follow the forward, and the sums join among
them, where the block declares its data flow (``diagram_flow``); else the order the class registers them. Each box
carries its step's count, and the shape of its weight as the tensor table lists it, so the figure
cannot disagree with the page. ``diagram.diagram_svg`` draws it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from generator.counting.architecture import Block, Kind, Module, Param, Symbol
from generator.counting.derivation import BlockDerivation, Derivation, Line
from generator.counting.expr import poly_expr, to_text
from generator.counting.inventory import Tensor
from generator.counting.memo import IdentityMemo
from generator.site.diagram_flow import Source, block_flow
from generator.site.runs import LineRun, line_runs
from generator.site.views import SHAPES_MEMO, Model

# The order the model runs its blocks in; a class that registers its head first is drawn the same.
RUN_ORDER = {Kind.EMBEDDINGS: 0, Kind.ENCODER: 1, Kind.POOLER: 2, Kind.HEAD: 3}


@dataclass(frozen=True)
class Row:
    """One box inside a block: a step, or a run's heading over its steps (``depth`` 1 and 2)."""

    anchor: str
    label: str
    count: int  # one copy of its block
    depth: int
    names: tuple[str, ...] = ()  # the tensors it holds (a tie's target is found by name)
    tied: tuple[str, ...] = ()  # the tensors it reuses from elsewhere
    run: bool = False  # a run's heading: its count is its steps'
    formula: str = ""  # a family's figure: the count in the config's symbols, and no number
    # Its weight's widths, from the tensor table: a table's rows and width, or a linear's in and out
    # (a run of linears: each width the signal passes, 768 → 3,072 → 768).
    widths: tuple[int, ...] = ()
    table: bool = False  # ``widths`` are an embedding table's rows × width, not in → out
    formula_widths: tuple[str, ...] = ()  # a family's figure: the widths in the config's symbols (V, H)
    heads: tuple[int, int] | None = None  # an attention's heads and each head's size
    # A comparison's figure: the step holds a tensor the other model lacks, or one it shapes differently.
    lacked: bool = False
    reshaped: bool = False

    @property
    def marked(self) -> bool:
        return self.lacked or self.reshaped


@dataclass(frozen=True)
class Joined:
    """A sum the block's flow declares (``diagram_flow``), drawn as ⊕ before the row at ``gap``: where each
    skip leaves (a row gap, and how many sums drawn at that gap it comes after) and what it carries."""

    gap: int
    depth: int
    branches: tuple[tuple[int, int], ...]
    # What each skip carries: ("input", "") the block's input, ("step", label) a step's output,
    # ("sum", "") an earlier sum's.
    adds: tuple[tuple[str, str], ...]
    residual: bool
    before: str  # the step or run just before it, and just after it ("" at the block's end)
    after: str
    skipped: tuple[str, ...] = ()  # a residual's: the steps and runs its skip passes by
    writes: str = ""  # the flow's name of the sum, as its ``Join`` declares it


@dataclass(frozen=True)
class Group:
    """One block: its heading, its rows, and how often it is stored and applied."""

    anchor: str
    title: str
    per_copy: int
    copies: int
    subtotal: int
    repeat: tuple[tuple[str, int], ...]  # each repeat symbol and its value: (("L", 12),)
    applied: tuple[str, int] | None  # a shared block: the symbol of how often it runs, and its value
    rows: tuple[Row, ...]
    read_by: str = ""  # the title of the repeated block every copy of which reads this one, drawn next
    # A family's figure: one copy's count and the block's in symbols, and its copies (L, GK, L − 1).
    formula: str = ""
    subtotal_formula: str = ""
    copies_formula: str = ""
    lacked_copies: int = 0  # a comparison's figure: how many of its copies the other model lacks, not all
    joins: tuple[Joined, ...] = ()  # its sums, where its flow is declared (its rows are then in forward order)
    flowed: bool = False  # its rows are in forward order, from its declared flow
    # The embeddings' width where it is a symbol of its own (a factorized E): the symbol, its value, its meaning.
    width_symbols: tuple[tuple[str, int, str], ...] = ()

    @property
    def stacked(self) -> bool:
        """Stored in several copies, each box drawn once: its rows count one copy, times ``copies``."""
        return bool(self.repeat) and self.applied is None and self.copies != 1


@dataclass(frozen=True)
class Diagram:
    """A model's figure before it is drawn: its groups and the total they add up to."""

    title: str
    total: int
    groups: tuple[Group, ...]
    setting: tuple[str, bool] | None = None  # a family's figure with one switch set against its default
    against: str = ""  # a comparison's figure: the other model's title, which its marks are read against

    @property
    def symbolic(self) -> bool:
        """A family's figure: its counts in the config's symbols, and no total."""
        return any(group.formula for group in self.groups)


def in_run_order(blocks: Iterable[Block]) -> list[Block]:
    """Blocks in the order the model runs them; a block every copy of another reads, just before that one."""
    ordered = sorted(blocks, key=lambda b: RUN_ORDER[b.kind])
    for read in [b for b in ordered if b.read_by is not None]:
        ordered.remove(read)
        ordered.insert(next(n for n, b in enumerate(ordered) if b.key == read.read_by), read)
    return ordered


# A figure's blocks, remembered by the derivation they are read from: the cards of one shape share it
# (views.model_of), and so do their figures' groups and rows.
_groups: IdentityMemo[Derivation, tuple[Group, ...]] = IdentityMemo(SHAPES_MEMO)


def diagram_of(model: Model) -> Diagram:
    """The figure of a model, every count read from its derivation."""
    groups = _groups.get(model.derivation)
    if groups is None:
        groups = _groups.keep(model.derivation, _groups_of(model))
    return Diagram(model.card.title, model.total, groups)


def _groups_of(model: Model) -> tuple[Group, ...]:
    """A model's blocks in the order it runs them, each with its rows."""
    by_block = {id(b.block): b for b in model.derivation.blocks}
    ordered = [by_block[id(block)] for block in in_run_order(b.block for b in model.derivation.blocks)]
    titles = {b.block.key: b.block.title for b in ordered}
    tensors = {t.name: t for t in model.inventory.tensors}
    return tuple(_group(model, b, titles.get(b.block.read_by or "", ""), tensors) for b in ordered)


def step_anchor(block: str, module: str) -> str:
    """The anchor of a block's step on the model page: ``d-<block>-<module>``."""
    return f"d-{block}-{module}"


def marked(
    diagram: Diagram, against: str, lacked: Mapping[str, int] | Iterable[str], reshaped: Iterable[str]
) -> Diagram:
    """The figure with its steps marked against the model titled ``against``: those at the anchors
    ``lacked`` hold a tensor it lacks, those at ``reshaped`` one it shapes differently.

    ``lacked`` may say how many copies of its block each step is lacked in. A step of a stacked block
    that the other model lacks in some copies only is not marked: its block says how many."""
    lacks = lacked if isinstance(lacked, Mapping) else dict.fromkeys(lacked, 0)
    other = frozenset(reshaped)

    def mark(group: Group) -> Group:
        partial = [lacks[r.anchor] for r in group.rows if 0 < lacks.get(r.anchor, 0) < group.copies]
        if not group.stacked:
            partial = []

        def row(r: Row) -> Row:
            whole = r.anchor in lacks and not (group.stacked and 0 < lacks[r.anchor] < group.copies)
            return r if r.run else replace(r, lacked=whole, reshaped=r.anchor in other)

        return replace(group, rows=tuple(row(r) for r in group.rows), lacked_copies=max(partial, default=0))

    return replace(diagram, groups=tuple(mark(g) for g in diagram.groups), against=against)


def symbolic_widths(module: Module, order: tuple[str, ...]) -> tuple[str, ...]:
    """A module's weight's widths in the config's symbols, in the order a figure draws them: V × H, H → I."""
    param = _param(module)
    if param is None:
        return ()
    widths = tuple(to_text(poly_expr(dim, order)) for dim in param.shape)
    return widths if not module.products else widths[::-1]


def width_symbols(block: Block, symbols: Sequence[Symbol]) -> tuple[tuple[str, str], ...]:
    """The symbols an embeddings block's tables are wide in, other than H (a factorized table's E), each
    with its meaning's first words ("embedding width"): a figure names them where its widths are numbers."""
    if block.kind is not Kind.EMBEDDINGS:
        return ()
    order = tuple(s.name for s in symbols)
    meanings = {s.name: re.split(r" \(|（", s.meaning)[0] for s in symbols}
    found = (symbolic_widths(m, order)[-1] for m in block.modules if is_table(m))
    return tuple((name, meanings[name]) for name in dict.fromkeys(found) if name in meanings and name != "H")


def is_table(module: Module) -> bool:
    """Whether a module's weight is a table it looks rows up in (nn.Embedding: no product), not a linear's."""
    return _param(module) is not None and not module.products


def _param(module: Module) -> Param | None:
    """A module's two-dimensional weight: a table's or a linear layer's."""
    return next((p for p in module.params if isinstance(p, Param) and p.name == "weight" and len(p.shape) == 2), None)


def _weight(line: Line, module: Module, tensors: Mapping[str, Tensor]) -> tuple[tuple[int, ...], bool] | None:
    """A step's two-dimensional weight, its module's first (a stack's first copy's), as the tensor table
    shapes it; and whether it is a table that is looked up (nn.Embedding, no product) or a linear's."""
    if _param(module) is None:
        return None
    found = (tensors.get(name) for name in line.names if name.rsplit(".", 1)[-1] == "weight")
    tensor = next((t for t in found if t is not None and len(t.shape) == 2), None)
    return None if tensor is None else (tensor.shape, not module.products)


def _widths(steps: tuple[tuple[Line, Module], ...], tensors: Mapping[str, Tensor]) -> tuple[tuple[int, ...], bool]:
    """The widths of one step (or a run of linears that chain): rows × width, or in → out → …; none else."""
    chain: list[int] = []
    for line, module in steps:
        weight = _weight(line, module, tensors)
        if weight is None:
            return (), False
        shape, table = weight
        if table:
            return (shape if len(steps) == 1 else ()), True
        out, inputs = shape
        if chain and chain[-1] != inputs:
            return (), False
        chain.extend((inputs, out) if not chain else (out,))
    return tuple(chain), False


def _run_row(run: LineRun, modules: Mapping[int, Module], tensors: Mapping[str, Tensor]) -> Row:
    """A run's heading: its steps' count, the attention's heads or the feed-forward's widths."""
    split = next((line.split for line in run.lines if line.split is not None), None)
    heads = (split.heads, split.head_size) if split is not None else None
    steps = tuple((line, modules[id(line)]) for line in run.lines)
    widths = () if heads is not None else _widths(steps, tensors)[0]
    assert run.anchor is not None
    return Row(run.anchor, run.title, sum(line.value for line in run.lines), 1, run=True, widths=widths, heads=heads)


Unit = tuple[Row | None, tuple[tuple[int, Row], ...]]  # a run's heading (or none) and its steps' (module, row)


def _group(model: Model, block: BlockDerivation, read_by: str, tensors: Mapping[str, Tensor]) -> Group:
    values = model.inventory.values
    modules = {id(line): module for line, module in zip(block.lines, block.block.modules, strict=True)}
    index = {id(line): n for n, line in enumerate(block.lines)}
    units: list[Unit] = []
    for run in line_runs(model, block):
        steps = []
        for line in run.lines:
            tied = tuple(target for _, target in line.tied)
            depth = 2 if run.anchor is not None else 1
            anchor = step_anchor(block.block.key, line.key)
            widths, table = _widths(((line, modules[id(line)]),), tensors)
            # A step alone with its heads (a fused projection) carries them; in a run, its heading does.
            heads = (line.split.heads, line.split.head_size) if line.split and run.anchor is None else None
            row = Row(anchor, line.label, line.value, depth, line.names, tied, widths=widths, table=table, heads=heads)
            steps.append((index[id(line)], row))
        if run.anchor is not None:  # a run under its heading moves as a whole; steps without one, each alone
            units.append((_run_row(run, modules, tensors), tuple(steps)))
        else:
            units += [(None, (step,)) for step in steps]
    rows, joins, flowed = in_forward_order(block.block, units)
    applied = block.block.applied
    named = tuple(
        (name, values[name], meaning) for name, meaning in width_symbols(block.block, model.card.family.symbols)
    )
    return Group(
        f"d-{block.block.key}",
        block.block.title,
        block.value,
        block.repeat,
        block.subtotal,
        tuple((symbol, values[symbol]) for symbol in block.block.repeat),
        (applied, values[applied]) if applied else None,
        rows,
        read_by,
        joins=joins,
        flowed=flowed,
        width_symbols=named,
    )


def in_forward_order(block: Block, units: Sequence[Unit]) -> tuple[tuple[Row, ...], tuple[Joined, ...], bool]:
    """A block's rows in the order the forward runs them, and its sums placed among them, from its declared
    flow; in the order given, and no sum, where it declares none. Whether its flow ordered them."""
    flow = block_flow(block, [[module for module, _ in steps] for _, steps in units])
    if flow is None:
        registered = (row for head, steps in units for row in ((head,) if head else ()) + tuple(r for _, r in steps))
        return tuple(registered), (), False
    rank = {module: n for n, module in enumerate(flow.order)}
    rows: list[Row] = []
    at: dict[int, int] = {}  # each step's position in forward order: the index of its row
    opens: dict[int, int] = {}  # the step that opens a run: the index of the run's heading
    title: dict[int, str] = {}  # each step: what a sentence calls the unit it ends (a run's title, else its label)
    for n in flow.runs:
        head, steps = units[n]
        if head is not None:
            opens[rank[min(steps, key=lambda s: rank[s[0]])[0]]] = len(rows)
            rows.append(head)
        ordered = sorted(steps, key=lambda s: rank[s[0]])
        for module, row in ordered:
            at[rank[module]] = len(rows)
            rows.append(row)
        title[rank[ordered[-1][0]]] = head.label if head is not None else ordered[-1][1].label

    def row_gap(gap: int, inside: bool = False) -> int:
        """A gap between steps as a gap between rows: before a run's heading, unless inside the run."""
        if gap >= len(flow.order):
            return len(rows)
        return at[gap] if inside or gap not in opens else opens[gap]

    def carried(source: Source) -> tuple[str, str]:
        if source.kind == "step" and source.step >= 0:
            return ("step", rows[at[source.step]].label)
        return ("sum", "") if source.kind == "sum" else ("input", "")

    joined = []
    for found in flow.sums:
        before = title.get(found.gap - 1, rows[at[found.gap - 1]].label) if found.gap > 0 else ""
        after = ""
        if found.gap < len(flow.order):
            after = rows[row_gap(found.gap, found.inside)].label
        branches = tuple((row_gap(gap), count) for gap, count in found.branches)
        depth = 2 if found.inside else 1
        adds = tuple(carried(source) for source in found.skips)
        gap = row_gap(found.gap, found.inside)
        start = min(branch for branch, _ in branches)
        skipped = tuple(row.label for row in rows[start:gap] if row.depth == 1) if found.residual else ()
        joined.append(Joined(gap, depth, branches, adds, found.residual, before, after, skipped, found.join.writes))
    return tuple(rows), tuple(joined), True
