"""Write the ground truth for fine-tuning: what each method trains, as peft 0.21 and transformers say.

Run with the ``reference`` extra installed (torch, transformers, peft), normally through
``make reference``. Each model is built on the meta device by ``tools/reference.py``'s
``build_config`` and ``model_of``: no weights, no network. Per model, these variants:

* ``full``: every parameter the class builds trainable; ``head``: every parameter outside
  ``base_model_prefix`` (a head weight tied to an embedding is named once, under the embedding,
  so it stays frozen); ``bitfit``: the base model's parameters whose name ends in ``bias``
  (a relative attention's ``q_bias`` and ``v_bias`` too), and the head. These three set ``requires_grad`` here.
  A base class has no head: ``head`` records an error.
* ``lora`` with peft's default targets and r = 8, and two random ones; ``ia3`` with peft's defaults
  and one random; ``prompt-tuning`` with 20 virtual tokens and a random number. These ask
  ``peft.get_peft_model`` and record ``get_nb_trainable_parameters()``, the modules peft wrapped,
  and the trainable names; or the exception peft raised.

A random variant draws from the model's module-name suffixes (the last component, sometimes the
last two), seeded by the card id through hashlib, so every run draws the same. The first LoRA draw
takes suffixes naming only ``Linear`` or ``Embedding`` modules, the IA³ draw only ``Linear`` ones,
and the second LoRA draw any suffix, so that peft's refusals are recorded too.

Task types: ``SEQ_CLS`` for a sequence-classification head. For the others LoRA and IA³ get none.
Prompt tuning needs one (without, peft raises ``KeyError: None``): ``FEATURE_EXTRACTION``.

What peft 0.21 does, as these files show:

* LoRA adapts ``Linear``, ``Embedding``, ``Conv1d/2d/3d``, transformers' ``Conv1D`` and
  ``MultiheadAttention``. A target naming a ``LayerNorm``, a dropout or a container raises
  ``ValueError`` ("is not supported"), even beside a valid target. A target that matches
  nothing raises ``NoMatchingPeftModuleError``.
* A target matches every module whose name equals it or ends in ``.`` + it: ``dense`` matches
  the pooler's ``dense`` too, and ``output.dense`` both attention and feed-forward outputs.
* IA³ adapts ``Linear``, ``Conv2d`` and transformers' ``Conv1D`` only: never ``Embedding``.
* ``SEQ_CLS`` wraps in ``modules_to_save`` every module whose name ends in ``classifier`` or
  ``score``, as a plain string: a ``pre_classifier`` too. The copy trains and the
  original stays, so ``get_nb_trainable_parameters()``'s total counts the classifier twice: it
  is the model's total plus the trainable count, for every method. A target inside a saved
  module is skipped; if nothing else matches, peft raises ``NoMatchingPeftModuleError``.
* Prompt tuning's ``token_dim`` is the config's ``hidden_size``. Where the word embeddings have
  another width (a factorized embedding, a bottleneck, or an ``embedding_size`` given) the count
  is n × hidden_size, and the forward fails:
  the prompts cannot be joined to the embeddings. ``token_dim`` and ``embedding_dim``
  record both widths. Its total counts the prompt table too. A config whose ``to_dict()`` has
  ``dim`` instead of ``hidden_size`` is refused ("Please specify `token_dim`").
* A masked-LM or pre-training head has no prompt-tuning task type that trains: ``CAUSAL_LM``
  is refused (no ``prepare_inputs_for_generation``), and ``FEATURE_EXTRACTION`` or ``TOKEN_CLS``
  pass labels of s positions beside logits of s + n, so the loss fails.
* peft has default targets for a few model types only (its ``constants.py``; each family's
  ``peft`` declaration copies them). Any other family records peft's ``ValueError``.

Output: ``tests/reference/fine-tuning/<id>.json`` for every catalog card of a family transformers
implements, and ``tests/reference/sample/fine-tuning.json`` for up to three accepted configs per
family and head of ``tests/reference/sample/configs.json`` (``index``: its place in that list). Each
model records ``modules`` (every ``named_modules()`` name but the root, with its class) and one
line per variant. Run time: about 5 minutes of wall time on a loaded machine, 100 s of CPU.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import random
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import peft
import torch
import transformers
import yaml
from peft import IA3Config, LoraConfig, PromptTuningConfig, TaskType, get_peft_model

from reference import build_config, implemented, model_of

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "reference"
SAMPLE_SEED = 44
SAMPLE_PER_HEAD = 3
DEFAULT_RANK = 8
DEFAULT_TOKENS = 20


def task_type(head: str, prompt: bool = False) -> TaskType | None:
    """peft's task type for a head: a classifier's, or for prompt tuning the one that prepends prompts."""
    if head == "sequence-classification":
        return TaskType.SEQ_CLS
    return TaskType.FEATURE_EXTRACTION if prompt else None


def error_of(exc: BaseException) -> dict[str, Any]:
    """An exception as data: its class and the first line of its message."""
    lines = str(exc).splitlines()
    return {"error": {"type": type(exc).__name__, "message": lines[0] if lines else ""}}


def module_list(model: torch.nn.Module) -> list[list[str]]:
    """Every module but the root, in registration order, with its class name."""
    return [[name, type(module).__name__] for name, module in model.named_modules() if name]


def suffixes(model: torch.nn.Module) -> dict[str, list[str]]:
    """The module names' suffixes a user may target: every one, those naming only Linear or Embedding
    modules (what LoRA adapts), and those naming only Linear modules (what IA³ adapts).

    A suffix is the last component, or the last two, of a module name; a list index ("0") is none."""
    kinds: dict[str, set[type]] = defaultdict(set)
    for name, module in model.named_modules():
        parts = name.split(".")
        for size in (1, 2):
            tail = parts[-size:]
            if len(parts) >= size and not any(p.isdigit() or not p for p in tail):
                kinds[".".join(tail)].add(_kind(module))
    every = sorted(kinds)
    lora = [s for s in every if kinds[s] <= {torch.nn.Linear, torch.nn.Embedding}]
    ia3 = [s for s in every if kinds[s] == {torch.nn.Linear}]
    return {"every": every, "lora": lora or every, "ia3": ia3 or every}


def _kind(module: torch.nn.Module) -> type:
    for kind in (torch.nn.Linear, torch.nn.Embedding):
        if isinstance(module, kind):
            return kind
    return torch.nn.Module


def draw_targets(rng: random.Random, pool: list[str]) -> list[str]:
    """One to four distinct suffixes; a two-component one about a third of the time."""
    singles = [s for s in pool if "." not in s]
    doubles = [s for s in pool if "." in s]
    wanted = rng.randint(1, min(4, len(pool)))
    targets: list[str] = []
    while len(targets) < wanted:
        source = doubles if doubles and (rng.random() < 1 / 3 or not singles) else singles
        choice = rng.choice(source)
        if choice not in targets:
            targets.append(choice)
    return targets


def requires_grad_variant(model: torch.nn.Module, method: str, trains: Callable[[str], bool]) -> dict[str, Any]:
    """Set requires_grad by name on the transformers model and count what trains."""
    built = {name: p.requires_grad for name, p in model.named_parameters()}
    for name, p in model.named_parameters():
        p.requires_grad_(built[name] and trains(name))
    names = sorted(name for name, p in model.named_parameters() if p.requires_grad)
    entry = {
        "method": method,
        "task_type": None,
        "trainable": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "total": sum(p.numel() for p in model.parameters()),
        "trainable_names": names,
    }
    for name, p in model.named_parameters():
        p.requires_grad_(built[name])
    return entry


def own_variants(model: torch.nn.Module, head: str) -> list[dict[str, Any]]:
    """``full``, ``head`` and ``bitfit``, which need no peft.

    A tensor lies in the base model when any of its names does: a head weight tied to the token table
    is the table, frozen with it, even where the head is registered first and so names it first.
    """
    prefix = model.base_model_prefix + "."
    based = {id(p) for name, p in model.named_parameters(remove_duplicate=False) if name.startswith(prefix)}
    tensors = dict(model.named_parameters())

    def in_base(name: str) -> bool:
        return head == "base" or id(tensors[name]) in based

    variants = [requires_grad_variant(model, "full", lambda name: True)]
    if head == "base":
        reason = ValueError(f"{type(model).__name__} is a base model: it has no head outside its base model")
        variants += [{"method": "head", "task_type": None} | error_of(reason)]
    else:
        variants.append(requires_grad_variant(model, "head", lambda name: not in_base(name)))
    variants.append(requires_grad_variant(model, "bitfit", lambda name: not in_base(name) or name.endswith("bias")))
    return variants


def peft_variant(build: Callable[[], torch.nn.Module], entry: dict[str, Any], config: Any) -> dict[str, Any]:
    """Wrap a fresh model with peft and record what trains, or peft's error."""
    model = build()
    try:
        wrapped = get_peft_model(model, config)
    except Exception as exc:  # peft's refusal is the datum
        return entry | error_of(exc)
    trainable, total = wrapped.get_nb_trainable_parameters()
    inner = wrapped.get_base_model()
    tuner = wrapped.base_model
    entry |= {
        "trainable": trainable,
        "total": total,
        "adapted": sorted(getattr(tuner, "targeted_module_names", [])) if tuner is not inner else [],
        "trainable_names": sorted(name for name, p in wrapped.named_parameters() if p.requires_grad),
    }
    saved = sorted(
        name for name, module in inner.named_modules() if isinstance(module, peft.utils.other.AuxiliaryTrainingWrapper)
    )
    if saved:
        entry["saved_modules"] = saved
    if isinstance(config, PromptTuningConfig):
        embeddings = wrapped.word_embeddings
        entry["token_dim"] = config.token_dim
        entry["embedding_dim"] = embeddings.weight.shape[1] if embeddings is not None else None
    return entry


