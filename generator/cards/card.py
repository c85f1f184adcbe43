"""Model cards: YAML files in ``models/`` read into typed, validated ``Card`` objects."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.cards.also_counted import OtherCount, read_also_counted
from generator.cards.config import resolve_config
from generator.cards.problems import InputError, Location, Problem, describe, did_you_mean, display_path, shown_key
from generator.cards.published import SHARE_ALONE, FigurePart, parse_figure
from generator.cards.texts import Notes, read_notes, read_text
from generator.cards.tuning import check_tunings, read_tuning
from generator.cards.yamlsource import Document, load_document
from generator.counting.architecture import Family, Head, Param
from generator.counting.families import FAMILIES
from generator.counting.methods import Tuning
from generator.counting.texts import LANGUAGE, check_message
from generator.parallel import map_parallel

ID_PATTERN = re.compile(r"[a-z0-9](?:[a-z0-9_-]|\.(?!\.))*")
ID_RULE = "expected lowercase letters, digits, '.', '_' or '-', starting with a letter or digit (no '..')"
MAX_ID_LENGTH = 100  # the id names a directory and two files; file systems stop at 255 bytes
# Every tensor is listed on the model page; the largest real card has under 1,000. A config with
# millions of layers is valid to transformers, but its page could not be written or read.
MAX_TENSORS = 20_000
# transformers builds such a model (every table and matrix 0 wide), but there is nothing to count,
# and a page of shares and ratios would divide by 0. The calculator says the same (its export).
NO_PARAMETERS = "no-parameters"  # the check's name; its words are content (families.yaml: checks)
TOP_LEVEL_KEYS = (
    "id",
    "title",
    "family",
    "head",
    "config",
    "sources",
    "claims",
    "also_counted",
    "fine_tuning",
    "notes",
)


@dataclass(frozen=True)
class Source:
    """Where a card's facts come from."""

    title: str
    url: str


@dataclass(frozen=True)
class Claim:
    """A parameter figure as published (``110M``), and where.

    ``counts`` names what each number covers when the figure does not say (backbone, embeddings,
    total, encoder, head); ``vocab_size`` is the vocabulary the figure was stated for when it is
    not the card's; ``explanation`` is one line for a figure no part of the model rounds to.
    """

    figure: str
    source: str
    url: str | None
    parts: tuple[FigurePart, ...] = ()
    counts: str | None = None
    explanation: str | None = None
    vocab_size: int | None = None
    trained: Tuning | None = None  # a figure of what a fine-tuning method trains, not of the model


@dataclass(frozen=True)
class Card:
    """One model: its family, head and fully resolved config."""

    id: str
    title: str
    family: Family
    head: Head
    config: Mapping[str, Any]
    given_keys: frozenset[str]
    sources: tuple[Source, ...]
    claims: tuple[Claim, ...]
    notes: Notes
    path: Path
    id_location: Location
    also_counted: tuple[OtherCount, ...] = ()
    fine_tuning: Tuning | None = None  # how the model is usually fine-tuned, when the card says
    language: str = LANGUAGE  # the edition the card is read for: its family's words and its notes

    def notes_shown(self) -> tuple[str, str]:
        """The notes this card's edition shows, and the language they are written in."""
        return self.notes.in_language(self.language)

    def value(self, symbol: str) -> int:
        """The card's number for a formula symbol."""
        return self.symbol_values()[symbol]

    def symbol_values(self) -> dict[str, int]:
        """Every symbol's number; an optional symbol left null has none."""
        return self.family.symbol_values(self.config)


Progress = Callable[[int, int], None]
Known = Callable[[Path], Card | None]


