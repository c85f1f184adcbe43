"""Write ``tests/reference/sample/configs.json``: random configs of every family and head, built by transformers.

Run with the ``reference`` extra installed, normally through ``make reference``. For each
family and head, a seeded random draw of small configs, with the values transformers gives a
special meaning (-1, 0, null, the legacy ``"p2c|c2p"`` string, keys another key makes
irrelevant) drawn far more often than their share. Each config is built on the meta device;
the file records whether transformers accepted it and, if it did, the class, the total and
every tensor (name and shape) with the tied ones. ``tests/test_config_sample.py`` checks,
without torch, that the card check accepts exactly these configs and counts each one as
transformers did. ``types.json`` beside it holds a second set: each key whose type the config
class checks, set to a value of every JSON kind in turn, with transformers' verdict; ``ranges.json``
each probability key of every family and head set below 0, above 1 and to NaN, with and without layers,
with transformers' verdict and, for a model it built, whether a training step ran.

What to draw for each family (its own keys, their sentinels, its pinned configs, the order of
the draws) is the family's ``GroundTruth``, read from the registry as ``tools/reference.py``
does; the verdicts and counts are transformers' own.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import warnings
from pathlib import Path
from typing import Any

import transformers
from compute_reference import measure
from transformers import AutoConfig

from reference import (
    ABSENT,
    build_config,
    config_types,
    ground_truth,
    heads_of,
    inventory,
    model_of,
    transformers_families,
)

ROOT = Path(__file__).resolve().parent.parent
SEED = 10
PER_HEAD = 16  # configs drawn for each family and head: about 540 in all, under 1 MB
FAMILY_ORDER = transformers_families()  # each drawn from a stream of its own (family_stream)

# Small sizes, so that the file stays small; the head counts include some that do not divide.
# key -> (ordinary values, sentinels); ABSENT leaves the key to the config class. A size's
# sentinels are an empty dimension (0) and, for a count, -1 (range(-1) is empty). A family
# draws them under its own names (GroundTruth.size_keys), beside its own keys (GroundTruth.draws).
SIZES: dict[str, tuple[list[Any], list[Any]]] = {
    "vocab_size": ([30, 50], [0]),
    "hidden_size": ([8, 12, 16], [0]),
    "num_attention_heads": ([1, 2, 4, 3], [0, -1]),
    "num_hidden_layers": ([1, 2], [0, -1]),
    "intermediate_size": ([12, 20], [0]),
    "max_position_embeddings": ([10, 16], [0]),
}
SENTINEL_SHARE = 0.3  # how often a key takes one of its sentinels
# Counts whose 0 and -1 transformers builds but the site refuses (tests/test_config_sample.py):
# drawn less often, so that most configs are still compared tensor for tensor. A family adds its
# own (GroundTruth.rare).
RARE_SHARE = 0.1
RARE_SIZES = ("num_hidden_layers", "num_attention_heads")

# key -> (ordinary values, sentinels); ABSENT leaves the key to the config class.
LABELS: dict[str, tuple[list[Any], list[Any]]] = {
    "num_labels": ([1, 3], [ABSENT, ABSENT, 0, -1]),
}


def pinned() -> list[tuple[str, str, dict[str, Any]]]:
    """Every family's pinned configs (GroundTruth.pinned): drawn whatever the seed gives."""
    return [(name, p.head, dict(p.config)) for name in FAMILY_ORDER for p in ground_truth(name).pinned]


def family_stream(seed: int, family: str) -> random.Random:
    """A family's own seeded stream: adding or changing one family leaves every other family's draws as they were."""
    return random.Random(f"{seed}:{family}")


# PretrainedConfig refuses a single-label classification with one label; the other problem types take
# any number. One config of each kind per family, after the draws (so that the drawn ones keep their places).
PROBLEM_TYPES = (
    ("single_label_classification", 1),
    ("single_label_classification", 3),
    ("regression", 1),
    ("regression", 3),
    ("multi_label_classification", 1),
    ("multi_label_classification", 3),
)


def small_config(family: str) -> dict[str, Any]:
    """A small model of the family, under its own names for the sizes, with the token ids it declares."""
    truth = ground_truth(family)
    small = {
        truth.size_keys.get(k, k): v for k, v in {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40}.items()
    }
    small.update(truth.token_ids)
    return small


