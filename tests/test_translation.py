"""A second edition's words: the templates' catalog (Babel, gettext) and content/<language>/, checked.

English is the source. A translation that lacks or adds a text, drops or invents a placeholder, or
types a number where English has a placeholder fails the build's check, located as file:line.
"""

from __future__ import annotations

import functools
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from babel.messages.pofile import read_po, write_po

from conftest import cards_through, catalog_copy, snapshot
from generator.build import pipeline
from generator.cards.problems import display_path
from generator.cli import main
from generator.counting import texts
from generator.site import content, formats, translation
from generator.site.content import CONTENT
from generator.site.page import TEMPLATES
from generator.site.translation import LOCALES


def _ids(path: str) -> set[str]:
    with (LOCALES / path).open("rb") as file:
        return {str(message.id) for message in read_po(file) if message.id}


def test_the_catalog_template_holds_every_marked_sentence_of_the_templates() -> None:
    """`make messages` was run after the templates' words last changed."""
    marked = {message for _, _, message in translation.extract()}
    assert "Page not found" in marked and "Skip to content" in marked
    assert _ids("messages.pot") == marked


def test_each_language_catalog_has_the_catalog_templates_sentences() -> None:
    languages = sorted(p.name for p in LOCALES.iterdir() if p.is_dir())
    assert "zh" in languages
    for language in languages:
        assert _ids(f"{language}/LC_MESSAGES/messages.po") == _ids("messages.pot"), language


# A second edition built whole, from a small translation: tests/translation/zh.yaml, the rest copied. --

FIXTURE = Path(__file__).parent / "translation" / "zh.yaml"
CARDS = ("bert-base-uncased", "albert-base-v2", "distilbert-base-uncased")


def write_translation(folder: Path, edit: Callable[[dict[str, Any]], None] | None = None) -> tuple[Path, Path]:
    """content/ and locales/ with a zh edition: the fixture's Chinese, English for every other text.

    ``edit`` may change the fixture first, to break the translation one way."""
    fixture = yaml.safe_load(FIXTURE.read_text("utf-8"))
    if edit is not None:
        edit(fixture)
    root = folder / "content"
    shutil.copytree(CONTENT, root, ignore=shutil.ignore_patterns("zh"))
    shutil.copytree(CONTENT / "en", root / "zh")
    for name, words in fixture["content"].items():
        path = root / "zh" / name
        data = yaml.safe_load(path.read_text("utf-8"))
        for dotted, text in words.items():
            *keys, last = dotted.split(".")
            section = functools.reduce(lambda d, k: d.setdefault(k, {}), keys, data)
            if text is None:  # a text the translation loses
                del section[last]
            else:
                section[last] = text
        path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000), "utf-8")
    with (LOCALES / "messages.pot").open("rb") as file:
        catalog = read_po(file, locale="zh")
    for message in catalog:
        if message.id:
            message.string = fixture["templates"].get(message.id, message.id)
    for msgid, text in fixture["templates"].items():
        if text is None:  # a sentence the catalog loses
            del catalog[msgid]
        elif msgid not in catalog:  # a sentence no template has
            catalog.add(msgid, text)
    locales = folder / "locales"
    translation.catalog_path("zh", locales).parent.mkdir(parents=True)
    with translation.catalog_path("zh", locales).open("wb") as file:
        write_po(file, catalog, width=0)
    return root, locales


