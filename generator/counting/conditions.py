"""The condition language: tests on a config that Python evaluates and the calculator reads.

A family's builder never sees its config. Every decision that changes which tensors exist, or
which symbol a dimension is, is a named switch (``switches.py``) whose condition is written in
the small language below; ``evaluate`` decides it here, and the same condition, exported as JSON
by ``to_json``, is decided by the calculator in the browser. A number that is not a config value
but is computed from config values (H / conv_groups) is a ``Value``.

The language, and its JSON:

* values: ``{"key": k}`` (the config value, null when absent), ``{"const": c}``,
  ``{"mul": [a, b]}``, ``{"sub": [a, b]}``, ``{"div": [a, b]}`` (floor division), ``{"mod": [a, b]}``, ``{"neg": a}``,
  ``{"min": [a, b]}``, ``{"max": [a, b]}``; ``{"largest": a}`` and ``{"smallest": a}`` (a whole number, or the
  largest or smallest of a list of them) and ``{"length": a}`` (a list's length), for a value given per layer;
  arithmetic on anything but whole numbers, or by zero, gives null;
* conditions: ``{"truthy": k}`` (Python's truth: null, false, 0, "" and [] are false),
  ``{"null": k}``, ``{"is": [k, kind]}`` (kind: int, a whole number and not a boolean; str; bool;
  strings, a list of strings; number, a number, true and false included), ``{"contains": [k, item]}``
  (a list holds the item; a string, split on "|", lowercased and stripped, has it as a part),
  ``{"eq"|"ne"|"gt"|"ge"|"lt"|"le": [a, b]}`` (an ordering needs two numbers, whole or not, else
  it is false; eq and ne tell booleans from numbers), ``{"all": [...]}``, ``{"any": [...]}``,
  ``{"not": c}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

JSON = Any  # what json.dumps accepts


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> TypeGuard[int | float]:
    """A whole number or a decimal one (a dropout's probability), not a boolean."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --- values ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    """A config value, as the card resolves it (None when the key is absent or null)."""

    name: str

    def evaluate(self, config: Mapping[str, Any]) -> Any:
        return config.get(self.name)

    def to_json(self) -> JSON:
        return {"key": self.name}

    def reads(self) -> set[str]:
        return {self.name}


@dataclass(frozen=True)
class Const:
    value: int | str | bool | None

    def evaluate(self, config: Mapping[str, Any]) -> Any:
        return self.value

    def to_json(self) -> JSON:
        return {"const": self.value}

    def reads(self) -> set[str]:
        return set()


@dataclass(frozen=True)
class Arithmetic:
    """mul, sub, div (floor, as Python's //), mod (as Python's %), min, max; neg and the list ops (b unused)."""

    op: str
    a: Value
    b: Value | None = None

    def evaluate(self, config: Mapping[str, Any]) -> int | None:
        a = self.a.evaluate(config)
        if self.op in LIST_OPS:
            return _of_list(self.op, a)
        b = self.b.evaluate(config) if self.b is not None else 0
        if not _whole(a) or not _whole(b):
            return None
        if self.op == "neg":
            return int(-a)
        if self.op == "mul":
            return int(a * b)
        if self.op == "sub":
            return int(a - b)
        if self.op in ("min", "max"):
            return int(min(a, b) if self.op == "min" else max(a, b))
        if b == 0:
            return None
        return int(a // b) if self.op == "div" else int(a % b)

    def to_json(self) -> JSON:
        if self.op == "neg" or self.op in LIST_OPS:
            return {self.op: self.a.to_json()}
        assert self.b is not None
        return {self.op: [self.a.to_json(), self.b.to_json()]}

    def reads(self) -> set[str]:
        return self.a.reads() | (self.b.reads() if self.b is not None else set())


Value = Key | Const | Arithmetic


# Ops on a key given as one whole number or as a list of them (one per layer).
LIST_OPS = ("largest", "smallest", "length")


def _of_list(op: str, found: Any) -> int | None:
    """largest and smallest: the number, or the list's largest or smallest; length: a list's length. Else None."""
    if op == "length":
        return len(found) if isinstance(found, list) else None
    if _whole(found):
        return found
    if isinstance(found, list) and found and all(_whole(item) for item in found):
        return int(max(found) if op == "largest" else min(found))
    return None


def value(item: Value | str | int | bool | None) -> Value:
    """A bare string names a config key; any other bare value is a constant."""
    if isinstance(item, Key | Const | Arithmetic):
        return item
    if isinstance(item, str):
        return Key(item)
    return Const(item)


def const(item: int | str | bool | None) -> Const:
    """A string constant (a bare string would name a key)."""
    return Const(item)


def mul(a: Value | str | int, b: Value | str | int) -> Arithmetic:
    return Arithmetic("mul", value(a), value(b))


def sub(a: Value | str | int, b: Value | str | int) -> Arithmetic:
    return Arithmetic("sub", value(a), value(b))


def div(a: Value | str | int, b: Value | str | int) -> Arithmetic:
    return Arithmetic("div", value(a), value(b))


def mod(a: Value | str | int, b: Value | str | int) -> Arithmetic:
    return Arithmetic("mod", value(a), value(b))


def neg(a: Value | str | int) -> Arithmetic:
    return Arithmetic("neg", value(a))


def minimum(a: Value | str | int, b: Value | str | int) -> Arithmetic:
    return Arithmetic("min", value(a), value(b))


def maximum(a: Value | str | int, b: Value | str | int) -> Arithmetic:
    return Arithmetic("max", value(a), value(b))


def largest(a: Value | str) -> Arithmetic:
    """A key given as one whole number or as a list of them (one per layer): the number, or the list's largest."""
    return Arithmetic("largest", value(a))


def smallest(a: Value | str) -> Arithmetic:
    """As ``largest``, the smallest."""
    return Arithmetic("smallest", value(a))


def length(a: Value | str) -> Arithmetic:
    """A list's length (null for anything else)."""
    return Arithmetic("length", value(a))


# --- conditions -----------------------------------------------------------------------------------


class _Combinable:
    """``a & b``, ``a | b`` and ``~a`` build the and/or/not of conditions."""

    def __and__(self, other: Condition) -> Junction:
        return Junction("all", (self, other))  # type: ignore[arg-type]

    def __or__(self, other: Condition) -> Junction:
        return Junction("any", (self, other))  # type: ignore[arg-type]

    def __invert__(self) -> Not:
        return Not(self)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _OnKey(_Combinable):
    """A test of one config value: it reads that key alone."""

    key: str

    def reads(self) -> set[str]:
        return {self.key}


@dataclass(frozen=True)
class Truthy(_OnKey):
    def evaluate(self, config: Mapping[str, Any]) -> bool:
        item = config.get(self.key)
        return item not in (None, False, 0, "") and item != []

    def to_json(self) -> JSON:
        return {"truthy": self.key}


@dataclass(frozen=True)
class IsNull(_OnKey):
    def evaluate(self, config: Mapping[str, Any]) -> bool:
        return config.get(self.key) is None

    def to_json(self) -> JSON:
        return {"null": self.key}


KINDS = ("int", "str", "bool", "strings", "number")


@dataclass(frozen=True)
class Is(_OnKey):
    """The value's type: int (a whole number, not a boolean), str, bool, strings (a list of strings), or
    number (what nn.Dropout can compare with 0 and 1: a number, true and false included)."""

    kind: str

    def evaluate(self, config: Mapping[str, Any]) -> bool:
        found = config.get(self.key)
        if self.kind == "int":
            return _whole(found)
        if self.kind == "str":
            return isinstance(found, str)
        if self.kind == "bool":
            return isinstance(found, bool)
        if self.kind == "number":
            return isinstance(found, (int, float))
        return isinstance(found, list) and all(isinstance(item, str) for item in found)

    def to_json(self) -> JSON:
        return {"is": [self.key, self.kind]}


@dataclass(frozen=True)
class Contains(_OnKey):
    """A list holds the item, or a "p2c|c2p" string has it among its parts (as transformers splits it)."""

    item: str

    def evaluate(self, config: Mapping[str, Any]) -> bool:
        found = config.get(self.key)
        if isinstance(found, str):
            return self.item in [part.strip() for part in found.lower().split("|")]
        if isinstance(found, list):
            return self.item in found
        return False

    def to_json(self) -> JSON:
        return {"contains": [self.key, self.item]}


ORDERINGS = ("gt", "ge", "lt", "le")


@dataclass(frozen=True)
class Compare(_Combinable):
    op: str  # eq, ne, gt, ge, lt, le
    a: Value
    b: Value

    def evaluate(self, config: Mapping[str, Any]) -> bool:
        a, b = self.a.evaluate(config), self.b.evaluate(config)
        if self.op in ("eq", "ne"):
            same = isinstance(a, bool) == isinstance(b, bool) and a == b
            return same if self.op == "eq" else not same
        if not _number(a) or not _number(b):
            return False
        return {"gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b}[self.op]

    def to_json(self) -> JSON:
        return {self.op: [self.a.to_json(), self.b.to_json()]}

    def reads(self) -> set[str]:
        return self.a.reads() | self.b.reads()


@dataclass(frozen=True)
class Junction(_Combinable):
    """Every condition holds (``op`` "all", written ``a & b``) or one does ("any", ``a | b``)."""

    op: str  # all, any
    conditions: tuple[Condition, ...]

    def evaluate(self, config: Mapping[str, Any]) -> bool:
        verdicts = (c.evaluate(config) for c in self.conditions)
        return all(verdicts) if self.op == "all" else any(verdicts)

    def to_json(self) -> JSON:
        return {self.op: [c.to_json() for c in self.conditions]}

    def reads(self) -> set[str]:
        return set().union(*(c.reads() for c in self.conditions))


@dataclass(frozen=True)
class Not(_Combinable):
    condition: Condition

    def evaluate(self, config: Mapping[str, Any]) -> bool:
        return not self.condition.evaluate(config)

    def to_json(self) -> JSON:
        return {"not": self.condition.to_json()}

    def reads(self) -> set[str]:
        return self.condition.reads()


Condition = Truthy | IsNull | Is | Contains | Compare | Junction | Not


def flags(condition: Condition) -> tuple[str, ...]:
    """The keys a condition reads as flags (``truthy``), in order: a card must give them as true or false."""
    if isinstance(condition, Truthy):
        return (condition.key,)
    if isinstance(condition, Junction):
        return tuple(key for c in condition.conditions for key in flags(c))
    if isinstance(condition, Not):
        return flags(condition.condition)
    return ()


def kinds(fails: Condition) -> tuple[str, ...]:
    """The keys a rule refuses whenever their type is not one it names: its ``fails`` is ``~is_kind``
    (or ``~(is_null | is_kind | ...)`` on one key), or any of several conditions one of which is."""
    if isinstance(fails, Not) and (key := _type_test(fails.condition)) is not None:
        return (key,)
    if isinstance(fails, Junction) and fails.op == "any":
        return tuple(key for c in fails.conditions for key in kinds(c))
    return ()


def _type_test(condition: Condition) -> str | None:
    """The key a condition tests the type of (``is``, ``null``, or any of those on one key), or None."""
    if isinstance(condition, (Is, IsNull)):
        return condition.key
    if isinstance(condition, Junction) and condition.op == "any":
        keys = {_type_test(c) for c in condition.conditions}
        return keys.pop() if len(keys) == 1 else None
    return None


def truthy(key: str) -> Truthy:
    return Truthy(key)


def is_null(key: str) -> IsNull:
    return IsNull(key)


def given(key: str) -> Not:
    """The key has a value (not null)."""
    return Not(IsNull(key))


def is_whole(key: str) -> Is:
    return Is(key, "int")


def is_kind(key: str, kind: str) -> Is:
    assert kind in KINDS, kind
    return Is(key, kind)


def contains(key: str, item: str) -> Contains:
    return Contains(key, item)


def eq(a: Value | str, b: Value | str | int | bool | None) -> Compare:
    return Compare("eq", value(a), value(b))


def ne(a: Value | str, b: Value | str | int | bool | None) -> Compare:
    return Compare("ne", value(a), value(b))


def gt(a: Value | str, b: Value | str | int) -> Compare:
    return Compare("gt", value(a), value(b))


def ge(a: Value | str, b: Value | str | int) -> Compare:
    return Compare("ge", value(a), value(b))


def lt(a: Value | str, b: Value | str | int) -> Compare:
    return Compare("lt", value(a), value(b))


def le(a: Value | str, b: Value | str | int) -> Compare:
    return Compare("le", value(a), value(b))


# The head a rule is checked for, beside the config under a name no config key can have: the card
# check and the calculator add it, so that a rule can hold for some heads only (a key only one
# head's modules read). Switches never read it: a builder is told the head directly.
HEAD = "@head"


def head_is(*heads: str) -> Junction:
    """The config is checked for one of these heads (their ``Head`` values)."""
    return Junction("any", tuple(Compare("eq", Key(HEAD), Const(head)) for head in heads))
