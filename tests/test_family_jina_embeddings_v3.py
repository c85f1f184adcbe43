"""jina-embeddings-v3: XLM-RoBERTa with rotary positions, renamed layers, and no LoRA tensor in transformers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import MODELS, REFERENCE, TEST_CARDS, card_by_id, count_card, reference_for
from generator.cards.card import load_card
from generator.cards.problems import InputError
from generator.counting.architecture import Kind
from generator.counting.compute import count_compute
from generator.counting.inventory import count_parameters

SCHEMA = Path(__file__).parent.parent / "generator/counting/families/transformers/jina_embeddings_v3.json"


def test_catalog_total_is_transformers() -> None:
    inventory = count_parameters(card_by_id("jina-embeddings-v3"))
    reference = reference_for("jina-embeddings-v3")
    assert inventory.class_name == reference["class"] == "JinaEmbeddingsV3Model"
    assert inventory.total == reference["total"]


def test_transformers_registers_no_lora_tensor() -> None:
    """The checkpoint's task adapters are not in these classes: every tensor is a backbone's or a head's."""
    for card_id in ("jina-embeddings-v3", "test-jina-embeddings-v3-masked-lm", "test-jina-embeddings-v3-classifier"):
        names = [t["name"] for t in reference_for(card_id)["tensors"]]
        assert not [name for name in names if "lora" in name.lower() or "adapter" in name.lower()]


def test_the_pooler_comes_before_the_layers_and_a_layer_lists_its_norm_and_mlp_first() -> None:
    names = [t["name"] for t in reference_for("jina-embeddings-v3")["tensors"]]
    assert names[:6] == [
        "embeddings.word_embeddings.weight",
        "embeddings.token_type_embeddings.weight",
        "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias",
        "pooler.dense.weight",
        "pooler.dense.bias",
    ]
    layer = [name.removeprefix("layers.0.") for name in names if name.startswith("layers.0.")]
    assert layer == [
        f"{module}.{param}"
        for module in (
            "post_attention_layernorm",
            "mlp.fc1",
            "mlp.fc2",
            "self_attn.q_proj",
            "self_attn.k_proj",
            "self_attn.v_proj",
            "self_attn.o_proj",
            "post_mlp_layernorm",
        )
        for param in ("weight", "bias")
    ]
    assert [t.name for t in count_parameters(card_by_id("jina-embeddings-v3")).tensors] == names


@pytest.fixture
def xlm_roberta_twin(write_card: Callable[[str], Path]) -> Callable[[Path], Any]:
    """An XLM-RoBERTa card with the config of a card of this family (the same sizes and switches)."""

    def twin(path: Path) -> Any:
        card = yaml.safe_load(path.read_text(encoding="utf-8"))
        config = {k: v for k, v in card["config"].items() if k not in ("architectures", "model_type")}
        text = yaml.safe_dump(
            {"id": "twin", "title": "twin", "family": "xlm-roberta", "head": card["head"], "config": config}
        )
        return load_card(write_card(text))

    return twin


@pytest.mark.parametrize(
    "path",
    [MODELS / "jina-embeddings-v3.yaml", TEST_CARDS / "test-jina-embeddings-v3-masked-lm.yaml"],
    ids=lambda p: p.stem,
)
def test_the_total_is_xlm_robertas_without_its_position_table(
    path: Path, xlm_roberta_twin: Callable[[Path], Any]
) -> None:
    jina = load_card(path)
    twin = xlm_roberta_twin(path)
    config = twin.config
    position_table = config["max_position_embeddings"] * config["hidden_size"]
    assert count_parameters(twin).total - count_parameters(jina).total == position_table
    width = config["hidden_size"]
    pooler = 0 if jina.head.value == "masked-lm" else width * width + width
    assert count_parameters(jina).count_of(kind=Kind.POOLER) == pooler


def test_the_step_computes_xlm_robertas_flops_and_keeps_two_rotary_tables(
    xlm_roberta_twin: Callable[[Path], Any],
) -> None:
    """Rotation is elementwise: no FLOP. The step keeps cos and sin (s × d each) once, not XLM-R's (b, s) position ids."""
    path = TEST_CARDS / "test-jina-embeddings-v3-masked-lm.yaml"
    card = load_card(path)
    measured = json.loads((REFERENCE / "compute" / f"{card.id}.json").read_text(encoding="utf-8"))["points"]
    jina, twin = count_compute(card), count_compute(xlm_roberta_twin(path))
    head_size = card.config["hidden_size"] // card.config["num_attention_heads"]
    assert {point["seq"] for point in measured} >= {1, 2, 3, 4, 8}
    for point in measured:
        b, s = point["batch"], point["seq"]
        ours, theirs = jina.at(b, s), twin.at(b, s)
        assert (ours.forward, ours.backward, ours.activations["fp32"], ours.activations["bf16"]) == (
            point["forward"],
            point["backward"],
            point["fp32"],
            point["bf16"],
        )
        assert (ours.forward, ours.backward) == (theirs.forward, theirs.backward)
        for dtype, width in (("fp32", 4), ("bf16", 2)):
            assert ours.activations[dtype] - theirs.activations[dtype] == 2 * s * head_size * width - 8 * b * s


def test_the_masked_lm_lists_its_head_first_and_ties_the_decoder() -> None:
    inventory = count_card(TEST_CARDS / "test-jina-embeddings-v3-masked-lm.yaml")
    reference = reference_for("test-jina-embeddings-v3-masked-lm")
    assert inventory.class_name == reference["class"] == "JinaEmbeddingsV3ForMaskedLM"
    assert inventory.tensors[0].name == reference["tensors"][0]["name"] == "lm_head.bias"
    assert [(t.name, t.tied_to) for t in inventory.tied] == [(t["name"], t["tied_to"]) for t in reference["tied"]]


def test_rope_parameters_are_a_mapping_or_null() -> None:
    """RopeParameters is a TypedDict: the schema types it as a mapping, once."""
    types = json.loads(SCHEMA.read_text(encoding="utf-8"))["types"]
    assert types["rope_parameters"] == {"union": ["dict", "none"]}


def test_a_hidden_size_the_heads_do_not_divide_is_refused_with_what_transformers_builds(
    write_card: Callable[[str], Path],
) -> None:
    """The class has no head check: it builds A·(H // A)-wide projections, which the site does not count."""
    config = {"hidden_size": 8, "num_attention_heads": 3, "vocab_size": 13, "pad_token_id": 1}
    text = yaml.safe_dump({"title": "odd", "family": "jina_embeddings_v3", "head": "base", "config": config})
    with pytest.raises(InputError) as error:
        load_card(write_card(text))
    (problem,) = error.value.problems
    assert problem.key == "config.hidden_size"
    assert "transformers would build 6-wide query, key and value projections" in problem.message
