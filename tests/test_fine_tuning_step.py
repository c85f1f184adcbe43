"""A training step under each fine-tuning method, against torch 2.13 and peft 0.21 themselves.

``tests/reference/fine-tuning-compute/`` is written by ``tools/finetune_compute_reference.py``:
each method's forward and backward FLOPs and saved bytes (fp32 and bf16) on catalog cards, at
full fine-tuning's points, and on the sampled configs of every family (``sample.json``) at two
small points, with their random ranks and targets. The engine derives them from the blocks' data
flow (``generator/counting/flow.py``). Where a family's flow is not declared it must refuse, not
guess. This test needs neither torch nor peft.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from test_fine_tuning import sample_card, tuning_of

from conftest import MODELS, REFERENCE
from generator.cards.card import Card, load_card
from generator.counting.architecture import Head, Layer
from generator.counting.compute import StepCannotRunError, count_compute, shows_step
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters
from generator.counting.methods import Method, Tuned, Tuning, TuningError, modules_of, tune
from generator.counting.tuned_step import StepNotDerivedError, flowed_compute, tuned_compute, tuned_seq

FOLDER = REFERENCE / "fine-tuning-compute"
CARDS = sorted(p for p in FOLDER.glob("*.json") if not p.name.startswith(("explain-", "sample")))
SAMPLE: list[dict[str, Any]] = json.loads((FOLDER / "sample.json").read_text(encoding="utf-8"))["models"]
CONFIGS = {m["index"]: m for m in json.loads((REFERENCE / "sample" / "fine-tuning.json").read_text("utf-8"))["models"]}
POINTS = ((1, 1), (2, 3), (3, 17), (1, 512), (32, 256))


def derived(card: Card) -> bool:
    """Whether the engine works out this card's step under a method: its family's flow is declared (and
    the step is shown at all)."""
    if not shows_step(card):
        return False
    inventory = count_parameters(card)
    try:
        flowed_compute(card, tune(inventory, Tuning(Method.FULL)), count_compute(card))
    except StepNotDerivedError:
        return False
    return True


def adapts_a_table(tuned: Tuned) -> bool:
    """Whether LoRA wraps an embedding table (a random target may name one): the engine derives a
    Linear's adapter only, and refuses the step rather than guess."""
    layers = modules_of(tuned.inventory).layers
    return any(layers.get(module) is not Layer.LINEAR for module in tuned.adapted)


def check_point(card: Card, tuning: Tuning, point: dict[str, Any], where: str) -> None:
    tuned = tune(count_parameters(card), tuning)
    if adapts_a_table(tuned):
        with pytest.raises(StepNotDerivedError, match="only a Linear layer's adapter is derived"):
            tuned_compute(card, tuned)
        return
    figures = tuned_compute(card, tuned).at(point["batch"], tuned_seq(tuned, point["seq"]))
    found = (figures.forward, figures.backward, figures.activations["fp32"], figures.activations["bf16"])
    assert found == (point["forward"], point["backward"], point["fp32"], point["bf16"]), where


@pytest.mark.parametrize("path", CARDS, ids=lambda p: p.stem)
def test_each_method_s_step_equals_torch_s_on_catalog_cards(path: Path) -> None:
    reference = json.loads(path.read_text(encoding="utf-8"))
    card = dataclasses.replace(load_card(MODELS / f"{reference['card']}.yaml"), head=Head(reference["head"]))
    variants = {v["variant"]: v for v in reference["variants"]}
    for name, variant in variants.items():
        tuning = tuning_of(variant)
        points = [p for p in reference["points"] if p["variant"] == name]
        if tuning.method is Method.PROMPT_TUNING and card.config.get("hidden_size") is None:
            # peft sizes a prompt by hidden_size: the tool gave it the width, a user cannot.
            with pytest.raises(TuningError):
                tune(count_parameters(card), tuning)
            continue
        if tuning.method is not Method.FULL and not derived(card):
            with pytest.raises(StepNotDerivedError):
                tuned_compute(card, tune(count_parameters(card), tuning))
            continue
        for point in points:
            check_point(card, tuning, point, f"{path.stem} {name} {point}")


@pytest.mark.parametrize("entry", SAMPLE, ids=lambda e: f"{e['family']}-{e['head']}-{e['index']}")
def test_each_method_s_step_equals_torch_s_on_random_configs(entry: dict[str, Any], tmp_path: Path) -> None:
    """Every method peft accepted on a sampled config, its random ranks and targets included."""
    card = sample_card(CONFIGS[entry["index"]], tmp_path)
    if card is None or not derived(card):
        return
    for point in entry["points"]:
        where = f"{entry['family']} {entry['head']} {entry['index']} {point}"
        if "error" in point:  # torch raised: no trained tensor reaches the loss, and the engine says so
            with pytest.raises(StepCannotRunError, match="no tensor the method trains reaches the loss"):
                tuned_compute(card, tune(count_parameters(card), tuning_of(point)))
            continue
        check_point(card, tuning_of(point), point, where)


