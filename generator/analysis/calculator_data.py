"""The counting rules of every family, exported as data for the calculator page.

The calculator in the browser never counts by rules of its own. For each family this module
writes one JSON document that holds everything the count depends on:

* ``inputs``: every config key that changes the count or is read by a rule, with its kind,
  default and meaning; ``symbols``: which key (or which computation, for a derived symbol) each
  formula symbol stands for;
* ``switches``: the family's structural decisions as conditions (``switches.py``), and
  ``checks``: the rules transformers enforces, as conditions with message templates; a rule
  about one head reads the head under the name ``"@head"`` (``switches.HEAD``), beside the config;
* ``no_parameters``: what to say when every tensor of a config is empty (a total of 0);
* ``config``: what the address may name besides the inputs, checked as a card's keys are (``config_keys.py``);
* ``mistakes``: the errata's published methods (``erratum_methods.py``), for the page's answer check;
* ``heads``: for each head, the blocks in registration order. A block's variant is looked up by
  the switches it depends on (``Switch.blocks``): ``variants`` maps the bits of those switches,
  in the order given, to an index into ``blocks`` (or null: no such block);
* ``blocks``: every distinct block the family's builder can produce, with its derivation in
  symbols exactly as ``derivation.block_form`` writes it for a model page: each step's formula
  as a polynomial and as an expression tree, the tensors it lists, the block's polynomial, its
  expression, its subtotal expression and the grouped form the closed form uses;
* ``compute``: a training step's rules (``calculator_compute.py``), with ``blocks`` of compute
  declarations that each slot's ``compute`` maps the switches' bits to, as ``variants`` does for
  ``blocks`` (settings that change no tensor may change what a step computes: an attention term's flag);
  the inputs then also hold the keys only the compute reads (group ``compute``) and b and s
  (group ``training``);
* ``tuning``: the fine-tuning methods' rules (``calculator_methods.py``); each tensor names its Layer.

The browser evaluates the conditions, substitutes numbers into the polynomials with BigInt and
lays the result out; ``tests/test_calculator.py`` evaluates the same documents independently of
the JavaScript and checks them against the inventory of every card.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from generator.analysis import erratum_methods
from generator.analysis.calculator_compute import (
    block_compute,
    family_compute,
    longest,
    reads,
    step_inputs,
)
from generator.analysis.calculator_methods import methods_export
from generator.analysis.config_keys import checked_type, config_keys
from generator.analysis.kept_exports import keep_exports
from generator.cards.card import NO_PARAMETERS
from generator.cards.config import load_schema
from generator.counting.architecture import Architecture, Block, Family, Head, Param, Tie
from generator.counting.compute import measured
from generator.counting.conditions import HEAD
from generator.counting.derivation import block_form
from generator.counting.expr import Add, Expr, Mul, Num, Paren, Pow, Var, grouped_expr
from generator.counting.families import family_in
from generator.counting.memo import IdentityMemo
from generator.counting.poly import Poly
from generator.counting.switches import FirstOf, Rule
from generator.counting.texts import LANGUAGE, check_message

FORMAT = 1
JSON = Any

# What the calculator's form offers for each kind of input.
SIZE, INT, FLAG, TEXT, VALUE = "size", "int", "flag", "text", "json"


def poly_json(poly: Poly) -> JSON:
    """[[coefficient, [[symbol, exponent], ...]], ...]; the constant term has an empty monomial."""
    return [[coeff, [[s, e] for s, e in mono]] for mono, coeff in poly.terms]


def expr_json(expr: Expr) -> JSON:
    """An expression tree as nested objects, one key naming the node."""
    if isinstance(expr, Num):
        return {"num": expr.value}
    if isinstance(expr, Var):
        return {"var": expr.name}
    if isinstance(expr, Pow):
        return {"pow": [expr_json(expr.base), expr.exponent]}
    if isinstance(expr, Mul):
        return {"mul": [expr_json(f) for f in expr.factors], "sign": expr.sign}
    if isinstance(expr, Add):
        return {"add": [expr_json(t) for t in expr.terms]}
    assert isinstance(expr, Paren)
    return {"paren": expr_json(expr.inner)}


def block_json(block: Block, order: tuple[str, ...]) -> JSON:
    """One block's derivation in symbols, with its tensors named as in named_parameters()."""
    form = block_form(block, order)
    steps = []
    for module, step in zip(block.modules, form.lines, strict=True):
        tensors: list[JSON] = []
        for param in module.params:
            name = f"{module.path}.{param.name}" if module.path else param.name
            # The class of the module that registers it, which decides what a fine-tuning method may adapt.
            layer = {"layer": param.layer.value} if param.layer is not None else {}
            if isinstance(param, Tie):
                tensors.append({"name": name, "tied_to": param.tied_to, "role": param.role, **layer})
            else:
                assert isinstance(param, Param)
                tensor = {"name": name, "shape": [poly_json(d) for d in param.shape], "role": param.role, **layer}
                tensors.append({**tensor, "frozen": True} if param.frozen else tensor)
        steps.append(
            {
                "key": module.key,  # stable in every language, unlike the label (the answer check's mistakes name it)
                "label": module.label,
                "formula": poly_json(step.formula),
                "symbolic": expr_json(step.symbolic),
                "tensors": tensors,
                "copies": poly_json(module.repeat) if module.repeat is not None else None,
            }
        )
    used = form.formula.symbols() | block.copies().symbols() | ({block.applied} if block.applied else set())
    grouped = None if block.repeat else grouped_expr(form.formula, order)
    return {
        "key": block.key,
        "title": block.title,
        "kind": block.kind.value,
        "prefix": block.prefix,
        "repeat": list(block.repeat),
        "start": block.start,
        "applied": block.applied,
        "copies": poly_json(block.copies()),
        "steps": steps,
        "formula": poly_json(form.formula),
        "expression": expr_json(form.expression),
        "subtotal_expression": expr_json(form.subtotal_expression) if form.subtotal_expression else None,
        "grouped": expr_json(grouped) if grouped is not None else None,
        "symbols": [s for s in order if s in used],
    }