def variants_of(build: Callable[[], torch.nn.Module], head: str, seed_text: str) -> dict[str, Any]:
    """Every variant of one model, and its module list."""
    model = build()
    pools = suffixes(model)
    rng = random.Random(int.from_bytes(hashlib.sha256(seed_text.encode()).digest()[:8], "big"))
    found: dict[str, Any] = {"class": type(model).__name__, "base_model_prefix": model.base_model_prefix}
    found["modules"] = module_list(model)
    variants = own_variants(model, head)
    del model

    seq_cls = task_type(head)
    lora_draws = [(DEFAULT_RANK, None)]
    lora_draws += [(rng.randint(1, 64), draw_targets(rng, pool)) for pool in (pools["lora"], pools["every"])]
    for rank, targets in lora_draws:
        entry = {"method": "lora", "rank": rank, "targets": targets, "task_type": _name(seq_cls)}
        config = LoraConfig(r=rank, target_modules=targets and list(targets), task_type=seq_cls)
        variants.append(peft_variant(build, entry, config))

    ia3_targets = draw_targets(rng, pools["ia3"])
    feedforward = sorted(rng.sample(ia3_targets, rng.randint(0, len(ia3_targets))), key=ia3_targets.index)
    for targets, ff in ((None, None), (ia3_targets, feedforward)):
        entry = {"method": "ia3", "targets": targets, "feedforward": ff, "task_type": _name(seq_cls)}
        config = IA3Config(
            target_modules=targets and list(targets), feedforward_modules=ff and list(ff), task_type=seq_cls
        )
        variants.append(peft_variant(build, entry, config))

    prompt = task_type(head, prompt=True)
    for tokens in (DEFAULT_TOKENS, rng.randint(1, 100)):
        entry = {"method": "prompt-tuning", "virtual_tokens": tokens, "task_type": _name(prompt)}
        variants.append(peft_variant(build, entry, PromptTuningConfig(num_virtual_tokens=tokens, task_type=prompt)))
    return found | {"variants": variants}


