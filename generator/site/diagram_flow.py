"""A block's steps in the order the forward runs them, and where its sums join: from its declared data flow.

A block that declares its flow (``counting/flow.py``) says what each module, op and ``Join`` reads and
writes. Its forward order is the topological order of those names, ties kept in registration order:
A family may register its output LayerNorm first and run it last. A ``Join`` of two or more activations is a
sum drawn as ⊕. One read of it continues the path (the latest written); each other read branches off
earlier and skips to it: a residual. A ``Join`` of one read only renames it, and adds nothing.
A block without a declared flow keeps its registration order, and no sum is drawn (none is guessed).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from generator.counting.architecture import Block, Module, Op, Part
from generator.counting.flow import Join

# Where a skip leaves: at a gap between steps, after some of the sums drawn there (a gap, a count).
Branch = tuple[int, int]


@dataclass(frozen=True)
class Source:
    """What a read of a sum is: the block's input, a step's output (its position), or an earlier sum's."""

    kind: str  # "input", "step" or "sum"
    step: int = -1  # a step's position in forward order, or the sum's index


@dataclass(frozen=True)
class Sum:
    """A ``Join`` of several activations, placed: drawn before the step at ``gap`` (in forward order), with a
    skip from where each of its other reads ``branches`` off. A residual adds what an earlier step read."""

    join: Join
    gap: int
    branches: tuple[Branch, ...]
    skips: tuple[Source, ...]  # what each branch carries
    residual: bool
    inside: bool = False  # between two steps of one run


@dataclass(frozen=True)
class Flow:
    """A block's runs in forward order (their indexes in the runs given), its steps so (their module
    indexes), and its sums."""

    runs: tuple[int, ...]
    order: tuple[int, ...]
    sums: tuple[Sum, ...]


def is_declared(block: Block) -> bool:
    """Whether a block declares its data flow, as the step under a method reads it."""
    return bool(block.outputs or block.inputs or block.joins)


def block_flow(block: Block, runs: Sequence[Sequence[int]]) -> Flow | None:
    """A declared block's steps in forward order and its sums; None for a block without a flow.

    ``runs`` are its modules' indexes in registration order, cut into the runs a figure draws together:
    a run moves as a whole, to where its first step runs, but after every run it reads from (an
    attention runs its value on the layer's input first, and its query on a bottleneck drawn before it)."""
    if not is_declared(block):
        return None
    position = _forward(block)
    if position is None:  # a cycle the engine refuses too: drawn in registration order, with no sum
        return None
    at = _module_positions(block, position)
    units = [sorted(run, key=lambda m: at[m]) for run in runs]
    moved = _run_order(block, units, at)
    units = [units[n] for n in moved]
    order = tuple(m for run in units for m in run)
    run_of = {m: n for n, run in enumerate(units) for m in run}
    rank = {m: n for n, m in enumerate(order)}
    writers = _writers(block)
    aliases = {j.writes: j.reads[0] for j in block.joins if len(j.reads) == 1}
    sums: list[Sum] = []
    gaps: list[int] = []  # each sum's gap
    indexes: list[float] = []  # and its forward index

    def gap_of(index: float) -> int:
        """The gap of the step order an item of forward ``index`` falls in: before the first step after it."""
        return next((rank[m] for m in order if at[m] > index), len(order))

    def source(name: str) -> tuple[Source, Branch, float]:
        """Where a read comes from, where its skip leaves, and the forward index of what writes it."""
        while name in aliases:
            name = aliases[name]
        if name not in writers:
            return Source("input"), (0, 0), -1.0
        index = position[writers[name]]
        found = next((n for n, s in enumerate(sums) if s.join.writes == name), None)
        if found is not None:
            return Source("sum", found), (gaps[found], 1 + sum(g == gaps[found] for g in gaps[:found])), index
        gap = gap_of(index)
        before = sum(g == gap and i < index for g, i in zip(gaps, indexes, strict=True))
        last = max((m for m in order if at[m] <= index), key=lambda m: at[m], default=None)
        return Source("step", -1 if last is None else rank[last]), (gap, before), index

    placed = sorted((position[("join", n)], n) for n, j in enumerate(block.joins) if ("join", n) in position)
    for index, number in placed:  # in forward order: a sum may add back an earlier one's output
        join = block.joins[number]
        if len(join.reads) < 2:
            continue
        gap = gap_of(index)
        found = [source(name) for name in join.reads]
        main = max(range(len(found)), key=lambda n: found[n][2])
        residual = any(_ancestor(block, join.reads[n], join.reads[main]) for n in range(len(found)) if n != main)
        # A residual's skip leaves where its earlier read is written; a sum of parallel steps (the
        # embeddings' tables) gathers every read, each from where it is written.
        skipped = [f for n, f in enumerate(found) if n != main or not residual]
        inside = 0 < gap < len(order) and run_of[order[gap - 1]] == run_of[order[gap]]
        sums.append(Sum(join, gap, tuple(f[1] for f in skipped), tuple(f[0] for f in skipped), residual, inside))
        gaps.append(gap)
        indexes.append(index)
    return Flow(tuple(moved), order, tuple(sums))