def problem_type_configs() -> list[tuple[str, str, dict[str, Any]]]:
    """A small classifier of every family with each problem type and number of labels of PROBLEM_TYPES."""
    configs = []
    for family in FAMILY_ORDER:
        small = small_config(family)
        for problem, labels in PROBLEM_TYPES:
            config = {**small, "problem_type": problem, "num_labels": labels}
            configs.append((family, "sequence-classification", config))
    return configs


def draw(rng: random.Random, family: str, head: str) -> dict[str, Any]:
    """One small config; a key takes one of its sentinels about a third of the time."""
    truth = ground_truth(family)
    space: dict[str, tuple[Any, Any]] = {truth.size_keys.get(key, key): choices for key, choices in SIZES.items()}
    space.update(truth.draws)
    if head == "sequence-classification":
        space.update(LABELS)
    rare = {truth.size_keys.get(key, key) for key in RARE_SIZES} | set(truth.rare)
    config: dict[str, Any] = {}
    for key, (ordinary, sentinels) in space.items():
        share = RARE_SHARE if key in rare else SENTINEL_SHARE
        pick = rng.choice(sentinels) if rng.random() < share else rng.choice(ordinary)
        if pick is not ABSENT:
            config[key] = pick
    # Token ids the family declares and the space does not draw: the class's defaults exceed a small vocabulary.
    config.update({key: value for key, value in truth.token_ids.items() if key not in space})
    return config


def built(family: str, head: str, config: dict[str, Any]) -> dict[str, Any]:
    """What transformers does with a config: the model's tensors, or the error it raised."""
    entry: dict[str, Any] = {"family": family, "head": head, "config": config}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = model_of(head, build_config(family, config))
    except Exception as exc:  # any exception: transformers refused the config
        entry["accepted"] = False
        entry["error"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:160]}"
        return entry
    found = inventory(model)
    entry["accepted"] = True
    entry["class"] = found["class"]
    entry["total"] = found["total"]
    entry["tensors"] = [[t["name"], t["shape"]] for t in found["tensors"]]
    entry["tied"] = [[t["name"], t["tied_to"]] for t in found["tied"]]
    return entry


# Values of every JSON kind, each given in turn to every key a config class checks the type of.
WRONG_TYPES: tuple[Any, ...] = ("text", "1e-12", None, True, 1, 0.5, [1], {"a": 1})
TYPES_HEAD = "sequence-classification"  # the head that reads the most keys (its classifier's dropout)


def typed_configs() -> list[tuple[str, str, str, dict[str, Any]]]:
    """A small classifier of every family with one typed key set to each of WRONG_TYPES: what the
    class's strict dataclass takes (1 where a float is declared, null, a list), and what it refuses."""
    configs = []
    for family in FAMILY_ORDER:
        small = small_config(family)
        for key in sorted(config_types(type(AutoConfig.for_model(family)))):
            # A copy of each value: a config class may fill in a mapping it is given (rope_parameters).
            configs += [(family, TYPES_HEAD, key, {**small, key: copy.deepcopy(value)}) for value in WRONG_TYPES]
    return configs


# Probabilities nn.Dropout refuses, each given to every probability key (a float the class declares),
# in a model with layers and in one without (the attention's dropout is made in the layers); and NaN,
# which is neither below 0 nor above 1: nn.Dropout takes it, nn.functional.dropout raises on it when it runs.
OUT_OF_RANGE = (-0.1, 1.5, float("nan"))
# Probabilities a class reads with getattr, so that its config declares no type for them
# (GroundTruth.undeclared_probabilities): anything nn.Dropout can compare with 0 and 1 builds (true is 1),
# text does not.
UNDECLARED_VALUES = (*OUT_OF_RANGE, "text", True, 0.5)


def range_configs() -> list[tuple[str, str, str, dict[str, Any]]]:
    """Every family and head, a small config with each probability key out of range, with 2 layers and 0."""
    configs = []
    for family in FAMILY_ORDER:
        truth = ground_truth(family)
        small = small_config(family)
        kinds = config_types(type(AutoConfig.for_model(family)))
        keys = [k for k, kind in sorted(kinds.items()) if isinstance(kind, dict) and "float" in kind.get("union", ())]
        undeclared = truth.undeclared_probabilities
        for head in heads_of(family):
            for key in (*keys, *undeclared):
                values = UNDECLARED_VALUES if key in undeclared else OUT_OF_RANGE
                for layers in (2, 0):
                    for probability in values:
                        config = {**small, truth.layers_key: layers, key: probability}
                        configs.append((family, head, key, config))
    return configs


