"""What the families' declarations are called, read from ``content/<language>/families.yaml``.

A family declares keys only: its name, a symbol's letter, a switch's name, a part; the words a
reader sees (its title, a symbol's meaning, what a switch decides, a part's title, the paragraphs
on what differs from BERT) are content, beside the site's other prose, so that a second language is a sibling file.
The file has the shared ``symbols`` and ``switches`` at the top, the ``parts``, and under
``families`` one section a family, whose ``symbols`` and ``switches`` say what differs for it
and whose ``differences`` are keyed paragraphs in reading order.

The counting layer reads it itself (it may not import the site's ``content.py``), so the card
check's messages name a symbol in the same words as the pages. The file is the project's, not
input: a family, symbol or switch without its text is a ``MissingTextError`` that names the file and
the key to add; tests/test_content.py also fails on a text no declaration asks for.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from generator.counting.architecture import Family, Part

CONTENT = (Path(__file__).parent / "texts").resolve()  # a link to content/, as generator/site/texts is
LANGUAGE = "en"  # the language the counting layer's words are read in (site.page.LANGUAGE agrees)


class MissingTextError(LookupError):
    """A key the code declares that the content file has no text for."""


@dataclass(frozen=True)
class FamilyTexts:
    """The words of one family: its title, its symbols' meanings, its switches', and what differs from BERT."""

    title: str
    symbols: Mapping[str, str]
    switches: Mapping[str, str]
    differences: tuple[tuple[str, str], ...]  # (key, Markdown paragraph), in reading order


@functools.cache
def load(language: str = LANGUAGE, root: Path = CONTENT) -> Mapping[str, Any]:
    """The parsed families.yaml of one language."""
    path = root / language / "families.yaml"
    with path.open(encoding="utf-8") as file:
        data = yaml.safe_load(file)
    if not isinstance(data, dict) or not isinstance(data.get("families"), dict):
        raise MissingTextError(f"{path}: expected a mapping with 'families', 'symbols', 'switches' and 'parts'")
    return data


def _section(data: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        data = data.get(key) or {}
    return data


def family_texts(name: str, language: str = LANGUAGE, root: Path = CONTENT) -> FamilyTexts:
    """The words of the family ``name``: its own texts over the shared ones."""
    data = load(language, root)
    if name not in data["families"]:
        raise MissingTextError(f"{root / language / 'families.yaml'}: families: no section for the family {name!r}")
    own = _section(data, "families", name)
    return FamilyTexts(
        title=_text(own, "title", root / language, f"families.{name}.title"),
        symbols={**_section(data, "symbols"), **_section(own, "symbols")},
        switches={**_section(data, "switches"), **_section(own, "switches")},
        differences=tuple((str(key), str(text)) for key, text in _section(own, "differences").items()),
    )


def part_titles(language: str = LANGUAGE, root: Path = CONTENT) -> dict[Part, str]:
    """Each Part's title, in Part order."""
    titles = _section(load(language, root), "parts")
    return {part: _text(titles, part.value, root / language, f"parts.{part.value}") for part in Part}


def _text(texts: Mapping[str, str], key: str, folder: Path, where: str) -> str:
    if key not in texts:
        raise MissingTextError(f"{folder / 'families.yaml'}: {where}: expected a text here, found none")
    return str(texts[key])


def with_texts(family: Family, language: str = LANGUAGE, root: Path = CONTENT) -> Family:
    """The family with its symbols' and switches' meanings and its differences filled in from content/."""
    texts, folder = family_texts(family.name, language, root), root / language
    where = f"families.{family.name}"
    symbols = tuple(
        replace(s, meaning=_text(texts.symbols, s.name, folder, f"{where}.symbols.{s.name}")) for s in family.symbols
    )
    switches = tuple(
        replace(s, meaning=_text(texts.switches, s.name, folder, f"{where}.switches.{s.name}")) for s in family.switches
    )
    differences = tuple(text for _, text in texts.differences)
    return replace(family, title=texts.title, symbols=symbols, switches=switches, differences=differences)
