"""The compute and memory rules of a family, exported as data for the calculator page.

The calculator puts a batch size b and a sequence length s beside the config and works out a
training step's FLOPs, saved activations and training memory with the declarations the engine
counts (``counting/compute.py``), never with a figure computed here. For each block this module
writes what each step declares, in the config's symbols and b, s:

* ``products``: each matrix product's FLOPs (times the step's repeat), how many products of
  that size its backward runs, the condition on the config under which it runs at all, and
  ``backward_only`` where the forward does not run it (``Product.backward_only``);
* ``saved``: each tensor autograd keeps, by storage ``key`` (one storage per block, or per model
  when ``shared``), with its shape (times the repeat, unless shared), element type, condition,
  whether only a batch of one keeps it (``batch_one``), whether a batch of one does not
  (``batch_above_one``) and whether a sequence of one token does not (``seq_above_one``); an
  activation function's step names the config key (or the fixed function) that decides which of
  its input and output it keeps (``activations``).

* ``flow``: the block's data flow, which the step under a fine-tuning method follows (``calculator_flow.py``);

and for the family: its compute-only symbols, the bytes per element of each type, what each
activation function keeps, which blocks the backward skips for which head, Adam's bytes per
parameter, the b and s inputs and the rule that s fits the position table. The browser applies
them as ``compute.count_compute`` does; ``tests/test_calculator_compute.py`` evaluates the same
data apart from both and compares with the engine for every card.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any

from generator.analysis.calculator_flow import block_flow, family_flow
from generator.counting.architecture import Block, Dtype, Family, Head, Kind, Module, Op, Product, Saved
from generator.counting.compute import ACTIVATIONS, ELEMENT_BYTES, applied_copies, differentiated, measured, rule_keys
from generator.counting.conditions import Condition, Value, gt, sub, value
from generator.counting.poly import Poly
from generator.counting.step_symbols import STEP_BATCH, STEP_LENGTH
from generator.counting.step_totals import StepTotals

JSON = Any
# The config key that bounds the sequence length (generator count --seq checks the same).
POSITIONS = "max_position_embeddings"
# The inputs the calculator adds to a family's config: b and s (s left empty: min(P, 512)). A step
# symbol's value reads them under the same names (step_symbols.py).
BATCH, SEQ = STEP_BATCH, STEP_LENGTH
DEFAULT_SEQ = 512


def longest(family: Family) -> Value:
    """The longest sequence a config of the family takes: its P positions, less those before the first token
    (``Family.positions_after``: a family that numbers tokens from pad_token_id + 1 fits 512 in 514 rows)."""
    if family.positions_after is None:
        return value(POSITIONS)
    return sub(sub(POSITIONS, family.positions_after), 1)


def _seq_message(family: Family) -> str:
    """The words of a sequence too long: positions from 0, from a key's value + 1, or from a fixed index + 1."""
    if family.positions_after is None:
        return "seq-too-long"
    return "seq-too-long-numbered" if isinstance(family.positions_after, str) else "seq-too-long-fixed"


def _first_position(family: Family) -> dict[str, JSON]:
    """The first token's position where the class fixes it (the message names it); else nothing."""
    after = family.positions_after
    return {"first": value(after + 1).to_json()} if isinstance(after, int) else {}


def longest_of(family: Family, config: Mapping[str, Any]) -> int | None:
    """``longest`` for one config: None where a key it reads is missing (a config without P), else the
    number, 0 or below for a table too short for any token."""
    found = longest(family).evaluate(config)
    return found if isinstance(found, int) else None


def default_seq(family: Family, config: Mapping[str, Any]) -> int:
    """A step's length when none is asked for: 512, or the longest the model takes where that is shorter
    (0 when no token fits). Where the longest cannot be worked out (a null pad_token_id), P."""
    found = longest_of(family, config)
    if found is None:
        positions = config.get(POSITIONS)
        found = positions if isinstance(positions, int) and not isinstance(positions, bool) else DEFAULT_SEQ
    return max(0, min(found, DEFAULT_SEQ))


@functools.cache  # the same shapes recur in every block of a family: (b, s, H) above all
def _poly(poly: Poly) -> JSON:
    return [[coeff, [[s, e] for s, e in mono]] for mono, coeff in poly.terms]


def _condition(when: Condition | None) -> JSON:
    return when.to_json() if when is not None else None


def _saved(tensor: Saved, repeat: Poly) -> JSON:
    # A step run ``repeat`` times keeps that many of each own storage; a shared one stays one.
    scaled = repeat != Poly.constant(1) and not tensor.shared
    shape = (repeat, *tensor.shape) if scaled else tensor.shape
    data: JSON = {"key": tensor.key, "shape": [_poly(d) for d in shape]}
    # Written only where they differ from the usual: the model's type, one block's storage, any batch, always.
    if tensor.dtype is not Dtype.ACTIVATION:
        data["dtype"] = tensor.dtype.value
    if tensor.shared:
        data["shared"] = True
    if tensor.batch_one:
        data["batch_one"] = True
    if tensor.seq_above_one:
        data["seq_above_one"] = True
    if tensor.batch_above_one:
        data["batch_above_one"] = True
    if tensor.when is not None:
        data["when"] = tensor.when.to_json()
    return data