def sampled_cards(tmp_path: Path) -> list[Card]:
    cards = (sample_card(CONFIGS[entry["index"]], tmp_path) for entry in SAMPLE)
    return [card for card in cards if card is not None]


def test_the_flow_gives_full_fine_tuning_s_declared_step(tmp_path: Path) -> None:
    """Through the data flow, with every parameter trained, every catalog card and sampled config of a
    family whose flow is declared has its declared step: the flow changes nothing there."""
    cards = [load_card(path) for path in sorted(MODELS.glob("*.yaml"))] + sampled_cards(tmp_path)
    checked = set()
    for card in cards:
        if card.family.ground_truth is None or not shows_step(card) or not derived(card):
            continue
        full = count_compute(card)
        flowed = flowed_compute(card, tune(count_parameters(card), Tuning(Method.FULL)), full)
        for batch, seq in POINTS:
            assert flowed.at(batch, seq) == full.at(batch, seq), (card.id, batch, seq)
        checked.add(card.family.name)
    assert checked == DERIVED


# The families whose data flow is declared: each needs torch's figures on its sampled configs.
DERIVED = {
    "albert",
    "bert",
    "big_bird",
    "camembert",
    "data2vec-text",
    "deberta-v2",
    "distilbert",
    "electra",
    "ernie",
    "esm",
    "eurobert",
    "gte",
    "jina_embeddings_v3",
    "layoutlm",
    "longformer",
    "mobilebert",
    "modernbert",
    "mpnet",
    "nomic_bert",
    "roberta",
    "roformer",
    "xlm-roberta",
    "xlm-roberta-xl",
}


def test_every_family_with_a_flow_has_torch_s_figures_for_every_method(tmp_path: Path) -> None:
    """Each declared family has torch's points for the head, BitFit, LoRA and IA³ that the engine
    derives, on sampled configs or a catalog card, and every other family transformers builds refuses."""
    covered: dict[str, set[str]] = {}
    for entry in SAMPLE:
        card = sample_card(CONFIGS[entry["index"]], tmp_path)
        if card is not None and derived(card) and shows_step(card):
            covered.setdefault(card.family.name, set()).update(p["method"] for p in entry["points"] if "error" not in p)
    # The catalog cards measured with a head add theirs (a family whose sample runs a bare model only).
    for path in CARDS:
        reference = json.loads(path.read_text(encoding="utf-8"))
        covered.setdefault(reference["family"], set()).update(v["method"] for v in reference["variants"])
    assert set(covered) >= DERIVED
    for family in DERIVED:
        assert {"full", "head", "bitfit", "lora", "ia3"} <= covered[family], family
    built = {name for name, family in FAMILIES.items() if family.ground_truth is not None}
    cards = [load_card(path) for path in sorted(MODELS.glob("*.yaml"))] + sampled_cards(tmp_path)
    for name in built - DERIVED:
        shown = [card for card in cards if card.family.name == name and shows_step(card)]
        assert shown and not any(derived(card) for card in shown), name


def test_a_target_that_adapts_some_copies_of_a_module_only_is_refused() -> None:
    """A target naming an index adapts one layer's query and not the others': the engine works every copy
    alike, so it refuses that step rather than guess."""
    card = dataclasses.replace(load_card(MODELS / "bert-base-uncased.yaml"), head=Head.SEQUENCE_CLASSIFICATION)
    tuned = tune(count_parameters(card), Tuning(Method.LORA, rank=8, targets=("1.attention.self.query",)))
    assert tuned.adapted == ("bert.encoder.layer.1.attention.self.query",)
    with pytest.raises(StepNotDerivedError, match="some copies of a module only"):
        tuned_compute(card, tuned)


def test_an_adapter_on_a_linear_the_forward_never_calls_computes_nothing() -> None:
    """MobileBERT's masked-LM head reads ``dense.weight`` and the decoder's weight into one concatenation and
    calls neither Linear: LoRA on them adds trained tensors but no FLOPs and nothing kept."""
    card = dataclasses.replace(load_card(MODELS / "mobilebert-uncased.yaml"), head=Head.MASKED_LM)
    inventory = count_parameters(card)
    idle = tune(inventory, Tuning(Method.LORA, rank=8, targets=("predictions.dense", "decoder", "query")))
    called = tune(inventory, Tuning(Method.LORA, rank=8, targets=("query",)))
    assert set(idle.adapted) - set(called.adapted) == {"cls.predictions.dense", "cls.predictions.decoder"}
    assert idle.trainable > called.trainable
    for batch, seq in POINTS:
        assert tuned_compute(card, idle).at(batch, seq) == dataclasses.replace(
            tuned_compute(card, called).at(batch, seq), trainable=idle.trainable, parameters=idle.total
        )
