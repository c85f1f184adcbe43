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
from generator.counting.architecture import Head
from generator.counting.compute import Compute, StepCannotRunError, count_compute, shows_step
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters
from generator.counting.methods import Method, Tuning, TuningError, tune
from generator.counting.tuned_step import (
    VIEWS_AT_ONE,
    StepNotDerivedError,
    flowed_compute,
    tuned_compute,
    tuned_seq,
)

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


def views_at_one(card: Card, method: Method, batch: int, seq: int) -> bool:
    """Whether the engine refuses this point: DeBERTa v1 at b = 1 or s = 1 (the positions the model runs),
    under a method that trains a tensor its layers reach (all but full and head). torch keeps views of
    in_proj's output and of the scaled query there, where the flow declares the copies made above 1."""
    return card.family.name == "deberta" and method not in (Method.FULL, Method.HEAD) and 1 in (batch, seq)


def check_point(card: Card, tuning: Tuning, point: dict[str, Any], where: str) -> None:
    tuned = tune(count_parameters(card), tuning)
    seq = tuned_seq(tuned, point["seq"])
    if views_at_one(card, tuning.method, point["batch"], seq):
        with pytest.raises(StepNotDerivedError, match="derived for b and s above 1 only"):
            tuned_compute(card, tuned).at(point["batch"], seq)
        return
    figures = tuned_compute(card, tuned).at(point["batch"], seq)
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
    "deberta",
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


# The explain files' variants with LoRA on embedding tables (tools/finetune_compute_reference.py: TABLES,
# TABLE_AND_DECODER), by file: the targets each gives peft.
TABLES = ("word_embeddings", "position_embeddings", "token_type_embeddings", "rel_embeddings")
TABLE_VARIANTS = {
    "explain-tiny-bert": ("lora-r8-tables", TABLES),
    "explain-tiny-deberta-v2": ("lora-r8-tables", TABLES),
    "explain-tiny-bert-masked-lm": ("lora-r8-table-and-decoder", ("word_embeddings", "decoder")),
}


@pytest.mark.parametrize("name", sorted(TABLE_VARIANTS))
def test_lora_on_the_tables_of_a_tiny_model_equals_torch_s(name: str, tmp_path: Path) -> None:
    """BERT's three tables, looked up at b·s, s and b·s rows; DeBERTa's token table, and its relative
    table, which the layers read whole, so that its adapter never runs; BERT's token table and the
    decoder whose weight it is, each with its own adapter."""
    reference = json.loads((FOLDER / f"{name}.json").read_text(encoding="utf-8"))
    variant, targets = TABLE_VARIANTS[name]
    entry = {"index": name, "family": reference["family"], "head": reference["head"], "config": reference["config"]}
    card = sample_card(entry, tmp_path)
    assert card is not None
    torch_s = next(s for s in reference["summaries"] if s["variant"] == variant)
    tuned = tune(count_parameters(card), Tuning(Method.LORA, rank=8, targets=targets))
    figures = tuned_compute(card, tuned).at(reference["batch"], reference["seq"])
    found = (figures.forward, figures.backward, figures.activations["fp32"], figures.activations["bf16"])
    assert found == (torch_s["forward"], torch_s["backward"], torch_s["activations"], torch_s["bf16"])


def test_a_masked_lm_that_lists_its_tied_decoder_first_has_a_step(tmp_path: Path) -> None:
    """XLM-RoBERTa, CamemBERT and Jina list the tied token table first, as the decoder, in a block of its
    own: its flow is the head's, so the step is worked (and held to torch's above), not refused."""
    catalog = [load_card(MODELS / f"{name}.yaml") for name in ("xlm-roberta-base", "jina-embeddings-v3")]
    cards = [dataclasses.replace(card, head=Head.MASKED_LM) for card in catalog] + sampled_cards(tmp_path)
    shared = [card for card in cards if "shared-embeddings" in blocks_of(card)]
    assert {card.family.name for card in shared} == {"xlm-roberta", "jina_embeddings_v3"}
    assert all(derived(card) for card in shared)


