"""XLM-RoBERTa-XL: RoBERTa's tensors with pre-LayerNorm layers, one norm moved to the encoder's end."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import MODELS, REFERENCE, TEST_CARDS, card_by_id, count_card, reference_for
from generator.cards.card import load_card
from generator.counting.architecture import Kind
from generator.counting.compute import count_compute
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters


@pytest.mark.parametrize("card_id", ["xlm-roberta-xl", "xlm-roberta-xxl"])
def test_catalog_totals_are_transformers(card_id: str) -> None:
    inventory = count_parameters(card_by_id(card_id))
    reference = reference_for(card_id)
    assert inventory.class_name == reference["class"] == "XLMRobertaXLModel"
    assert inventory.total == reference["total"]


def test_published_sizes_round_to_the_exact_counts() -> None:
    # Goyal et al. 2021 and the fairseq README: 3.5B and 10.7B.
    assert round(reference_for("xlm-roberta-xl")["total"] / 1e8) == 35
    assert round(reference_for("xlm-roberta-xxl")["total"] / 1e8) == 107


def test_closed_form_has_no_embedding_norm_and_a_final_norm() -> None:
    derivation = derive(count_parameters(card_by_id("xlm-roberta-xl")))
    # RoBERTa's (V + P + T + 2)H loses the embedding norm's 2H; the final norm's 2H joins the pooler's H.
    assert to_text(derivation.closed_form) == "(V + P + T)H + L(4H² + 2HI + 9H + I) + H² + 3H"


def test_a_layer_registers_each_norm_after_its_sublayer() -> None:
    names = [t["name"] for t in reference_for("xlm-roberta-xl")["tensors"]]
    layer = [name.removeprefix("encoder.layer.0.") for name in names if name.startswith("encoder.layer.0.")]
    assert layer == [
        "attention.self.query.weight",
        "attention.self.query.bias",
        "attention.self.key.weight",
        "attention.self.key.bias",
        "attention.self.value.weight",
        "attention.self.value.bias",
        "attention.output.dense.weight",
        "attention.output.dense.bias",
        "attention.self_attn_layer_norm.weight",
        "attention.self_attn_layer_norm.bias",
        "intermediate.dense.weight",
        "intermediate.dense.bias",
        "output.dense.weight",
        "output.dense.bias",
        "LayerNorm.weight",
        "LayerNorm.bias",
    ]
    inventory = count_parameters(card_by_id("xlm-roberta-xl"))
    assert [t.name for t in inventory.tensors] == names
    assert not any(name.startswith("embeddings.LayerNorm") for name in names)
    assert names[-4:-2] == ["encoder.LayerNorm.weight", "encoder.LayerNorm.bias"]  # then the pooler


@pytest.fixture
def roberta_twin(write_card: Callable[[str], Path]) -> Callable[[Path], Any]:
    """A RoBERTa card with the config of a card of this family (the same sizes and switches)."""

    def twin(path: Path) -> Any:
        card = yaml.safe_load(path.read_text(encoding="utf-8"))
        config = {k: v for k, v in card["config"].items() if k not in ("architectures", "model_type")}
        text = yaml.safe_dump(
            {"id": "twin", "title": "twin", "family": "roberta", "head": card["head"], "config": config}
        )
        return load_card(write_card(text))

    return twin


@pytest.mark.parametrize(
    "path", [MODELS / "xlm-roberta-xl.yaml", TEST_CARDS / "test-xlm-roberta-xl-masked-lm.yaml"], ids=lambda p: p.stem
)
def test_the_total_is_robertas_at_the_same_sizes(path: Path, roberta_twin: Callable[[Path], Any]) -> None:
    xl = count_parameters(load_card(path))
    roberta = count_parameters(roberta_twin(path))
    assert xl.total == roberta.total
    assert len(xl.tensors) == len(roberta.tensors)


def test_the_step_keeps_one_dropout_mask_fewer_a_layer(roberta_twin: Callable[[Path], Any]) -> None:
    """XLMRobertaXLOutput has no dropout; the FLOPs are RoBERTa's, the saved bytes L·b·s·H fewer."""
    path = TEST_CARDS / "test-xlm-roberta-xl-masked-lm.yaml"
    card = load_card(path)
    measured = json.loads((REFERENCE / "compute" / f"{card.id}.json").read_text(encoding="utf-8"))["points"]
    xl, roberta = count_compute(card), count_compute(roberta_twin(path))
    config = card.config
    for point in measured:
        b, s = point["batch"], point["seq"]
        ours, theirs = xl.at(b, s), roberta.at(b, s)
        assert (ours.forward, ours.backward, ours.activations["fp32"]) == (
            point["forward"],
            point["backward"],
            point["fp32"],
        )
        assert (ours.forward, ours.backward) == (theirs.forward, theirs.backward)
        mask = config["num_hidden_layers"] * b * s * config["hidden_size"]
        assert theirs.activations["fp32"] - ours.activations["fp32"] == 4 * mask
        assert theirs.activations["bf16"] - ours.activations["bf16"] == 2 * mask


def test_masked_lm_lists_the_backbone_first() -> None:
    inventory = count_card(TEST_CARDS / "test-xlm-roberta-xl-masked-lm.yaml")
    reference = reference_for("test-xlm-roberta-xl-masked-lm")
    assert inventory.class_name == reference["class"] == "XLMRobertaXLForMaskedLM"
    assert inventory.tensors[0].name == "roberta.embeddings.word_embeddings.weight"
    assert [(t.name, t.tied_to) for t in inventory.tied] == [(t["name"], t["tied_to"]) for t in reference["tied"]]
    assert inventory.count_of(kind=Kind.POOLER) == 0


def test_cross_attention_has_its_own_norm_and_computes_nothing() -> None:
    inventory = count_card(TEST_CARDS / "test-xlm-roberta-xl-cross-attention.yaml")
    names = [t.name for t in inventory.tensors]
    assert names == [t["name"] for t in reference_for("test-xlm-roberta-xl-cross-attention")["tensors"]]
    norm = names.index("encoder.layer.0.attention.self_attn_layer_norm.bias")
    assert names[norm + 1] == "encoder.layer.0.crossattention.self.query.weight"
    assert "encoder.layer.0.crossattention.self_attn_layer_norm.weight" in names
