"""Write the ground-truth files that the test suite and the generator read.

Run with the `reference` extra installed (torch and transformers), normally through
`make reference`. Two kinds of file come out, both committed:

* ``tests/reference/<id>.json``: for each card, the transformers model class built on the
  meta device (no weights, no network) and its ``named_parameters()``: names in order,
  shapes, counts, the tied tensors and the total.
* ``tests/reference/config-json/<id>.json``: the ``config.json`` that transformers writes for
  that card's config, to test ``python -m generator import`` on real files.
* ``tests/reference/fine-tuned/<name>.json``: for each real ``config.json`` of a fine-tuned model
  in ``tests/fine-tuned-configs/``, the class its ``architectures`` names, built from that file,
  the head transformers' Auto classes map that class to, and its inventory.
* ``tests/reference/classes/<id>.json``: for each catalog card with published figures, the
  total of every Auto class built on the card's config, with the pooler's share, and of each
  of the card's ``also_counted`` entries (its config with some keys changed): the counts a
  published figure may stand for.
* ``generator/counting/families/transformers/<family>.json``: for each family, the keys its
  transformers config class accepts and their defaults, so that a card can leave keys out
  and the generator can tell an unknown key from an ignored one without importing torch.

This script reads the cards with plain ``yaml.safe_load``. From the generator it reads only
what a family declares about its inputs (``Family.ground_truth``, ``own_config``), never a
count: it is an independent check of the generator's counting, not a copy of it.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

import torch
import transformers
import yaml
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForMaskedLM,
    AutoModelForPreTraining,
    AutoModelForSequenceClassification,
    GenerationConfig,
    PretrainedConfig,
)

ROOT = Path(__file__).resolve().parent.parent
# This clone's generator, ahead of the copy that pip installed into the reference venv.
sys.path.insert(0, str(ROOT))
from generator.counting.families import FAMILIES, declaration  # noqa: E402
from generator.counting.ground_truth import ABSENT as ABSENT  # noqa: E402  (for the other tools)
from generator.counting.ground_truth import GroundTruth  # noqa: E402

AUTO_CLASSES = {
    "base": AutoModel,
    "pretraining": AutoModelForPreTraining,
    "masked-lm": AutoModelForMaskedLM,
    "sequence-classification": AutoModelForSequenceClassification,
}
FINE_TUNED = ROOT / "tests" / "fine-tuned-configs"


def build_config(family: str, config: dict[str, Any]) -> PretrainedConfig:
    """The transformers config object for a card's config mapping."""
    kwargs = {k: v for k, v in config.items() if k != "model_type"}
    return AutoConfig.for_model(family, **kwargs)


def model_of(head: str, cfg: PretrainedConfig) -> torch.nn.Module:
    """Instantiate the transformers class for a card on the meta device."""
    with torch.device("meta"):
        return AUTO_CLASSES[head].from_config(cfg)


def inventory(model: torch.nn.Module) -> dict[str, Any]:
    """List every parameter in registration order; repeated objects become tied entries."""
    first_name: dict[int, str] = {}
    tensors: list[dict[str, Any]] = []
    tied: list[dict[str, str]] = []
    for name, param in model.named_parameters(remove_duplicate=False):
        key = id(param)
        if key in first_name:
            tied.append({"name": name, "tied_to": first_name[key]})
            continue
        first_name[key] = name
        tensors.append({"name": name, "shape": list(param.shape), "count": param.numel()})
    total = sum(t["count"] for t in tensors)
    assert total == sum(p.numel() for p in model.parameters()), "tied parameters were not deduplicated"
    found: dict[str, Any] = {"class": type(model).__name__, "total": total}
    # A parameter made with requires_grad False (a frozen sinusoid table) has no gradient and no optimizer
    # state: recorded only where there is one, so that every other file stays as it was.
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    if trainable != total:
        found["trainable"] = trainable
    return found | {"tensors": tensors, "tied": tied}