def blocks_of(card: Card) -> set[str]:
    return {block.key for block in card.family.architecture(card.config, card.head).blocks}


DEBERTA_V1 = FOLDER / "deberta-base-sequence-classification.json"


def test_deberta_v1_s_views_at_one_are_refused_and_would_have_been_wrong() -> None:
    """At b = 1 or s = 1 DeBERTa v1 keeps views of in_proj's output where it copies above 1. Under LoRA on
    in_proj that is two (b, s, H) storages more per layer than the copies the flow declares: the flow's
    polynomials would say torch's figure less that gap, so the engine refuses the point and says why.
    The same step at b = 2 is derived, and equals torch's."""
    reference = json.loads(DEBERTA_V1.read_text(encoding="utf-8"))
    card = dataclasses.replace(load_card(MODELS / f"{reference['card']}.yaml"), head=Head(reference["head"]))
    compute = tuned_compute(card, tune(count_parameters(card), Tuning(Method.LORA, rank=8)))
    points = {(p["batch"], p["seq"]): p for p in reference["points"] if p["variant"] == "lora-r8"}
    layers, width = card.config["num_hidden_layers"], card.config["hidden_size"]
    for batch, seq in ((1, 512), (2, 1)):
        with pytest.raises(StepNotDerivedError, match="torch keeps views of one storage"):
            compute.at(batch, seq)
        declared = Compute.at(compute, batch, seq).activations["fp32"]
        assert points[batch, seq]["fp32"] - declared == layers * 2 * batch * seq * width * 4
    assert compute.at(2, 512).activations["fp32"] == points[2, 512]["fp32"]


def test_count_says_why_deberta_v1_has_no_step_at_b_1_under_a_method() -> None:
    """``count --method`` at its default b = 1 gives the counts and the refusal's words; at b = 2 the step."""
    from test_fine_tuning_input import count

    card = str(MODELS / "deberta-base.yaml")
    refused = json.loads(count(card, "--method", "lora", "--json").stdout)
    assert refused["trainable"] > 0 and refused["flops"] is None
    assert refused["no_step"] == VIEWS_AT_ONE
    derived = json.loads(count(card, "--method", "lora", "--batch", "2", "--seq", "3", "--json").stdout)
    assert "no_step" not in derived and derived["flops"]["backward"] > 0


def test_deberta_v1_s_talking_heads_are_refused_under_a_method(tmp_path: Path) -> None:
    """The talking heads mix the scores inside the attention, whose flow is one op: not declared, so refused."""
    config = {"hidden_size": 16, "num_attention_heads": 2, "num_hidden_layers": 1, "intermediate_size": 40}
    config |= {"relative_attention": True, "pos_att_type": "c2p|p2c", "talking_head": True}
    path = tmp_path / "talking.yaml"
    path.write_text(json.dumps({"title": "t", "family": "deberta", "head": "base", "config": config}), "utf-8")
    card = load_card(path)
    assert shows_step(card)
    with pytest.raises(StepNotDerivedError, match="the scores the talking heads mix"):
        tuned_compute(card, tune(count_parameters(card), Tuning(Method.BITFIT)))


def test_a_target_that_adapts_some_copies_of_a_module_only_is_refused() -> None:
    """A target naming an index adapts one layer's query and not the others': the engine works every copy
    alike, so it refuses that step rather than guess."""
    card = dataclasses.replace(load_card(MODELS / "bert-base-uncased.yaml"), head=Head.SEQUENCE_CLASSIFICATION)
    tuned = tune(count_parameters(card), Tuning(Method.LORA, rank=8, targets=("1.attention.self.query",)))
    assert tuned.adapted == ("bert.encoder.layer.1.attention.self.query",)
    with pytest.raises(
        StepNotDerivedError, match="the step is derived for a method that adapts every copy of a layer alike"
    ):
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