def load_cards(folder: Path, on_card: Progress | None = None, jobs: int = 1, known: Known | None = None) -> list[Card]:
    """Read and validate every card in a directory; raise InputError listing every problem.

    ``on_card(done, total)`` is told after each card, for progress on long builds; ``jobs``
    processes read cards at once (see parallel.py). ``known(path)`` may give a card already
    read and validated (a build's cache, see build/cache.py): that file is not parsed again.
    """
    if not folder.is_dir():
        raise InputError([Problem(Location(folder), "", "expected a directory of model cards (*.yaml), found none")])
    # A name starting with a dot is no card: an editor's lock link (.#x.yaml), macOS's ._x.yaml copy.
    paths = sorted(p for p in [*folder.glob("*.yaml"), *folder.glob("*.yml")] if not p.name.startswith("."))
    if not paths:
        raise InputError([Problem(Location(folder), "", "expected model cards (*.yaml) in this directory, found none")])
    cards: list[Card] = []
    if known is not None:
        found = {path: known(path) for path in paths}
        cards = [card for card in found.values() if card is not None]
        paths = [path for path, card in found.items() if card is None]
    problems: list[Problem] = []
    for result in map_parallel(lambda number: _card_or_problems(paths[number]), len(paths), jobs, on_card):
        if isinstance(result, Card):
            cards.append(result)
        else:
            problems.extend(result)
    problems.extend(_duplicate_ids(cards))
    if problems:
        raise InputError(problems)
    return sorted(cards, key=lambda card: natural_key(card.id))


def _card_or_problems(path: Path) -> Card | list[Problem]:
    try:
        return load_card(path)
    except InputError as error:
        return error.problems


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort l2 before l10: digit runs compare as numbers."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part)


def load_card(path: Path) -> Card:
    """Read and validate one card file."""
    doc = load_document(path)
    if not isinstance(doc.data, dict):
        raise InputError(
            doc.problems
            or [Problem(doc.where(()), "", f"expected a card (a mapping of keys), found {describe(doc.data)}")]
        )
    problems: list[Problem] = []
    data: dict[str, Any] = doc.data
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            message = "unknown key" + did_you_mean(key, TOP_LEVEL_KEYS)
            problems.append(Problem(doc.where_key((key,)), shown_key(key), message))

    card_id = data.get("id", path.stem)
    where = doc.where(("id",)) if "id" in data else Location(path)
    if not isinstance(card_id, str) or not ID_PATTERN.fullmatch(card_id):
        problems.append(Problem(where, "id", f"{ID_RULE}, found {describe(card_id)}"))
    elif len(card_id) > MAX_ID_LENGTH:
        message = f"expected an id of at most {MAX_ID_LENGTH} characters, found {len(card_id)}"
        problems.append(Problem(where, "id", message))
    title = read_text(doc, "title", problems, required=True)
    family = _family(doc, problems)
    head = _head(doc, family, problems)
    config: dict[str, Any] = {}
    given: frozenset[str] = frozenset()
    if family is not None:
        # A card without num_labels or id2label gets the config class's default (2), as in
        # transformers; the model page says so (templates/model.html).
        config, given = resolve_config(family, doc, ("config",), problems, head.value if head else None)
    sources = _sources(doc, problems)
    claims = _claims(doc, family, problems)
    also_counted = read_also_counted(doc, family, config, problems) if family is not None and config else ()
    fine_tuning = read_tuning(doc, ("fine_tuning",), problems)
    notes = read_notes(doc, problems)
    # A value the reader dropped (a forbidden tag, ...) is reported once, not again as missing.
    dropped = {(p.location, p.key) for p in doc.problems}
    problems = doc.problems + [p for p in problems if (p.location, p.key) not in dropped]
    if problems:
        raise InputError(problems)
    assert family is not None and head is not None
    problems.extend(_tensor_limit(family, head, config, doc))
    if problems:
        raise InputError(problems)
    id_location = doc.where(("id",)) if "id" in data else Location(path)
    card = Card(
        str(card_id), title, family, head, config, given, sources, claims, notes, path, id_location, also_counted
    )
    card = dataclasses.replace(card, fine_tuning=fine_tuning)
    written = [(("fine_tuning",), fine_tuning), *((("claims", n, "trained"), c.trained) for n, c in enumerate(claims))]
    problems.extend(check_tunings(doc, card, written))
    if problems:
        raise InputError(problems)
    return card


