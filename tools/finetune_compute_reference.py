"""Write the ground truth for a training step under a fine-tuning method: FLOPs and saved activations.

Run with the ``reference`` extra installed (torch, transformers and peft), normally through
`make reference`. It measures the step exactly as ``tools/compute_reference.py`` does (its
``measure``: the meta device, eager attention, the same inputs and labels, FlopCounterMode for
the forward and the backward apart, the distinct storages autograd saves), on the same model
with only part of it trained. The methods:

* ``full``: every parameter trains;
* ``head``: every parameter outside ``base_model_prefix``; a head weight tied to the base model
  (a masked-LM decoder) stays frozen with it;
* ``bitfit``: the base model's biases (every parameter named ``bias``) and the head;
* ``lora``, ``ia3``, ``prompt-tuning``: peft's ``get_peft_model``, with ``TaskType.SEQ_CLS`` for a
  sequence classifier (peft then trains the classifier too, ``modules_to_save``) and no task type
  otherwise. A prompt needs a task type, so prompt tuning runs on classifiers only.

The peft model is built on the meta device and, for bf16, cast whole, as compute_reference casts
the model: the adapters then run in bf16 too. peft's own tensors (LoRA's A and B, IA³'s vectors,
the prompt table, the classifier's trained copy) are model tensors, not activations, as the
model's parameters are. So are the prompt's token ids, which peft holds as a constant (n,) tensor
and the prompt table's lookup saves, as ``position_ids`` is a buffer.

A card here is a catalog card run with another head where the catalog has none (its config,
the head named beside it). Prompt tuning runs on s + n positions, so its points take s ≤ P − n:
the six with s ≤ 3 as for full fine-tuning, and P − n (a family's extra lengths, minus n).

Output: ``tests/reference/fine-tuning-compute/<id>.json``. ``--explain`` writes, for two tiny
classifiers (the second with relative positions), every autograd node of each method's step,
with what it saved and its backward FLOPs:
the evidence the rules of ``docs/fine-tuning-step.md`` cite (``explain-tiny-*.json``).
``--at B S`` prints the figures of one point for each variant of each card, and writes nothing.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import tempfile
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import peft
import torch
import transformers
import yaml
from compute_reference import batch_inputs, device_of, load, measure, points, storage_key
from peft import IA3Config, LoraConfig, PromptTuningConfig, TaskType, get_peft_model
from peft.tuners.tuners_utils import BaseTunerLayer
from peft.utils import ModulesToSaveWrapper
from torch.utils.flop_counter import FlopCounterMode

from generator.cards.card import load_card
from generator.cards.problems import InputError
from generator.counting.compute import shows_step
from reference import AUTO_CLASSES, build_config, model_of, write_json

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "reference" / "fine-tuning-compute"
VIRTUAL_TOKENS = 20
ENGINE = "torch::autograd::"  # the prefix of the autograd engine's own nodes (AccumulateGrad)

# What to measure, from content/choices.yaml (``step-under-methods``): the cards, with the head each
# runs, and the targets given where peft 0.21 has no default for a family.
CHOICES = yaml.safe_load((ROOT / "content" / "choices.yaml").read_text(encoding="utf-8"))["step-under-methods"]
LORA_TARGETS: dict[str, list[str]] = CHOICES["lora-targets"]
IA3_TARGETS: dict[str, tuple[list[str], list[str]]] = {f: (t, ff) for f, (t, ff) in CHOICES["ia3-targets"].items()}
DENSE_TARGETS: dict[str, list[str]] = CHOICES["dense-targets"]
CARDS = [(f"models/{card}.yaml", head) for card, head in CHOICES["cards"]]


@dataclass(frozen=True)
class Variant:
    """One method with its settings, as a file names it."""

    name: str
    method: str
    rank: int | None = None
    targets: tuple[str, ...] | None = None  # None: peft's default (or ours where it has none)
    feed_forward: tuple[str, ...] | None = None
    settings: dict[str, Any] = field(default_factory=dict)


def variants(family: str, head: str = "sequence-classification") -> list[Variant]:
    """The variants a card runs: full, head, BitFit, LoRA twice, IA³, and prompt tuning on a classifier."""
    lora = LORA_TARGETS.get(family)
    ia3, ia3_ff = IA3_TARGETS.get(family, (None, None))
    dense = DENSE_TARGETS.get(family, ["dense"])
    return [
        Variant("full", "full"),
        Variant("head", "head"),
        Variant("bitfit", "bitfit"),
        Variant("lora-r8", "lora", 8, tuple(lora) if lora else None),
        Variant("lora-r4-dense", "lora", 4, tuple(dense)),
        Variant("ia3", "ia3", targets=tuple(ia3) if ia3 else None, feed_forward=tuple(ia3_ff) if ia3_ff else None),
        Variant("prompt-tuning-n20", "prompt-tuning", settings={"num_virtual_tokens": VIRTUAL_TOKENS}),
    ][: None if task_type(head) else -1]


def task_type(head: str) -> TaskType | None:
    return TaskType.SEQ_CLS if head == "sequence-classification" else None


def apply(model: torch.nn.Module, variant: Variant, head: str, device: str = "meta") -> torch.nn.Module:
    """The model with only the variant's parameters trainable (a peft model for peft's methods)."""
    if variant.method == "full":
        return model
    if variant.method in ("head", "bitfit"):
        prefix = model.base_model_prefix
        names: dict[int, list[str]] = defaultdict(list)
        for name, param in model.named_parameters(remove_duplicate=False):
            names[id(param)].append(name)
        bare = not hasattr(model, prefix)  # the base class itself: every parameter is inside it
        for param in model.parameters():
            inside = [n for n in names[id(param)] if bare or n.split(".")[0] == prefix]
            bias = variant.method == "bitfit" and any(n.rsplit(".", 1)[-1] == "bias" for n in inside)
            param.requires_grad_(not inside or bias)
        if not any(p.requires_grad for p in model.parameters()):
            raise ValueError(f"{type(model).__name__} has no parameter outside {prefix}: no head to train")
        return model
    task = task_type(head)
    config: Any
    if variant.method == "lora":
        targets = list(variant.targets) if variant.targets else None
        config = LoraConfig(task_type=task, r=variant.rank, target_modules=targets)
    elif variant.method == "ia3":
        targets = list(variant.targets) if variant.targets else None
        ff = list(variant.feed_forward) if variant.feed_forward is not None else None
        config = IA3Config(task_type=task, target_modules=targets, feedforward_modules=ff)
    else:
        if task is None:
            raise ValueError("prompt tuning needs a task type: peft prepends no prompt without one")
        tokens = variant.settings.get("num_virtual_tokens", VIRTUAL_TOKENS)
        config = PromptTuningConfig(task_type=task, num_virtual_tokens=tokens, **prompt_sizes(model))
    with torch.device(device):
        wrapped = get_peft_model(model, config)
    for name, ids in getattr(wrapped, "prompt_tokens", {}).items():
        # peft's constant prompt ids: a model tensor, as a buffer would be, so that measure() leaves it out.
        wrapped.prompt_encoder[name].register_buffer("prompt_ids", ids, persistent=False)
    return wrapped


def prompt_sizes(model: torch.nn.Module) -> dict[str, int]:
    """The sizes peft reads from the config by names some families lack (a config with ``dim``).

    The prompt's width is the token embeddings': peft's default, ``hidden_size``, fails where they are
    narrower (a factorized embedding: a cat of 768- and 128-wide rows). The other two serve prefix tuning only."""
    config = model.config
    width = model.get_input_embeddings().embedding_dim
    return {
        "token_dim": width,
        "num_attention_heads": config.num_attention_heads,
        "num_layers": config.num_hidden_layers,
    }


def trainable_of(model: torch.nn.Module) -> tuple[int, int]:
    """The trainable and the total count, as peft's get_nb_trainable_parameters() gives them."""
    if isinstance(model, peft.PeftModel):
        trainable, total = model.get_nb_trainable_parameters()
        return int(trainable), int(total)
    params = list(model.parameters())
    return sum(p.numel() for p in params if p.requires_grad), sum(p.numel() for p in params)