@pytest.fixture
def translated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The fixture translation, where a build looks for content/ and locales/."""
    root, locales = write_translation(tmp_path)
    monkeypatch.setattr(content, "CONTENT", root)
    monkeypatch.setattr(texts, "CONTENT", root)
    monkeypatch.setattr(translation, "LOCALES", locales)
    return root, locales


def _build(tmp_path: Path, *more: str, cards: tuple[str, ...] = CARDS) -> Path:
    out = tmp_path / "site"
    assert (
        main(
            [
                "build",
                "--models",
                str(catalog_copy(tmp_path / "models", cards)),
                "--out",
                str(out),
                "--no-search",
                "--no-cache",
                *more,
            ]
        )
        == 0
    )
    return out


def _pages(folder: Path) -> list[str]:
    return sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*.html") if not p.is_relative_to(folder / "zh")
    )


# A page of each kind, by the template that draws it: every page template of templates/ is here (checked below).
PAGE_KINDS = {
    "404.html": "404.html",
    "calculator.html": "calculator/index.html",
    "charts.html": "charts/index.html",
    "compare.html": "compare/index.html",
    "diff.html": "diffs/bert-base-uncased--albert-base-v2/index.html",
    "diffs.html": "diffs/index.html",
    "errata.html": "errata/index.html",
    "exercises.html": "exercises/index.html",
    "families.html": "families/index.html",
    "family.html": "families/bert/index.html",
    "handout.html": "handout/index.html",
    "index.html": "index.html",
    "model.html": "models/bert-base-uncased/index.html",
    "search.html": "search/index.html",
}
EXERCISE = "exercise-bert-base-v30000"  # a card the exercises page works through: without one it is not built


def test_every_english_page_has_its_twin_with_every_anchor_and_value(
    translated: tuple[Path, Path], tmp_path: Path
) -> None:
    out = _build(tmp_path, "--base-url", "https://atlas.example/", cards=(*CARDS, EXERCISE))
    english = _pages(out)
    templates = {p.name for p in TEMPLATES.glob("*.html") if not p.name.startswith("_") and p.name != "base.html"}
    assert set(PAGE_KINDS) == templates  # a new kind of page is listed above, so that its twin is checked
    assert set(PAGE_KINDS.values()) <= set(english)
    assert _pages(out / "zh") == english
    for path in english:
        page, twin = (out / path).read_text("utf-8"), (out / "zh" / path).read_text("utf-8")
        for attribute in ("id", "data-value"):
            found = re.findall(rf'\s{attribute}="([^"]*)"', page)
            assert Counter(re.findall(rf'\s{attribute}="([^"]*)"', twin)) == Counter(found), (path, attribute)
    assert (out / "zh" / "calculator" / "bert.json").is_file()


def test_each_edition_names_its_language_and_links_its_twin(translated: tuple[Path, Path], tmp_path: Path) -> None:
    out = _build(tmp_path, "--base-url", "https://atlas.example/")
    page = (out / "models" / "bert-base-uncased" / "index.html").read_text("utf-8")
    twin = (out / "zh" / "models" / "bert-base-uncased" / "index.html").read_text("utf-8")
    assert '<html lang="en">' in page and '<html lang="zh-CN">' in twin
    alternates = (
        '<link rel="alternate" hreflang="en" href="https://atlas.example/models/bert-base-uncased/">\n'
        '<link rel="alternate" hreflang="x-default" href="https://atlas.example/models/bert-base-uncased/">\n'
        '<link rel="alternate" hreflang="zh-CN" href="https://atlas.example/zh/models/bert-base-uncased/">\n'
    )
    assert alternates in page and alternates in twin
    assert '<link rel="canonical" href="https://atlas.example/zh/models/bert-base-uncased/">' in twin
    switch = '<a class="language" href="{}" hreflang="{}" lang="{}">{}</a>'
    assert switch.format("../../zh/models/bert-base-uncased/index.html", "zh-CN", "zh-CN", "中文") in page
    assert switch.format("../../../models/bert-base-uncased/index.html", "en", "en", "English") in twin
    assert "中文" not in twin and "English</a>" not in page
    assert '<script src="../../static/language.js" defer></script>' in page  # keeps a deep link's anchor
    # The words: the catalog's for the templates, content/zh/ for the rest; the numbers are the same objects'.
    assert '<a class="skip" href="#main">跳到正文</a>' in twin
    assert "<title>BERT-Base, uncased：109,482,240 个参数 · BERT Parameter Atlas</title>" in twin
    home = (out / "zh" / "index.html").read_text("utf-8")
    assert '<a class="language" href="../index.html" hreflang="en"' in home  # the home page keeps index.html
    missing = (out / "zh" / "404.html").read_text("utf-8")
    assert "<h1>页面不存在</h1>" in missing and 'href="https://atlas.example/zh/index.html"' in missing
    sitemap = (out / "sitemap.xml").read_text("utf-8")
    assert "<loc>https://atlas.example/models/bert-base-uncased/</loc>" in sitemap
    assert "<loc>https://atlas.example/zh/models/bert-base-uncased/</loc>" in sitemap
    assert sitemap.count("<loc>") == 2 * sitemap.count("<loc>https://atlas.example/zh/")
    assert not (out / "zh" / "sitemap.xml").exists() and not (out / "zh" / "robots.txt").exists()


@pytest.mark.parametrize(
    ("count", "said"),
    [
        (109_482_240, "1.09 亿"),  # BERT-Base: three significant digits
        (335_141_888, "3.35 亿"),
        (110_000_000, "1.1 亿"),  # no trailing zero
        (4_385_920, "439 万"),
        (12_345, "1.23 万"),
        (10_000, "1 万"),
        (99_995_000, "1 亿"),  # rounded first: never 10000 万
        (10_700_000_000, "107 亿"),
        (1_234_567_890_123, "1.23 万亿"),
        (9_999, ""),  # read as written
    ],
)
def test_a_chinese_reading_is_three_significant_digits_in_the_largest_unit(count: int, said: str) -> None:
    assert formats.reading(count, "zh") == said
    assert formats.reading(count, "en") == ""


def test_zh_pages_give_each_stated_total_its_reading(translated: tuple[Path, Path], tmp_path: Path) -> None:
    """The model headline and description, the home and family lists, the comparison and the handout."""
    out = _build(tmp_path)
    total = 109_482_240
    said = formats.reading(total, "zh")
    about = f'<span class="reading">（约 {said}）</span>'
    model = (out / "zh" / "models" / "bert-base-uncased" / "index.html").read_text("utf-8")
    assert f'data-value="{total}">{total:,}</strong>{about}</p>' in model  # no space before a full-width bracket
    assert f"有 {total:,} 个参数（约 {said}）：" in model  # the description, from content/zh/
    home = (out / "zh" / "index.html").read_text("utf-8")
    assert f'<td class="n count">{total:,}</td>\n  <td class="n">{said}</td>' in home
    family = (out / "zh" / "families" / "bert" / "index.html").read_text("utf-8")
    assert f'>{total:,}</td><td class="n" data-pagefind-ignore="all">{said}</td>' in family
    compare = (out / "zh" / "compare" / "index.html").read_text("utf-8")
    assert f'<strong>{total:,}</strong><br><span class="bytes">（约 {said}）</span></td>' in compare
    handout = (out / "zh" / "handout" / "index.html").read_text("utf-8")
    assert f"<strong>{total:,}</strong>{about}</td>" in handout
    english = (out / "models" / "bert-base-uncased" / "index.html").read_text("utf-8")
    assert "亿" not in english and '<span class="rounded">≈ 109.5M</span>' in english


def test_one_edition_alone_links_no_other(translated: tuple[Path, Path], tmp_path: Path) -> None:
    out = _build(tmp_path, "--language", "zh")
    page = (out / "models" / "bert-base-uncased" / "index.html").read_text("utf-8")
    assert '<html lang="zh-CN">' in page and "hreflang" not in page and not (out / "zh").exists()
    assert '<a class="skip" href="#main">跳到正文</a>' in page


# Text a reader sees: kept elements (code, pre, script, style) stand as one Latin letter, tags as nothing.
_KEPT = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1>", re.S)
# A space beside a full-width mark, or an ASCII comma or semicolon after a Chinese item.
_SPACED_MARK = re.compile(r"[ \t\n]+[，。、；：（）]|[，。、；：（）][ \t\n]+")
_ASCII_SEPARATOR = re.compile(r"[\u4e00-\u9fff）][,;] ")


def test_a_chinese_page_joins_with_chinese_punctuation_and_no_space_beside_it(
    translated: tuple[Path, Path], tmp_path: Path
) -> None:
    """Templates join sentences with a space and lists with marks: on zh pages, the edition's marks, unspaced."""
    out = _build(tmp_path, "--language", "zh")
    page = (out / "models" / "bert-base-uncased" / "index.html").read_text("utf-8")
    state = (
        "fp16 权重（2 字节）、fp16 梯度（2 字节）、fp32 主权重（4 字节）、fp32 一阶矩（4 字节）和 fp32 二阶矩（4 字节）"
        "：共 16 字节。一阶矩是梯度的滑动平均；"
    )
    assert state in page
    assert '<th scope="row">权重，fp16 或 bf16</th>' in page
    for path in sorted(out.rglob("*.html")):
        text = re.sub(r"<[^>]*>", "", _KEPT.sub("x", path.read_text("utf-8")))
        assert _SPACED_MARK.findall(text) == [], path
        assert _ASCII_SEPARATOR.findall(text) == [], path