def _tensor_limit(family: Family, head: Head, config: Mapping[str, Any], doc: Document) -> list[Problem]:
    """Refuse a config whose tensors are too many to list, naming the repeat count that did it."""
    values = family.symbol_values(config)
    architecture = family.architecture(config, head)
    tensors = 0
    repeats: set[str] = set()
    for block in architecture.blocks:
        per_instance = 0
        for module in block.modules:
            copies = module.repeat.evaluate(values) if module.repeat is not None else 1
            per_instance += max(copies, 0) * len(module.params)
            repeats |= module.repeat.symbols() if module.repeat is not None else set()
        tensors += max(block.copies().evaluate(values), 0) * per_instance
        repeats |= set(block.repeat)
    if tensors <= MAX_TENSORS or not repeats:
        return _no_parameters(family, head, config, doc)
    culprit = max((s for s in family.symbols if s.name in repeats), key=lambda s: values.get(s.name, 0))
    message = (
        f"this config gives {tensors:,} parameter tensors, and a model page lists every one: expected at most "
        f"{MAX_TENSORS:,}, found {culprit.meaning} = {values.get(culprit.name, 0):,}"
    )
    return [Problem(doc.where(("config", culprit.key)), f"config.{culprit.key}", message)]


def _no_parameters(family: Family, head: Head, config: Mapping[str, Any], doc: Document) -> list[Problem]:
    """Refuse a config whose every tensor is empty: its page would divide by a total of 0."""
    values = family.symbol_values(config)
    for block in family.architecture(config, head).blocks:
        if block.copies().evaluate(values) <= 0:
            continue
        for module in block.modules:
            if module.repeat is not None and module.repeat.evaluate(values) <= 0:
                continue
            for param in module.params:
                if isinstance(param, Param) and math.prod(d.evaluate(values) for d in param.shape) > 0:
                    return []
    return [Problem(doc.where(("config",)), "config", check_message(NO_PARAMETERS))]


def _family(doc: Document, problems: list[Problem]) -> Family | None:
    name = doc.data.get("family")
    if isinstance(name, str) and name in FAMILIES:
        return FAMILIES[name]
    where = doc.where(("family",)) if "family" in doc.data else Location(doc.path)
    known = ", ".join(sorted(FAMILIES))
    found = describe(name) if "family" in doc.data else "nothing (the key is missing)"
    hint = did_you_mean(name, sorted(FAMILIES)) if isinstance(name, str) else ""
    problems.append(Problem(where, "family", f"expected one of {known}, found {found}{hint}"))
    return None


def _head(doc: Document, family: Family | None, problems: list[Problem]) -> Head | None:
    name = doc.data.get("head")
    allowed = family.heads if family is not None else tuple(Head)
    choices = [h.value for h in allowed]
    if isinstance(name, str) and name in choices:
        return Head(name)
    where = doc.where(("head",)) if "head" in doc.data else Location(doc.path)
    found = describe(name) if "head" in doc.data else "nothing (the key is missing)"
    hint = did_you_mean(name, choices) if isinstance(name, str) else ""
    problems.append(Problem(where, "head", f"expected one of {', '.join(choices)}, found {found}{hint}"))
    return None


