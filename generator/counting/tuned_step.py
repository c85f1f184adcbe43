"""A training step when a fine-tuning method trains part of the model: its FLOPs and what autograd keeps.

The forward runs the whole model, plus what the method adds (LoRA's two products per adapted
Linear, one per adapted embedding table). The backward runs only the products whose output a
trained tensor reaches, and autograd keeps only what those products and the ops above them read.
Which activations need a gradient follows from the block's data flow (``flow.py``): a block
instance reads the names the earlier blocks give it, and each item's output needs a gradient when
it reads one that does, or holds a trained tensor. ``docs/fine-tuning-step.md`` gives every rule
with the torch figure it rests on.

The first instance of a repeated layer may differ from the others: below the lowest trained
tensor nothing needs a gradient, and in LoRA's first layer only the adapted branches do. The
others then all read an input that needs one, so two instances are worked, the first and one of
the rest. So are the copies of a module run one after another inside a layer (``Module.chain``).

A block read by every copy of a repeated block (``Block.read_by``, a table of relative positions) is
worked first. Its ops run once in each copy (their ``repeat``): they are worked in each instance of
that block, with its names and its parameters, as if declared there.

A block that gives ``flow.COPIED_ABOVE_ONE`` a gradient declares copies torch makes only for b and s
above 1 (a strided query and key, split from one fused projection). Its step under a method then
refuses b = 1 and s = 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace

from generator.counting.adapters import (
    Trained,
    adapted,
    adapted_runs,
    adapted_table,
    adapter_of,
    trained_of,
    unique,
)
from generator.counting.architecture import Architecture, Block, Head, Kind, Module, Op, Product, Saved
from generator.counting.compute import (
    STEPS_MEMO,
    BlockCompute,
    Compute,
    ModuleCompute,
    StepBlocks,
    applied_copies,
    config_read,
    count_compute,
    differentiated,
    saved_of,
)
from generator.counting.flow import COPIED_ABOVE_ONE, HIDDEN
from generator.counting.inventory import Counted
from generator.counting.memo import IdentityMemo
from generator.counting.methods import Method, Tuned, indexless
from generator.counting.poly import Poly, total
from generator.counting.step_refusals import StepCannotRunError, StepNotDerivedError
from generator.counting.step_totals import StepTotals

# The order the forward runs the blocks in: a family may declare its heads first.
KIND_ORDER = (Kind.EMBEDDINGS, Kind.ENCODER, Kind.POOLER, Kind.HEAD)


# Why a step whose flow gives COPIED_ABOVE_ONE a gradient is refused at b = 1 or s = 1 (``flow.py``).
VIEWS_AT_ONE = (
    "at b = 1 or s = 1 torch keeps views of one storage where it copies for larger b and s, and under a"
    " method that trains part of the model they weigh more than the copies: this step is derived for b and s"
    " above 1 only"
)


@dataclass(frozen=True)
class AboveOneCompute(Compute):
    """A step under a method whose figures hold for b and s above 1 only (``flow.COPIED_ABOVE_ONE``)."""

    def at(self, batch: int, seq: int) -> StepTotals:
        if batch == 1 or seq == 1:
            raise StepNotDerivedError(VIEWS_AT_ONE)
        return super().at(batch, seq)


def tuned_compute(card: Counted, tuned: Tuned) -> Compute:
    """The step of ``card`` under ``tuned``'s method, as a Compute whose ``at(b, s)`` gives its figures.

    Full fine-tuning is the card's own step. Prompt tuning's figures are at s + n: ``at`` takes the
    sequence the model runs (``tuned_seq``)."""
    full = count_compute(card)
    return full if tuned.tuning.method is Method.FULL else flowed_compute(card, tuned, full)


def flowed_compute(card: Counted, tuned: Tuned, full: Compute) -> Compute:
    """The step worked through the blocks' data flow, whatever the method (full fine-tuning included,
    which a test holds equal to the declared step)."""
    trained = trained_of(tuned)
    architecture = card.family.architecture(card.config, card.head)
    values = {**card.symbol_values(), **full.values}
    # How many times each block runs, as the flow tells them apart: never, once, or more.
    runs = tuple(min(2, max(0, applied_copies(block).evaluate(values))) for block in architecture.blocks)
    read = config_read(architecture, card.config)
    flowed = _FLOWED.get(architecture, card.head, read, runs, trained)
    if flowed is None:
        flowed = _flowed_blocks(architecture, runs, trained, card)
        _FLOWED.keep(architecture, flowed, card.head, read, runs, trained)
    steps, copied = flowed
    found = replace(full, steps=steps, parameters=tuned.total, trainable=tuned.trainable)
    if copied and tuned.tuning.method is not Method.FULL:
        return AboveOneCompute(**{f.name: getattr(found, f.name) for f in fields(found)})
    return found


# Flowed step blocks, by declaration, head, the config values the rules read, how often each block runs,
# and what trains: the same for every card of one shape under one method (bounded, as compute's).
_FLOWED: IdentityMemo[Architecture, tuple[StepBlocks, bool]] = IdentityMemo(STEPS_MEMO)


def _flowed_blocks(
    architecture: Architecture, runs: tuple[int, ...], trained: Trained, card: Counted
) -> tuple[StepBlocks, bool]:
    """Each block's first instance, and one of the rest standing for them all (they settle after the first);
    and whether an instance gives COPIED_ABOVE_ONE a gradient."""
    blocks: list[BlockCompute] = []
    names: dict[str, bool] = {}
    seen: set[str] = set()
    ordered, borrowed = _in_flow_order(architecture.blocks)
    run_of = {block.key: run for block, run in zip(architecture.blocks, runs, strict=True)}
    for block in ordered:
        run = run_of[block.key]
        if not block.outputs and not block.inputs and not block.joins:
            raise StepNotDerivedError(f"the data flow of {block.key} is not declared")
        if run == 0:
            continue
        prefix = indexless(block.prefix.format(*block.first))
        extra = borrowed.get(block.key, ())
        modules = (*block.modules, *(item for item in extra if isinstance(item, Module)))
        worked = replace(block, modules=modules, ops=(*block.ops, *(item for item in extra if isinstance(item, Op))))
        if block.read_by is not None:
            worked = replace(block, ops=tuple(op for op in block.ops if op.repeat is None))
        state = _instance(worked, prefix, trained, names, card, seen)
        blocks.append(BlockCompute(block, state, Poly.constant(1)))
        if run > 1:
            # A shared storage the second instance keeps first (a later layer's need) is one storage:
            # the third instance, worked as the second was, keeps it too when the instances settle.
            before = set(seen)
            again = _instance(worked, prefix, trained, names, card, seen)
            blocks.append(BlockCompute(block, again, applied_copies(block) + -1))
            if _instance(worked, prefix, trained, dict(names), card, before) != again:
                raise StepNotDerivedError(f"the instances of {block.key} do not settle after the second")
    if not _reaches_loss(names, card.head):
        raise StepCannotRunError(LOSS_UNREACHED)
    return StepBlocks(tuple(blocks)), names.get(COPIED_ABOVE_ONE, False)


# Why torch's backward raises when no trained tensor feeds the loss (it then needs no gradient).
LOSS_UNREACHED = "no tensor the method trains reaches the loss, so the loss needs no gradient and its backward raises"


# The name a block's loss writes its state under, among the model-wide names: whether it needs a gradient.
LOSS = "(loss)"
# The path of a head's loss step, and the key its token table's modules start with (the prompt joins them).
LOSS_STEP, PROMPT_TABLE = "loss", "token-embeddings"


def _reaches_loss(names: Mapping[str, bool], head: Head) -> bool:
    """Whether the loss needs a gradient: the encoder's output without a head (its sum is the loss), else
    what a head's loss reads."""
    return names.get(HIDDEN, False) if head is Head.BASE else names.get(LOSS, False)


