"""No family is named outside its own module: generic code reads declarations and content/.

The words of each family come from the registry (its name, as a module spells it too, its title
and its title's first word), so a family added later is covered by itself. None may appear as a
whole word, in any case, in a file under generator/, templates/ or tools/, but in
generator/counting/families/. The project's name is the one exception. Choices among families
and cards live in content/choices.yaml, and prose that names a family in content/<language>/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT
from generator.counting.families import FAMILIES

FOLDERS = ("generator", "templates", "tools")
OWN = ROOT / "generator" / "counting" / "families"  # where a family is declared, by name
PROJECT = re.compile(r"BERT Parameter Atlas|bert-atlas", re.IGNORECASE)  # the name, and the script's and files'


def family_words() -> dict[str, str]:
    """Every word that names a family, lower-cased, with the family it names."""
    words = {}
    # First words go in first, so that a family's own name or title wins over another's first word
    # ("DeBERTa" is DeBERTa v1's title, and the first word of DeBERTa-v2's).
    for family in FAMILIES.values():
        first = re.match(r"[^\W_]+", family.title)
        if first:
            words[first.group(0).lower()] = family.name
    for family in FAMILIES.values():
        for word in (family.name, family.name.replace("-", "_"), family.title):
            words[word.lower()] = family.name
    return words


def pattern(words: dict[str, str]) -> re.Pattern[str]:
    """A whole word of ``words``: not inside a longer word ("transformers" is the library, not a family)."""
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def naming(path: Path, names: re.Pattern[str], shown: str) -> list[str]:
    """Each line of a text file that names a family, as ``shown:line: word``."""
    data = path.read_bytes()
    if b"\0" in data:
        return []  # compiled or binary: made from sources that are checked themselves
    found = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
        found += [f"{shown}:{number}: {m.group(0)}" for m in names.finditer(PROJECT.sub("", line))]
    return found


def scanned(top: Path) -> list[Path]:
    """The files under ``top``, but links (to content/, where names belong, or to templates/) and caches."""
    if top.is_file():
        return [top]
    found = []
    for path in sorted(top.rglob("*")):
        inside = path.relative_to(ROOT).parts
        if any(p.is_symlink() for p in (ROOT.joinpath(*inside[:i]) for i in range(1, len(inside) + 1))):
            continue
        if path.is_file() and "__pycache__" not in inside and OWN not in (path, *path.parents):
            found.append(path)
    return found


def parts() -> list[Path]:
    """What the check covers, one piece each: every entry of generator/, and templates/ and tools/ whole."""
    return sorted(
        [p for p in (ROOT / "generator").iterdir() if p.name != "__pycache__"]
        + [ROOT / f for f in FOLDERS if f != "generator"]
    )


@pytest.mark.parametrize("top", parts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_family_is_named_outside_its_module(top: Path) -> None:
    names = pattern(family_words())
    assert [hit for path in scanned(top) for hit in naming(path, names, str(path.relative_to(ROOT)))] == []


def test_every_family_gives_its_name_title_and_first_word() -> None:
    words = family_words()
    for family in FAMILIES.values():
        assert words[family.name] == family.name
        assert words[family.title.lower()] == family.name
    assert {"deberta", "deberta_v2", "transformer", "xlm"} <= set(words)  # first words, and module names


def test_a_family_named_in_a_file_is_found(tmp_path: Path) -> None:
    path = tmp_path / "example.py"
    path.write_text(
        '"""The BERT Parameter Atlas, built with transformers."""\n'
        "# Shared layers (as in ALBERT's) count once.\n"
        'PAIR = ("roberta-base", "xlm-roberta-base")  # a keras-bert layer; deberta_v2.py\n'
        "ORDER = sorted(families, key=lambda n: n != 'bert')\n",
        encoding="utf-8",
    )
    assert naming(path, pattern(family_words()), "example.py") == [
        "example.py:2: ALBERT",
        "example.py:3: roberta",
        "example.py:3: xlm-roberta",
        "example.py:3: bert",
        "example.py:3: deberta_v2",
        "example.py:4: bert",
    ]