def rule_groups(family: Family) -> list[tuple[Rule, ...]]:
    """Each check as the rules it tries in order; the first that fails is the check's verdict."""
    groups: list[tuple[Rule, ...]] = []
    for check in family.build_rules:
        if isinstance(check, Rule):
            groups.append((check,))
        elif isinstance(check, FirstOf):
            groups.append(check.rules)
        else:
            raise TypeError(f"{family.name}: check {check!r} is not a Rule; the calculator could not apply it")
    return groups


@cache
def inputs(name: str, language: str = LANGUAGE) -> list[JSON]:
    """Every key the count or a rule reads: sizes first, in the symbols' order, then the rest."""
    family = family_in(name, language)
    schema = load_schema(family)
    defaults = {**schema.defaults, "num_labels": schema.default_num_labels}
    flags = family.flag_keys
    read: list[str] = []
    for switch in family.switches:
        read += sorted(switch.when.reads())
    for symbol in family.symbols:
        if symbol.value is not None:
            read += sorted(symbol.value.reads())
    switch_keys = list(dict.fromkeys(read))
    rule_keys: list[str] = []
    for rules in rule_groups(family):
        for rule in rules:
            rule_keys += sorted(rule.fails.reads() - {HEAD}) + [k for _, v in rule.values for k in sorted(v.reads())]
    inputs: list[JSON] = []
    seen: set[str] = set()

    def add(
        key: str,
        kind: str,
        meaning: str,
        group: str,
        *,
        optional: bool = False,
        symbol: str | None = None,
        minimum: int | None = None,
    ) -> None:
        if key in seen:
            return
        seen.add(key)
        default = defaults.get(key)
        inputs.append(
            {
                "key": key,
                "kind": kind,
                "default": default,
                # null is a value transformers accepts for these; the family's rules say when it is not
                "optional": optional or kind in (INT, VALUE),
                "meaning": meaning,
                "group": group,
                "symbol": symbol,
                "minimum": minimum,  # the smallest size the card check accepts (null: not a size)
                "type": checked_type(family, schema, key),
            }
        )

    for symbol in family.symbols:
        if symbol.value is None:
            kind = SIZE if symbol.size else INT
            minimum = symbol.minimum if symbol.size else None
            add(
                symbol.key, kind, symbol.meaning, "sizes", optional=symbol.optional, symbol=symbol.name, minimum=minimum
            )
    # A structural key's meaning is what its switches decide (content, in families.yaml); the page's words
    # frame it ("when true: ..."), and say what a checked key is (content/<language>/calculator.yaml).
    for key in switch_keys:
        add(key, _kind(flags, key, defaults.get(key)), _switch_meaning(family, key), "structure")
    for key in dict.fromkeys(rule_keys):
        add(key, _kind(flags, key, defaults.get(key), checked_type(family, schema, key)), "", "checked")
    return inputs


def compute_inputs(family: Family, keys: Sequence[str]) -> list[JSON]:
    """Inputs for the keys only compute reads; a model page's link names those that differ (``address.query``)."""
    schema = load_schema(family)
    defaults = schema.defaults
    seen = {i["key"] for i in inputs(family.name)}
    flags = family.flag_keys
    return [
        {
            "key": key,
            "kind": (kind := _kind(flags, key, defaults.get(key), checked_type(family, schema, key))),
            "default": defaults.get(key),
            "optional": kind in (INT, VALUE),
            "meaning": "",  # the page's words say what these change (content/<language>/calculator.yaml)
            "group": "compute",
            "symbol": None,
            "minimum": None,
            "type": checked_type(family, schema, key),
        }
        for key in keys
        if key not in seen
    ]


