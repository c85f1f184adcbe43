"""Fine-tuning methods: which tensors a method trains, and which it adds, as peft 0.21 decides.

``full``, ``head`` and ``bitfit`` pick among the model's own tensors. LoRA, IA³ and prompt
tuning wrap the model with peft, which freezes it, adds tensors of its own and, for a
classifier, trains a copy of the classifier. This module works all of that out from a
card's inventory alone: the modules peft matches, the tensors it adds and the two counts
``get_nb_trainable_parameters()`` reports. ``tools/finetune_reference.py`` asks peft itself,
and tests hold the two equal.
"""

from __future__ import annotations

import enum
import functools
import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from generator.counting.architecture import Head, Layer
from generator.counting.inventory import Inventory, Tensor
from generator.counting.memo import IdentityMemo


class Method(enum.Enum):
    """How much of a model a fine-tuning run trains."""

    FULL = "full"
    HEAD = "head"
    BITFIT = "bitfit"
    LORA = "lora"
    IA3 = "ia3"
    PROMPT_TUNING = "prompt-tuning"

    __hash__ = object.__hash__  # one object, equal only to itself (see architecture.Head)


# What PeftModelForSequenceClassification trains beside the adapters: every module whose name ends
# so (a plain suffix: a "pre_classifier" is one too). It trains a copy and keeps the original.
CLASSIFIER_NAMES = ("classifier", "score")
# The classes each adapter wraps; a target that names any other module is refused.
ADAPTS = {Method.LORA: (Layer.LINEAR, Layer.EMBEDDING, Layer.CONV1D), Method.IA3: (Layer.LINEAR,)}
ADAPTER = "default"  # peft's name for the one adapter a model is given
# The modules each transformers class holds without parameters (dropouts, activations, rotary tables), by
# family and head, their layer indices written {i}: tools/parameterless_modules.py asks transformers.
PARAMETERLESS = Path(__file__).resolve().parent / "families" / "transformers" / "parameterless.json"


@dataclass(frozen=True)
class Tuning:
    """A fine-tuning method and its settings: what a user asks for."""

    method: Method = Method.FULL
    rank: int = 8  # LoRA's r
    targets: tuple[str, ...] | None = None  # LoRA's and IA³'s modules; None: peft's own for the family
    feedforward: tuple[str, ...] | None = None  # IA³'s targets that scale their input; None: peft's own
    virtual_tokens: int = 20  # prompt tuning's n

    @property
    def adapts(self) -> bool:
        """Whether peft wraps the model (LoRA, IA³, prompt tuning) rather than a choice of its tensors."""
        return self.method in (Method.LORA, Method.IA3, Method.PROMPT_TUNING)


class TuningError(ValueError):
    """A method a model cannot take as asked: ``what`` names the setting; the message says what was
    expected and what was found."""

    def __init__(self, what: str, expected: str, found: str) -> None:
        super().__init__(f"expected {expected}, found {found}")
        self.what = what


@dataclass(frozen=True)
class Added:
    """A tensor a method adds to the model, named as the wrapped model's ``named_parameters()`` names it."""

    name: str
    shape: tuple[int, ...]
    module: str  # the module it belongs to: the one adapted, or "" for the prompt table

    @property
    def count(self) -> int:
        result = 1
        for dim in self.shape:
            result *= dim
        return result


@dataclass(frozen=True)
class Tuned:
    """What one method trains on one model."""

    tuning: Tuning
    inventory: Inventory
    trained: tuple[Tensor, ...]  # the model's own tensors that train
    added: tuple[Added, ...]  # tensors the method adds; all of them train
    targets: tuple[str, ...] = ()  # what peft matched against, its defaults filled in
    adapted: tuple[str, ...] = ()  # the modules the adapters wrap, in the model's order
    saved: tuple[str, ...] = ()  # the modules trained as a copy beside a frozen original

    @cached_property
    def trainable(self) -> int:
        """What trains: peft's first figure of ``get_nb_trainable_parameters()``."""
        return sum(t.count for t in self.trained) + sum(a.count for a in self.added)

    @cached_property
    def added_count(self) -> int:
        """What the method adds to the model's own parameters."""
        return sum(a.count for a in self.added)

    @cached_property
    def total(self) -> int:
        """Every parameter the model holds once wrapped: peft's second figure."""
        return self.inventory.total + self.added_count

    @property
    def frozen(self) -> int:
        return self.total - self.trainable


