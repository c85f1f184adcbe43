"""Cards of one shape: counted once per process, their pages' shared parts written once, each page its own.

Two cards with the same family, head and config count to the same numbers, so a build counts the
shape once and writes the rows, the derivation and the compute section that depend on nothing else
once (views.model_of, render.py). What tells the cards apart (id, title, notes, sources, claims) must
still be each card's own: the site is compared, file by file, with a build in which no two cards
share anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MODELS, cards_through, catalog_copy, snapshot
from generator.build.pipeline import build
from generator.site import views
from generator.site.render import SiteOptions

# Families whose pages differ in what they share: BERT's plain layers, RoBERTa's positions after the
# padding id, DeBERTa-v3's relative attention (and its per-batch compute), ALBERT's shared layers.
ORIGINALS = ("bert-base-uncased", "roberta-base", "deberta-v3-base", "albert-base-v2")


def _twin(card_id: str, folder: Path) -> None:
    """The catalog card again under another id and title, with notes, sources and claims of its own."""
    text = (MODELS / f"{card_id}.yaml").read_text(encoding="utf-8")
    head, _, rest = text.partition("\nconfig:\n")
    config, _, _ = rest.partition("\nsources:\n")
    twin = (
        f"id: {card_id}-twin\n"
        f'title: "Twin of {card_id}"\n'
        + "\n".join(line for line in head.splitlines() if line.startswith(("family:", "head:")))
        + f"\nconfig:\n{config}\n"
        "sources:\n"
        f"  - title: Where the twin of {card_id} was found\n"
        f"    url: https://example.org/{card_id}-twin\n"
        "claims:\n"
        "  - figure: 1M\n"
        "    source: A figure only the twin cites\n"
        "    url: https://example.org/twin-figure\n"
        f"notes: |\n  The twin of {card_id}: the same shape, notes of its own.\n"
    )
    (folder / f"{card_id}-twin.yaml").write_text(twin, encoding="utf-8")


@pytest.fixture
def models(tmp_path: Path) -> Path:
    folder = catalog_copy(tmp_path / "models", ORIGINALS)
    for card_id in ORIGINALS:
        _twin(card_id, folder)
    return folder


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the cards the next builds count (not take from another card of their shape)."""
    return cards_through(monkeypatch, views, "_counted")


def test_cards_of_one_shape_are_counted_once_and_each_page_is_its_own(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = SiteOptions(search=False)
    seen = _counting(monkeypatch)
    views._shaped.clear()  # an earlier test's build in this process may hold these shapes
    build(models, tmp_path / "shared", options, jobs=1)
    assert sorted(seen) == sorted(ORIGINALS)  # each shape once: the twins took their originals' counting
    shared = snapshot(tmp_path / "shared")

    seen.clear()
    views._shaped.clear()
    monkeypatch.setattr(views, "_shape", lambda card: (card.head, card.id))  # every card a shape of its own
    build(models, tmp_path / "apart", options, jobs=1)
    assert sorted(seen) == sorted([*ORIGINALS, *(f"{card_id}-twin" for card_id in ORIGINALS)])
    assert shared == snapshot(tmp_path / "apart")

    site = tmp_path / "shared"
    for card_id in ORIGINALS:  # and the twins' files are not their originals' under another name
        page = (site / "models" / f"{card_id}-twin" / "index.html").read_text(encoding="utf-8")
        assert f"Twin of {card_id}" in page and f"https://example.org/{card_id}-twin" in page
        original = (site / "models" / f"{card_id}.json").read_text(encoding="utf-8")
        twin = (site / "models" / f"{card_id}-twin.json").read_text(encoding="utf-8")
        assert f'"id": "{card_id}-twin"' in twin
        assert original.replace(f'"id": "{card_id}"', f'"id": "{card_id}-twin"') == twin
