"""Every card's inventory equals what transformers builds, tensor for tensor.

The reference files were written by tools/reference.py from transformers itself (the model
class built on the meta device); this test needs neither torch nor transformers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ALL_CARD_PATHS, REFERENCE, count_card, reference_for
from generator.cards.card import load_card


@pytest.mark.parametrize("path", ALL_CARD_PATHS, ids=lambda p: p.stem)
def test_inventory_matches_transformers(path: Path) -> None:
    inventory = count_card(path)
    reference = reference_for(inventory.card.id)

    assert inventory.class_name == reference["class"]
    assert [t.name for t in inventory.tensors] == [t["name"] for t in reference["tensors"]]
    assert [list(t.shape) for t in inventory.tensors] == [t["shape"] for t in reference["tensors"]]
    assert [t.count for t in inventory.tensors] == [t["count"] for t in reference["tensors"]]
    assert [(t.name, t.tied_to) for t in inventory.tied] == [(t["name"], t["tied_to"]) for t in reference["tied"]]
    assert inventory.total == reference["total"]


def test_every_card_has_a_reference_and_every_reference_a_card() -> None:
    card_ids = {load_card(path).id for path in ALL_CARD_PATHS}
    reference_ids = {path.stem for path in REFERENCE.glob("*.json")}
    assert card_ids == reference_ids


def test_references_cover_every_head() -> None:
    classes = {reference_for(path.stem)["class"] for path in REFERENCE.glob("*.json")}
    assert {"BertModel", "BertForPreTraining", "BertForMaskedLM", "BertForSequenceClassification"} <= classes
