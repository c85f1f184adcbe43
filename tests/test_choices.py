"""The site's choices among families and cards (content/choices.yaml), against the catalog and the registry."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import MODELS
from generator.analysis.choices import FILE, load_choices
from generator.cards.problems import InputError
from generator.counting.families import FAMILIES
from generator.counting.texts import CONTENT


def test_every_card_a_choice_names_is_in_the_catalog() -> None:
    choices = load_choices()
    named = {
        *choices.start_here,
        *choices.labelled,
        *choices.memory_models,
        *choices.method_models,
        *(card for pair in choices.pairs for card in pair),
        *choices.compute_errata,
        choices.handout,
        *(card for cards in choices.errata.values() for card in cards),
        *(e.card for e in choices.exercises),
        *(e.base for e in choices.exercises if e.base),
    }
    assert named - {path.stem for path in MODELS.glob("*.yaml")} == set()


def test_every_family_a_choice_names_is_declared() -> None:
    choices = load_choices()
    named = {choices.reference_family, choices.calculator_family, *choices.apart_families, *choices.tensorflow_scopes}
    assert named <= set(FAMILIES)


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A copy of choices.yaml to break, in a folder of its own."""
    shutil.copy(CONTENT / FILE, tmp_path / FILE)
    return tmp_path / FILE


def _line(path: Path, start: str) -> int:
    return next(i for i, line in enumerate(path.read_text("utf-8").splitlines(), 1) if line.startswith(start))


def test_a_family_no_module_declares(broken: Path) -> None:
    broken.write_text(broken.read_text("utf-8").replace("reference-family: bert", "reference-family: bret"), "utf-8")
    with pytest.raises(InputError) as error:
        load_choices(broken.parent)
    known = ", ".join(sorted(FAMILIES))
    where = f"{broken}:{_line(broken, 'reference-family')}:19"
    assert str(error.value) == f"{where}: reference-family: expected the name of a family ({known}), found 'bret'"


def test_a_choice_left_out_and_one_of_another_type(broken: Path) -> None:
    text = broken.read_text("utf-8").replace("handout: bert-base-uncased\n", "")
    broken.write_text(text.replace("calculator-family: bert", "calculator-family: [bert]"), "utf-8")
    with pytest.raises(InputError) as error:
        load_choices(broken.parent)
    first = _line(broken, "reference-family")  # a choice left out is placed at the file's first key
    calculator = _line(broken, "calculator-family")
    assert [str(p) for p in error.value.problems] == [
        f"{broken}:{first}:1: handout: expected the choice 'handout' here, found none",
        f"{broken}:{calculator}:20: calculator-family: expected a family name or a card id, found ['bert']",
    ]