# A translation with one thing wrong: the build stops before it starts, and says where. --------------


def _line(path: Path, text: str) -> int:
    """The line, from 1, on which ``text`` first appears."""
    return next(i for i, line in enumerate(path.read_text("utf-8").splitlines(), 1) if text in line)


def _failed_build(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    templates: dict[str, str | None],
    site: dict[str, str | None],
) -> tuple[list[str], Path, Path]:
    """The error lines of a build from the fixture translation changed so; its zh/site.yaml and zh catalog."""

    def edit(fixture: dict[str, Any]) -> None:
        fixture["templates"].update(templates)
        fixture["content"]["site.yaml"].update(site)

    root, locales = write_translation(tmp_path, edit)
    monkeypatch.setattr(content, "CONTENT", root)
    monkeypatch.setattr(texts, "CONTENT", root)
    monkeypatch.setattr(translation, "LOCALES", locales)
    out = tmp_path / "site"
    args = ["build", "--models", str(catalog_copy(tmp_path / "models", CARDS[:1])), "--out", str(out), "--no-search"]
    assert main([*args, "--no-cache"]) == 1
    assert not out.exists()
    lines = capsys.readouterr().err.splitlines()
    return lines, root / "zh" / "site.yaml", translation.catalog_path("zh", locales)


def test_a_catalog_without_a_sentence_or_with_one_no_template_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, _, po = _failed_build(tmp_path, monkeypatch, capsys, {"Models": None, "Made up": "编的"}, {})
    base = TEMPLATES / "base.html"
    extra, models = _line(po, 'msgid "Made up"'), _line(base, '_("Models")')
    # Problems are sorted by path, and whether /tmp sorts before the clone depends on where it lies.
    assert sorted(lines[:2]) == sorted(
        [
            f"{display_path(po)}:{extra}:1: msgid: no template has this text: remove it",
            f"{display_path(base)}:{models}:1: expected a translation of 'Models' in messages.po, found none",
        ]
    )


