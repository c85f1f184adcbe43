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

Like ``tools/reference.py``, this never imports the generator.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import warnings
from pathlib import Path
from typing import Any

import transformers
from compute_reference import measure
from transformers import AutoConfig

from reference import LAYER_KEYS, build_config, config_types, inventory, model_of

ROOT = Path(__file__).resolve().parent.parent
SEED = 10  # issue 10
PER_HEAD = 16  # configs drawn for each family and head: about 540 in all, under 1 MB
MORE = {"deberta-v2": 30}  # DeBERTa's sentinels combine in many ways: draw more of them

ABSENT = object()  # the key is left out of the config

# The heads the site counts for each family (generator/counting/families/*.py).
HEADS = {
    "bert": ("base", "pretraining", "masked-lm", "sequence-classification"),
    "roberta": ("base", "masked-lm", "sequence-classification"),
    "xlm-roberta": ("base", "masked-lm", "sequence-classification"),
    "albert": ("base", "pretraining", "masked-lm", "sequence-classification"),
    "electra": ("base", "pretraining", "masked-lm", "sequence-classification"),
    "distilbert": ("base", "masked-lm", "sequence-classification"),
    "mobilebert": ("base", "pretraining", "masked-lm", "sequence-classification"),
    "deberta-v2": ("base", "masked-lm", "sequence-classification"),
    "modernbert": ("base", "masked-lm", "sequence-classification"),
    "mpnet": ("base", "masked-lm", "sequence-classification"),
}

# Small sizes, so that the file stays small; the head counts include some that do not divide.
# key -> (ordinary values, sentinels); ABSENT leaves the key to the config class. A size's
# sentinels are an empty dimension (0) and, for a count, -1 (range(-1) is empty).
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
# drawn less often, so that most configs are still compared tensor for tensor.
RARE = dict.fromkeys(
    (
        "num_hidden_layers",
        "n_layers",
        "num_attention_heads",
        "n_heads",
        "num_hidden_groups",
        "inner_group_num",
        "num_feedforward_networks",
    ),
    0.1,
)

