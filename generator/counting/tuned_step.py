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
the rest.

A block read by every copy of a repeated block (``Block.read_by``, a table of relative positions) is
worked first. Its ops run once in each copy (their ``repeat``): they are worked in each instance of
that block, with its names and its parameters, as if declared there.

A block that gives ``flow.COPIED_ABOVE_ONE`` a gradient declares copies torch makes only for b and s
above 1 (DeBERTa v1's strided query and key). Its step under a method then refuses b = 1 and s = 1.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace

from generator.counting.architecture import Architecture, Block, Head, Kind, Layer, Module, Op, Product, Saved
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
from generator.counting.methods import Method, Tuned, indexless, modules_of
from generator.counting.poly import Poly, total
from generator.counting.step_refusals import StepCannotRunError
from generator.counting.step_totals import StepTotals

# The order the forward runs the blocks in: a family may declare its heads first.
KIND_ORDER = (Kind.EMBEDDINGS, Kind.ENCODER, Kind.POOLER, Kind.HEAD)


class StepNotDerivedError(ValueError):
    """A step under a method this model's declaration cannot say: its data flow is not declared."""


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


@dataclass(frozen=True)
class Adapter:
    """What a method wraps one Linear with: LoRA of rank r, or IA³ scaling its input or its output;
    or an embedding table with LoRA (``width``, its rows' width: B is width × r)."""

    method: Method
    rank: int = 0
    scales_input: bool = False
    width: int | None = None  # an embedding table's width; None for a Linear


@dataclass(frozen=True)
class Trained:
    """What a method trains, by module names with each layer index written {i} (the same in every layer)."""

    tensors: frozenset[str]
    adapters: tuple[tuple[str, Adapter], ...]
    tied: tuple[tuple[str, str], ...]  # a tied slot's name and the tensor it holds
    prompt: int  # prompt tuning's virtual tokens, else 0

    @functools.cached_property
    def adapter(self) -> Mapping[str, Adapter]:
        return dict(self.adapters)

    @functools.cached_property
    def holds(self) -> Mapping[str, str]:
        return dict(self.tied)


def tuned_compute(card: Counted, tuned: Tuned) -> Compute:
    """The step of ``card`` under ``tuned``'s method, as a Compute whose ``at(b, s)`` gives its figures.

    Full fine-tuning is the card's own step. Prompt tuning's figures are at s + n: ``at`` takes the
    sequence the model runs (``tuned_seq``)."""
    full = count_compute(card)
    return full if tuned.tuning.method is Method.FULL else flowed_compute(card, tuned, full)


def flowed_compute(card: Counted, tuned: Tuned, full: Compute) -> Compute:
    """The step worked through the blocks' data flow, whatever the method (full fine-tuning included,
    which a test holds equal to the declared step)."""
    trained = _trained(tuned)
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
_indexless = functools.lru_cache(maxsize=1 << 16)(indexless)


def _trained(tuned: Tuned) -> Trained:
    tensors = {_indexless(t.name) for t in tuned.trained}
    for module in tuned.saved:  # a classifier's trained copy: its tensors train, in its place
        tensors |= {_indexless(t.name) for t in tuned.inventory.tensors if t.name.startswith(f"{module}.")}
    adapters: dict[str, Adapter] = {}
    modules = modules_of(tuned.inventory)
    for added in tuned.added:
        if added.module == "" or added.module not in tuned.adapted:
            continue
        layer = modules.layers.get(added.module)
        if layer is not Layer.LINEAR and not (layer is Layer.EMBEDDING and tuned.tuning.method is Method.LORA):
            raise StepNotDerivedError(f"{added.module} is adapted, and only a Linear's or a table's LoRA is derived")
        name = _indexless(added.module)
        if layer is Layer.EMBEDDING:
            adapters[name] = Adapter(Method.LORA, rank=tuned.tuning.rank, width=modules.shape_of(added.module)[1])
        elif tuned.tuning.method is Method.LORA:
            adapters[name] = Adapter(Method.LORA, rank=tuned.tuning.rank)
        else:
            out, _ = modules.shape_of(added.module)
            adapters[name] = Adapter(Method.IA3, scales_input=added.shape != (out, 1))
    _alike_in_every_layer(frozenset(tuned.adapted), modules.layers)
    tied = tuple(sorted({_indexless(t.name): _indexless(t.tied_to) for t in tuned.inventory.tied}.items()))
    prompt = tuned.tuning.virtual_tokens if tuned.tuning.method is Method.PROMPT_TUNING else 0
    return Trained(frozenset(tensors), tuple(sorted(adapters.items())), tied, prompt)


def _alike_in_every_layer(adapted: frozenset[str], modules: Iterable[str]) -> None:
    """The engine works one instance of a repeated layer for all: a target that names one layer's module
    (``layer.0.attention.self.query``) adapts that copy and not the others, which it cannot say."""
    chosen = {_indexless(name): name for name in adapted}
    for module in modules:
        name = chosen.get(_indexless(module))
        if name is not None and module not in adapted:
            raise StepNotDerivedError(
                f"{name} is adapted and {module} is not: the step is derived for a method that adapts every"
                " copy of a layer alike"
            )


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
            found = _holds_trained(item, trains) or _adapter_of(item, prefix, trained) is not None
            found = found or any(needs(read, (*path, name)) for read in item.reads)
        else:
            raise StepNotDerivedError(f"{block.key}: nothing writes {name}")
        flows[name] = found
        return found

    local: set[str] = set()
    found: list[ModuleCompute] = []
    for item in items:
        if not item.writes:  # holds parameters and computes nothing (a decoder's cross-attention)
            continue
        adapter = _adapter_of(item, prefix, trained)
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
                runs += _adapted_runs(item, product, prefix, trained, resolve)
            else:
                products.append(product if live else replace(product, backward=0))
        found.append(_module(item, products, _unique(kept, local, seen), block, card.head))
        if item.path == LOSS_STEP and live:
            names[LOSS] = True
        if adapter is not None and isinstance(item, Module) and adapter.width is not None:
            found.append(_adapted_table(item, adapter, local, seen, card, block))
        elif adapter is not None:
            found.append(_adapted(item, adapter, given[0] if given else False, local, seen, card, block))
        for product, linear, input_needs in runs:
            inputs = tuple(t for t in saved_of(item, card.config) if linear in t.needs)
            inputs = tuple(t for t in inputs if t.when is None or t.when.evaluate(card.config))
            run = replace(item, path=f"{item.path} {product.what}", products=(product,), saved=inputs)
            adapted = trained.adapter[f"{prefix}{linear[1:-7]}"]
            found.append(_adapted(run, adapted, input_needs, local, seen, card, block))
    for own, wide in block.outputs:  # COPIED_ABOVE_ONE holds once any instance needs it
        names[wide] = needs(own) or (wide == COPIED_ABOVE_ONE and names.get(wide, False))
    return tuple(found)


def _adapter_of(item: Module | Op, prefix: str, trained: Trained) -> Adapter | None:
    """The adapter that acts on a module's output. A table the model reads whole, never looking it up
    (DeBERTa's relative positions), has none: peft's adapter of it never runs."""
    if not isinstance(item, Module):
        return None
    adapter = trained.adapter.get(f"{prefix}{item.path}")
    if adapter is None or adapter.width is None:
        return adapter
    if item.lookups is None:
        raise StepNotDerivedError(f"{item.path} is not looked up by ids, and peft's adapter of it is not derived")
    return None if item.lookups == Poly() else adapter


def _adapted_runs(
    item: Module | Op, product: Product, prefix: str, trained: Trained, resolve: Callable[[str], bool]
) -> list[tuple[Product, str, bool]]:
    """A product whose operand is another Linear's weight runs that Linear (a relative op projects
    its position table with each layer's own query projection): peft's adapter then runs there too.
    Each such run: the product, the weight's name and whether the other operand needs a gradient."""
    if len(product.operands) != 2:
        return []
    runs = []
    for side, group in enumerate(product.operands):
        weight = group[0] if len(group) == 1 and group[0].endswith(".weight") else ""
        linear = weight[1:-7]  # a module's own product is adapted as the module (``_adapted``)
        own_run = isinstance(item, Module) and linear == item.path
        adapter = trained.adapter.get(f"{prefix}{linear}") if weight.startswith("@") and not own_run else None
        if adapter is not None and adapter.scales_input:  # its product's input would be the scaled copy
            raise StepNotDerivedError(f"IA³ scales the input of {weight[1:-7]}, which {item.path} runs too")
        if adapter is not None:
            other = product.operands[1 - side]
            runs.append((product, weight, any(resolve(n) for n in other)))
    return runs


def _trains(prefix: str, trained: Trained) -> Callable[[str], bool]:
    """Whether the tensor at a path of the block trains (a tied slot trains with what it holds)."""

    def trains(path: str) -> bool:
        name = path[1:] if path.startswith("/") else f"{prefix}{path}"
        return name in trained.tensors or trained.holds.get(name, "") in trained.tensors

    return trains


def _holds_trained(item: Module | Op, trains: Callable[[str], bool]) -> bool:
    return isinstance(item, Module) and any(trains(f"{item.path}.{p.name}") for p in item.params)


def _unique(kept: list[Saved], local: set[str], seen: set[str]) -> tuple[Saved, ...]:
    """The storages not yet kept in this instance (a shared one: in the model)."""
    found = []
    for tensor in kept:
        scope = seen if tensor.shared else local
        if tensor.key not in scope:
            scope.add(tensor.key)
            found.append(tensor)
    return tuple(found)


def _module(
    item: Module | Op, products: list[Product], saved: tuple[Saved, ...], block: Block, head: Head
) -> ModuleCompute:
    """An item's compute, repeated as many times as it runs in one instance."""
    repeat = item.repeat if item.repeat is not None else Poly.constant(1)
    if repeat != Poly.constant(1):
        products = [replace(p, m=p.m * repeat, when=None) for p in products]
        saved = tuple(t if t.shared else replace(t, shape=(repeat, *t.shape)) for t in saved)
    backward = total(p.flops * p.backward for p in products) if differentiated(head, block.kind) else Poly()
    label = item.label if isinstance(item, Module) and item.label else item.key
    return ModuleCompute(item.path, label, tuple(products), backward, saved)


def _adapted(
    item: Module | Op,
    adapter: Adapter,
    input_needs: bool,
    local: set[str],
    seen: set[str],
    card: Counted,
    block: Block,
) -> ModuleCompute:
    """What an adapter adds beside its Linear: LoRA's two products x·Aᵀ and ·Bᵀ and their inputs;
    IA³'s scaled tensor and its vector's copy (an elementwise product, no FLOPs). Where the loss
    does not reach the block (a bare model's pooler), the backward runs none of them."""
    base = item.products[0]
    rows, out, width = base.m, base.n, base.k
    inputs = tuple(t for t in item.saved if t.when is None or t.when.evaluate(card.config))
    path = f"{item.path} {adapter.method.value}"
    products: tuple[Product, ...] = ()
    if adapter.method is Method.LORA:
        rank = Poly.constant(adapter.rank)
        products = (
            Product("lora A", rows, rank, width, backward=1 + int(input_needs)),
            Product("lora B", rows, out, rank),
        )
        saved = (*inputs, Saved(f"{item.path} x·Aᵀ", (rows, rank)))
    elif adapter.scales_input:
        saved = (*inputs, *((Saved(f"{item.path} ia3 vector", (width,)),) if input_needs else ()))
    else:
        vector = (Saved(f"{item.path} ia3 vector", (out,)),) if input_needs else ()
        saved = (Saved(f"{item.path} ia3 output", (rows, out)), *vector)
    if base.backward == 0 or not differentiated(card.head, block.kind):
        products = tuple(replace(p, backward=0) for p in products)  # a run whose output nothing reads
    backward = total(p.flops * p.backward for p in products)
    return ModuleCompute(path, path, products, backward, _unique(list(saved), local, seen))


def _adapted_table(
    item: Module, adapter: Adapter, local: set[str], seen: set[str], card: Counted, block: Block
) -> ModuleCompute:
    """LoRA on an embedding table (peft's ``lora.Embedding``): it looks the ids up in Aᵀ (no product),
    multiplies by Bᵀ, (lookups × r) by (r × width), and scales. A trains, so both operands need a
    gradient: the backward runs two products. It keeps the lookup's output, and the ids that the
    lookup into Aᵀ keeps, as the table keeps them when it trains."""
    rows, rank = item.lookups or Poly(), Poly.constant(adapter.rank)
    product = Product("lora B", rows, Poly.constant(adapter.width or 0), rank)
    if not differentiated(card.head, block.kind):
        product = replace(product, backward=0)
    ids = tuple(t for t in item.saved if t.when is None or t.when.evaluate(card.config))
    saved = (*ids, Saved(f"{item.path} ids in Aᵀ", (rows, rank)))
    path = f"{item.path} {adapter.method.value}"
    return ModuleCompute(path, path, (product,), product.flops * product.backward, _unique(list(saved), local, seen))
