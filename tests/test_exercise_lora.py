"""The LoRA exercise: its answer is peft's count, and each usual slip gives a figure of its own.

Every figure is the engine's (``counting.methods.tune``). Here each slip is worked again by
another route through the engine, so a slip that drifted from what its sentence says would fail.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import MODELS, REFERENCE, card_by_id
from generator.analysis.lora_slips import Slip, lora_slips
from generator.cards.card import load_cards
from generator.counting.architecture import Head, Kind
from generator.counting.inventory import count_parameters
from generator.counting.methods import tune
from generator.site import content
from generator.site.pages import exercises
from generator.site.views import model_of

CARD = next(c.card for c in exercises.load_choices().exercises if c.builder == "lora-query-value")


@pytest.fixture(scope="module")
def checks() -> dict[str, dict[str, object]]:
    """The LoRA exercise's box data in each language, as the page embeds it."""
    wanted = {c.card for c in exercises.load_choices().exercises} | set(exercises.COMPARED)
    models = [model_of(card) for card in load_cards(MODELS) if card.id in wanted]
    found = {}
    for language in ("en", "zh"):
        page = exercises.pages(models, language)[0]
        found[language] = next(json.loads(x.check) for x in page.gather()["exercises"] if x.id == "lora-query-value")
    return found


def test_the_answer_is_what_peft_trains_adapters_and_classifier_copy() -> None:
    inventory = count_parameters(card_by_id(CARD))
    tuned, _ = lora_slips(inventory, exercises.LORA)
    layers = inventory.values["L"]
    hidden, labels = inventory.values["H"], inventory.values["C"]
    # Two targets in every layer, each H → H, plus the classifier's copy, H·C + C.
    assert tuned.trainable == 2 * layers * exercises.LORA.rank * (hidden + hidden) + hidden * labels + labels


def test_the_answer_and_peft_s_second_figure_are_what_peft_reports() -> None:
    """peft 0.21 itself, on this card, with LoRA r = 8 on its default targets (query and value for BERT)."""
    variants = json.loads((REFERENCE / "fine-tuning" / f"{CARD}.json").read_text(encoding="utf-8"))["variants"]
    (peft,) = [v for v in variants if v["method"] == "lora" and v["rank"] == 8 and v["targets"] is None]
    tuned, slipped = lora_slips(count_parameters(card_by_id(CARD)), exercises.LORA)
    assert tuned.trainable == peft["trainable"]
    assert next(s.value for s in slipped if s.slip is Slip.ALL_PARAMS) == peft["total"]


def test_each_slip_is_worked_by_its_own_route_and_gives_a_figure_of_its_own() -> None:
    card = card_by_id(CARD)
    inventory = count_parameters(card)
    tuned, slipped = lora_slips(inventory, exercises.LORA)
    by_slip = {s.slip: s.value for s in slipped}
    assert set(by_slip) == set(Slip)  # on this card no two slips meet, so the box can name each
    assert len(set(by_slip.values()) | {tuned.trainable}) == len(Slip) + 1
    copy = sum(a.count for a in tuned.added if a.module in tuned.saved)
    adapters = tuned.trainable - copy
    one_layer = dataclasses.replace(card, config={**card.config, "num_hidden_layers": 1})
    assert by_slip == {
        Slip.HEAD_LEFT_OUT: adapters,
        Slip.BIASES: tuned.trainable + len(tuned.adapted) * (exercises.LORA.rank + inventory.values["H"]),
        Slip.ONE_FACTOR: copy + adapters // 2,
        Slip.ONE_LAYER: tune(count_parameters(one_layer), exercises.LORA).trainable,
        Slip.POOLER: tuned.trainable + inventory.count_of(kind=Kind.POOLER),
        Slip.FULL: inventory.total,
        Slip.ALL_PARAMS: inventory.total + tuned.added_count,
    }
    bare = tune(count_parameters(dataclasses.replace(card, head=Head.BASE)), exercises.LORA)
    assert bare.trainable == adapters and not bare.saved


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_box_knows_each_slip_by_its_sentence(checks: dict[str, dict[str, object]], language: str) -> None:
    data = checks[language]
    words = content.load("exercises", language).section("exercises").section("lora-query-value").section("slips")
    _, slipped = lora_slips(count_parameters(card_by_id(CARD)), exercises.LORA)
    assert data["answer"] == checks["en"]["answer"] and data["whole"] is None
    assert data["mistakes"] == [{"value": str(s.value), "said": words(s.slip.value)} for s in slipped]
