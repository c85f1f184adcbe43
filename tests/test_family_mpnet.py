"""MPNet: BERT's layers renamed, one relative position bias shared by every layer, no token types."""

from __future__ import annotations

import json

import pytest

from conftest import REFERENCE, TEST_CARDS, card_by_id, count_card, reference_for
from generator.analysis.calculator_compute import longest_of
from generator.cards.card import load_card
from generator.cards.problems import InputError
from generator.counting.architecture import Kind
from generator.counting.compute import count_compute, step_refusal
from generator.counting.derivation import derive
from generator.counting.expr import to_text
from generator.counting.inventory import count_parameters

BIAS = "encoder.relative_attention_bias.weight"


@pytest.mark.parametrize(
    ("card_id", "class_name"), [("all-mpnet-base-v2", "MPNetModel"), ("mpnet-base", "MPNetForMaskedLM")]
)
def test_catalog_totals_are_transformers(card_id: str, class_name: str) -> None:
    inventory = count_parameters(card_by_id(card_id))
    reference = reference_for(card_id)
    assert (
        (inventory.class_name, inventory.total)
        == (class_name, reference["total"])
        == (reference["class"], reference["total"])
    )
    assert [(t.name, list(t.shape)) for t in inventory.tensors] == [
        (t["name"], t["shape"]) for t in reference["tensors"]
    ]


def test_the_relative_bias_is_one_table_after_the_layers_counted_once() -> None:
    inventory = count_parameters(card_by_id("all-mpnet-base-v2"))
    names = [t.name for t in inventory.tensors]
    assert [n for n in names if "relative" in n] == [BIAS]
    # Registered by the encoder after its ModuleList of layers, before the pooler.
    assert names.index(BIAS) == names.index("encoder.layer.11.output.LayerNorm.bias") + 1
    assert names[names.index(BIAS) + 1] == "pooler.dense.weight"
    assert inventory.tensor(BIAS).shape == (32, 12)
    closed = to_text(derive(inventory).closed_form)
    assert closed == "(V + P + 2)H + L(4H² + 2HI + 9H + I) + H² + BA + H"  # BA once, outside L(...)


def test_a_layer_is_berts_under_other_names() -> None:
    inventory = count_parameters(card_by_id("all-mpnet-base-v2"))
    layer = [
        t.name.removeprefix("encoder.layer.0.") for t in inventory.tensors if t.name.startswith("encoder.layer.0.")
    ]
    assert layer == [
        *(f"attention.attn.{p}.{w}" for p in "qkvo" for w in ("weight", "bias")),
        "attention.LayerNorm.weight",
        "attention.LayerNorm.bias",
        "intermediate.dense.weight",
        "intermediate.dense.bias",
        "output.dense.weight",
        "output.dense.bias",
        "output.LayerNorm.weight",
        "output.LayerNorm.bias",
    ]
    bert = count_parameters(card_by_id("bert-base-uncased"))
    assert inventory.count_of(kind=Kind.ENCODER) - 32 * 12 == bert.count_of(kind=Kind.ENCODER)


def test_no_segment_table_and_514_positions_for_512_tokens() -> None:
    card = card_by_id("all-mpnet-base-v2")
    inventory = count_parameters(card)
    assert [t.name for t in inventory.tensors][:4] == [
        "embeddings.word_embeddings.weight",
        "embeddings.position_embeddings.weight",
        "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias",
    ]
    assert longest_of(card.family, card.config) == 514 - 2  # positions are numbered from 2


def test_masked_lm_ties_decoder_to_the_token_table_and_has_no_pooler() -> None:
    inventory = count_parameters(card_by_id("mpnet-base"))
    reference = reference_for("mpnet-base")
    assert [(t.name, t.tied_to) for t in inventory.tied] == [(t["name"], t["tied_to"]) for t in reference["tied"]]
    assert inventory.count_of(kind=Kind.POOLER) == 0
    untied = count_card(TEST_CARDS / "test-mpnet-untied-mlm.yaml")
    assert untied.tied == ()
    assert untied.total == reference_for("test-mpnet-untied-mlm")["total"]


def test_classifier_reads_the_first_token_with_its_own_dense_layer() -> None:
    inventory = count_card(TEST_CARDS / "test-mpnet-classifier-3.yaml")
    assert [t.name for t in inventory.tensors if t.block.kind is Kind.HEAD] == [
        "classifier.dense.weight",
        "classifier.dense.bias",
        "classifier.out_proj.weight",
        "classifier.out_proj.bias",
    ]
    assert inventory.count_of(kind=Kind.HEAD) == 33 * 33 + 33 + 3 * 33 + 3


def test_the_step_keeps_the_buckets_once_whatever_the_layers() -> None:
    """The bias block keeps its (s, s) int64 bucket ids, once and not once per layer, and computes no product;
    torch measured the step on either side of each bucket boundary (distance 8, and the last bucket at 91)."""
    points = json.loads((REFERENCE / "compute" / "all-mpnet-base-v2.json").read_text(encoding="utf-8"))["points"]
    assert {8, 9, 91, 92} <= {p["seq"] for p in points}
    compute = count_compute(card_by_id("all-mpnet-base-v2"))
    (relative,) = (block for block in compute.blocks if block.block.key == "relative")
    assert compute.in_batch(relative.copies).evaluate({}) == 1
    assert (relative.forward, relative.backward) == (relative.forward * 0, relative.backward * 0)
    for precision in ("fp32", "bf16"):
        assert compute.in_batch(relative.kept(precision).every).evaluate({"b": 3, "s": 92}) == 8 * 92 * 92


@pytest.mark.parametrize(
    ("key", "found", "message"),
    [
        ("vocab_size", 1, "vocab_size (1) has no row 1, which MPNet's tables reserve for padding"),
        ("max_position_embeddings", 1, "max_position_embeddings (1) has no row 1"),
    ],
)
def test_the_padding_row_is_one_whatever_pad_token_id_says(write_card, key: str, found: int, message: str) -> None:  # type: ignore[no-untyped-def]
    path = write_card(f"title: bad\nfamily: mpnet\nhead: base\nconfig:\n  pad_token_id: 0\n  {key}: {found}\n")
    with pytest.raises(InputError) as caught:
        load_card(path)
    assert [p.key for p in caught.value.problems] == [f"config.{key}"]
    assert message in caught.value.problems[0].message


@pytest.mark.parametrize(
    ("config", "refused"),
    [
        ("relative_attention_num_buckets: 31", True),
        ("max_position_embeddings: 2", True),
        ("max_position_embeddings: 3", False),
    ],
)
def test_steps_that_raise_on_a_cpu_are_refused(write_card, config: str, refused: bool) -> None:  # type: ignore[no-untyped-def]
    card = load_card(write_card(f"title: t\nfamily: mpnet\nhead: base\nconfig:\n  {config}\n"))
    assert (step_refusal(card) is not None) == refused