def test_a_catalog_that_drops_a_placeholder_or_types_its_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    jump = "Jump to a family in the table of all %(count)s variants:"
    broken = {jump: "在全部3个变体的表中跳到一个模型族：", "Link copied: {address}": "链接已复制"}
    lines, _, po = _failed_build(tmp_path, monkeypatch, capsys, broken, {})
    line = _line(po, 'msgid "Jump to a family')  # the entry starts there; its msgstr follows
    where = f"{display_path(po)}:{line}:1: msgstr:"
    copied = _line(po, 'msgid "Link copied: {address}"')
    assert sorted(lines[:3]) == sorted(
        [
            f"{where} expected the placeholder 'count', as in English, found none",
            f"{where} the number 3 is not in the English text: write a placeholder (count)",
            f"{display_path(po)}:{copied}:1: msgstr: expected the placeholder 'address', as in English, found none",
        ]
    )


def test_content_that_loses_a_text_adds_one_or_types_a_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    site = {
        "search.description": None,
        "search.made-up": "编的",
        "model.title": "{title}：109,482,240 个参数 · {site}",
    }
    lines, path, _ = _failed_build(tmp_path, monkeypatch, capsys, {}, site)
    shown = display_path(path)
    title, search, made_up = _line(path, "title: "), _line(path, "search:"), _line(path, "made-up:")
    assert lines[:4] == [
        f"{shown}:{title}:10: model.title: expected the placeholder 'total', as in English, found none",
        f"{shown}:{title}:10: model.title: the number 109,482,240 is not in the English text: write a placeholder (site, title, total)",
        f"{shown}:{search}:1: search: expected the key 'description' here, as in English, found none",
        f"{shown}:{made_up}:3: search.made-up: not a key in English",
    ]


def test_a_catalog_alone_publishes_no_edition(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A language with a catalog in locales/ but no content/ folder gets no edition: English alone."""
    root = tmp_path / "content"
    shutil.copytree(CONTENT, root, ignore=shutil.ignore_patterns("zh"))
    monkeypatch.setattr(content, "CONTENT", root)
    monkeypatch.setattr(texts, "CONTENT", root)
    assert translation.catalog_path("zh").is_file()
    out = _build(tmp_path)
    assert not (out / "zh").exists()
    assert "hreflang" not in (out / "index.html").read_text("utf-8")


def test_a_rebuild_of_both_editions_reuses_every_page(
    translated: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each edition keeps its own entries in the cache: nothing changed, nothing is counted again."""
    models = catalog_copy(tmp_path / "models", CARDS)
    out, cache = tmp_path / "site", tmp_path / "cache"
    args = ["build", "--models", str(models), "--out", str(out), "--no-search", "--cache-dir", str(cache), "-j", "1"]
    assert main(args) == 0
    first = snapshot(out)
    # Without a base URL no alternate is written: search engines take one only at a full address.
    assert 'rel="alternate"' not in (out / "index.html").read_text("utf-8")
    assert 'class="language"' in (out / "index.html").read_text("utf-8")
    seen = cards_through(monkeypatch, pipeline, "named_or_counted")
    assert main(args) == 0
    assert (seen, snapshot(out)) == ([], first)
    assert any(path.startswith("zh/models/") for path in first)
