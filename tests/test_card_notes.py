"""A card's notes in each edition: its own text where the card has one, the English one marked as such where not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from generator.cards.card import load_cards
from generator.cards.problems import InputError
from generator.cli import main
from generator.site import content, translation
from tests.conftest import MODELS

CARD = "title: t\nfamily: bert\nhead: base\nconfig: {hidden_size: 64, num_attention_heads: 2, num_hidden_layers: 1, intermediate_size: 128, vocab_size: 100}\n"
BOTH = CARD + "notes:\n  en: |\n    Written in English.\n  zh: |\n    用中文写的。\n"


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "models"
    folder.mkdir()
    return folder


def notes_section(page: Path) -> str:
    html = page.read_text(encoding="utf-8")
    found = re.search(r'<section aria-labelledby="notes">(.*?)</section>', html, re.S)
    assert found, f"{page} has no notes"
    return found.group(1)


def build(models: Path, card: str) -> Path:
    (models / "card.yaml").write_text(card, encoding="utf-8")
    assert main(["build", "--models", str(models), "--out", "site", "--no-search", "--no-cache"]) == 0
    return Path("site")


def problems(models: Path, card: str) -> list[str]:
    (models / "card.yaml").write_text(card, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_cards(models)
    return [str(p) for p in caught.value.problems]


def test_each_edition_shows_the_notes_in_its_language(models: Path) -> None:
    site = build(models, BOTH)
    assert "Written in English." in notes_section(site / "models/card/index.html")
    chinese = notes_section(site / "zh/models/card/index.html")
    assert "用中文写的。" in chinese
    assert "Written in English." not in chinese and 'lang="en"' not in chinese


def test_an_edition_without_its_own_notes_shows_the_english_ones_marked_as_english(models: Path) -> None:
    site = build(models, CARD + "notes: Written in English.\n")
    chinese = notes_section(site / "zh/models/card/index.html")
    # A screen reader reads the English text with English rules, and the reader is told why it is English.
    assert re.search(r'<div lang="en">\s*<p>Written in English.</p>\s*</div>', chinese)
    assert "这张卡片的备注只有英文。" in chinese
    assert "English only" not in notes_section(site / "models/card/index.html")


@pytest.mark.parametrize(
    ("notes", "expected"),
    [
        (
            "notes:\n  zh: 中文。\n",
            "models/card.yaml:6:3: notes: expected an en entry (the text an edition without its own shows), found zh",
        ),
        ("notes:\n  en: ok\n  zh: [a]\n", "models/card.yaml:7:7: notes.zh: expected text, found a list"),
        ("notes:\n  en: ok\n  zh: ' '\n", "models/card.yaml:7:7: notes.zh: expected text, found the string ' '"),
        (
            "notes:\n  en: ok\n  Chinese: 中文\n",
            "models/card.yaml:7:3: notes: expected a language code such as en or zh, found the string 'Chinese'",
        ),
    ],
)
def test_bad_notes_are_located(models: Path, notes: str, expected: str) -> None:
    assert problems(models, CARD + notes) == [expected]


def test_notes_in_a_language_with_no_edition_fail_the_build_where_they_are(
    models: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (models / "card.yaml").write_text(CARD + "notes:\n  en: ok\n  fr: bien\n", encoding="utf-8")
    assert main(["build", "--models", str(models), "--out", "site", "--no-search", "--no-cache"]) == 1
    languages = ", ".join(translation.languages())
    expected = f"models/card.yaml:7:7: notes.fr: expected one of the site's languages ({languages}), found 'fr'"
    assert expected in capsys.readouterr().err
    assert not Path("site").exists()


# Numbers a translation must carry over unchanged: grouped (30,522), decimal (1.09) or of three digits and more.
# Smaller ones may change form in another language ("12-layer" is "12 层", "October" is "10 月").
EXACT_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+|\d+\.\d+|\d{3,}")


@pytest.mark.parametrize("language", [code for code in content.editions() if code != "en"])
def test_every_catalog_card_has_its_notes_in_every_edition_with_the_same_numbers(language: str) -> None:
    for path in sorted(MODELS.glob("*.yaml")):
        notes = yaml.safe_load(path.read_text(encoding="utf-8")).get("notes")
        assert isinstance(notes, dict) and language in notes, f"{path.name}: no notes in {language}"
        english, translated = (sorted(EXACT_NUMBER.findall(notes[code])) for code in ("en", language))
        assert translated == english, f"{path.name}: the {language} notes' numbers differ from the English ones"