def tune(inventory: Inventory, tuning: Tuning) -> Tuned:
    """What ``tuning`` trains on the model of ``inventory``; TuningError where peft or the method refuses."""
    method = tuning.method
    if method is Method.FULL:
        return Tuned(tuning, inventory, tuple(t for t in inventory.tensors if t.trainable), ())
    head = _head_tensors(inventory)
    if method is Method.HEAD:
        if inventory.architecture.base == "":
            raise TuningError(
                "method",
                "a class with a head (masked-lm, pretraining or sequence-classification)",
                f"the base class {inventory.class_name}, which is all encoder",
            )
        return Tuned(tuning, inventory, head, ())
    if method is Method.BITFIT:
        in_head = {t.name for t in head}
        chosen = tuple(t for t in inventory.tensors if t.name in in_head or (t.name.endswith("bias") and t.trainable))
        return Tuned(tuning, inventory, chosen, ())
    modules = modules_of(inventory)
    classifier = inventory.card.head is Head.SEQUENCE_CLASSIFICATION
    saved = modules.classifiers() if classifier else ()
    copies = tuple(_copies(inventory, saved))
    if method is Method.PROMPT_TUNING:
        width = _token_width(inventory)
        if tuning.virtual_tokens < 1:
            raise TuningError("virtual_tokens", "a number of virtual tokens from 1 up", str(tuning.virtual_tokens))
        prompt = Added(f"prompt_encoder.{ADAPTER}.embedding.weight", (tuning.virtual_tokens, width), "")
        return Tuned(tuning, inventory, (), (prompt, *copies), saved=saved)
    targets, adapted = _adapted(modules, tuning, saved if classifier else None)
    if method is Method.LORA:
        added = tuple(a for name in adapted for a in _lora(modules, name, tuning.rank))
    else:
        added = tuple(_ia3(modules, name, _feedforward(inventory, tuning, targets)) for name in adapted)
    return Tuned(tuning, inventory, (), (*added, *copies), targets, adapted, saved)


def _head_tensors(inventory: Inventory) -> tuple[Tensor, ...]:
    """The tensors outside the base model that nothing in it shares (a decoder tied to the token table is the table)."""
    base = inventory.architecture.base
    if base == "":
        return ()
    shared = {tie.tied_to for tie in inventory.tied if tie.name.startswith(base)}
    return tuple(t for t in inventory.tensors if not t.name.startswith(base) and t.name not in shared and t.trainable)


class Modules:
    """The modules of a model as peft walks them: the layers that hold tensors, and every module above them."""

    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory
        # Each declared module's parameters, longest name first ("in_proj.weight" before "weight").
        declared: dict[int, list[tuple[str, Layer | None]]] = {}
        owners: dict[str, Layer | None] = {}
        for entry in inventory.entries:
            params = declared.get(id(entry.module))
            if params is None:
                named = [(f".{p.name}", p.layer) for p in entry.module.params]
                params = declared[id(entry.module)] = sorted(named, key=lambda pair: -len(pair[0]))
            name = f".{entry.name}"
            layer = next(layer for suffix, layer in params if name.endswith(suffix))
            owners.setdefault(entry.name.rpartition(".")[0], layer)
        names: dict[str, Layer | None] = {}
        for owner, layer in owners.items():
            parts = owner.split(".")
            for depth in range(1, len(parts)):
                names.setdefault(".".join(parts[:depth]), None)
            names[owner] = layer
        # Modules that hold no tensor: a block's dropouts and activations, where the family names them.
        for block in inventory.architecture.blocks:
            for index in block.instances(inventory.values):
                for op in block.ops:
                    names.setdefault(block.prefix.format(*index) + op.path, None)
        self.layers = names
        self.tensors = {t.name: t for t in inventory.tensors}

    def matching(self, targets: tuple[str, ...]) -> list[str]:
        """The modules the targets match as peft matches them (a whole name, or an ending after a dot), in order."""
        endings = tuple(f".{target}" for target in targets)
        return [name for name in self.layers if name in targets or name.endswith(endings)]

    def classifiers(self) -> tuple[str, ...]:
        """The modules a classifier's peft model trains whole (``modules_to_save``)."""
        return tuple(name for name in self.layers if name.endswith(CLASSIFIER_NAMES))

    def shape_of(self, name: str) -> tuple[int, ...]:
        """The shape of a layer's weight, a tied one's included (a tied decoder is V × H as the table is)."""
        weight = f"{name}.weight"
        if weight in self.tensors:
            return self.tensors[weight].shape
        tie = next(t for t in self.inventory.tied if t.name == weight)
        return self.tensors[tie.tied_to].shape


