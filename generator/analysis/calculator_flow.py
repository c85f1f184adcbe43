"""A block's data flow, exported as data for the calculator's step under a fine-tuning method.

The engine (``counting/tuned_step.py``) works out which activations need a gradient from each
block's declared flow (``counting/flow.py``). The calculator applies the same rules in the browser
(``static/calculator-step.js``) to what this module writes, read off the declarations:

* for a block: its joins, the names it reads from earlier blocks and gives on, and the repeated
  block each of whose copies runs its repeated ops (``read_by``);
* for each of its steps, in the order the compute rules list them (modules, then ops): what it
  reads and writes, its repeat, each product's name, its m, n and k and its operands, and each
  saved tensor's ``needs``;
* for an embedding table: the rows it looks up, which LoRA on it multiplies;
* for the family: the order the forward runs the kinds of block in, the model-wide names (the one
  that makes a step hold for b and s above 1 only among them), and the engine's own names for the
  loss step and the token table a prompt joins.

The words the engine gives where it cannot work a step are the page's (content/<language>/calculator.yaml);
``tests/test_calculator_flow.py`` holds the English ones equal to the engine's.
"""

from __future__ import annotations

from typing import Any

from generator.counting.architecture import Block, Module, Op, Product
from generator.counting.flow import COPIED_ABOVE_ONE, HIDDEN
from generator.counting.poly import Poly
from generator.counting.tuned_step import KIND_ORDER, LOSS, LOSS_STEP, PROMPT_TABLE

JSON = Any


def _poly(poly: Poly) -> JSON:
    return [[coeff, [[s, e] for s, e in mono]] for mono, coeff in poly.terms]


def _product(product: Product) -> JSON:
    """A product as the flow reads it: its sides, for an adapter beside it, and its operands."""
    return {
        "what": product.what,
        "m": _poly(product.m),
        "n": _poly(product.n),
        "k": _poly(product.k),
        "operands": [list(group) for group in product.operands],
    }


def _step(item: Module | Op) -> JSON:
    return {
        "reads": list(item.reads),
        "writes": item.writes,
        # The repeat the compute rules multiplied in: an op a relative block lends its reader runs once there.
        "repeat": _poly(item.repeat) if item.repeat is not None else None,
        "products": [_product(p) for p in item.products],
        "needs": [list(t.needs) for t in item.saved],
        # An embedding's rows looked up a step, which LoRA on it runs on (None: its forward takes no ids).
        "lookups": _poly(item.lookups) if isinstance(item, Module) and item.lookups is not None else None,
    }


def block_flow(block: Block) -> JSON:
    """One block's data flow, its steps in the order of its compute rules' (``calculator_compute._items``)."""
    items: tuple[Module | Op, ...] = (*block.modules, *block.ops)
    return {
        "joins": [[list(join.reads), join.writes] for join in block.joins],
        "inputs": [list(pair) for pair in block.inputs],
        "outputs": [list(pair) for pair in block.outputs],
        "read_by": block.read_by,
        "steps": [_step(item) for item in items],
    }


def family_flow() -> JSON:
    """The engine's names the browser's rules meet in every family's flow."""
    return {
        "kind_order": [kind.value for kind in KIND_ORDER],
        "hidden": HIDDEN,
        "loss": LOSS,
        "loss_step": LOSS_STEP,
        "prompt_table": PROMPT_TABLE,
        "copied_above_one": COPIED_ABOVE_ONE,
    }