Item = tuple[str, int]  # ("module" | "op" | "join", its index in its tuple)


def _run_order(block: Block, units: list[list[int]], at: dict[int, float]) -> list[int]:
    """The runs in an order the data can run in: each after the runs whose steps it reads from, ties by
    where their first step runs. Runs that read from each other keep the order of their first steps."""
    reads = {writes: item_reads for _, item_reads, writes in _items(block)}
    unit_of = {block.modules[m].writes: n for n, unit in enumerate(units) for m in unit if block.modules[m].writes}
    after: list[set[int]] = []
    for n, unit in enumerate(units):
        found: set[int] = set()
        seen: set[str] = set()
        stack = [name for m in unit for name in block.modules[m].reads]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if unit_of.get(name, n) != n:
                found.add(unit_of[name])
            stack.extend(reads.get(name, ()))
        after.append(found)
    first = sorted(range(len(units)), key=lambda n: at[units[n][0]])
    order: list[int] = []
    while len(order) < len(units):
        ready = [n for n in first if n not in order and after[n] <= set(order)]
        if not ready:  # runs that read from each other: the rest by their first steps
            return order + [n for n in first if n not in order]
        order.append(ready[0])
    return order


def _items(block: Block) -> list[tuple[Item, tuple[str, ...], str]]:
    """Every module, op and join of a block that computes something, with its reads and what it writes."""
    found: list[tuple[Item, tuple[str, ...], str]] = []
    groups: tuple[tuple[str, Sequence[Module | Op | Join]], ...] = (
        ("module", block.modules),
        ("op", block.ops),
        ("join", block.joins),
    )
    for kind, group in groups:
        found += [((kind, n), item.reads, item.writes) for n, item in enumerate(group) if item.writes]
    return found


def _writers(block: Block) -> dict[str, Item]:
    return {writes: item for item, _, writes in _items(block)}


def _forward(block: Block) -> dict[Item, float] | None:
    """Each item's place in the forward: topological in what it reads, ties in registration order."""
    items = _items(block)
    writers = {writes: item for item, _, writes in items}
    order = {item: n for n, (item, _, _) in enumerate(items)}
    waits = {item: {writers[r] for r in reads if r in writers and writers[r] != item} for item, reads, _ in items}
    ready = [(order[item], item) for item, wanted in waits.items() if not wanted]
    heapq.heapify(ready)
    placed: dict[Item, float] = {}
    while ready:
        _, item = heapq.heappop(ready)
        placed[item] = float(len(placed))
        for other, wanted in waits.items():
            if item in wanted:
                wanted.discard(item)
                if not wanted and other not in placed:
                    heapq.heappush(ready, (order[other], other))
    return placed if len(placed) == len(items) else None


def _module_positions(block: Block, position: dict[Item, float]) -> dict[int, float]:
    """Each module's forward index; one that computes nothing (a decoder's cross-attention) sits just after
    the module registered before it."""
    at: dict[int, float] = {}
    last = -1.0
    for n in range(len(block.modules)):
        found = position.get(("module", n))
        last = found if found is not None else last + 1e-3
        at[n] = last
    return at


def _ancestor(block: Block, name: str, of: str) -> bool:
    """Whether the activation ``name`` reaches ``of`` through the block's flow."""
    reads = {writes: reads for _, reads, writes in _items(block)}
    seen: set[str] = set()
    stack = [of]
    while stack:
        current = stack.pop()
        if current == name:
            return True
        if current in seen:
            continue
        seen.add(current)
        stack.extend(reads.get(current, ()))
    return False


def is_norm(module: Module) -> bool:
    """Whether a module is a norm (LayerNorm, RMSNorm, a family's own): the part that holds norms."""
    return module.part is Part.NORMS