# A page asks for several methods on one model: its modules are walked once (bounded: one page at a time).
_MODULES: IdentityMemo[Inventory, Modules] = IdentityMemo(4)


def modules_of(inventory: Inventory) -> Modules:
    """The modules of an inventory's model, walked once for all the methods asked of it."""
    return _MODULES.get(inventory) or _MODULES.keep(inventory, Modules(inventory))


def _copies(inventory: Inventory, saved: tuple[str, ...]) -> list[Added]:
    """The trained copy of each saved module's tensors (peft's ModulesToSaveWrapper)."""
    found = []
    for name in saved:
        for tensor in inventory.tensors:
            if tensor.name.startswith(f"{name}."):
                rest = tensor.name[len(name) + 1 :]
                found.append(Added(f"{name}.modules_to_save.{ADAPTER}.{rest}", tensor.shape, name))
    return found


def _adapted(
    modules: Modules, tuning: Tuning, saved: tuple[str, ...] | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The targets (peft's defaults where none are given) and the modules they wrap, refused as peft refuses."""
    family = modules.inventory.card.family
    method = tuning.method
    default = family.peft.lora if method is Method.LORA else family.peft.ia3
    targets = tuning.targets if tuning.targets is not None else default
    if targets is None:
        raise TuningError(
            "targets",
            f"the modules to adapt, such as {_example(modules, method)}, since peft has no default for {family.name}",
            "none",
        )
    if not targets:
        raise TuningError("targets", "at least one module name", "none")
    if method is Method.LORA and tuning.rank < 1:
        raise TuningError("rank", "a rank from 1 up", str(tuning.rank))
    # A classifier's peft model never adapts a module with a part named as those it trains whole.
    kept = set(CLASSIFIER_NAMES) if saved is not None else set()
    adapted = []
    for name in modules.matching(targets):
        if kept.intersection(name.split(".")):
            continue
        layer = modules.layers[name]
        if layer not in ADAPTS[method]:
            raise TuningError(
                "targets",
                f"names of {_kinds(method)} layers, which {method.value} adapts",
                f"{_which(name, targets)}, which matches {name}, another kind of module",
            )
        adapted.append(name)
    for target in targets:
        pattern = indexless(target)
        for name in _parameterless(family.name, modules.inventory.card.head.value):
            if (name == pattern or name.endswith(f".{pattern}")) and not kept.intersection(name.split(".")):
                raise TuningError(
                    "targets",
                    f"names of {_kinds(method)} layers, which {method.value} adapts",
                    f"{target}, which matches {name}, a module without parameters",
                )
    if not adapted:
        names = ", ".join(_suffixes(modules, method, kept))
        raise TuningError(
            "targets",
            f"names the layers of {modules.inventory.class_name} end in ({names})",
            f"{', '.join(targets)}, which no module is named or ends in",
        )
    return tuple(targets), tuple(adapted)


def indexless(name: str) -> str:
    """A module name with each layer index written {i}: every copy of a repeated module, as one name."""
    return re.sub(r"(^|\.)\d+(?=\.|$)", r"\1{i}", name)


def _kinds(method: Method) -> str:
    """The classes a method adapts, in words: "Linear, Embedding or Conv1d"."""
    names = [k.value for k in ADAPTS[method]]
    return " or ".join((", ".join(names[:-1]), names[-1])) if len(names) > 1 else names[0]


@functools.cache
def _parameterless(family: str, head: str) -> tuple[str, ...]:
    """The names of the modules a family's class holds without parameters (a dropout, an activation)."""
    known = json.loads(PARAMETERLESS.read_text(encoding="utf-8"))["families"]
    return tuple(known.get(family, {}).get(head, ()))


def _which(name: str, targets: tuple[str, ...]) -> str:
    return next(t for t in targets if name == t or name.endswith(f".{t}"))


def _suffixes(modules: Modules, method: Method, kept: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The last part of the name of every layer the method may adapt, once each: what a target may be."""
    return sorted(
        {
            name.rpartition(".")[2]
            for name, layer in modules.layers.items()
            if layer in ADAPTS[method] and not kept.intersection(name.split("."))
        }
    )


def _example(modules: Modules, method: Method) -> str:
    """Two Linear layers of the repeated layer (a name with an index in it): targets a user could give."""
    names = [
        name.rpartition(".")[2]
        for name, layer in modules.layers.items()
        if layer is Layer.LINEAR and any(part.isdigit() for part in name.split("."))
    ]
    return ",".join(list(dict.fromkeys(names))[:2]) or ",".join(_suffixes(modules, method)[:2])


def _lora(modules: Modules, name: str, rank: int) -> tuple[Added, Added]:
    """LoRA's two factors for one layer: A (r × in) and B (out × r), no bias, as peft 0.21 builds them."""
    layer = modules.layers[name]
    shape = modules.shape_of(name)
    if layer is Layer.EMBEDDING:
        rows, width = shape
        return (
            Added(f"{name}.lora_embedding_A.{ADAPTER}", (rank, rows), name),
            Added(f"{name}.lora_embedding_B.{ADAPTER}", (width, rank), name),
        )
    if layer is Layer.CONV1D:
        # A convolution's weight is out × in/groups × kernel; every one declared maps its width to itself.
        out, per_group, kernel = shape
        groups = out // per_group
        if rank % groups:
            raise TuningError("rank", f"a multiple of {groups}, the groups of {name}", str(rank))
        return (
            Added(f"{name}.lora_A.{ADAPTER}.weight", (rank, out, kernel), name),
            Added(f"{name}.lora_B.{ADAPTER}.weight", (out, rank // groups, 1), name),
        )
    out, n_in = shape
    return (
        Added(f"{name}.lora_A.{ADAPTER}.weight", (rank, n_in), name),
        Added(f"{name}.lora_B.{ADAPTER}.weight", (out, rank), name),
    )


def _feedforward(inventory: Inventory, tuning: Tuning, targets: tuple[str, ...]) -> tuple[str, ...]:
    family = inventory.card.family
    found = tuning.feedforward if tuning.feedforward is not None else family.peft.feedforward
    if found is None:
        why = f"since peft has no default for {family.name}"
        raise TuningError("feedforward", f"the targets whose input is scaled, {why}", "none")
    if not set(found) <= set(targets):
        raise TuningError("feedforward", f"names among the targets ({', '.join(targets)})", ", ".join(found))
    return found


def _ia3(modules: Modules, name: str, feedforward: tuple[str, ...]) -> Added:
    """IA³'s vector for one Linear: its input's width when it is a feed-forward module, else its output's."""
    out, n_in = modules.shape_of(name)
    scales_input = name.endswith(feedforward)  # a plain suffix, as peft's feed-forward test reads it
    return Added(f"{name}.ia3_l.{ADAPTER}", (1, n_in) if scales_input else (out, 1), name)


def table_width(inventory: Inventory) -> int | None:
    """The width of the token table's vectors, which a prompt's vectors join (None without one)."""
    table = next((t for t in inventory.tensors if t.module.key.startswith("token-embeddings")), None)
    return table.shape[1] if table is not None else None


def prompt_misfit(tuned: Tuned) -> tuple[int, int] | None:
    """(the prompt's width, the token vectors' width) where they differ: peft builds such a prompt, but
    its first step fails, since the two cannot be joined. None where they fit."""
    prompt = next((a for a in tuned.added if a.module == ""), None)
    width = table_width(tuned.inventory)
    if prompt is None or width is None or prompt.shape[1] == width:
        return None
    return prompt.shape[1], width


def _token_width(inventory: Inventory) -> int:
    """The width of a prompt's vectors: peft reads the config's hidden_size (or n_embd, d_model)."""
    config = inventory.card.config
    for key in ("hidden_size", "n_embd", "d_model"):
        if config.get(key) is not None:
            return int(config[key])
    raise TuningError("method", "a config with hidden_size, which peft reads to size the prompt", "none")


@dataclass(frozen=True)
class Group:
    """Adapted modules that one target matched and that have one shape: a row of a worked LoRA or IA³ count."""

    target: str
    layer: Layer
    shape: tuple[int, ...]  # the adapted layer's weight: out × in for a Linear, rows × width for a table
    modules: tuple[str, ...]
    each: int  # what the method adds to each of them

    @property
    def added(self) -> int:
        return self.each * len(self.modules)


def groups(tuned: Tuned) -> list[Group]:
    """The adapted modules by the target that matched them and by shape, in the model's order."""
    modules = modules_of(tuned.inventory)
    added: dict[str, int] = {}
    for tensor in tuned.added:
        if tensor.module in tuned.adapted:
            added[tensor.module] = added.get(tensor.module, 0) + tensor.count
    found: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for name in tuned.adapted:
        found.setdefault((_which(name, tuned.targets), modules.shape_of(name)), []).append(name)
    return [
        Group(target, modules.layers[names[0]] or Layer.LINEAR, shape, tuple(names), added[names[0]])
        for (target, shape), names in found.items()
    ]
