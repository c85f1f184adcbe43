"""Shared helpers: where the cards and reference files are, and how to write a card."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from generator.cards.card import Card, load_card
from generator.counting.inventory import Inventory, count_parameters

# Property-based tests: CI (CI=true) runs the full, reproducible profile; a local run a quick one.
# Each test's own @settings may raise max_examples further; see tests/test_bad_input_properties.py.
settings.register_profile("ci", max_examples=1000, derandomize=True, database=None, deadline=None)
settings.register_profile("dev", max_examples=100, database=None, deadline=None)
settings.register_profile("stress", max_examples=20_000, database=None, deadline=None)  # HYPOTHESIS_PROFILE=stress
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev"))

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
TEST_CARDS = Path(__file__).resolve().parent / "cards"
REFERENCE = Path(__file__).resolve().parent / "reference"
ALL_CARD_PATHS = sorted(MODELS.glob("*.yaml")) + sorted(TEST_CARDS.glob("*.yaml"))


def reference_for(card_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REFERENCE / f"{card_id}.json").read_text(encoding="utf-8"))
    return data


def count_card(path: Path) -> Inventory:
    return count_parameters(load_card(path))


@pytest.fixture
def write_card(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write a card from YAML text into a fresh models directory and return its path."""
    models = tmp_path / "models"
    models.mkdir()

    def write(text: str, name: str = "card.yaml") -> Path:
        path = models / name
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
        return path

    return write


def card_by_id(card_id: str) -> Card:
    return load_card(MODELS / f"{card_id}.yaml")
