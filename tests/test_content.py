"""The site's prose against the code that reads it: no language can lose a section.

Every page kind is built in every language of content/ (en now; a zh/ beside it is checked the
same way, with no change here). Each text the code asks for must be there, each text there must be
read by the code, and each file must belong to a page kind. A translation that drops an erratum,
a row or a whole file, or keeps a key the code no longer has, fails here with file:line.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from babel.messages.pofile import read_po, write_po
from test_calculator import every_path

from conftest import MODELS
from generator.cards.card import load_cards
from generator.cards.problems import InputError
from generator.cli import main
from generator.counting import texts
from generator.counting.architecture import Head, Part, Tie, holder, part_of
from generator.counting.families import FAMILIES, declaration
from generator.counting.switches import FirstOf, Rule
from generator.site import compute_view, content, render, search_records, translation
from generator.site.content import CONTENT, Text
from generator.site.pages import errata
from generator.site.render import SiteOptions
from generator.site.views import Model, model_of

LANGUAGES = sorted(p.name for p in CONTENT.iterdir() if p.is_dir())
LOAD = content.load
FAMILY_TEXTS = "families.yaml"  # read by the counting layer (generator/counting/texts.py), not by a page kind


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
    patch.setattr(texts, "CONTENT", root)  # the families' words of ``language`` come from the same folder
    found: list[str] = []
    try:
        for page in render.pages(models, language):  # the core pages, then every page kind of generator/site/pages/
            page.gather()  # what a build gathers where the page is rendered
        renderer = render.Renderer(SiteOptions(language=language))
        renderer.model_files(models[0])
        renderer.not_found(models)
        for model in models:  # the search index's record of each model page
            search_records.model_record(model, renderer.text)
    except InputError as error:
        found += [str(p) for p in error.problems]
    except texts.MissingTextError:
        return family_text_problems(language, root)  # the families' words stopped the pages: what they lack
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
        if path not in documents and path.name != FAMILY_TEXTS:
            found.append(f"{path}: no page kind reads this file")
    return found + family_text_problems(language, root) + compute_text_problems(language, root)


def family_text_problems(language: str, root: Path) -> list[str]:
    """What families.yaml lacks for the families' declarations, and what it holds that none declares."""
    path = root / language / FAMILY_TEXTS
    if not path.is_file():
        return [f"{path}: expected the families' texts, found no file"]
    found: list[str] = []
    for family in FAMILIES.values():
        try:
            texts.with_texts(family, language, root)
        except texts.MissingTextError as error:
            found.append(str(error))
            continue
        words = texts.family_texts(family.name, language, root)
        for kind in ("blocks", "modules", "roles", "attentions"):  # every one the family can declare
            missing = sorted(declared_keys(family.name, kind) - set(getattr(words, kind)))
            found += [
                f"{path}: families.{family.name}.{kind}.{key}: expected a text here, found none" for key in missing
            ]
    try:
        texts.part_titles(language, root)
    except texts.MissingTextError as error:
        found.append(str(error))
    data = texts.load(language, root)
    found += [f"{path}: {key}: not a section the code reads" for key in data if key not in SECTIONS]
    found += [f"{path}: families.{name}: no family of this name" for name in data["families"] if name not in FAMILIES]
    found += [f"{path}: parts.{key}: no part of this name" for key in data.get("parts") or {} if key not in PARTS]
    own = {name: data["families"].get(name) or {} for name in FAMILIES}
    found += [
        f"{path}: families.{name}.{key}: not a section the code reads"
        for name, section in own.items()
        for key in section
        if key
        not in ("title", "symbols", "switches", "blocks", "modules", "roles", "attentions", "rules", "differences")
    ]
    kinds = (
        ("symbols", "symbol"),
        ("switches", "switch"),
        ("blocks", "block"),
        ("modules", "module"),
        ("roles", "tensor role"),
        ("attentions", "attention module"),
        ("rules", "rule"),
    )
    for kind, one in kinds:
        declared = {name: declared_keys(name, kind) for name in FAMILIES}
        for name, section in own.items():
            extra = [key for key in section.get(kind) or {} if key not in declared[name]]
            found += [f"{path}: families.{name}.{kind}.{key}: the family declares no such {one}" for key in extra]
        read = {key for name, keys in declared.items() for key in keys if key not in (own[name].get(kind) or {})}
        found += [
            f"{path}: {kind}.{key}: no family reads this shared text" for key in data.get(kind) or {} if key not in read
        ]
    return found