def _kind(flags: Sequence[str], key: str, default: object, declared: object = None) -> str:
    """The form's kind of input for a key; ``flags`` is the family's ``flag_keys`` (worked out once by the caller).

    A whole-number key whose declared type also takes a list (a window per layer) is written as a value."""
    if key in flags or isinstance(default, bool):
        return FLAG
    if isinstance(default, int):
        return VALUE if '"list"' in json.dumps(declared) else INT
    if isinstance(default, str):
        return TEXT
    return VALUE


def _switch_meaning(family: Family, key: str) -> str:
    return "; ".join(s.meaning for s in family.switches if key in s.when.reads())


def slot_switches(family: Family, key: str) -> list[str]:
    """The switches that decide a block (Switch.blocks), in declaration order."""
    return [s.name for s in family.switches if key in s.blocks]


class _Listing:
    """Distinct JSON documents in the order first met, each written once and referred to by index. Found by
    their text (``_compact``), which the family's document then holds as written (``export_text``)."""

    def __init__(self) -> None:
        self.items: list[JSON] = []
        self.texts: list[str] = []
        self._index: dict[str, int] = {}

    def index(self, text: str, data: JSON) -> int:
        if text not in self._index:
            self._index[text] = len(self.items)
            self.items.append(data)
            self.texts.append(text)
        return self._index[text]


def _compact(data: JSON) -> str:
    """The JSON text of the calculator's documents: compact, deterministic, UTF-8 as is."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _head(family: Family, head: Head, blocks: _Listing, computes: _Listing, read: set[str]) -> JSON:
    """One head's slots: for each setting of a block's switches, its block and its compute rules (listed
    apart: settings that change no tensor change what a step computes). ``read`` gathers the config keys
    those rules read."""
    names = [s.name for s in family.switches]
    order = tuple(s.name for s in family.symbols)
    baseline = family.declared(dict.fromkeys(names, False), head)
    read.update(reads(family, baseline.blocks))
    keys = list(dict.fromkeys([b.key for b in baseline.blocks] + [k for s in family.switches for k in s.blocks]))
    sequences = [[b.key for b in baseline.blocks]]
    class_names = {baseline.class_name}
    slots: list[JSON] = []
    for key in keys:
        deciding = slot_switches(family, key)
        variants: dict[str, int | None] = {}
        compute: dict[str, int | None] = {}
        for bits in itertools.product((False, True), repeat=len(deciding)):
            on = dict(zip(deciding, bits, strict=True))
            architecture = family.declared({**dict.fromkeys(names, False), **on}, head)
            sequences.append([b.key for b in architecture.blocks])
            class_names.add(architecture.class_name)
            found = _block(architecture, key)
            setting = "".join("1" if b else "0" for b in bits)
            if found is None:
                variants[setting] = compute[setting] = None
            else:
                block_text, compute_text = _texts(found, order)
                variants[setting], compute[setting] = blocks.index(*block_text), computes.index(*compute_text)
            read.update(reads(family, (found,) if found else ()))
        if any(v is not None for v in variants.values()):
            slots.append({"key": key, "switches": deciding, "variants": variants, "compute": compute})
    if len(class_names) != 1:
        raise ValueError(f"{family.name} {head.value}: the class name depends on the switches: {sorted(class_names)}")
    ranked = merge_orders(sequences)
    slots.sort(key=lambda slot: ranked.index(slot["key"]))
    return {"class_name": class_names.pop(), "slots": slots}


def _block(architecture: Architecture, key: str) -> Block | None:
    found = [b for b in architecture.blocks if b.key == key]
    if len(found) > 1:
        raise ValueError(f"{architecture.class_name}: two blocks are keyed {key!r}")
    return found[0] if found else None


_Texts = tuple[tuple[str, JSON], tuple[str, JSON]]
_TEXTS: IdentityMemo[Block, _Texts] = IdentityMemo(4096)


def _texts(block: Block, order: tuple[str, ...]) -> _Texts:
    """A block's JSON and its compute rules, each with its text, to be written once however many settings
    share them (most do). Found by the block's identity first: equal settings mostly declare the very
    same block (``texts.Worded``), and a layer is some 60 µs to hash by value."""
    found = _TEXTS.get(block, order)
    if found is not None:
        return found
    return _TEXTS.keep(block, (_block_text(_tensors_only(block), order), _compute_text(_compute_only(block))), order)


# Settings that change only what a step computes (a dropout, an attention term) declare blocks that differ
# only there, and others blocks that differ only in their tensors: each half is worked out once per value
# of what it reads. The halves clear what each side never reads, so anything added later stays in both.
@cache
def _block_text(block: Block, order: tuple[str, ...]) -> tuple[str, JSON]:
    data = block_json(block, order)
    return _compact(data), data


@cache
def _compute_text(block: Block) -> tuple[str, JSON]:
    rules = block_compute(block)
    return _compact(rules), rules


def _tensors_only(block: Block) -> Block:
    """The block as ``block_json`` reads it: its modules' products and saved tensors, and its ops, cleared."""
    return replace(block, ops=(), modules=tuple(replace(m, products=(), saved=()) for m in block.modules))