def _step(item: Module | Op) -> JSON:
    repeat = item.repeat if item.repeat is not None else Poly.constant(1)
    return {
        "path": item.path,
        "products": [_product(p, repeat) for p in item.products],
        "saved": [_saved(t, repeat) for t in item.saved],
        # An activation function's saved entries are its input and output; the function decides which it keeps.
        "activation": item.activation if isinstance(item, Op) else None,
        "function": item.function if isinstance(item, Op) else None,
    }


def _product(product: Product, repeat: Poly) -> JSON:
    data: JSON = {
        "flops": _poly(product.flops * repeat),
        "backward": product.backward,
        "when": _condition(product.when),
    }
    if product.backward_only:  # written only where it holds, like a storage's flags
        data["backward_only"] = True
    return data


def block_compute(block: Block) -> JSON:
    """What one block's steps compute and keep, how many times the block runs, and its data flow (which the
    step under a fine-tuning method follows: ``calculator_flow.py``)."""
    items = _items(block)
    found = {"runs": _poly(applied_copies(block)), "steps": [_step(i) for i in items], "flow": block_flow(block)}
    for step, item in zip(found["flow"]["steps"], items, strict=True):
        if isinstance(item, Module) and item.chain is not None:
            step["chain"] = _chain(item.chain)
    return found


def _chain(chain: Block) -> JSON:
    """A module's one copy, where each copy runs on the one before's output (``Module.chain``), as a block of
    its own: what its steps compute and keep, their flow, and each module's key and parameter names."""
    modules = [{"key": m.key, "params": [p.name for p in m.params]} for m in chain.modules]
    return {**block_compute(chain), "key": chain.key, "kind": chain.kind.value, "modules": modules}


def _items(block: Block) -> tuple[Module | Op, ...]:
    return (*block.modules, *block.ops)


def reads(family: Family, blocks: Iterable[Block]) -> list[str]:
    """The config keys compute rules read in these blocks, beyond the symbols (dropouts, activations, ...), sorted."""
    keys = rule_keys(blocks)
    for symbol in family.compute_symbols:
        keys |= symbol.value.reads() if symbol.value is not None else set()
    return sorted(keys - {BATCH, SEQ})  # a step symbol reads the step's inputs, which are not config keys


def step_inputs() -> list[JSON]:
    """b and s as the calculator's inputs: whole numbers from 1; s left empty means min(P, 512)."""
    common = {
        "kind": "size",
        "optional": True,
        "meaning": "",
        "group": "training",
        "symbol": None,
        "minimum": 1,
        "type": None,
    }
    return [
        {**common, "key": BATCH, "default": 1, "symbol": "b", "optional": False},
        {**common, "key": SEQ, "default": None, "symbol": "s"},
    ]


def family_compute(family: Family) -> JSON:
    """The family-wide part of the compute rules (see the module docstring)."""
    # Adam's bytes per parameter, read off the engine's rule: one trainable, or one frozen, parameter.
    trainable = StepTotals(1, 1, 1, 1, 0, 0, {"fp32": 0, "bf16": 0}).training_memory
    frozen = StepTotals(1, 1, 1, 0, 0, 0, {"fp32": 0, "bf16": 0}).training_memory
    most = longest(family)
    return {
        "measured": measured(family),
        "symbols": [
            {"name": s.name, "key": s.key, "value": s.value.to_json() if s.value is not None else None}
            for s in family.compute_symbols
        ],
        "element_bytes": {dtype.value: dict(sizes) for dtype, sizes in ELEMENT_BYTES.items()},
        "activations": {
            name: {"input": k.input, "output": k.output, "intermediates": k.intermediates}
            for name, k in ACTIVATIONS.items()
        },
        "not_differentiated": {
            head.value: [kind.value for kind in Kind if not differentiated(head, kind)] for head in Head
        },
        "per_parameter": {"trainable": trainable, "frozen": frozen},
        "longest": most.to_json(),
        "longest_reads": sorted(most.reads()),
        "default_seq": DEFAULT_SEQ,
        "seq_too_long": {
            "fails": gt(SEQ, most).to_json(),
            "keys": [SEQ],
            "values": {"longest": most.to_json(), **_first_position(family)},
            "message": _seq_message(family),
        },
        # Configs transformers builds but cannot train (Family.step_rules), checked as compute.step_refusal does.
        "cannot_run": [rule.to_json() for rule in family.step_rules],
        # Configs whose step no polynomial says exactly (Family.inexact_steps), as compute.step_inexact checks.
        "not_exact": [rule.to_json() for rule in family.inexact_steps],
        "flow": family_flow(),
    }