@functools.cache
def compute_keys() -> dict[str, frozenset[str]]:
    """The keys of compute.yaml any declaration can ask for: every family but the 2017 Transformer
    (no transformers class runs it, so its page shows no step), every head, every path of switches."""
    found: dict[str, set[str]] = {kind: set() for kind in compute_view.KINDS}
    for family in FAMILIES.values():
        if family.name == "transformer":
            continue
        for head in family.heads:
            for _, architecture in every_path(family, head):
                for kind, keys in compute_view.word_keys(architecture).items():
                    found[kind] |= keys
    return {kind: frozenset(keys) for kind, keys in found.items()}


def compute_text_problems(language: str, root: Path) -> list[str]:
    """What compute.yaml lacks for the declarations' steps, products and storages, and what none produces."""
    text = LOAD("compute", language, root)
    path = text.document.path
    found = [f"{path}: {key}: not a section the code reads" for key in text.document.data if key not in compute_keys()]
    for kind, keys in compute_keys().items():
        have = {str(key) for key in text.document.data.get(kind) or {}}
        found += [f"{path}: {kind}.{key}: expected a text here, found none" for key in sorted(keys - have)]
        found += [f"{path}: {kind}.{key}: no declaration produces this key" for key in sorted(have - keys)]
    return found


SECTIONS = ("parts", "symbols", "switches", "blocks", "modules", "roles", "attentions", "rules", "families")
PARTS = {part.value for part in Part}


def declared_keys(family: str, kind: str) -> frozenset[str]:
    """The names a family declares of one kind: its symbols, switches, blocks, modules, roles (what each
    tensor is), attentions (the modules that hold a derivation's attention runs) or rules (its build and step rules)."""
    found = FAMILIES[family]
    if kind == "symbols":  # a training step's own symbols (ModernBERT's head size d) are worded too
        return frozenset(x.name for x in (*found.symbols, *found.compute_symbols))
    if kind == "switches":
        return frozenset(x.name for x in found.switches)
    if kind == "rules":
        rules = [
            rule for check in found.build_rules for rule in (check.rules if isinstance(check, FirstOf) else (check,))
        ]
        return frozenset(
            rule.name for rule in (*rules, *found.step_rules, *found.inexact_steps) if isinstance(rule, Rule)
        ) | set(texts.CARD_CHECKS)
    return _walked_keys(family)[("blocks", "modules", "roles", "attentions").index(kind)]


@functools.cache
def _walked_keys(family: str) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """The block keys, module keys, tensor roles and attention holders of every path through the family's
    switches, in one walk. An attention holder is a module of a block that holds two or more of its attention
    modules (``architecture.holder``): a run of steps the derivation titles.

    The walk runs the bare declaration (keys only): filling the words in on each of DeBERTa's
    thousands of paths cost most of this file's time and says nothing about the keys.
    """
    bare = declaration(family)
    blocks = [b for head in bare.heads for _, a in every_path(bare, head) for b in a.blocks]
    modules = [m for b in blocks for m in b.modules]
    held = [
        Counter(holder(m) for m in b.modules if any(part_of(b, m, p) is Part.ATTENTION for p in m.params))
        for b in blocks
    ]
    return (
        frozenset(b.key for b in blocks),
        frozenset(m.key for m in modules),
        frozenset(p.role for m in modules for p in m.params),
        frozenset(name for counts in held for name, count in counts.items() if count > 1),
    )


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
        "compute.yaml",
        "diffs.yaml",
        "errata.yaml",
        "exercises.yaml",
        "families.yaml",
        "family-pages.yaml",
        "handout.yaml",
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
    titles = {e.id: e.title for e in errata.pages(models, "zh")[0].gather()["errata"]}  # read from zh/, as patched
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