def adapted(model: torch.nn.Module) -> dict[str, list[str]]:
    """The module names peft adapted and the ones it trains a copy of."""
    found: dict[str, list[str]] = {"adapted": [], "modules_to_save": []}
    for name, module in model.named_modules():
        if isinstance(module, ModulesToSaveWrapper):
            found["modules_to_save"].append(_short(name))
        elif isinstance(module, BaseTunerLayer) and not any(name.startswith(f"{w}.") for w in found["modules_to_save"]):
            found["adapted"].append(_short(name))
    return {k: v for k, v in found.items() if v}


def _short(name: str) -> str:
    """A module's name in the transformers model, without peft's wrappers (a LoRA model's, or a prompt's)."""
    return name.removeprefix("base_model.model.").removeprefix("base_model.")


def variant_points(family: str, cfg: Any, variant: Variant) -> list[tuple[int, int]]:
    """compute_reference's points; for a prompt, every length past 3 shortened by n (module docstring)."""
    base = points(family, cfg)
    if variant.method != "prompt-tuning":
        return base
    n = VIRTUAL_TOKENS
    return sorted({(b, s if s <= 3 else s - n) for b, s in base if s <= 3 or s - n > 3})


def built(card: dict[str, Any], head: str) -> tuple[str, Any]:
    family = card["family"]
    return family, build_config(family, {**(card.get("config") or {}), "attn_implementation": "eager"})