def fine_tuned_reference(path: Path) -> dict[str, Any]:
    """Build the class a real config.json's ``architectures`` names, as transformers loads that file."""
    cfg = AutoConfig.from_pretrained(str(path))
    class_name = cfg.architectures[0]
    model_class = getattr(transformers, class_name)
    with torch.device("meta"):
        model = model_class(cfg)
    # The head is the Auto class that maps this config class to the named class, as transformers says.
    heads = [head for head, auto in AUTO_CLASSES.items() if auto._model_mapping.get(type(cfg), None) is model_class]
    data = {"source": path.relative_to(ROOT).as_posix(), "head": heads[0], "num_labels": cfg.num_labels}
    data |= inventory(model)
    data["versions"] = {"transformers": transformers.__version__, "torch": torch.__version__}
    return data


def write_fine_tuned(out: Path) -> None:
    """Write a reference file for every config.json in tests/fine-tuned-configs/."""
    for path in sorted(FINE_TUNED.glob("*.json")):
        data = fine_tuned_reference(path)
        write_json(out / "fine-tuned" / path.name, data)
        print(f"{path.stem}: {data['class']} {data['total']:,}", file=sys.stderr)


def config_schema(family: str) -> dict[str, Any]:
    """Describe the keys a family's config class accepts, with their defaults."""
    config_class = type(AutoConfig.for_model(family))
    params = inspect.signature(config_class.__init__).parameters
    defaults = {
        name: p.default
        for name, p in params.items()
        if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    }
    # Keys every config.json may carry that PretrainedConfig consumes or sets itself.
    bookkeeping = set(PretrainedConfig().to_dict())
    bookkeeping |= {"num_labels", "torch_dtype", "name_or_path", "_commit_hash", "attn_implementation"}
    bookkeeping |= set(GenerationConfig._get_default_generation_params())
    resolved = config_class().to_dict()
    # Attributes the class derives in __post_init__ and writes into config.json (a derived width such
    # as true_hidden_size): a value given for one is kept by PretrainedConfig and wins, so a card may
    # give it; null means "derived", and the family decides what a given value does.
    derived = {k: None for k in resolved if k not in defaults and k not in bookkeeping}
    derived |= dict.fromkeys(ground_truth(family).derived)
    return {
        "family": family,
        "config_class": config_class.__name__,
        "transformers_version": transformers.__version__,
        "defaults": {k: _jsonable(resolved.get(k, v)) for k, v in sorted(defaults.items()) if k not in derived}
        | derived,
        "default_num_labels": config_class().num_labels,
        # Other names the class accepts for a key (hidden_size for a config whose own name is dim).
        "aliases": dict(sorted(getattr(config_class, "attribute_map", {}).items())),
        "bookkeeping": sorted(bookkeeping - set(defaults)),
        # What the class's strict dataclass checks of each value it is given (huggingface_hub's
        # type_validator): the fields annotated with types, in the notation of generator/cards/types.py.
        "types": config_types(config_class),
        "activations": activation_keys(family, config_class),
    }


PROBE = "no-such-function"


def _builds(family: str, head: str, config: dict[str, Any]) -> bool:
    try:
        model_of(head, AutoConfig.for_model(family, **config))
    except KeyError:
        return False
    return True


def implemented(family: str) -> bool:
    """Whether transformers implements the family; one that does not declares its own config keys."""
    return declaration(family).own_config is None


def transformers_families() -> list[str]:
    """The families transformers implements, by name: the order of the config sample."""
    return sorted(name for name, f in FAMILIES.items() if f.ground_truth is not None)


def heads_of(family: str) -> tuple[str, ...]:
    """The heads the site counts for the family, as its module declares them."""
    return tuple(head.value for head in declaration(family).heads)


def ground_truth(family: str) -> GroundTruth:
    """What the family declares the reference tools build and run (``Family.ground_truth``)."""
    truth = declaration(family).ground_truth
    if truth is None:
        raise SystemExit(f"{family}: its module declares no ground_truth (see docs/adding-a-family.md)")
    return truth


