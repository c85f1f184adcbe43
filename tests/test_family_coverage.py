"""Every family in the registry has what the project needs to show and prove its counts.

The families come from the registry, so a new family is covered without editing this file. A
family transformers implements declares what the reference tools draw and run for it
(``Family.ground_truth``), appears in the config sample with every head it counts, and has a card
whose training step was measured at its (b, s) points. Every family has a card in the catalog.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from conftest import ALL_CARD_PATHS, MODELS, REFERENCE, ROOT
from generator.counting.families import FAMILIES

NAMES = sorted(FAMILIES)
IMPLEMENTED = [name for name in NAMES if FAMILIES[name].own_config is None]
SAMPLE = json.loads((REFERENCE / "sample" / "configs.json").read_text(encoding="utf-8"))["configs"]


def cards_of(family: str, paths: list[Any]) -> list[str]:
    """The ids of the cards among ``paths`` whose family is ``family``."""
    cards = ((path, yaml.safe_load(path.read_text(encoding="utf-8"))) for path in paths)
    return [card.get("id", path.stem) for path, card in cards if card["family"] == family]


@pytest.mark.parametrize("family", NAMES)
def test_a_family_has_a_catalog_card(family: str) -> None:
    assert cards_of(family, sorted(MODELS.glob("*.yaml"))), f"no card in models/ has family: {family}"


@pytest.mark.parametrize("family", IMPLEMENTED)
def test_a_family_transformers_implements_declares_its_ground_truth(family: str) -> None:
    assert FAMILIES[family].ground_truth is not None, f"{family}: no ground_truth (docs/adding-a-family.md)"


@pytest.mark.parametrize("family", IMPLEMENTED)
def test_a_family_transformers_implements_has_its_config_class_recorded(family: str) -> None:
    """The card check's activation rules, and the config's keys and defaults, come from this file."""
    path = ROOT / "generator" / "counting" / "families" / "transformers" / f"{family}.json"
    assert path.is_file(), f"{family}: tools/reference.py --schemas-only {family} writes {path.name}"
    assert json.loads(path.read_text(encoding="utf-8"))["activations"]["names"]


@pytest.mark.parametrize("family", [name for name in NAMES if name not in IMPLEMENTED])
def test_a_family_of_its_own_config_names_its_source_and_its_tensors_are_referenced(family: str) -> None:
    own = FAMILIES[family].own_config
    assert own is not None and own.source
    cards = cards_of(family, ALL_CARD_PATHS)
    assert cards and all((REFERENCE / f"{card_id}.json").is_file() for card_id in cards)


@pytest.mark.parametrize("family", IMPLEMENTED)
def test_the_config_sample_draws_every_head_of_a_family(family: str) -> None:
    drawn = {entry["head"] for entry in SAMPLE if entry["family"] == family}
    assert drawn == {head.value for head in FAMILIES[family].heads}, "make reference: tools/config_sample.py"
    assert any(entry["accepted"] for entry in SAMPLE if entry["family"] == family)


def test_the_config_sample_holds_no_family_the_registry_lacks() -> None:
    assert {entry["family"] for entry in SAMPLE} == set(IMPLEMENTED)


@pytest.mark.parametrize("family", IMPLEMENTED)
def test_a_family_has_a_card_measured_at_its_reference_points(family: str) -> None:
    measured = []
    for card_id in cards_of(family, ALL_CARD_PATHS):
        path = REFERENCE / "compute" / f"{card_id}.json"
        if path.is_file() and json.loads(path.read_text(encoding="utf-8")).get("points"):
            measured.append(card_id)
    assert measured, f"{family}: no card's step was measured (make reference: tools/compute_reference.py)"