def card_reference(card: dict[str, Any], head: str) -> dict[str, Any]:
    """Every variant at its points, in fp32 and bf16, on the meta device."""
    family, cfg = built(card, head)
    device = device_of(family, head)
    if device != "meta":
        raise SystemExit(f"{card['id']}: {head} runs on a CPU in compute_reference; not covered here")
    described, rows = [], []
    for variant in variants(family, head):
        model = apply(model_of(head, cfg), variant, head)
        half = apply(model_of(head, cfg), variant, head).to(torch.bfloat16)
        model.train(), half.train()
        trainable, total = trainable_of(model)
        described.append(
            {"variant": variant.name, "method": variant.method, "trainable": trainable, "total": total}
            | {k: v for k, v in (("rank", variant.rank), ("targets", variant.targets)) if v is not None}
            | ({"feed_forward": variant.feed_forward} if variant.feed_forward else {})
            | variant.settings
            | ({"token_dim": model.peft_config["default"].token_dim} if variant.method == "prompt-tuning" else {})
            | adapted(model)
        )
        for b, s in variant_points(family, cfg, variant):
            fp32 = measure(model, family, head, b, s, device)
            bf16 = measure(half, family, head, b, s, device, flops=False)
            rows.append(
                {"variant": variant.name, "batch": b, "seq": s, "forward": fp32["forward"]}
                | {"backward": fp32["backward"], "fp32": fp32["activations"], "bf16": bf16["activations"]}
            )
        print(f"  {variant.name}: trainable {trainable:,}, {rows[-1]}", file=sys.stderr)
    return {
        "id": file_id(card, head),
        "card": card["id"],
        "family": family,
        "head": head,
        "class": type(model_of(head, cfg)).__name__,
        "variants": described,
        "points": rows,
        "versions": {"transformers": transformers.__version__, "torch": torch.__version__, "peft": peft.__version__},
    }


def file_id(card: dict[str, Any], head: str) -> str:
    return card["id"] if card["head"] == head else f"{card['id']}-{head}"


# Classifiers small enough to read node by node, their sizes all distinct: b·s = 10 rows, H = 16,
# I = 40, A = 2 heads of 8, 3 labels, 2 layers. The second has relative positions, whose
# projections read no token: a branch that needs a gradient only where its own weights adapt.
_TINY_SIZES = {"vocab_size": 50, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2}
# The tiny classifiers, one per family named in the choices; the second has relative positions.
_TINY_CONFIGS = [
    _TINY_SIZES | {"intermediate_size": 40, "max_position_embeddings": 32, "num_labels": 3},
    _TINY_SIZES
    | {"intermediate_size": 40, "max_position_embeddings": 32, "num_labels": 3, "relative_attention": True}
    | {"position_buckets": 4, "share_att_key": True, "pos_att_type": "p2c|c2p", "position_biased_input": False}
    | {"norm_rel_ebd": "layer_norm", "type_vocab_size": 0},
]
TINY = [
    {"id": f"tiny-{family}", "family": family, "head": "sequence-classification", "config": config}
    for family, config in zip(CHOICES["tiny"], _TINY_CONFIGS, strict=True)
]
TINY_POINT = (2, 5)