def _in_flow_order(declared: tuple[Block, ...]) -> tuple[list[Block], dict[str, tuple[Module | Op, ...]]]:
    """The blocks in the order the forward runs them, a block read by a repeated one just before it;
    and, by block, the items it works as its own: the ops a block read by a repeated one runs once
    in each of its reader's copies, and the modules of a block without a flow of its own."""
    ordered = sorted(declared, key=lambda b: KIND_ORDER.index(b.kind))
    borrowed: dict[str, tuple[Module | Op, ...]] = {}
    for block in [b for b in ordered if b.read_by is not None]:
        ordered.remove(block)
        ordered.insert(next(n for n, b in enumerate(ordered) if b.key == block.read_by), block)
        ops = tuple(replace(op, repeat=None) for op in block.ops if op.repeat is not None)
        borrowed[block.read_by or ""] = (*borrowed.get(block.read_by or "", ()), *ops)
    # A block with no flow of its own whose modules read another's activations is worked in that block's
    # instance, whose prefix it shares: a masked LM that lists its tied decoder first, in a block of its own.
    for block in [b for b in ordered if _hosted(b)]:
        ordered.remove(block)
        reads = {name for module in block.modules for name in module.reads}
        host = next((o for o in ordered if reads & ({m.writes for m in o.modules} | {p.writes for p in o.ops})), None)
        if host is None or host.prefix != block.prefix or host.repeat:
            raise StepNotDerivedError(f"{block.key} reads {', '.join(sorted(reads))}: no block it runs in writes them")
        borrowed[host.key] = (*borrowed.get(host.key, ()), *block.modules)
    return ordered, borrowed


