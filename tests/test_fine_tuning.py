"""What each fine-tuning method trains, against peft 0.21 itself.

``tests/reference/fine-tuning/<id>.json`` (every catalog card) and ``sample/fine-tuning.json``
(three random configs of each family and head) are written by ``tools/finetune_reference.py``:
for each model, peft's trainable and total counts, the modules it wrapped and the names of the
tensors that train, for full training, the head, BitFit, LoRA, IA³ and prompt tuning, at peft's
defaults and at random ranks and targets; or the error peft raised. This test needs neither
torch nor peft.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import MODELS, REFERENCE
from generator.cards.card import Card, load_card
from generator.cards.problems import InputError
from generator.counting.architecture import Layer
from generator.counting.inventory import count_parameters
from generator.counting.methods import Method, Tuning, TuningError, modules_of, tune

CATALOG = sorted((REFERENCE / "fine-tuning").glob("*.json"))
SAMPLE: list[dict[str, Any]] = json.loads((REFERENCE / "sample" / "fine-tuning.json").read_text(encoding="utf-8"))[
    "models"
]
# The torch classes a declared Layer stands for (RoFormer's sinusoid table subclasses nn.Embedding).
CLASSES = {
    "Linear": Layer.LINEAR,
    "Embedding": Layer.EMBEDDING,
    "RoFormerSinusoidalPositionalEmbedding": Layer.EMBEDDING,
    "LayerNorm": Layer.LAYER_NORM,
    "Conv1d": Layer.CONV1D,
}


def tuning_of(variant: dict[str, Any]) -> Tuning:
    """The engine's settings for a variant a reference ran (the step reference's own names too:
    ``feed_forward``, ``num_virtual_tokens``)."""
    given: dict[str, Any] = {}
    if variant.get("rank") is not None:
        given["rank"] = variant["rank"]
    if variant.get("targets") is not None:
        given["targets"] = tuple(variant["targets"])
    feedforward = variant.get("feedforward", variant.get("feed_forward"))
    if feedforward is not None:
        given["feedforward"] = tuple(feedforward)
    tokens = variant.get("virtual_tokens", variant.get("num_virtual_tokens"))
    if tokens is not None:
        given["virtual_tokens"] = tokens
    return Tuning(Method(variant["method"]), **given)


def peft_name(name: str) -> str:
    """A tensor's name in the transformers model: peft's wrapper puts ``base_model.model.`` (or ``base_model.``) first."""
    return name.removeprefix("base_model.model.").removeprefix("base_model.")


def check_model(card: Card, reference: dict[str, Any]) -> None:
    inventory = count_parameters(card)
    assert inventory.class_name == reference["class"]
    # Every module that holds tensors has the declared class of torch's, and no other module does.
    declared = {name for name, layer in modules_of(inventory).layers.items() if layer is not None}
    built = {name for name, cls in reference["modules"] if cls in CLASSES}
    assert declared == built
    for name, cls in reference["modules"]:
        if name in declared:
            assert modules_of(inventory).layers[name] is CLASSES[cls], name
    for variant in reference["variants"]:
        tuning = tuning_of(variant)
        where = f"{card.id} {variant}"[:300]
        if "error" in variant:
            with pytest.raises(TuningError):
                tune(inventory, tuning)
            continue
        tuned = tune(inventory, tuning)
        assert (tuned.trainable, tuned.total) == (variant["trainable"], variant["total"]), where
        assert sorted(tuned.adapted) == sorted(variant.get("adapted", ())), where
        names = [t.name for t in tuned.trained] + [a.name for a in tuned.added]
        assert sorted(names) == sorted(peft_name(n) for n in variant["trainable_names"]), where
        assert sorted(tuned.saved) == sorted(variant.get("saved_modules") or ()), where


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: p.stem)
def test_every_method_trains_what_peft_trains_on_each_catalog_card(path: Path) -> None:
    reference = json.loads(path.read_text(encoding="utf-8"))
    check_model(load_card(MODELS / f"{reference['id']}.yaml"), reference)


def sample_card(entry: dict[str, Any], folder: Path) -> Card | None:
    """The card a user would write for a sampled config, or None where the card check refuses it
    (tests/test_config_sample.py says why each such config is refused)."""
    card = {"title": "sample", "family": entry["family"], "head": entry["head"], "config": entry["config"]}
    path = folder / f"sample-{entry['index']}.yaml"
    path.write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")
    try:
        return load_card(path)
    except InputError:
        return None


@pytest.mark.parametrize("entry", SAMPLE, ids=lambda e: f"{e['family']}-{e['head']}-{e['index']}")
def test_every_method_trains_what_peft_trains_on_random_configs(entry: dict[str, Any], tmp_path: Path) -> None:
    card = sample_card(entry, tmp_path)
    if card is not None:
        check_model(card, entry)


def test_the_reference_covers_every_family_and_method(tmp_path: Path) -> None:
    """Each family transformers builds has sampled configs the site counts, and each method a count and a
    refusal among them."""
    from generator.counting.families import FAMILIES

    counted = [entry for entry in SAMPLE if sample_card(entry, tmp_path) is not None]
    built = {name for name, family in FAMILIES.items() if family.ground_truth is not None}
    assert {entry["family"] for entry in counted} == built
    outcomes = {(v["method"], "error" in v) for entry in counted for v in entry["variants"]}
    for method in ("lora", "ia3", "head"):
        assert {(method, True), (method, False)} <= outcomes