def explain_variant(card: dict[str, Any], variant: Variant, b: int, s: int) -> tuple[list[Any], dict[str, Any]]:
    """Every autograd node of one step: its module, the inputs it passes a gradient to, what it saved,
    and its backward FLOPs."""
    family, head = card["family"], card["head"]
    _, cfg = built(card, head)
    model = apply(model_of(head, cfg), variant, head).train()
    own = {storage_key(t) for t in (*model.parameters(), *model.buffers())}
    storages: dict[int, int] = {}  # storage key -> ordinal, in the order the forward first saved them
    sizes: list[int] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        key = storage_key(tensor)
        if key not in own and key not in storages:
            storages[key] = len(storages)
            sizes.append(tensor.untyped_storage().nbytes())
        return tensor

    module_of: dict[Any, str] = {}
    started: list[int] = []

    def probe() -> int:
        """The sequence number the next autograd node gets: nodes are numbered in the order the forward makes them."""
        return int((torch.ones(1, device="meta", requires_grad=True) * 1).grad_fn._sequence_nr())

    def enter(module: torch.nn.Module, args: Any) -> None:
        started.append(probe())

    def label(module: torch.nn.Module, args: Any, out: Any) -> None:
        """Name the nodes this module's forward made: reachable from its output, made after it started,
        and not named by a child (whose hook ran first)."""
        start = started.pop()
        tensors = [out] if isinstance(out, torch.Tensor) else [v for v in _values(out) if isinstance(v, torch.Tensor)]
        stack, seen = [t.grad_fn for t in tensors], set()
        while stack:
            node = stack.pop()
            if node is None or node in seen or node._sequence_nr() < start:
                continue
            seen.add(node)
            if node.name() != f"{ENGINE}AccumulateGrad":
                module_of.setdefault(node, names[module])
            stack.extend(n for n, _ in node.next_functions)

    names = {module: _short(name) or "(model)" for name, module in model.named_modules()}
    handles = [m.register_forward_pre_hook(enter) for m in model.modules()]
    handles += [m.register_forward_hook(label) for m in model.modules()]
    inputs = batch_inputs(family, head, model.config, b, s, "meta")
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), FlopCounterMode(display=False) as forward:
        output = model(**inputs)
    for handle in handles:
        handle.remove()
    loss = output.loss
    nodes = sorted(_graph(loss.grad_fn), key=lambda n: n._sequence_nr())
    params = {id(p): _short(name) for name, p in model.named_parameters()}
    rows = [
        {
            "variant": variant.name,
            "module": module_of.get(node) or params.get(id(getattr(node, "variable", None)), "(outside modules)"),
            "node": node.name().removeprefix(ENGINE),
            "grad_to": [None if n is None else n.name().removeprefix(ENGINE) for n, _ in node.next_functions],
            "saved": _saved(node, own, storages),
        }
        for node in nodes
    ]
    backward = FlopCounterMode(display=False)
    spent: dict[Any, int] = {}
    for node in nodes:  # the engine runs one node at a time here: its FLOPs are the counter's growth meanwhile
        node.register_prehook(functools.partial(_start, spent, backward, node))
        node.register_hook(functools.partial(_stop, spent, backward, node))
    with backward:
        loss.backward()
    for row, node in zip(rows, nodes, strict=True):
        row["backward_flops"] = spent.get(node, 0)
    here = {"activations": sum(sizes), "forward": forward.get_total_flops(), "backward": backward.get_total_flops()}
    # The listing, measure() on the meta device and measure() on real CPU tensors give the same figures.
    cpu_model = apply(AUTO_CLASSES[head].from_config(cfg), variant, head, "cpu").train()
    agree = here == measure(model, family, head, b, s, "meta") == measure(cpu_model, family, head, b, s, "cpu")
    # bf16 as the cards measure it (the peft model cast whole), and peft applied to a bf16 model instead,
    # which keeps the adapters in fp32 (get_peft_model's autocast_adapter_dtype) and so casts their inputs.
    cast = apply(model_of(head, cfg), variant, head).to(torch.bfloat16).train()
    on_bf16 = apply(model_of(head, cfg).to(torch.bfloat16), variant, head).train()
    summary = {
        "variant": variant.name,
        "meta_and_cpu_agree": agree,
        **here,
        "bf16": measure(cast, family, head, b, s, "meta", flops=False)["activations"],
        "bf16_adapters_fp32": measure(on_bf16, family, head, b, s, "meta", flops=False)["activations"],
        "storages": sizes,
    }
    return rows, summary


def _start(spent: dict[Any, int], counter: FlopCounterMode, node: Any, *grads: Any) -> None:
    spent[node] = counter.get_total_flops()


def _stop(spent: dict[Any, int], counter: FlopCounterMode, node: Any, *grads: Any) -> None:
    spent[node] = counter.get_total_flops() - spent[node]


def _saved(node: Any, own: set[int], storages: dict[int, int]) -> list[str]:
    """What a node keeps: each saved tensor, its shape and type, and the storage it is (a parameter,
    or the ordinal of an activation storage in the order the forward saved them)."""
    found = []
    for attribute in sorted(a for a in dir(node) if a.startswith("_saved_")):
        value = getattr(node, attribute)
        if isinstance(value, torch.Tensor):
            key = storage_key(value)
            where = "param" if key in own else storages.get(key, "not packed")
            found.append(f"{attribute[7:]} {list(value.shape)} {str(value.dtype)[6:]} storage {where}")
    return found