# key -> (ordinary values, sentinels); ABSENT leaves the key to the config class.
LABELS: dict[str, tuple[list[Any], list[Any]]] = {
    "num_labels": ([1, 3], [ABSENT, ABSENT, 0, -1]),
}
BERT_LIKE: dict[str, tuple[list[Any], list[Any]]] = {
    "type_vocab_size": ([1, 2], [0]),
    "tie_word_embeddings": ([True, False], [ABSENT]),
    "is_decoder": ([False], [True, ABSENT]),
    "add_cross_attention": ([False], [True, ABSENT]),
    "pad_token_id": ([0, 3], [None, -1, 40]),
}
SPACES: dict[str, dict[str, tuple[list[Any], list[Any]]]] = {
    "bert": BERT_LIKE,
    "roberta": BERT_LIKE,
    "xlm-roberta": BERT_LIKE,
    "electra": {**BERT_LIKE, "embedding_size": ([6, 8], [ABSENT, 0])},
    "albert": {
        "type_vocab_size": ([1, 2], [0]),
        "tie_word_embeddings": ([True, False], [ABSENT]),
        "pad_token_id": ([0, 3], [None, 40]),
        "embedding_size": ([4, 8], [ABSENT, 0]),
        "num_hidden_groups": ([1, 2], [ABSENT, 0, -1]),
        "inner_group_num": ([1, 2], [ABSENT, 0, -1]),
    },
    "distilbert": {
        "sinusoidal_pos_embds": ([False, True], [ABSENT]),
        "tie_word_embeddings": ([True, False], [ABSENT]),
        "pad_token_id": ([0, 3], [None, 40]),
    },
    "mobilebert": {
        "type_vocab_size": ([1, 2], [0]),
        "embedding_size": ([8, 16], [ABSENT, 0]),
        "intra_bottleneck_size": ([8, 4], [ABSENT]),
        "num_feedforward_networks": ([1, 2], [ABSENT, 0, -1]),
        "use_bottleneck": ([True, False], [ABSENT]),
        "use_bottleneck_attention": ([True, False], [ABSENT]),
        "key_query_shared_bottleneck": ([True, False], [ABSENT]),
        "normalization_type": (["no_norm", "layer_norm"], [ABSENT]),
        "trigram_input": ([True, False], [ABSENT]),
        "classifier_activation": ([True, False], [ABSENT]),
        "tie_word_embeddings": ([True, False], [ABSENT]),
        "true_hidden_size": ([8], [ABSENT, None]),
    },
    "deberta-v2": {
        "type_vocab_size": ([1, 2], [0, -1]),
        "relative_attention": ([True, False], [ABSENT]),
        "position_biased_input": ([True, False], [ABSENT]),
        "pos_att_type": ([["c2p"], ["p2c", "c2p"]], ["p2c|c2p", "c2p", "none", [], None, ABSENT]),
        "position_buckets": ([4], [-1, 0, None, ABSENT]),
        "max_relative_positions": ([3], [-1, 0, ABSENT]),
        "share_att_key": ([True, False], [ABSENT]),
        "norm_rel_ebd": (["none", "layer_norm"], ["layer_norm|none", ABSENT]),
        "conv_kernel_size": ([3], [0, -1, None, ABSENT]),
        "conv_groups": ([1, 2], [ABSENT]),
        "embedding_size": ([6], [ABSENT, 0, None]),
        "attention_head_size": ([4], [ABSENT, 0]),
        "pooler_hidden_size": ([10], [ABSENT, 0, -1]),
        "legacy": ([True, False], [ABSENT]),
        "tie_word_embeddings": ([True, False], [ABSENT]),
        "pad_token_id": ([0, 3], [None, 40]),
    },
    "modernbert": {
        "attention_bias": ([True, False], [ABSENT]),
        "mlp_bias": ([True, False], [ABSENT]),
        "norm_bias": ([True, False], [ABSENT]),
        "classifier_bias": ([True, False], [ABSENT]),
        "decoder_bias": ([True, False], [ABSENT]),
        "tie_word_embeddings": ([True, False], [ABSENT]),
        "pad_token_id": ([0, 3], [None, 40]),
    },
    "mpnet": {
        # MPNet's tables fix padding_idx at 1, so 1 row builds neither; 2 position rows hold no token.
        "vocab_size": ([30, 50], [0, 1]),
        "max_position_embeddings": ([10, 16], [0, 1, 2]),
        "relative_attention_num_buckets": ([32, 40], [0, 18, ABSENT]),
        "tie_word_embeddings": ([True, False], [ABSENT]),
        "pad_token_id": ([1, 3], [None, 40]),  # read by no module
    },
}
# DistilBertConfig's own names for the sizes.
RENAMED = {
    "distilbert": {
        "hidden_size": "dim",
        "num_attention_heads": "n_heads",
        "num_hidden_layers": "n_layers",
        "intermediate_size": "hidden_dim",
    }
}


# The configs issue 10 names, drawn every time whatever the seed gives.
PINNED: list[tuple[str, str, dict[str, Any]]] = [
    ("deberta-v2", "base", {"hidden_size": 8, "num_attention_heads": 2, "conv_kernel_size": 0}),
    (
        "deberta-v2",
        "masked-lm",
        {
            "hidden_size": 8,
            "num_attention_heads": 2,
            "relative_attention": True,
            "position_buckets": -1,
            "max_relative_positions": -1,
            "pos_att_type": "p2c|c2p",
            "max_position_embeddings": 12,
        },
    ),
    ("deberta-v2", "base", {"hidden_size": 8, "num_attention_heads": 2, "conv_kernel_size": None}),
    ("bert", "base", {"hidden_size": 8, "num_attention_heads": 2, "type_vocab_size": 0, "vocab_size": 40}),
    ("roberta", "sequence-classification", {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40}),
]


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
    """A small model of the family, under its own names for the sizes (DistilBERT's dim)."""
    names = RENAMED.get(family, {})
    small = {names.get(k, k): v for k, v in {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40}.items()}
    if family == "modernbert":
        small.update(pad_token_id=0, bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2)
    return small


