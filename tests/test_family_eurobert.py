"""EuroBERT: RMSNorm, grouped-query attention, SwiGLU and rotary positions, pinned to exact figures."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from conftest import REFERENCE, TEST_CARDS, card_by_id, reference_for
from generator.cards.card import Card, load_card
from generator.counting.compute import count_compute
from generator.counting.inventory import count_parameters
from generator.counting.step_refusals import step_inexact, step_refusal


def with_config(card: Card, **changes: Any) -> Card:
    return dataclasses.replace(card, config={**card.config, **changes})


def measured(card_id: str) -> dict[tuple[int, int], dict[str, int]]:
    """torch's figures for a card, by (b, s)."""
    data = json.loads((REFERENCE / "compute" / f"{card_id}.json").read_text(encoding="utf-8"))
    return {(p["batch"], p["seq"]): p for p in data["points"]}


def small(name: str) -> Card:
    """A test card of the family, by the end of its name."""
    return load_card(TEST_CARDS / f"test-eurobert-{name}.yaml")


CARDS = ["eurobert-210m", "eurobert-610m", "eurobert-2.1b"]


@pytest.mark.parametrize("card_id", CARDS)
def test_catalog_tensors_in_registration_order(card_id: str) -> None:
    inventory, reference = count_parameters(card_by_id(card_id)), reference_for(card_id)
    assert (inventory.class_name, inventory.total) == ("EuroBertModel", reference["total"])
    assert [(t.name, list(t.shape)) for t in inventory.tensors] == [
        (t["name"], t["shape"]) for t in reference["tensors"]
    ]


@pytest.mark.parametrize(
    ("card_id", "kv_rows"), [("eurobert-210m", 768), ("eurobert-610m", 384), ("eurobert-2.1b", 768)]
)
def test_grouped_keys_and_values(card_id: str, kv_rows: int) -> None:
    # 610m and 2.1B: 6 key and value heads for 18 query heads, of 64 and 128 wide.
    inventory = count_parameters(card_by_id(card_id))
    hidden = inventory.tensor("layers.0.self_attn.q_proj.weight").shape[1]
    assert inventory.tensor("layers.0.self_attn.q_proj.weight").shape == (hidden, hidden)
    assert inventory.tensor("layers.0.self_attn.k_proj.weight").shape == (kv_rows, hidden)
    assert inventory.tensor("layers.0.self_attn.v_proj.weight").shape == (kv_rows, hidden)


def test_every_norm_is_a_scale_alone() -> None:
    inventory = count_parameters(card_by_id("eurobert-610m"))
    norms = [t for t in inventory.tensors if "norm" in t.name]
    assert {t.name.rsplit(".", 1)[1] for t in norms} == {"weight"}
    assert len(norms) == 2 * 26 + 1 and sum(t.count for t in norms) == (2 * 26 + 1) * 1152


def test_repeated_keys_and_values_keep_what_one_head_each_keeps() -> None:
    """repeat_kv copies each key and value head for its group: the step keeps as much as with
    one key and value head per query head, whose projections are larger."""
    grouped = small("masked-lm")  # 2 key and value heads for 6 query heads of 4
    ungrouped = with_config(grouped, num_key_value_heads=None)
    b, s = 2, 3
    assert count_compute(grouped).at(b, s).activations == count_compute(ungrouped).at(b, s).activations
    assert count_compute(grouped).at(b, s).activations["fp32"] == measured(grouped.id)[(b, s)]["fp32"]
    # Each of 2 layers: k_proj and v_proj lose (6 − 2) heads of 4 rows, 24 wide.
    assert count_parameters(ungrouped).total - count_parameters(grouped).total == 2 * 2 * (6 - 2) * 4 * 24


@pytest.mark.parametrize("pooling", ["bos", "mean"])
def test_late_pooling_runs_the_classifier_on_every_token(pooling: str) -> None:
    late, pooled = small("classifier-late"), small(f"classifier-{pooling}")
    assert count_parameters(late).total == count_parameters(pooled).total == reference_for(late.id)["total"]
    b, s, hidden, labels = 2, 3, 24, 5
    forward = measured(late.id)[(b, s)]["forward"] - measured(pooled.id)[(b, s)]["forward"]
    assert forward == 2 * b * (s - 1) * (hidden * hidden + hidden * labels)
    assert count_compute(late).at(b, s).forward - count_compute(pooled).at(b, s).forward == forward


def test_mean_pooling_keeps_the_mean_not_the_encoder_output() -> None:
    bos, mean = small("classifier-bos"), small("classifier-mean")
    b, s, hidden = 2, 3, 24
    kept = measured(bos.id)[(b, s)]["fp32"] - measured(mean.id)[(b, s)]["fp32"]
    assert kept == 4 * b * (s - 1) * hidden  # the encoder's b·s·H output, against a b·H mean
    assert count_compute(bos).at(b, s).activations["fp32"] - count_compute(mean).at(b, s).activations["fp32"] == kept


def test_tied_head_and_biases() -> None:
    card = small("biases-tied")
    names = [t.name for t in count_parameters(card).tensors]
    assert names[-1] == "lm_head.bias"  # the weight is the token table
    assert "lm_head.weight" not in names
    assert "model.layers.0.self_attn.q_proj.bias" in names and "model.layers.0.mlp.down_proj.bias" in names
    assert count_parameters(card).total == reference_for(card.id)["total"]


def test_one_key_value_head_is_kept_alone_at_a_batch_of_one() -> None:
    """repeat_kv's reshape of one head is a view: at b = 1 the products keep that head, s × d; at b > 1
    they copy it for all 6 query heads, as with 6 key and value heads."""
    one = small("one-head")
    six = with_config(one, num_key_value_heads=None)
    s, layers, width, fp32 = 3, 2, 4, 4
    for b in (1, 2):
        assert count_compute(one).at(b, s).activations["fp32"] == measured(one.id)[(b, s)]["fp32"]
    assert count_compute(six).at(2, s).activations == count_compute(one).at(2, s).activations
    # At b = 1 the key and value of each layer are s × d, not s × 6d.
    smaller = count_compute(six).at(1, s).activations["fp32"] - count_compute(one).at(1, s).activations["fp32"]
    assert smaller == layers * 2 * s * (6 - 1) * width * fp32


def test_the_step_refuses_what_torch_cannot_run() -> None:
    card = small("masked-lm")
    assert step_inexact(card) is None
    assert step_refusal(card) is None
    assert step_refusal(with_config(card, num_key_value_heads=4)) is not None  # 4 does not divide 6
    assert step_refusal(with_config(card, head_dim=5)) is not None  # odd: the rotary tables are 6 wide
    assert step_refusal(small("classifier-late")) is None
    assert step_refusal(with_config(small("classifier-late"), classifier_pooling="cls")) is not None