def stepped(family: str, head: str, config: dict[str, Any]) -> str | None:
    """The error a training step of the built model raises (b = 1, s = 4, on the meta device), or None."""
    model = model_of(head, build_config(family, {**config, "attn_implementation": "eager"})).train()
    try:
        measure(model, family, head, 1, 4, "meta", flops=False)
    except Exception as exc:  # any exception: the step cannot run
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:160]}"
    return None


def range_sample() -> list[dict[str, Any]]:
    """transformers' verdict on each of ``range_configs``: built or not, and for a built one whether its
    training step ran."""
    entries = []
    for family, head, key, config in range_configs():
        entry = built(family, head, config)
        verdict = {k: entry[k] for k in ("family", "head", "config", "accepted")} | {"key": key}
        verdict["error"] = entry.get("error")
        verdict["step_error"] = stepped(family, head, config) if entry["accepted"] else None
        entries.append(verdict)
    return entries


def sample(seed: int = SEED, per_head: int = PER_HEAD) -> list[dict[str, Any]]:
    """Every drawn config with transformers' verdict, in a fixed order."""
    entries = [built(family, head, config) for family, head, config in pinned()]
    for family in FAMILY_ORDER:
        rng = family_stream(seed, family)
        for head in heads_of(family):
            for _ in range(ground_truth(family).per_head or per_head):
                entries.append(built(family, head, draw(rng, family, head)))
    entries += [built(family, head, config) for family, head, config in problem_type_configs()]
    return entries


def name_configs() -> list[tuple[str, str, str, dict[str, Any]]]:
    """Every family and head, each text key naming no function, with 2 layers and with none: an
    activation is looked up when its module is built, in a layer or in a head."""
    configs = []
    for family in FAMILY_ORDER:
        kinds = config_types(type(AutoConfig.for_model(family)))
        for head in heads_of(family):
            for key in sorted(k for k, kind in kinds.items() if kind == "str"):
                for layers in (2, 0):
                    config = {**small_config(family), ground_truth(family).layers_key: layers, key: "text"}
                    configs.append((family, head, key, config))
    return configs


def typed_sample() -> list[dict[str, Any]]:
    """transformers' verdict on each of ``typed_configs`` and ``name_configs``, with the key given a
    value: accepted or the error (no tensors: the counts are the other sample's business)."""
    entries = []
    for family, head, key, config in (*typed_configs(), *name_configs()):
        entry = built(family, head, config)
        verdict = {k: entry[k] for k in ("family", "head", "config", "accepted")}
        entries.append(verdict | {"key": key, "error": entry.get("error")})
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "reference" / "sample" / "configs.json")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--per-head", type=int, default=PER_HEAD)
    args = parser.parse_args(argv)
    transformers.logging.set_verbosity_error()
    entries = sample(args.seed, args.per_head)
    header = {"seed": args.seed, "transformers": transformers.__version__}
    lines = [json.dumps(entry, sort_keys=True, separators=(",", ":")) for entry in entries]
    text = '{"about": ' + json.dumps(header, sort_keys=True) + ',\n "configs": [\n' + ",\n".join(lines) + "\n]}\n"
    args.out.write_text(text, encoding="utf-8")
    accepted = sum(entry["accepted"] for entry in entries)
    print(f"{args.out.name}: {len(entries)} configs, {accepted} accepted by transformers", file=sys.stderr)
    for name, more in (("types.json", typed_sample()), ("ranges.json", range_sample())):
        lines = [json.dumps(entry, sort_keys=True, separators=(",", ":")) for entry in more]
        text = '{"about": ' + json.dumps(header, sort_keys=True) + ',\n "configs": [\n' + ",\n".join(lines) + "\n]}\n"
        (args.out.parent / name).write_text(text, encoding="utf-8")
        accepted = sum(entry["accepted"] for entry in more)
        print(f"{name}: {len(more)} configs, {accepted} accepted by transformers", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