def _hosted(block: Block) -> bool:
    """Whether a block has no flow of its own (run once), and its modules read activations: another block's."""
    own = block.inputs or block.outputs or block.joins or block.ops or block.read_by or block.repeat
    return not own and any(module.reads for module in block.modules)


def tuned_seq(tuned: Tuned, seq: int) -> int:
    """The positions the model runs for ``seq`` tokens: prompt tuning puts its n vectors in front."""
    return seq + (tuned.tuning.virtual_tokens if tuned.tuning.method is Method.PROMPT_TUNING else 0)


# A tensor's name with its layer indices as {i}, once a name: the same names recur in every card of a shape.
def _instance(
    block: Block, prefix: str, trained: Trained, names: dict[str, bool], card: Counted, seen: set[str]
) -> tuple[ModuleCompute, ...]:
    """One instance of a block: what each of its modules and ops computes and keeps, in flow order.

    ``names`` holds the model-wide names and whether each needs a gradient; the instance reads its
    inputs from it and writes its outputs to it."""
    flows: dict[str, bool] = {}
    for own, wide in block.inputs:
        if wide not in names:
            raise StepNotDerivedError(f"{block.key} reads {wide}, which no earlier block gives")
        flows[own] = names[wide]
    items: tuple[Module | Op, ...] = (*block.modules, *block.ops)
    writers = {item.writes: item for item in items if item.writes}
    joins = {join.writes: join for join in block.joins}
    trains = _trains(prefix, trained)
    chains: dict[str, tuple[tuple[ModuleCompute, ...], bool]] = {}

    def chained(item: Module) -> tuple[tuple[ModuleCompute, ...], bool]:
        """A chain's copies and whether its output needs a gradient, worked once."""
        if item.path not in chains:
            chains[item.path] = _chain(item, prefix, trained, needs(item.reads[0]), card, seen)
        return chains[item.path]

    if trained.prompt:  # the prompt's trained vectors join the token vectors
        flows.update((m.writes, True) for m in block.modules if m.key.startswith(PROMPT_TABLE))

    def holds(path: str) -> bool:
        """A parameter trains; or, for a module's path, one of its tensors trains or a method adapts it."""
        whole = path[1:] if path.startswith("/") else f"{prefix}{path}"
        return trains(path) or whole in trained.adapter or any(t.startswith(f"{whole}.") for t in trained.tensors)

    def needs(name: str, path: tuple[str, ...] = ()) -> bool:
        if name.startswith("@"):
            return holds(name[1:])
        if name in flows:
            return flows[name]
        if name in path:
            raise StepNotDerivedError(f"{block.key}: {name} is read before it is written")
        if name in joins:
            found = any(needs(read, (*path, name)) for read in joins[name].reads)
        elif name in writers:
            item = writers[name]
            if isinstance(item, Module) and item.chain is not None:
                found = chained(item)[1]
            else:
                found = _holds_trained(item, trains) or adapter_of(item, prefix, trained) is not None
                found = (found and not _skipped(item, card)) or any(needs(read, (*path, name)) for read in item.reads)
        else:
            raise StepNotDerivedError(f"{block.key}: nothing writes {name}")
        flows[name] = found
        return found

    local: set[str] = set()
    found: list[ModuleCompute] = []
    for item in items:
        # Holds parameters and computes nothing (a decoder's cross-attention), or is not called.
        if not item.writes or _skipped(item, card):
            continue
        if isinstance(item, Module) and item.chain is not None:
            found += chained(item)[0]
            continue
        adapter = adapter_of(item, prefix, trained)
        given = tuple(needs(read) for read in item.reads)  # x itself, before an IA³ vector scales it
        reads = given
        if adapter is not None and adapter.scales_input:
            reads = (True, *given[1:])  # the base layer reads x scaled by a trained vector
        live = any(reads) or _holds_trained(item, trains)

        def resolve(name: str, reads: tuple[bool, ...] = reads) -> bool:
            if name.startswith("#"):
                return reads[int(name[1:])]
            if name.startswith("@"):
                return holds(name[1:])
            return needs(name)

        kept = []
        for tensor in saved_of(item, card.config):
            if tensor.when is not None and not tensor.when.evaluate(card.config):
                continue
            if any(resolve(n) for n in tensor.needs) if tensor.needs else live:
                kept.append(tensor)
        products = []
        runs: list[tuple[Product, str, bool]] = []  # an op's run of an adapted Linear: the Linear, its input's need
        for product in item.products:
            if product.when is not None and not product.when.evaluate(card.config):
                continue
            if product.operands:
                wanted = sum(any(resolve(n) for n in group) for group in product.operands)
                products.append(replace(product, backward=min(product.backward, wanted)))
                runs += adapted_runs(item, product, prefix, trained, resolve)
            else:
                products.append(product if live else replace(product, backward=0))
        found.append(_module(item, products, unique(kept, local, seen), block, card.head))
        if item.path == LOSS_STEP and live:
            names[LOSS] = True
        if adapter is not None and isinstance(item, Module) and adapter.width is not None:
            found.append(adapted_table(item, adapter, local, seen, card, block))
        elif adapter is not None:
            found.append(adapted(item, adapter, given[0] if given else False, local, seen, card, block))
        for product, linear, input_needs in runs:
            inputs = tuple(t for t in saved_of(item, card.config) if linear in t.needs)
            inputs = tuple(t for t in inputs if t.when is None or t.when.evaluate(card.config))
            run = replace(item, path=f"{item.path} {product.what}", products=(product,), saved=inputs)
            wrapper = trained.adapter[f"{prefix}{linear[1:-7]}"]
            found.append(adapted(run, wrapper, input_needs, local, seen, card, block))
    for own, wide in block.outputs:  # COPIED_ABOVE_ONE holds once any instance needs it
        names[wide] = needs(own) or (wide == COPIED_ABOVE_ONE and names.get(wide, False))
    return tuple(found)


