"""A family's switches and rules: its structural decisions and transformers' checks, as data.

Both are written in the condition language of ``conditions.py``: a ``Switch`` names a decision
the builder reads (``on["tied"]``), a ``Rule`` a config transformers refuses. Python decides
them here; the calculator exports the same data and decides it in the browser.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from generator.counting.conditions import JSON, Condition, Value

T = TypeVar("T")

# --- switches -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Switch:
    """A named structural decision of a family: on when its condition holds for the config.

    ``blocks`` are the keys of the blocks whose presence or tensors the switch decides; the
    calculator's export looks a block up by these switches alone (tests/test_calculator.py
    checks, for every combination of every family's switches, that they are enough).
    """

    name: str
    when: Condition
    blocks: tuple[str, ...]
    meaning: str = ""  # what it decides, in words: from content/ (texts.py), by the switch's name

    def to_json(self) -> JSON:
        return {"name": self.name, "when": self.when.to_json(), "meaning": self.meaning}


class Switches(Mapping[str, bool]):
    """The switches of one config, read by a builder as ``on["tied"]``; an unknown name is an error."""

    def __init__(self, values: Mapping[str, bool]) -> None:
        self._values = dict(values)

    def __getitem__(self, name: str) -> bool:
        if name not in self._values:
            raise KeyError(f"no switch named {name!r}; declare it in the family's switches")
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Switches({self._values!r})"


class _Reading(Mapping[str, bool]):
    """A builder's switches that note, in order, each one it reads (all of them if it iterates)."""

    def __init__(self, on: Mapping[str, bool]) -> None:
        self._on = on
        self.read: dict[str, bool] = {}

    def __getitem__(self, name: str) -> bool:
        value = self.read[name] = self._on[name]
        return value

    def __iter__(self) -> Iterator[str]:
        self.read.update(self._on)
        return iter(self._on)

    def __len__(self) -> int:
        return len(self._on)


def per_setting_read(build: Callable[..., T]) -> Callable[..., T]:
    """A block builder ``build(on, *args)`` that is run once per setting of the switches it reads.

    The calculator's export and the family pages declare every setting of a family's switches,
    and a builder that reads 5 of a family's 16 would otherwise run for each of them. A builder
    depends only on its arguments: given the same ``args`` and the same values of the switches it
    read, it reads the same ones, in the same order, and returns an equal block, which is returned
    again (blocks are frozen). Keyed by value: ``args`` and the switches' values.

    The settings met so far make a decision tree per ``args`` (``_Decision``): a lookup reads the
    switches in the order the builder reads them, so ``on`` sees exactly the reads a run would make
    (a builder inside another reports its reads to the outer one's ``on``).
    """
    made: dict[tuple[Any, ...], _Decision[T]] = {}

    @functools.wraps(build)
    def built(on: Mapping[str, bool], *args: Any) -> T:
        tree = made.setdefault(args, _Decision())
        found = tree.find(on)
        if found is not None:
            return found[0]
        reading = _Reading(on)
        block = build(reading, *args)
        tree.add(tuple(reading.read.items()), block)
        return block

    return built


class _Decision(Generic[T]):
    """The blocks a builder made, found by the switches it read: a node names the next switch it
    read, and each of its values leads to the next node, or to the block once it read no more."""

    def __init__(self) -> None:
        self.name: str | None = None  # None: a leaf, or the tree before the first block
        self.next: dict[bool, _Decision[T]] = {}
        self.block: tuple[T] | None = None

    def find(self, on: Mapping[str, bool]) -> tuple[T] | None:
        node = self
        while node.name is not None:
            follow = node.next.get(on[node.name])
            if follow is None:
                return None
            node = follow
        return node.block

    def add(self, read: tuple[tuple[str, bool], ...], block: T) -> None:
        node = self
        for name, value in read:
            if node.name is None:
                node.name = name
            elif node.name != name:  # a builder that reads in another order for the same values
                raise ValueError(f"the builder read {name!r} where it read {node.name!r} before")
            node = node.next.setdefault(value, _Decision())
        node.block = (block,)


def decide(switches: tuple[Switch, ...], config: Mapping[str, Any]) -> Switches:
    """Every switch of a family, decided for one config."""
    return Switches({s.name: s.when.evaluate(config) for s in switches})


# --- rules ----------------------------------------------------------------------------------------


class _Shown(dict[str, Any]):
    """The values a rule's message may name: config keys, then the rule's own computed values."""

    def __missing__(self, key: str) -> Any:
        return None


@dataclass(frozen=True)
class Rule:
    """A cross-field rule transformers enforces, as data: the config is refused when ``fails`` holds.

    ``name`` keys its message in content/<language>/families.yaml (``checks``), which the registry
    fills in as ``message`` (texts.py): a ``str.format`` template over config keys and the rule's
    ``values`` (``{hidden_size}``, ``{normalization_type!r}``). ``keys`` are the keys it is about,
    the first one being where the problem is reported. A Rule is a family check: calling it gives
    the check's verdict, and the calculator evaluates the same data in the browser.
    """

    name: str
    fails: Condition
    keys: tuple[str, ...]
    values: tuple[tuple[str, Value], ...] = ()
    message: str = ""  # in the declaration, none: the words are content

    def __call__(self, config: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
        if not self.fails.evaluate(config):
            return None
        shown = _Shown(config)
        shown.update({name: item.evaluate(config) for name, item in self.values})
        return self.message.format_map(shown), self.keys

    def to_json(self) -> JSON:
        return {
            "fails": self.fails.to_json(),
            "message": self.message,
            "keys": list(self.keys),
            "values": {name: item.to_json() for name, item in self.values},
        }


@dataclass(frozen=True)
class FirstOf:
    """Several rules checked in order, reporting the first that fails (one check, several rules)."""

    rules: tuple[Rule, ...]

    def __call__(self, config: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
        for rule in self.rules:
            failure = rule(config)
            if failure:
                return failure
        return None
