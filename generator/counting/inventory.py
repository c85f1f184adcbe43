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
from typing import Any, Protocol

from generator.counting.architecture import Architecture, Block, Family, Head, Kind, Module, Param, Part, Tie, part_of
from generator.counting.memo import IdentityMemo
from generator.counting.poly import Poly, product


class Counted(Protocol):
    """What counting reads of a card: which model it is, and the numbers it is counted with.

    A card (``generator.cards.card.Card``) is one; the counting layer never imports it.
    """

    @property
    def id(self) -> str: ...
    @property
    def family(self) -> Family: ...
    @property
    def head(self) -> Head: ...
    @property
    def config(self) -> Mapping[str, Any]: ...
    def symbol_values(self) -> dict[str, int]: ...


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
    trainable: bool = True  # False for a parameter nothing trains (requires_grad False)

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

    card: Counted
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

    @cached_property
    def trainable(self) -> int:
        """The parameters an optimizer updates: the total less the frozen ones."""
        return sum(t.count for t in self.tensors if t.trainable)

    def count_of(self, *, kind: Kind | None = None, block: str | None = None) -> int:
        """Add up the tensors of one kind of component, or of one block."""
        if block is None:
            return self._sums[kind]
        found = self._block_sums.get(block)
        return found[1] if found is not None and (kind is None or found[0] is kind) else 0

    def of_block(self, block: Block) -> tuple[Tensor | TiedTensor, ...]:
        """The entries of one of this inventory's blocks, every copy, in order."""
        return self._by_block.get(block.key, ())

    @cached_property
    def _by_block(self) -> dict[str, tuple[Tensor | TiedTensor, ...]]:
        # A block's entries are listed together; its key, unique in an architecture, names them.
        return {key: tuple(group) for key, group in itertools.groupby(self.entries, key=lambda e: e.block.key)}

    @cached_property
    def _block_sums(self) -> dict[str, tuple[Kind, int]]:
        """Each block's kind and count (every copy), by its key, added up once."""
        return {
            b.key: (b.kind, sum(e.count for e in self.of_block(b) if isinstance(e, Tensor)))
            for b in self.architecture.blocks
        }

    @cached_property
    def _sums(self) -> dict[Kind | None, int]:
        """The count of each kind of component (and, under None, of everything), added up once."""
        sums: dict[Kind | None, int] = dict.fromkeys([None, *Kind], 0)
        for kind, tensors in itertools.groupby(self.tensors, key=lambda t: t.block.kind):
            sums[kind] += sum(t.count for t in tensors)
        sums[None] = self.total
        return sums

    def tensor(self, name: str) -> Tensor:
        return next(t for t in self.tensors if t.name == name)


@dataclass(frozen=True)
class Totals:
    """What a card would count by kind of component, without its tensors: for what-if counts
    (another head, another vocabulary) that need the sums alone."""

    class_name: str
    by_kind: dict[Kind, int]

    @property
    def total(self) -> int:
        return sum(self.by_kind.values())

    def count_of(self, *, kind: Kind) -> int:
        return self.by_kind[kind]


def count_totals(card: Counted) -> Totals:
    """A card's counts by kind: each block's declared tensors, evaluated as for the inventory, times its copies.

    The same declarations and the same evaluation as ``count_parameters``, added up instead of
    listed; tests hold the two equal for every card and head.
    """
    architecture = card.family.architecture(card.config, card.head)
    values = card.symbol_values()
    by_kind = dict.fromkeys(Kind, 0)
    for block in architecture.blocks:
        one = sum(count for *_, count, _ in _evaluated(block, values))
        by_kind[block.kind] += one * len(block.instances(values))
    return Totals(architecture.class_name, by_kind)


def component_name(block: Block, index: tuple[int, ...]) -> str:
    return " ".join([block.title, ".".join(map(str, index))]) if index else block.title


def count_parameters(card: Counted) -> Inventory:
    """Build the per-tensor inventory of a card.

    Every copy of a repeated block has the same shapes, so each declared parameter is
    evaluated once per card and its shape, count and part are shared by all its copies.
    """
    architecture = card.family.architecture(card.config, card.head)
    values = card.symbol_values()
    entries: list[Tensor | TiedTensor] = []
    for block in architecture.blocks:
        declared = _evaluated(block, values)
        for index in block.instances(values):
            prefix = block.prefix.format(*index)
            component = component_name(block, index)
            for module, path, param, shape, count, part in declared:
                name = f"{prefix}{path}.{param.name}" if path else f"{prefix}{param.name}"
                if isinstance(param, Tie):
                    entries.append(TiedTensor(name, param.tied_to, param.role, component, block, module, index))
                else:
                    # A frozen dataclass's __init__ sets each field through object.__setattr__, 1.8 µs a
                    # Tensor against 0.7 µs filled here, for the hundreds of a card. Every field is filled
                    # (tests/test_counts.py checks them against the class's own).
                    tensor = object.__new__(Tensor)
                    tensor.__dict__.update(
                        name=name,
                        shape=shape,
                        count=count,
                        component=component,
                        symbolic=param.shape,
                        role=param.role,
                        block=block,
                        module=module,
                        index=index,
                        part=part,
                        trainable=not param.frozen,
                    )
                    entries.append(tensor)
    return Inventory(card, architecture, tuple(entries), values)


_Declared = tuple[Module, str, Param | Tie, tuple[int, ...], int, Part | None]


# One instance of a block with a card's numbers put in, remembered by the block's identity (an Architecture is
# built once per setting and head) and the numbers: the check of a card's published figures and its table
# of classes both count it by its family's other heads. Bounded: a card asks for a few dozen blocks.
_EVALUATED: IdentityMemo[Block, tuple[_Declared, ...]] = IdentityMemo(256)


def _evaluated(block: Block, values: Mapping[str, int]) -> tuple[_Declared, ...]:
    """One instance of a block, in registration order: each parameter with its numbers put in."""
    numbers = tuple(values.items())
    found = _EVALUATED.get(block, numbers)
    if found is not None:
        return found
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
    return _EVALUATED.keep(block, tuple(declared), numbers)