def _chain(
    item: Module, prefix: str, trained: Trained, input_needs: bool, card: Counted, seen: set[str]
) -> tuple[tuple[ModuleCompute, ...], bool]:
    """A module's copies, each run on the one before's output (``Module.chain``): the first, then one standing
    for the other repeat − 1. What they compute and keep, and whether the last one's output needs a gradient."""
    assert item.chain is not None and item.repeat is not None
    (_, wide_in), (_, wide_out) = item.chain.inputs[0], item.chain.outputs[0]
    within = f"{prefix}{item.path.replace('{n}', '{i}')}."  # trained names write every index {i}
    first, rest = {wide_in: input_needs}, {}
    found = _instance(item.chain, within, trained, first, card, seen)
    rest[wide_in] = first[wide_out]
    again = _instance(item.chain, within, trained, rest, card, seen)
    if rest[wide_out] != first[wide_out]:
        raise StepNotDerivedError(f"the copies of {item.path} do not settle after the second")
    return (*found, *(_times(module, item.repeat + -1) for module in again)), first[wide_out]


def _times(module: ModuleCompute, times: Poly) -> ModuleCompute:
    """A module's compute and storages in ``times`` copies (each its own storage, but a shared one)."""
    products = tuple(replace(p, m=p.m * times, when=None) for p in module.products)
    saved = tuple(t if t.shared else replace(t, shape=(times, *t.shape)) for t in module.saved)
    return replace(module, products=products, backward=module.backward * times, saved=saved)


def _skipped(item: Module | Op, card: Counted) -> bool:
    """Whether the forward skips a module: a config gates off each of its products (an embedding
    projection, applied only with trigrams or E ≠ H). Its output is then its input."""
    gates = [p.when for p in item.products] if isinstance(item, Module) else []
    return bool(gates) and all(w is not None and not w.evaluate(card.config) for w in gates)


def _trains(prefix: str, trained: Trained) -> Callable[[str], bool]:
    """Whether the tensor at a path of the block trains (a tied slot trains with what it holds)."""

    def trains(path: str) -> bool:
        name = path[1:] if path.startswith("/") else f"{prefix}{path}"
        return name in trained.tensors or trained.holds.get(name, "") in trained.tensors

    return trains


def _holds_trained(item: Module | Op, trains: Callable[[str], bool]) -> bool:
    return isinstance(item, Module) and any(trains(f"{item.path}.{p.name}") for p in item.params)


def _module(
    item: Module | Op, products: list[Product], saved: tuple[Saved, ...], block: Block, head: Head
) -> ModuleCompute:
    """An item's compute, repeated as many times as it runs in one instance."""
    backward = total(p.flops * p.backward for p in products) if differentiated(head, block.kind) else Poly()
    label = item.label if isinstance(item, Module) and item.label else item.key
    once = ModuleCompute(item.path, label, tuple(products), backward, saved)
    return once if item.repeat is None or item.repeat == Poly.constant(1) else _times(once, item.repeat)