def problem_type_configs() -> list[tuple[str, str, dict[str, Any]]]:
    """A small classifier of every family with each problem type and number of labels of PROBLEM_TYPES."""
    configs = []
    for family in HEADS:
        small = small_config(family)
        for problem, labels in PROBLEM_TYPES:
            config = {**small, "problem_type": problem, "num_labels": labels}
            configs.append((family, "sequence-classification", config))
    return configs


def draw(rng: random.Random, family: str, head: str) -> dict[str, Any]:
    """One small config; a key takes one of its sentinels about a third of the time."""
    space = {RENAMED.get(family, {}).get(key, key): choices for key, choices in SIZES.items()}
    space.update(SPACES[family])
    if head == "sequence-classification":
        space.update(LABELS)
    config: dict[str, Any] = {}
    for key, (ordinary, sentinels) in space.items():
        pick = rng.choice(sentinels) if rng.random() < RARE.get(key, SENTINEL_SHARE) else rng.choice(ordinary)
        if pick is not ABSENT:
            config[key] = pick
    if family == "modernbert":
        # ModernBertConfig's other special tokens default to ids of its 50,368-row vocabulary.
        config.update(bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2)
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
    for family in HEADS:
        small = small_config(family)
        for key in sorted(config_types(type(AutoConfig.for_model(family)))):
            configs += [(family, TYPES_HEAD, key, {**small, key: value}) for value in WRONG_TYPES]
    return configs


# Probabilities nn.Dropout refuses, each given to every probability key (a float the class declares),
# in a model with layers and in one without (the attention's dropout is made in the layers); and NaN,
# which is neither below 0 nor above 1: nn.Dropout takes it, nn.functional.dropout raises on it when it runs.
OUT_OF_RANGE = (-0.1, 1.5, float("nan"))
# Probabilities a class reads with getattr, so that its config declares no type for them: anything
# nn.Dropout can compare with 0 and 1 builds (true is 1), text does not.
UNDECLARED = {"deberta-v2": ("cls_dropout",)}
UNDECLARED_VALUES = (*OUT_OF_RANGE, "text", True, 0.5)


def range_configs() -> list[tuple[str, str, str, dict[str, Any]]]:
    """Every family and head, a small config with each probability key out of range, with 2 layers and 0."""
    configs = []
    for family, heads in HEADS.items():
        small = small_config(family)
        kinds = config_types(type(AutoConfig.for_model(family)))
        keys = [k for k, kind in sorted(kinds.items()) if isinstance(kind, dict) and "float" in kind.get("union", ())]
        for head in heads:
            for key in (*keys, *UNDECLARED.get(family, ())):
                values = UNDECLARED_VALUES if key in UNDECLARED.get(family, ()) else OUT_OF_RANGE
                for layers in (2, 0):
                    for probability in values:
                        config = {**small, LAYER_KEYS.get(family, "num_hidden_layers"): layers, key: probability}
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
    rng = random.Random(seed)
    entries = [built(family, head, config) for family, head, config in PINNED]
    for family, heads in HEADS.items():
        for head in heads:
            for _ in range(MORE.get(family, per_head)):
                entries.append(built(family, head, draw(rng, family, head)))
    entries += [built(family, head, config) for family, head, config in problem_type_configs()]
    return entries


def name_configs() -> list[tuple[str, str, str, dict[str, Any]]]:
    """Every family and head, each text key naming no function, with 2 layers and with none: an
    activation is looked up when its module is built, in a layer or in a head."""
    configs = []
    for family, heads in HEADS.items():
        kinds = config_types(type(AutoConfig.for_model(family)))
        for head in heads:
            for key in sorted(k for k, kind in kinds.items() if kind == "str"):
                for layers in (2, 0):
                    config = {**small_config(family), LAYER_KEYS.get(family, "num_hidden_layers"): layers, key: "text"}
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