# The language of a build: `python -m generator build --language CODE` ----------------------


def _one_card(tmp_path: Path) -> Path:
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(MODELS / "bert-base-uncased.yaml", models)
    return models


def test_a_build_in_a_second_language(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The prose comes from content/<language>/ and every page, 404 included, says which language it is in."""
    target = _second_language(
        tmp_path,
        lambda t: t.replace("Exact parameter counts, tensor by tensor,", "逐个张量的精确参数量,"),
        "site.yaml",
    )
    monkeypatch.setattr(content, "CONTENT", target.parents[1])
    monkeypatch.setattr(texts, "CONTENT", target.parents[1])  # the families' words: the same content/
    _english_catalog(tmp_path, "zh", monkeypatch)
    out = tmp_path / "out"
    args = ["build", "--models", str(_one_card(tmp_path)), "--out", str(out), "--no-search", "--jobs", "1", "--quiet"]
    assert main([*args, "--language", "zh"]) == 0
    home = (out / "index.html").read_text("utf-8")
    assert home.startswith('<!doctype html>\n<html lang="zh-CN">\n')
    assert '<meta name="description" content="逐个张量的精确参数量, for BERT and its variants.">' in home
    for page in ("404.html", "models/bert-base-uncased/index.html", "errata/index.html"):
        assert '<html lang="zh-CN">' in (out / page).read_text("utf-8"), page
    assert main(args) == 0  # English at the root, the zh edition under zh/
    home = (out / "index.html").read_text("utf-8")
    assert home.startswith('<!doctype html>\n<html lang="en">\n') and "逐个" not in home


def _english_catalog(tmp_path: Path, language: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """locales/ where a build looks for it, with a catalog of ``language`` that keeps every template sentence in English."""
    locales = tmp_path / "locales"
    path = translation.catalog_path(language, locales)
    path.parent.mkdir(parents=True)
    with (translation.LOCALES / "messages.pot").open("rb") as file:
        catalog = read_po(file)
    for message in catalog:
        message.string = message.id
    with path.open("wb") as file:
        write_po(file, catalog)
    monkeypatch.setattr(translation, "LOCALES", locales)


def test_an_unknown_language(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "generator", "build", "--language", "xx", "--models", str(MODELS), "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"{CONTENT / 'xx'}:1:1: --language: expected one of the languages in content/ ({', '.join(LANGUAGES)}), "
        "found 'xx'",
        "error: 1 problem(s) in 1 file(s); out/ was left unchanged",
    ]
    assert not out.exists()


# The families' words (content/<language>/families.yaml), tied to the declarations the same way. ---


# Each case: what a translation changes in families.yaml (old text, new text), and what the check says.
FAMILY_TEXT_CASES = {
    "a family lost": (
        [("  bert:\n    title: BERT\n", "")],
        ["families: no section for the family 'bert'"],
    ),
    "a symbol lost": (
        [("      G: stored groups of layers (shared across depth)\n", "")],
        ["families.albert.symbols.G: expected a text here, found none"],
    ),
    "a module lost": (
        [("      sentence-order-classifier: sentence-order classifier\n", "")],
        ["families.albert.modules.sentence-order-classifier: expected a text here, found none"],
    ),
    "a tensor's role lost": (
        [("  elementwise-scale: elementwise scale\n", "")],
        ["families.mobilebert.roles.elementwise-scale: expected a text here, found none"],
    ),
    "a check's message lost": (
        [
            (
                '  no-label: "num_labels is 0: the classifier has no output, and the classification loss raises on it"\n',
                "",
            )
        ],
        # every family with a classification head has the rule, and each says so
        [
            f"families.{name}.rules.no-label: expected a text here, found none"
            for name in sorted(FAMILIES)
            if name != "transformer"  # the 2017 Transformer has no classification head
        ],
    ),
    "texts without code": (
        [
            ("    title: BERT\n", "    title: BERT\n    switches:\n      trigram: a switch BERT does not have\n"),
            ("  T: token types, or segments\n", "  T: token types, or segments\n  Z: a symbol no family has\n"),
            ("      sop-head: sentence-order head\n", "      sop-head: sentence-order head\n      nsp-head: a head\n"),
            ("\nrules:\n", "\nrules:\n  seven-layers: a rule no family has\n"),
            ("  kernel: kernel\n", "  kernel: kernel\n  gate: a role no tensor has\n"),
            ("    title: MobileBERT\n", "    title: MobileBERT\n    roles:\n      kernel: MobileBERT has none\n"),
            ("    title: ELECTRA\n", "    title: ELECTRA\n    rules:\n      padding-fits: RoBERTa's\n"),
        ],
        [
            "symbols.Z: no family reads this shared text",
            "families.bert.switches.trigram: the family declares no such switch",
            "families.albert.blocks.nsp-head: the family declares no such block",
            "families.mobilebert.roles.kernel: the family declares no such tensor role",
            "roles.gate: no family reads this shared text",
            "families.electra.rules.padding-fits: the family declares no such rule",
            "rules.seven-layers: no family reads this shared text",
        ],
    ),
}


@pytest.mark.parametrize("case", FAMILY_TEXT_CASES)
def test_a_translation_of_the_families_words_that_differs_from_the_code(
    case: str, models: list[Model], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edits, expected = FAMILY_TEXT_CASES[case]

    def edit(text: str) -> str:
        for old, new in edits:
            assert old in text
            text = text.replace(old, new)
        return text

    target = _second_language(tmp_path, edit, FAMILY_TEXTS)
    assert problems(models, "zh", target.parents[1], monkeypatch) == [f"{target}: {line}" for line in expected]


def test_the_families_words_reach_the_declarations() -> None:
    albert, bert = FAMILIES["albert"], FAMILIES["bert"]
    assert {s.name: s.meaning for s in albert.symbols}["G"] == "stored groups of layers (shared across depth)"
    assert {s.name: s.meaning for s in albert.symbols}["H"] == "hidden size"  # the shared text
    assert albert.differences[0].startswith("**Factorized embeddings.**")
    assert bert.differences == ()
    assert (bert.title, FAMILIES["deberta-v2"].title) == ("BERT", "DeBERTa-v2/v3")
    assert [t for _, t in texts.family_texts("xlm-roberta").differences] == list(FAMILIES["xlm-roberta"].differences)
    assert {s.name: s.meaning for s in FAMILIES["mobilebert"].switches}["tied"] == (
        "the output layer reuses the token embedding table"
    )


def test_the_words_of_blocks_and_modules_reach_the_architecture() -> None:
    blocks = {
        b.key: b
        for b in FAMILIES["distilbert"]
        .architecture({"n_layers": 6, "tie_word_embeddings": True}, Head.MASKED_LM)
        .blocks
    }
    assert blocks["layer"].title == "transformer block"  # DistilBERT's own, over the shared "encoder layer"
    assert [(m.key, m.label) for m in blocks["layer"].modules][-3:] == [
        ("feed-forward-in", "feed-forward in"),
        ("feed-forward-out", "feed-forward out"),
        ("output-layernorm", "output LayerNorm"),
    ]
    # What each tensor is, by the key it declares: a LayerNorm's two ("scale", "shift") and a tied slot's.
    norm = blocks["layer"].modules[-1]
    assert [(p.name, p.role) for p in norm.params] == [("weight", "scale γ"), ("bias", "shift β")]
    tied = [p for b in blocks.values() for m in b.modules for p in m.params if isinstance(p, Tie)]
    assert [(p.name, p.role) for p in tied] == [("weight", "reuses the token embeddings")]


# The words of the compute section (content/<language>/compute.yaml), tied to the declarations. -----


def test_the_compute_words_are_those_the_declarations_produce(
    models: list[Model], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A storage only a sequence-classification head with one label keeps, a product only DeBERTa's
    disentangled attention performs, and a key no declaration produces."""

    def edit(text: str) -> str:
        text = text.replace("  regression-loss: regression loss (mean squared error)\n", "")
        text = text.replace("  p2c-scores: position-to-content scores\n", "")
        return text.replace("  token types: token types\n", "  token types: token types\n  made up: a storage\n")

    target = _second_language(tmp_path, edit, "compute.yaml")
    assert problems(models, "zh", target.parents[1], monkeypatch) == [
        f"{target}: steps.regression-loss: expected a text here, found none",
        f"{target}: products.p2c-scores: expected a text here, found none",
        f"{target}: saved.made up: no declaration produces this key",
    ]


def test_the_family_words_follow_the_build_language(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build in another language shows that language's family words; the anchors made of keys stay."""
    root = tmp_path / "content"
    shutil.copytree(CONTENT / "en", root / "xx")
    path = root / "xx" / FAMILY_TEXTS
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["families"]["bert"]["title"] = "Bert-xx"
    data["modules"]["feed-forward-in"] = "xx-feed-forward-in"
    data["roles"]["shift"] = "xx-shift"
    data["blocks"]["layer"] = "xx-encoder-layer"
    data["symbols"]["H"] = "xx-hidden-width"
    data["parts"]["attention"] = "xx-attention-part"
    first = next(iter(data["families"]["albert"]["differences"]))
    data["families"]["albert"]["differences"][first] = "xx-albert-paragraph"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    monkeypatch.setattr(content, "CONTENT", root)  # where --language looks for its folder
    monkeypatch.setattr(texts, "CONTENT", root)
    _english_catalog(tmp_path, "xx", monkeypatch)
    models = tmp_path / "models"
    models.mkdir()
    for name in ("bert-base-uncased", "albert-base-v2"):
        shutil.copy(MODELS / f"{name}.yaml", models)

    out = tmp_path / "site"
    assert main(["build", "--models", str(models), "--out", str(out), "--language", "xx", "--no-search"]) == 0

    model = (out / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    assert '<html lang="xx">' in model
    assert '<a href="../../families/bert/index.html">Bert-xx</a>' in model
    step = re.search(r'<tr id="d-layer-feed-forward-in">\s*<th scope="row">([^<]*)<', model)
    assert step is not None and step.group(1).strip() == "xx-feed-forward-in"  # the words move, the anchor stays
    assert '<h3 id="d-layer">Xx-encoder-layer' in model
    beta = re.search(r'<tr id="t-encoder\.layer\.0\.output\.LayerNorm\.bias">.*?<td>([^<]*)</td></tr>', model, re.S)
    assert beta is not None and beta.group(1) == "xx-shift"  # what the tensor is, in the build's language
    assert "xx-hidden-width" in model
    family = (out / "families" / "bert" / "index.html").read_text(encoding="utf-8")
    assert "The Bert-xx family" in family and "xx-hidden-width" in family
    albert = (out / "families" / "albert" / "index.html").read_text(encoding="utf-8")
    assert "<p>xx-albert-paragraph</p>" in albert
    shared = (out / "families" / "index.html").read_text(encoding="utf-8")
    assert "<var>H</var> xx-hidden-width (<code>hidden_size</code>)" in shared
    calculator = json.loads((out / "calculator" / "bert.json").read_text(encoding="utf-8"))
    labels = {s["key"]: s["label"] for b in calculator["blocks"] for s in b["steps"]}
    assert labels["feed-forward-in"] == "xx-feed-forward-in"
    assert "xx-attention-part" in (out / "charts" / "index.html").read_text(encoding="utf-8")


def test_a_language_without_the_families_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = _second_language(tmp_path, lambda t: t + "\n", FAMILY_TEXTS)
    target.unlink()
    monkeypatch.setattr(content, "CONTENT", target.parents[1])
    monkeypatch.setattr(texts, "CONTENT", target.parents[1])
    out = tmp_path / "out"
    args = ["build", "--models", str(_one_card(tmp_path)), "--out", str(out), "--no-search", "--language", "zh"]
    assert main(args) == 1
    assert (
        f"{target}:1:1: families: expected the families' words in this language, found no file"
        in capsys.readouterr().err
    )
    assert not out.exists()