def _name(kind: TaskType | None) -> str | None:
    return None if kind is None else kind.value


def builder(family: str, head: str, config: dict[str, Any]) -> Callable[[], torch.nn.Module]:
    """A function that builds a fresh copy of the model and its config: peft changes the model it wraps."""
    return lambda: model_of(head, build_config(family, config))


def write_model(path: Path, data: dict[str, Any]) -> None:
    """One key per line; a module or a variant per line, so that a diff shows which changed."""
    lines = []
    for key, value in data.items():
        if key in ("modules", "variants", "models"):
            items = ",\n".join("  " + json.dumps(item, sort_keys=True) for item in value)
            lines.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, sort_keys=True)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")


def versions() -> dict[str, str]:
    return {"peft": peft.__version__, "torch": torch.__version__, "transformers": transformers.__version__}


def write_catalog(cards: list[Path], out: Path) -> None:
    """``fine-tuning/<id>.json`` for each catalog card of a family transformers implements."""
    for path in cards:
        card = yaml.safe_load(path.read_text(encoding="utf-8"))
        card_id, family, head = card.get("id", path.stem), card["family"], card["head"]
        if not implemented(family):  # no transformers class: peft has nothing to wrap
            continue
        start = time.perf_counter()
        found = variants_of(builder(family, head, card.get("config") or {}), head, card_id)
        data = {"id": card_id, "family": family, "head": head} | found | {"versions": versions()}
        write_model(out / "fine-tuning" / f"{card_id}.json", data)
        print(f"{card_id}: {time.perf_counter() - start:.1f} s", file=sys.stderr)


def write_sample(out: Path) -> None:
    """``sample/fine-tuning.json``: up to three accepted sample configs per family and head."""
    sample = json.loads((out / "sample" / "configs.json").read_text(encoding="utf-8"))
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, entry in enumerate(sample["configs"]):
        if entry["accepted"]:
            groups[entry["family"], entry["head"]].append(index)
    rng = random.Random(SAMPLE_SEED)
    models = []
    for (family, head), indices in sorted(groups.items()):
        for index in sorted(rng.sample(indices, min(SAMPLE_PER_HEAD, len(indices)))):
            entry = sample["configs"][index]
            found = variants_of(builder(family, head, entry["config"]), head, f"sample:{index}")
            models.append({"index": index, "family": family, "head": head, "config": entry["config"]} | found)
        print(f"sample {family} {head}", file=sys.stderr)
    data = {"about": {"seed": SAMPLE_SEED, "per_head": SAMPLE_PER_HEAD} | versions(), "models": models}
    write_model(out / "sample" / "fine-tuning.json", data)


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # peft prints sets of target names in its messages: a fixed hash seed fixes their order.
        os.execve(sys.executable, [sys.executable, *sys.argv], os.environ | {"PYTHONHASHSEED": "0"})
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("cards", nargs="*", type=Path, help="only these cards, and no sample (default: the catalog)")
    parser.add_argument("--sample-only", action="store_true", help="only rewrite sample/fine-tuning.json")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # peft's and transformers' advice on real training runs
    transformers.logging.set_verbosity_error()
    logging.getLogger("peft").setLevel(logging.ERROR)
    start = time.perf_counter()
    if not args.sample_only:
        write_catalog(args.cards or sorted((ROOT / "models").glob("*.yaml")), args.out)
    if not args.cards:
        write_sample(args.out)
    print(f"fine-tuning reference: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
