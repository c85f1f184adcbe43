"""The site's prose against the code that reads it (issue 11): no language can lose a section.

Every page kind is built in every language of content/ (en now; a zh/ beside it is checked the
same way, with no change here). Each text the code asks for must be there, each text there must be
read by the code, and each file must belong to a page kind. A translation that drops an erratum,
a row or a whole file, or keeps a key the code no longer has, fails here with file:line.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import MODELS
from generator.cards.card import load_cards
from generator.cards.problems import InputError
from generator.site import content, render
from generator.site.content import CONTENT, Text
from generator.site.pages import errata
from generator.site.render import SiteOptions
from generator.site.views import Model, model_of

LANGUAGES = sorted(p.name for p in CONTENT.iterdir() if p.is_dir())
LOAD = content.load


@pytest.fixture(scope="module")
def models() -> list[Model]:
    return [model_of(card) for card in load_cards(MODELS)]


def problems(models: list[Model], language: str, root: Path, patch: pytest.MonkeyPatch) -> list[str]:
    """Every page kind built in ``language`` from ``root``: what is missing, what is not read, as a user reads it."""
    loaded: list[Text] = []

    def load(page: str, language: str = content.LANGUAGE, _root: Path = CONTENT) -> Text:
        text = LOAD(page, language, root)
        loaded.append(text)
        return text

    patch.setattr(content, "load", load)
    found: list[str] = []
    try:
        render.pages(models, language)  # the core pages, then every page kind of generator/site/pages/
        renderer = render.Renderer(SiteOptions(language=language))
        renderer.model_files(models[0])
        renderer.not_found(models)
    except InputError as error:
        found += [str(p) for p in error.problems]
    if found:
        return found  # a page kind stopped halfway: what it did not read says nothing
    read: dict[Path, set[tuple[str | int, ...]]] = {}
    documents = {}
    for text in loaded:
        read.setdefault(text.document.path, set()).update(text.read)
        documents[text.document.path] = text.document
    for path, document in documents.items():
        found += [str(p) for p in content.unread(Text(document, (), read[path]))]
    for path in sorted((root / language).glob("*.yaml")):
        if path not in documents:
            found.append(f"{path}: no page kind reads this file")
    return found


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_text_has_its_code_and_every_code_its_text(
    models: list[Model], language: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert problems(models, language, CONTENT, monkeypatch) == []


def test_the_languages_are_found() -> None:
    assert "en" in LANGUAGES
    assert {p.name for p in (CONTENT / "en").glob("*.yaml")} == {
        "calculator.yaml",
        "charts.yaml",
        "diffs.yaml",
        "errata.yaml",
        "exercises.yaml",
        "site.yaml",
    }


# A second language, made from the English one with one thing wrong: the same check names it. --


def _second_language(tmp_path: Path, edit: Callable[[str], str], file: str = "errata.yaml") -> Path:
    """content/ with en/ and a zh/ that is en/ with ``file`` edited; returns zh/``file``."""
    root = tmp_path / "content"
    shutil.copytree(CONTENT / "en", root / "en")
    shutil.copytree(CONTENT / "en", root / "zh")
    target = root / "zh" / file
    before = target.read_text("utf-8")
    after = edit(before)
    assert after != before
    target.write_text(after, "utf-8")
    return target


def _line(path: Path, text: str) -> int:
    """The line, from 1, on which ``text`` starts."""
    lines = path.read_text("utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(text))


def test_an_english_copy_is_a_complete_second_language(
    models: list[Model], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _second_language(tmp_path, lambda t: t.replace("Layers × width × heads", "层数 × 宽度 × 头数"))
    assert problems(models, "zh", target.parents[1], monkeypatch) == []
    titles = {e.id: e.title for e in errata.pages(models, "zh")[0].context["errata"]}  # read from zh/, as patched
    assert titles["lha-product"] == "层数 × 宽度 × 头数"


def test_a_translation_that_loses_a_text(models: list[Model], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def drop_diverges(text: str) -> str:
        start = text.index("    diverges:", text.index("  lha-product:"))
        return text[:start] + text[text.index("    rows:", start) :]

    target = _second_language(tmp_path, drop_diverges)
    line = _line(target, "  lha-product:")
    assert problems(models, "zh", target.parents[1], monkeypatch) == [
        f"{target}:{line}:3: errata.lha-product: expected the text 'diverges' here, found the keys: claim, rows, title"
    ]


def test_a_translation_that_loses_a_row(models: list[Model], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = _second_language(tmp_path, lambda t: t.replace("      biases: Query, key and value biases\n", ""))
    line = _rows_line(target, "  attention-over-heads:")
    assert problems(models, "zh", target.parents[1], monkeypatch) == [
        f"{target}:{line}:5: errata.attention-over-heads.rows: expected the text 'biases' here, "
        "found the keys: all-heads, attention, one-head, output"
    ]


def _rows_line(path: Path, entry: str) -> int:
    """The line of the rows of one erratum."""
    lines = path.read_text("utf-8").splitlines()
    start = lines.index(entry)
    return next(i for i, line in enumerate(lines[start:], start + 1) if line == "    rows:")


def test_a_translation_that_loses_a_file(models: list[Model], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "content"
    shutil.copytree(CONTENT / "en", root / "zh")
    (root / "zh" / "charts.yaml").unlink()
    assert problems(models, "zh", root, monkeypatch) == [
        f"{root / 'zh' / 'charts.yaml'}:1:1: expected the content file of the charts page in 'zh', found none"
    ]


def test_a_text_without_code(models: list[Model], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = _second_language(
        tmp_path,
        lambda t: t.replace("      embeddings: Embeddings\n", "      embeddings: Embeddings\n      pooler: Pooler\n"),
    )
    line = _line(target, "      pooler: Pooler")
    assert problems(models, "zh", target.parents[1], monkeypatch) == [
        f"{target}:{line}:7: errata.lha-product.rows.pooler: this text is not used by the code: no counterpart"
    ]


def test_an_erratum_without_code(models: list[Model], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = "  made-up:\n    title: An erratum the code does not have\n"
    target = _second_language(tmp_path, lambda t: t + extra)
    line = _line(target, "    title: An erratum the code")
    assert problems(models, "zh", target.parents[1], monkeypatch) == [
        f"{target}:{line}:5: errata.made-up.title: this text is not used by the code: no counterpart"
    ]


# Bad content is bad input: located, never a traceback. ---------------------------------------


def test_a_placeholder_the_page_does_not_fill(
    models: list[Model], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _second_language(tmp_path, lambda t: t.replace("is {product:,}, about", "is {produkt:,}, about"))
    line = _diverges_line(target, "  lha-product:")
    assert problems(models, "zh", target.parents[1], monkeypatch) == [
        f"{target}:{line}:15: errata.lha-product.diverges: the placeholder {{produkt}} is not one the page fills in "
        "(it fills: {product}, {times})"
    ]


def _diverges_line(path: Path, entry: str) -> int:
    """The line of the diverges text of one erratum."""
    lines = path.read_text("utf-8").splitlines()
    start = lines.index(entry)
    return next(i for i, line in enumerate(lines[start:], start + 1) if line.startswith("    diverges:"))


def test_a_value_that_is_not_text(tmp_path: Path) -> None:
    target = _second_language(
        tmp_path, lambda t: t.replace("  tables: Token, position and segment tables", "  tables: [1, 2]")
    )
    line = _line(target, "  tables: [1, 2]")
    with pytest.raises(InputError) as error:
        content.load("errata", "zh", target.parents[1])
    assert str(error.value) == f"{target}:{line}:11: rows.tables: expected text or a section of texts, found a list"


def test_a_file_that_is_not_yaml(tmp_path: Path) -> None:
    target = _second_language(
        tmp_path,
        lambda t: t.replace("  title: Parameter calculator", "\ttitle: Parameter calculator"),
        "calculator.yaml",
    )
    with pytest.raises(InputError) as error:
        content.load("calculator", "zh", target.parents[1])
    assert str(error.value).startswith(f"{target}:3:1: YAML syntax:")
