"""A block's data flow: which activation each step reads and writes, for a step that trains part of a model.

Full fine-tuning trains every parameter, so every activation needs a gradient and autograd keeps
what ``compute.py`` counts. When a method trains a part, a tensor needs a gradient only when a
trained parameter reaches it through the forward. A block then says, for that:

* each module and op, the activations it ``reads`` and the one it ``writes``;
* each sum that joins two activations (a residual connection), as a ``Join``;
* each product's ``operands``: the backward runs one product per operand that needs a gradient;
* each saved tensor's ``needs``: it is kept only when one of them needs a gradient.

A name in ``operands`` and ``needs`` is one of:

* an activation of the block, by its name;
* ``#0``, ``#1``...: the item's own reads, in order;
* ``@path.param``: a parameter, by its path in the block (``@attention.self.query.weight``), or
  in the model when the path starts with "/" (a head's product by the token table);
* ``@path``: a module; it counts as trained when one of its tensors trains or a method adapts it.
  A ``Join`` may read one: a layer's projections of a shared position table need a gradient when
  the table does or the projecting Linear trains.

A block may also give on ``COPIED_ABOVE_ONE`` (below): its figures under a method then hold for
b and s above 1 only, where that name needs a gradient.

A product whose operand is another Linear's weight runs that Linear: a method that adapts the
Linear adapts that run too (``tuned_step.py``): a relative op may project the position table with
each layer's own query projection. The input the adapter keeps is the
item's saved tensor whose ``needs`` name that weight.

A block read by every copy of a repeated block (``Block.read_by``) runs its ops (those with a
``repeat``) in each copy: the engine works them inside each instance of that block, with its names.

A module repeated inside its block (``Module.repeat``, a path with "{n}") whose copies run one after
another, each on the one before's output, says one copy's flow in ``Module.chain``: a block whose one
input is the module's read and whose one output is the module's write, with paths below the module's.
The engine works the first copy, then one standing for the other copies, and counts that one repeat − 1
times. The module's own products and saved tensors give full fine-tuning's step, as for any module.
An op that only such a copy runs is declared in the chain; its copy in the block writes "". Steps
are remembered by the config keys the block's own items read, so a chain's items read no other key.

Two rules follow the forward. A module whose every product a config gates off (``ops.gated``) is not
called: its output is its input. A module whose products read its weight only beside another tensor
(in a concatenation) is not called either: a method's adapter on it computes nothing.

A saved tensor without ``needs`` is kept when its item is live: when it reads an activation that
needs a gradient, or holds a parameter that trains. torch's derivative formulas give the rules
(``docs/fine-tuning-step.md``). Under full fine-tuning every name needs a gradient, so the flow
changes nothing there: a test holds the two equal for every family that declares it.
"""

from __future__ import annotations

from dataclasses import dataclass

# The model-wide name of the hidden states, from the embeddings through every layer to the encoder's
# output: the blocks that give them on and the engine that reads what reaches the loss name them alike.
HIDDEN = "hidden states"

# A model-wide name a block may give on: what needs a gradient where torch keeps, at b = 1 or s = 1,
# views of one storage in place of the copies it makes for b and s both above 1, and the two weigh
# differently once a method trains part of the model. The block declares the copies; a step under a
# method whose flow gives this name a gradient then refuses b = 1 and s = 1 (``tuned_step.py``).
COPIED_ABOVE_ONE = "copied for b and s above 1"


@dataclass(frozen=True)
class Join:
    """An addition of activations (a residual connection): it computes and keeps nothing, but its
    output needs a gradient when any of its inputs does."""

    reads: tuple[str, ...]
    writes: str


def own(index: int) -> str:
    """The name of an item's ``index``-th read, in its operands and needs."""
    return f"#{index}"


def param(path: str) -> str:
    """The name of a parameter, by its path in the block."""
    return f"@{path}"