def activation_keys(family: str, config_class: type) -> dict[str, Any]:
    """The names transformers' ACT2FN maps to an activation, and for each head the text keys its class
    looks up there when it is built, with its default layers (``keys``) and with none
    (``keys_without_layers``: a head or a shared group that looks the key up itself). Found by
    building each head, on the meta device, with each text key naming no function (the lookup
    raises KeyError) and naming gelu (it builds: the key is not a norm's name). A key read only in
    the forward (a pooler's pooler_hidden_act) is not among them: the model builds."""
    from transformers.activations import ACT2FN

    text_keys = [key for key, kind in config_types(config_class).items() if kind == "str"]
    found: dict[str, dict[str, list[str]]] = {"keys": {}, "keys_without_layers": {}}
    for field, layers in (("keys", {}), ("keys_without_layers", {ground_truth(family).layers_key: 0})):
        for head in AUTO_CLASSES:
            found[field][head] = [key for key in text_keys if _looks_up(family, head, {**layers, key: PROBE})]
    return {"names": sorted(ACT2FN), **found}


def _looks_up(family: str, head: str, config: dict[str, Any]) -> bool:
    """Whether building the head raises KeyError on the probe name, and builds with gelu in its place."""
    try:
        model_of(head, AutoConfig.for_model(family, **config))
    except KeyError as error:
        with_gelu = {k: "gelu" if v == PROBE else v for k, v in config.items()}
        return PROBE in str(error) and _builds(family, head, with_gelu)
    except Exception:  # no class for this head, or a config transformers refuses for another reason
        return False
    return False


_SIMPLE = {int: "int", float: "float", str: "str", bool: "bool", type(None): "none", dict: "dict", list: "list"}


def config_types(config_class: type) -> dict[str, Any]:
    """Each field whose annotation the strict dataclass validates, as data. A field annotated by a
    string (PreTrainedConfig's own, from a module with postponed annotations) is not validated, and left out."""
    return {
        field.name: _type_json(field.type)
        for field in dataclasses.fields(config_class)
        if not isinstance(field.type, (str, typing.ForwardRef)) and field.type is not Any
    }


def _type_json(annotation: Any) -> Any:
    """An annotation in the notation of generator/cards/types.py; anything else stops the script."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is None or annotation in _SIMPLE:
        return _SIMPLE[type(None) if annotation is None else annotation]
    if annotation is Any:
        return "any"
    if typing.is_typeddict(annotation):
        return "dict"  # RopeParameters: the card check takes any mapping, as the strict dataclass does
    if origin in (typing.Union, types.UnionType):
        # A nested config class (a folding model's own config) or a tuple (a list of vocabulary
        # pieces) is no value a card can write: JSON and YAML have no tuple. Its other members are.
        members = [a for a in args if not _unwritable(a)]
        return {"union": [_type_json(a) for a in members]}
    if origin is typing.Literal:
        return {"literal": list(args)}
    if origin is list and len(args) == 1:
        return {"list": _type_json(args[0])}
    if origin is dict and len(args) == 2:
        return {"dict": [_type_json(args[0]), _type_json(args[1])]}
    raise SystemExit(f"{annotation!r}: no notation for this annotation in generator/cards/types.py")


def _unwritable(annotation: Any) -> bool:
    """A type no card value can have: a config class, or a tuple."""
    if typing.get_origin(annotation) is tuple:
        return True
    return isinstance(annotation, type) and issubclass(annotation, PretrainedConfig)


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except TypeError:
        return repr(value)
    return value


def class_counts(card: dict[str, Any]) -> dict[str, Any]:
    """Every Auto class's total on a card's config, and each ``also_counted`` entry's."""
    family, config = card["family"], card.get("config") or {}
    classes = []
    for head in AUTO_CLASSES:
        try:
            model = model_of(head, build_config(family, config))
        except ValueError:  # the family has no class for this head (no pre-training class)
            continue
        classes.append({"head": head, **_class_total(model)})
    others = []
    for entry in card.get("also_counted") or []:
        head = entry.get("head", card["head"])
        model = model_of(head, build_config(family, {**config, **(entry.get("config") or {})}))
        others.append({"label": entry["label"], "head": head, **_class_total(model)})
    return {"id": card["id"], "family": family, "classes": classes, "also_counted": others}


