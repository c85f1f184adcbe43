"""The site's choices among families and cards, read from ``content/choices.yaml``.

Generic code never names a family or a card: which family the others are described against,
which models a chart shows, which pairs get a comparison page. Those are editorial choices, so
they sit in content/ beside the prose, in one file every language shares. A choice may name a
card the build does not have; the page that reads it leaves that card out.

The file is the project's, not input, but a broken one is still reported as
``file:line:column: key: message``, never as a traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.cards.problems import InputError, Problem
from generator.cards.yamlsource import Document, KeyPath, load_document
from generator.counting.families import FAMILIES
from generator.counting.texts import CONTENT

FILE = "choices.yaml"


@dataclass(frozen=True)
class Choices:
    """Every choice of the file, typed."""

    reference_family: str  # described against by the others, and listed first
    calculator_family: str  # the calculator opens with it when the address names none
    apart_families: tuple[str, ...]  # each shown in a section of its own, after the variants
    start_groups: tuple[tuple[str, tuple[str, ...]], ...]  # the home page's first lists: (group, its cards)
    labelled: tuple[str, ...]  # landmarks labelled in the rule-of-thumb chart, besides outliers
    memory_models: tuple[str, ...]  # the memory chart's lines
    method_models: tuple[str, ...]  # the comparison's chart of memory under each fine-tuning method
    pairs: tuple[tuple[str, str], ...]  # every comparison page, from the first card to the second
    compute_errata: tuple[str, ...]  # the cards the compute errata are evaluated on
    handout: str  # the card the handout works in numbers
    tensorflow_scopes: Mapping[str, str]  # family: the variable scope of its TensorFlow checkpoints
    errata: Mapping[str, tuple[str, ...]]  # erratum: the cards it is worked on
    exercises: tuple[ExerciseChoice, ...]  # in the page's order

    @property
    def start_here(self) -> tuple[str, ...]:
        """The cards the home page lists first, every group's in turn."""
        return tuple(card for _, cards in self.start_groups for card in cards)


@dataclass(frozen=True)
class ExerciseChoice:
    """An exercise: the builder that works it (its name, dashed), its card, and the released card it is set beside."""

    builder: str
    card: str
    base: str | None = None


def load_choices(root: Path | None = None) -> Choices:
    """The choices of ``root``/choices.yaml (content/ unless given); InputError, located, when unusable."""
    # CONTENT is resolved already: a model page asks a dozen times, and resolving walks the file system each time.
    return _loaded(root.resolve() if root is not None else CONTENT)


@functools.cache
def _loaded(root: Path) -> Choices:
    document = load_document(root / FILE)
    read = _Reader(document)
    choices = Choices(
        reference_family=read.name(("reference-family",)),
        calculator_family=read.name(("calculator-family",)),
        apart_families=read.names(("apart-families",)),
        start_groups=tuple((group, read.names(("start-here", group))) for group in read.mapping(("start-here",))),
        labelled=read.names(("charts", "labelled")),
        memory_models=read.names(("charts", "memory")),
        method_models=read.names(("charts", "methods")),
        pairs=tuple(_pair(read, ("diffs", i)) for i in range(len(read.list(("diffs",))))),
        compute_errata=read.names(("compute-errata",)),
        handout=read.name(("handout",)),
        tensorflow_scopes={k: read.name(("tensorflow-scopes", k)) for k in read.mapping(("tensorflow-scopes",))},
        errata={k: read.names(("errata", k)) for k in read.mapping(("errata",))},
        exercises=tuple(_exercise(read, ("exercises", i)) for i in range(len(read.list(("exercises",))))),
    )
    for keys in _family_keys(document):
        read.family(keys)
    if read.problems or document.problems:
        raise InputError(document.problems + read.problems)
    return choices


def _family_keys(document: Document) -> list[KeyPath]:
    """Where the file names a family: a card a build lacks is left out, but a family must exist."""
    data = document.data if isinstance(document.data, dict) else {}
    apart = data.get("apart-families")
    scopes = data.get("tensorflow-scopes")
    return [
        ("reference-family",),
        ("calculator-family",),
        *(("apart-families", i) for i in range(len(apart) if isinstance(apart, list) else 0)),
        *(("tensorflow-scopes", key) for key in (scopes if isinstance(scopes, dict) else {})),
    ]


def _exercise(read: _Reader, keys: KeyPath) -> ExerciseChoice:
    own = read.mapping(keys)
    base = read.name((*keys, "beside")) if "beside" in own else None
    return ExerciseChoice(read.name((*keys, "builder")), read.name((*keys, "card")), base)


def _pair(read: _Reader, keys: KeyPath) -> tuple[str, str]:
    names = read.names(keys)
    if len(names) != 2:
        read.fail(keys, f"expected two card ids, found {len(names)}")
        return ("", "")
    return names[0], names[1]


class _Reader:
    """Typed reads of one document, every problem kept for one report."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.problems: list[Problem] = []

    def fail(self, keys: KeyPath, message: str) -> None:
        dotted = ".".join(str(k) for k in keys)
        self.problems.append(Problem(self.document.where(keys), dotted, message))

    def _value(self, keys: KeyPath) -> Any:
        value = self.document.data
        for key in keys:
            in_mapping = isinstance(value, dict) and key in value
            if not in_mapping and not (isinstance(value, list) and isinstance(key, int) and key < len(value)):
                self.fail(keys, f"expected the choice {keys[-1]!r} here, found none")
                return None
            value = value[key]
        return value

    def mapping(self, keys: KeyPath) -> dict[str, Any]:
        value = self._value(keys)
        if not isinstance(value, dict):
            if value is not None:
                self.fail(keys, f"expected a mapping, found {type(value).__name__}")
            return {}
        return value

    def list(self, keys: KeyPath) -> list[Any]:
        value = self._value(keys)
        if not isinstance(value, list):
            if value is not None:
                self.fail(keys, f"expected a list, found {type(value).__name__}")
            return []
        return value

    def name(self, keys: KeyPath) -> str:
        value = self._value(keys)
        if not isinstance(value, str) or not value:
            if value is not None:
                self.fail(keys, f"expected a family name or a card id, found {value!r}")
            return ""
        return value

    def family(self, keys: KeyPath) -> None:
        """A problem unless the family named at ``keys`` (a value, or a mapping's key) is declared."""
        value = keys[-1] if keys[0] == "tensorflow-scopes" else self._value(keys)
        if isinstance(value, str) and value and value not in FAMILIES:
            known = ", ".join(sorted(FAMILIES))
            self.fail(keys, f"expected the name of a family ({known}), found {value!r}")

    def names(self, keys: KeyPath) -> tuple[str, ...]:
        return tuple(self.name((*keys, i)) for i in range(len(self.list(keys))))
