"""What a fine-tuning method trains and wraps, and what each adapter adds to a training step.

``tuned_step.py`` walks a model's data flow; this module says, by module names with each layer index
written {i}, which tensors train and which modules a method wraps (``trained_of``), and what each
wrapper computes and keeps beside the module it wraps: LoRA's two products and x·Aᵀ beside a
Linear, its product by Bᵀ beside an embedding table, IA³'s scaled tensor and vector copy.
``docs/fine-tuning-step.md`` gives each rule with the torch figure it rests on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from generator.counting.architecture import Block, Layer, Module, Op, Product, Saved
from generator.counting.compute import ModuleCompute, differentiated
from generator.counting.flow import param
from generator.counting.inventory import Counted
from generator.counting.methods import Method, Tuned, indexless, modules_of
from generator.counting.poly import Poly, total
from generator.counting.step_refusals import StepNotDerivedError


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


indexless_cached = functools.lru_cache(maxsize=1 << 16)(indexless)


def trained_of(tuned: Tuned) -> Trained:
    tensors = {indexless_cached(t.name) for t in tuned.trained}
    for module in tuned.saved:  # a classifier's trained copy: its tensors train, in its place
        tensors |= {indexless_cached(t.name) for t in tuned.inventory.tensors if t.name.startswith(f"{module}.")}
    adapters: dict[str, Adapter] = {}
    modules = modules_of(tuned.inventory)
    for added in tuned.added:
        if added.module == "" or added.module not in tuned.adapted:
            continue
        layer = modules.layers.get(added.module)
        if layer is not Layer.LINEAR and not (layer is Layer.EMBEDDING and tuned.tuning.method is Method.LORA):
            raise StepNotDerivedError(f"{added.module} is adapted, and only a Linear's or a table's LoRA is derived")
        name = indexless_cached(added.module)
        if layer is Layer.EMBEDDING:
            adapters[name] = Adapter(Method.LORA, rank=tuned.tuning.rank, width=modules.shape_of(added.module)[1])
        elif tuned.tuning.method is Method.LORA:
            adapters[name] = Adapter(Method.LORA, rank=tuned.tuning.rank)
        else:
            out, _ = modules.shape_of(added.module)
            adapters[name] = Adapter(Method.IA3, scales_input=added.shape != (out, 1))
    _alike_in_every_layer(tuned.adapted, modules.layers)
    tied = tuple(sorted({indexless_cached(t.name): indexless_cached(t.tied_to) for t in tuned.inventory.tied}.items()))
    prompt = tuned.tuning.virtual_tokens if tuned.tuning.method is Method.PROMPT_TUNING else 0
    return Trained(frozenset(tensors), tuple(sorted(adapters.items())), tied, prompt)


def _alike_in_every_layer(adapted: tuple[str, ...], modules: Iterable[str]) -> None:
    """The engine works one instance of a repeated layer for all: a target that names one layer's module
    (``layer.0.attention.self.query``) adapts that copy and not the others, which it cannot say. The
    refusal names the last adapted copy in the model's order, and the first copy left out."""
    chosen = {indexless_cached(name): name for name in adapted}
    wrapped = frozenset(adapted)
    for module in modules:
        name = chosen.get(indexless_cached(module))
        if name is not None and module not in wrapped:
            raise StepNotDerivedError(
                f"{name} is adapted and {module} is not: the step is derived for a method that adapts every"
                " copy of a layer alike"
            )


def adapter_of(item: Module | Op, prefix: str, trained: Trained) -> Adapter | None:
    """The adapter that acts on a module's output, where the forward calls the module. One whose products
    read its weight only beside another tensor (output rows concatenated with the decoder's) is not
    called. A table the model reads whole, never looking it up (a relative position table), has
    none: peft's adapter of it never runs."""
    if not isinstance(item, Module):
        return None
    own = (param(f"{item.path}.weight"),)
    if item.products and not any(not p.operands or own in p.operands for p in item.products):
        return None
    adapter = trained.adapter.get(f"{prefix}{item.path}")
    if adapter is None or adapter.width is None:
        return adapter
    if item.lookups is None:
        raise StepNotDerivedError(f"{item.path} is not looked up by ids, and peft's adapter of it is not derived")
    return None if item.lookups == Poly() else adapter


def adapted_runs(
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


def unique(kept: list[Saved], local: set[str], seen: set[str]) -> tuple[Saved, ...]:
    """The storages not yet kept in this instance (a shared one: in the model)."""
    found = []
    for tensor in kept:
        scope = seen if tensor.shared else local
        if tensor.key not in scope:
            scope.add(tensor.key)
            found.append(tensor)
    return tuple(found)


def adapted(
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
    return ModuleCompute(path, path, products, backward, unique(list(saved), local, seen))


def adapted_table(
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
    return ModuleCompute(path, path, (product,), product.flops * product.backward, unique(list(saved), local, seen))