def _class_total(model: torch.nn.Module) -> dict[str, Any]:
    """A model's class, its total, and how much of it sits in modules named ``pooler``."""
    total = sum(p.numel() for p in model.parameters())
    pooler = sum(p.numel() for name, p in model.named_parameters() if "pooler" in name.split("."))
    return {"class": type(model).__name__, "total": total, "pooler": pooler}


def write_class_counts(paths: list[Path], out: Path) -> None:
    """Write ``classes/<id>.json`` for each card that publishes a figure and is a transformers model."""
    for path in paths:
        card = yaml.safe_load(path.read_text(encoding="utf-8"))
        card.setdefault("id", path.stem)
        if not card.get("claims") or not implemented(card["family"]):  # own_reference.py writes those
            continue
        data = class_counts(card)
        write_json(out / "classes" / f"{card['id']}.json", data)
        print(f"{card['id']}: {', '.join(c['class'] for c in data['classes'])}", file=sys.stderr)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write one key per line and one list item per line, so that diffs show tensors."""
    lines = []
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items = ",\n".join("  " + json.dumps(item) for item in value)
            lines.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, sort_keys=True)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, nargs="+", default=[ROOT / "models", ROOT / "tests" / "cards"])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "reference")
    parser.add_argument("--schemas", type=Path, default=ROOT / "generator" / "counting" / "families" / "transformers")
    parser.add_argument("cards", nargs="*", type=Path, help="only these cards (default: all)")
    parser.add_argument("--schemas-only", nargs="+", metavar="FAMILY", help="only rewrite these families' config files")
    parser.add_argument("--fine-tuned-only", action="store_true", help="only rewrite the fine-tuned config references")
    parser.add_argument("--classes-only", action="store_true", help="only rewrite classes/<id>.json (catalog cards)")
    args = parser.parse_args(argv)

    if args.fine_tuned_only:
        write_fine_tuned(args.out)
        return 0

    if args.schemas_only:
        for family in args.schemas_only:
            write_json(args.schemas / f"{family}.json", config_schema(family))
        return 0
    catalog = args.cards or sorted((ROOT / "models").glob("*.yaml"))
    if args.classes_only:
        write_class_counts(catalog, args.out)
        return 0
    cards = args.cards or sorted(path for folder in args.models for path in folder.glob("*.yaml"))
    families: set[str] = set()
    for path in cards:
        card = yaml.safe_load(path.read_text(encoding="utf-8"))
        card_id = card.get("id", path.stem)
        family, head = card["family"], card["head"]
        if not implemented(family):  # a family transformers lacks: tools/own_reference.py
            continue
        families.add(family)
        cfg = build_config(family, card.get("config") or {})
        model = model_of(head, cfg)
        # The config.json that save_pretrained would write, for the import tests.
        config_json = args.out / "config-json" / f"{card_id}.json"
        config_json.parent.mkdir(parents=True, exist_ok=True)
        config_json.write_text(cfg.to_json_string(use_diff=False), encoding="utf-8")
        data = {"id": card_id, "family": family, "head": head, **inventory(model)}
        data["versions"] = {"transformers": transformers.__version__, "torch": torch.__version__}
        write_json(args.out / f"{card_id}.json", data)
        print(f"{card_id}: {data['class']} {data['total']:,}", file=sys.stderr)
    for family in sorted(families):
        write_json(args.schemas / f"{family}.json", config_schema(family))
    write_class_counts(catalog, args.out)
    if not args.cards:
        write_fine_tuned(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