def _compute_only(block: Block) -> Block:
    """The block as ``block_compute`` reads it: its words, names and tensors cleared."""
    modules = tuple(replace(m, key="", label="", params=(), heads=None, part=None) for m in block.modules)
    return replace(block, key="", title="", prefix="", modules=modules)


def merge_orders(sequences: Sequence[Sequence[str]]) -> list[str]:
    """One order of block keys that every sequence follows (a topological sort, first seen first)."""
    first_seen: dict[str, int] = {}
    after: dict[str, set[str]] = {}
    for sequence in sequences:
        for position, key in enumerate(sequence):
            first_seen.setdefault(key, len(first_seen))
            after.setdefault(key, set())
            if position:
                after[key].add(sequence[position - 1])
    ranked: list[str] = []
    while len(ranked) < len(first_seen):
        ready = [k for k in first_seen if k not in ranked and after[k] <= set(ranked)]
        if not ready:
            raise ValueError(f"the blocks come in contradictory orders: {sequences}")
        ranked.append(min(ready, key=first_seen.__getitem__))
    return ranked


def bounds(family: Family) -> list[str]:
    """The keys that bound a step's s, inputs of their own (a P that counts no parameter, with rotary positions)."""
    return sorted(longest(family).reads()) if measured(family) else []


def family_export(name: str, language: str = LANGUAGE) -> JSON:
    """The calculator's document for one family, in one language of content/ (see the module docstring)."""
    return _export(name, language)[0]


@cache
def _export(name: str, language: str) -> tuple[JSON, _Listing, _Listing]:
    """The family's document, and its listings of blocks and of compute blocks, which it holds."""
    family = family_in(name, language)
    blocks, computes = _Listing(), _Listing()
    read: set[str] = set()
    heads = {head.value: _head(family, head, blocks, computes, read) for head in family.heads}
    # The keys only a training step reads (dropouts, activations), in every block the family can declare.
    read |= set(bounds(family))
    # And the keys only a step rule reads (a mask token id a token dropout needs), as the address carries them.
    read |= {key for rule in (*family.step_rules, *family.inexact_steps) for key in rule.keys}
    step_keys = compute_inputs(family, sorted(read))
    document = {
        "format": FORMAT,
        "family": family.name,
        "title": family.title,
        "heads": heads,
        "symbols": [
            {
                "name": s.name,
                "key": s.key,
                "meaning": s.meaning,
                "optional": s.optional,
                "size": s.size,
                "value": s.value.to_json() if s.value is not None else None,
            }
            for s in family.symbols
        ],
        "inputs": inputs(family.name, language) + step_keys + (step_inputs() if measured(family) else []),
        "switches": [s.to_json() for s in family.switches],
        "checks": [[rule.to_json() for rule in rules] for rules in rule_groups(family)],
        "no_parameters": check_message(NO_PARAMETERS, language),  # the problem to show when every tensor is empty
        "config": config_keys(family, {i["key"] for i in inputs(family.name, language) + step_keys}, language),
        "mistakes": erratum_methods.export(),  # the errata's published methods (analysis/erratum_methods.py)
        "blocks": blocks.items,
        "compute": {**family_compute(family), "blocks": computes.items},
        "tuning": methods_export(family, [i["key"] for i in inputs(family.name, language)]),
    }
    return document, blocks, computes


@keep_exports  # between processes, when ATLAS_EXPORTS names a folder (the tests' builds): see kept_exports.py
def export_text(name: str, language: str = LANGUAGE) -> str:
    """The family's document as compact, deterministic JSON text (``_compact``). Its listings of blocks, most
    of it, were written to find equal blocks: the rest is written around a mark, and their text set there."""
    document, blocks, computes = _export(name, language)
    mark = "\u0000listing\u0000"  # no text of the document holds a NUL
    text = _compact({**document, "blocks": mark, "compute": {**document["compute"], "blocks": mark}})
    before, between, after = text.split(json.dumps(mark))
    return before + "[" + ",".join(blocks.texts) + "]" + between + "[" + ",".join(computes.texts) + "]" + after