def _values(out: Any) -> list[Any]:
    if isinstance(out, dict):
        return list(out.values())
    if isinstance(out, (tuple, list)):
        return list(out)
    return []


def _graph(root: Any) -> list[Any]:
    """Every node the backward runs, AccumulateGrad included (a trained parameter's)."""
    found, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        found.append(node)
        stack.extend(n for n, _ in node.next_functions)
    return found


# LoRA on the embedding tables too, in the explain files only: each tiny model adapts the tables it has
# (the first's three it looks up; the second's token table, and its relative table, which it reads whole).
TABLES = Variant(
    "lora-r8-tables", "lora", 8, ("word_embeddings", "position_embeddings", "token_type_embeddings", "rel_embeddings")
)


# The first tiny model as a masked LM, whose decoder's weight is the token table: LoRA on both the table and the
# decoder, to show that each runs its own adapter.
TINY_MASKED_LM = {**TINY[0], "id": f"{TINY[0]['id']}-masked-lm", "head": "masked-lm"}
TABLE_AND_DECODER = Variant("lora-r8-table-and-decoder", "lora", 8, ("word_embeddings", "decoder"))


def write_explain(out: Path) -> None:
    b, s = TINY_POINT
    explained = [(card, [*variants(card["family"]), TABLES]) for card in TINY]
    for card, chosen in [*explained, (TINY_MASKED_LM, [Variant("full", "full"), TABLE_AND_DECODER])]:
        nodes, summaries = [], []
        for variant in chosen:
            rows, summary = explain_variant(card, variant, b, s)
            nodes += rows
            summaries.append(summary)
        data = {
            "id": f"explain-{card['id']}",
            "family": card["family"],
            "head": card["head"],
            "config": card["config"],
            "batch": b,
            "seq": s,
            "summaries": summaries,
            "nodes": nodes,
            "versions": {
                "transformers": transformers.__version__,
                "torch": torch.__version__,
                "peft": peft.__version__,
            },
        }
        write_json(out / f"explain-{card['id']}.json", data)


# The point of a sampled config: a small step of more than one sequence and token.
SAMPLE_POINTS = ((2, 3),)


def sample_variant(entry: dict[str, Any]) -> Variant:
    """The variant a sampled config's record describes: a method at the settings peft took."""
    name = "-".join(str(entry.get(k)) for k in ("method", "rank", "targets", "feedforward", "virtual_tokens"))
    settings = {"num_virtual_tokens": entry["virtual_tokens"]} if "virtual_tokens" in entry else {}
    targets = tuple(entry["targets"]) if entry.get("targets") else None
    feed_forward = tuple(entry["feedforward"]) if entry.get("feedforward") is not None else None
    return Variant(name, entry["method"], entry.get("rank"), targets, feed_forward, settings)


def _sample_rows(model_entry: dict[str, Any]) -> list[dict[str, Any]] | None:
    """One sampled config's points under each variant peft accepted, or None where full fine-tuning's
    step does not run (or fits no point): the config is then passed over for the next one."""
    family, head = model_entry["family"], model_entry["head"]
    cfg = build_config(family, {**model_entry["config"], "attn_implementation": "eager"})
    if cfg.max_position_embeddings < max(s for _, s in SAMPLE_POINTS):
        return None
    rows: list[dict[str, Any]] = []
    for record in model_entry["variants"]:
        if "error" in record or (record["method"] == "prompt-tuning" and task_type(head) is None):
            continue
        variant = sample_variant(record)
        try:
            model = apply(model_of(head, cfg), variant, head).train()
            half = apply(model_of(head, cfg), variant, head).to(torch.bfloat16).train()
        except Exception as exc:  # a refusal the parameter reference records already
            print(f"  {family} {head} {variant.name}: {exc}"[:200], file=sys.stderr)
            continue
        shift = record.get("virtual_tokens", 0) if variant.method == "prompt-tuning" else 0
        settings = {k: record[k] for k in ("method", "rank", "targets", "feedforward", "virtual_tokens") if k in record}
        for b, s in SAMPLE_POINTS:
            if s + shift > cfg.max_position_embeddings:
                continue
            try:
                fp32 = measure(model, family, head, b, s, "meta")
                bf16 = measure(half, family, head, b, s, "meta", flops=False)
            except Exception as exc:  # a step transformers cannot run
                if variant.method == "full":
                    return None
                rows.append(settings | {"batch": b, "seq": s, "error": type(exc).__name__})
                continue
            rows.append(
                settings
                | {"batch": b, "seq": s, "forward": fp32["forward"], "backward": fp32["backward"]}
                | {"fp32": fp32["activations"], "bf16": bf16["activations"]}
            )
    return rows


