"""The per-tensor inventory: the one source of truth for every number on the site.

Every count shown anywhere (table rows, derivation steps, subtotals, totals, comparisons,
exports) is read from an ``Inventory``; nothing else multiplies shapes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

from generator.architecture import Architecture, Block, Kind, Module, Param, Part, Tie, part_of
from generator.card import Card
from generator.poly import Poly, product


@dataclass(frozen=True)
class Tensor:
    """One parameter tensor, named as ``named_parameters()`` names it."""

    name: str
    shape: tuple[int, ...]
    count: int
    component: str
    symbolic: tuple[Poly, ...]
    role: str
    block: Block
    module: Module
    index: tuple[int, ...]  # which instance of a repeated block; () when not repeated
    part: Part | None = None  # embeddings, attention, feed-forward, norms, pooler or heads (see Part)

    @property
    def formula(self) -> Poly:
        return product(self.symbolic)


@dataclass(frozen=True)
class TiedTensor:
    """A parameter slot that reuses another tensor: shown, never counted."""

    name: str
    tied_to: str
    role: str
    component: str
    block: Block
    module: Module
    index: tuple[int, ...]


@dataclass(frozen=True)
class Inventory:
    """Every tensor of one card's transformers class, in ``named_parameters()`` order."""

    card: Card
    architecture: Architecture
    entries: tuple[Tensor | TiedTensor, ...]  # named_parameters(remove_duplicate=False) order
    values: dict[str, int]

    @cached_property
    def tensors(self) -> tuple[Tensor, ...]:
        """The counted tensors, as ``named_parameters()`` lists them."""
        return tuple(e for e in self.entries if isinstance(e, Tensor))

    @cached_property
    def tied(self) -> tuple[TiedTensor, ...]:
        return tuple(e for e in self.entries if isinstance(e, TiedTensor))

    @property
    def class_name(self) -> str:
        return self.architecture.class_name

    @cached_property
    def total(self) -> int:
        return sum(t.count for t in self.tensors)

    def count_of(self, *, kind: Kind | None = None, block: str | None = None) -> int:
        """Add up the tensors of one kind of component, or of one block."""
        if block is None:
            return self._sums[kind]
        return sum(t.count for t in self.tensors if (kind is None or t.block.kind is kind) and t.block.key == block)

    @cached_property
    def _sums(self) -> dict[Kind | None, int]:
        """The count of each kind of component (and, under None, of everything), added up once."""
        sums: dict[Kind | None, int] = dict.fromkeys([None, *Kind], 0)
        for t in self.tensors:
            sums[t.block.kind] += t.count
        sums[None] = self.total
        return sums

    def tensor(self, name: str) -> Tensor:
        return next(t for t in self.tensors if t.name == name)


def instances(block: Block, values: Mapping[str, int]) -> list[tuple[int, ...]]:
    """Every index of a repeated block, in registration order; [()] when not repeated."""
    ranges = [range(values[symbol]) for symbol in block.repeat]
    if ranges and block.start:
        ranges[0] = range(block.start, values[block.repeat[0]])
    return list(itertools.product(*ranges))


def component_name(block: Block, index: tuple[int, ...]) -> str:
    return " ".join([block.title, ".".join(map(str, index))]) if index else block.title


def count_parameters(card: Card) -> Inventory:
    """Build the per-tensor inventory of a card.

    Every copy of a repeated block has the same shapes, so each declared parameter is
    evaluated once per card and its shape, count and part are shared by all its copies.
    """
    architecture = card.family.architecture(card.config, card.head)
    values = card.symbol_values()
    entries: list[Tensor | TiedTensor] = []
    for block in architecture.blocks:
        declared = _evaluated(block, values)
        for index in instances(block, values):
            prefix = block.prefix.format(*index)
            component = component_name(block, index)
            for module, path, param, shape, count, part in declared:
                name = f"{prefix}{path}.{param.name}" if path else f"{prefix}{param.name}"
                if isinstance(param, Tie):
                    entries.append(TiedTensor(name, param.tied_to, param.role, component, block, module, index))
                else:
                    entries.append(
                        Tensor(name, shape, count, component, param.shape, param.role, block, module, index, part)
                    )
    return Inventory(card, architecture, tuple(entries), values)


_Declared = tuple[Module, str, Param | Tie, tuple[int, ...], int, Part | None]


def _evaluated(block: Block, values: Mapping[str, int]) -> list[_Declared]:
    """One instance of a block, in registration order: each parameter with its numbers put in."""
    declared: list[_Declared] = []
    for module in block.modules:
        copies = module.repeat.evaluate(values) if module.repeat is not None else 1
        for n in range(copies):
            path = module.path.format(n=n)
            for param in module.params:
                if isinstance(param, Tie):
                    declared.append((module, path, param, (), 0, None))
                    continue
                shape = tuple(dim.evaluate(values) for dim in param.shape)
                count = math.prod(shape)
                declared.append((module, path, param, shape, count, part_of(block, module, param)))
    return declared