def _list_of_mappings(
    doc: Document,
    key: str,
    fields: dict[str, bool],
    problems: list[Problem],
    numbers: frozenset[str] = frozenset(),
    mappings: tuple[str, ...] = (),
) -> list[dict[str, str]]:
    """Check a list of small mappings whose values are text; fields maps name -> required. The values
    of ``numbers`` are whole numbers, and those of ``mappings`` are left to their own reader."""
    value = doc.data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(Problem(doc.where((key,)), key, f"expected a list, found {describe(value)}"))
        return []
    items: list[dict[str, str]] = []
    for index, item in enumerate(value):
        label = f"{key}[{index}]"
        if not isinstance(item, dict):
            problems.append(
                Problem(
                    doc.where((key, index)),
                    label,
                    f"expected a mapping with {', '.join(fields)}, found {describe(item)}",
                )
            )
            continue
        for name in item:
            if name not in fields:
                problems.append(
                    Problem(
                        doc.where_key((key, index, name)),
                        f"{label}.{shown_key(name)}",
                        "unknown key" + did_you_mean(name, list(fields)),
                    )
                )
        for name, required in fields.items():
            text = item.get(name)
            if (text is None and not required) or name in mappings:
                continue
            if isinstance(text, int | float) and not isinstance(text, bool) and name == "figure":
                text = str(text)
            if name not in item:
                problems.append(Problem(doc.where((key, index)), f"{label}.{name}", "missing; expected text"))
            elif name in numbers:
                if isinstance(text, bool) or not isinstance(text, int) or not 1 <= text <= 2**31 - 1:
                    message = f"expected a whole number from 1 to 2,147,483,647, found {describe(text)}"
                    problems.append(Problem(doc.where((key, index, name)), f"{label}.{name}", message))
            elif not isinstance(text, str) or not text.strip():
                problems.append(
                    Problem(doc.where((key, index, name)), f"{label}.{name}", f"expected text, found {describe(text)}")
                )
            elif name == "url" and not text.startswith(("https://", "http://")):
                problems.append(
                    Problem(
                        doc.where((key, index, name)),
                        f"{label}.{name}",
                        f"expected an http(s) URL, found {describe(text)}",
                    )
                )
        items.append(item)
    return items


def _sources(doc: Document, problems: list[Problem]) -> tuple[Source, ...]:
    items = _list_of_mappings(doc, "sources", {"title": True, "url": True}, problems)
    return tuple(Source(str(i.get("title")), str(i.get("url"))) for i in items)


CLAIM_FIELDS = {
    "figure": True,
    "source": True,
    "url": False,
    "counts": False,
    "explanation": False,
    "vocab_size": False,
    "trained": False,
}


def _claims(doc: Document, family: Family | None, problems: list[Problem]) -> tuple[Claim, ...]:
    before = len(problems)
    items = _list_of_mappings(
        doc, "claims", CLAIM_FIELDS, problems, numbers=frozenset({"vocab_size"}), mappings=("trained",)
    )
    if len(problems) > before:
        return ()
    claims = []
    for index, item in enumerate(items):
        figure = str(item.get("figure"))
        counts = item.get("counts")
        try:
            parts = parse_figure(figure, counts)
        except ValueError as error:
            # A figure in words is allowed (its page says it cannot be checked, and the test suite
            # asks catalog cards to explain it); with `counts`, the figure must be numbers.
            if counts is None and not str(error).startswith(SHARE_ALONE):
                parts = ()
            else:
                where = ("claims", index, "counts" if str(error).startswith("counts") else "figure")
                problems.append(Problem(doc.where(where), f"claims[{index}].{where[2]}", str(error)))
                continue
        explanation = item.get("explanation")
        if explanation is not None and "\n" in explanation.strip():
            where = ("claims", index, "explanation")
            problems.append(Problem(doc.where(where), f"claims[{index}].explanation", "expected one line of text"))
        vocab: Any = item.get("vocab_size")
        if vocab is not None and family is not None and family.symbol_for("vocab_size") is None:
            where = ("claims", index, "vocab_size")
            message = f"the {family.name} family has no vocab_size key to count another vocabulary with"
            problems.append(Problem(doc.where(where), f"claims[{index}].vocab_size", message))
        trained = read_tuning(doc, ("claims", index, "trained"), problems)
        if any(part.share for part in parts) and "trained" not in item:
            where = ("claims", index, "figure")
            message = "expected trained: {method: ...} beside the share "
            message += f"{figure}, since a share is of what a method trains"
            problems.append(Problem(doc.where(where), f"claims[{index}].figure", message))
        claims.append(
            Claim(figure, str(item.get("source")), item.get("url"), parts, counts, explanation, vocab, trained)
        )
    return tuple(claims)


def _duplicate_ids(cards: list[Card]) -> list[Problem]:
    first: dict[str, Card] = {}
    problems = []
    for card in cards:
        if card.id in first:
            other = display_path(first[card.id].path)
            problems.append(Problem(card.id_location, "id", f"the id '{card.id}' is already used by {other}"))
        else:
            first[card.id] = card
    return problems