def shown(entry: dict[str, Any]) -> bool:
    """Whether the site works out a sampled config's step: the card check takes it, and its step runs."""
    card = {"title": "sample", "family": entry["family"], "head": entry["head"], "config": entry["config"]}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sample.yaml"
        path.write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")
        try:
            return shows_step(load_card(path))
        except InputError:
            return False


def sample_reference(out: Path, families: list[str]) -> None:
    """``fine-tuning-compute/sample.json``: every method peft (or the head's choice) accepted on the first
    sampled config of each family and head in ``sample/fine-tuning.json`` whose full step runs at
    SAMPLE_POINTS, its random ranks and targets included. Prompt tuning runs on classifiers only, at
    s + n positions where they fit the table. Given families, it rewrites only theirs and keeps the
    others' entries, so a change to one family regenerates one family."""
    sample = json.loads((out.parent / "sample" / "fine-tuning.json").read_text(encoding="utf-8"))
    models, done = _kept_entries(out / "sample.json", families), set()
    for model_entry in sample["models"]:
        family, head = model_entry["family"], model_entry["head"]
        if device_of(family, head) != "meta" or (families and family not in families) or (family, head) in done:
            continue
        if not shown(model_entry):  # the tests could hold no figure of the site against it
            continue
        rows = _sample_rows(model_entry)
        if rows is None:  # a step of this config does not run, or fits no point: the next one
            continue
        done.add((family, head))
        models.append({"index": model_entry["index"], "family": family, "head": head, "points": rows})
        print(f"sample {family} {head} {model_entry['index']}: {len(rows)} points", file=sys.stderr)
    order = {_entry_key(entry): n for n, entry in enumerate(sample["models"])}
    models.sort(key=lambda entry: order[_entry_key(entry)])
    write_json(out / "sample.json", {"points": SAMPLE_POINTS, "models": models})


def _entry_key(entry: dict[str, Any]) -> tuple[str, str, int]:
    return entry["family"], entry["head"], entry["index"]


def _kept_entries(path: Path, families: list[str]) -> list[dict[str, Any]]:
    """The entries of families not being rewritten, from the file as it stands (none for a full run)."""
    if not families or not path.exists():
        return []
    entries = json.loads(path.read_text(encoding="utf-8"))["models"]
    return [entry for entry in entries if entry["family"] not in families]


def print_point(card: dict[str, Any], head: str, b: int, s: int) -> None:
    family, cfg = built(card, head)
    for variant in variants(family, head):
        model = apply(model_of(head, cfg), variant, head).train()
        fp32 = measure(model, family, head, b, s, "meta")
        half = apply(model_of(head, cfg), variant, head).to(torch.bfloat16).train()
        bf16 = measure(half, family, head, b, s, "meta", flops=False)
        trainable, total = trainable_of(model)
        figures = f"forward {fp32['forward']:,}; backward {fp32['backward']:,}"
        figures += f"; fp32 {fp32['activations']:,} B; bf16 {bf16['activations']:,} B"
        print(f"{file_id(card, head)} {variant.name}: trainable {trainable:,} of {total:,}; {figures}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--explain", action="store_true", help="write the tiny classifiers' nodes instead")
    parser.add_argument("--at", nargs=2, type=int, metavar=("B", "S"), help="print one point and write nothing")
    parser.add_argument("--sample", action="store_true", help="write the sampled configs' steps instead")
    parser.add_argument("cards", nargs="*", help="only these card ids, or with --sample these families (default: all)")
    args = parser.parse_args(argv)
    transformers.logging.set_verbosity_error()
    warnings.simplefilter("ignore")
    if args.explain:
        write_explain(args.out)
        return 0
    if args.sample:
        sample_reference(args.out, args.cards)
        return 0
    for path, head in CARDS:
        card = load(ROOT / path)
        if args.cards and file_id(card, head) not in args.cards:
            continue
        if args.at:
            print_point(card, head, *args.at)
            continue
        print(f"{file_id(card, head)}:", file=sys.stderr)
        write_json(args.out / f"{file_id(card, head)}.json", card_reference(card, head))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
