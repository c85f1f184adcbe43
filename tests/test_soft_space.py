"""A space beside a filled-in value in a Chinese text: it stays beside Latin text and goes between Han."""

from __future__ import annotations

import re

import pytest
from babel.messages.pofile import read_po

from generator.cards.yamlsource import load_document
from generator.site import content, translation
from generator.site.soft_space import HAN, SOFT_SPACE, soften
from generator.site.typography import tidy_spacing

# Values that start with their own punctuation ("，你是不是想写 …"), so the text writes none before them.
PUNCTUATED = {"suggestion"}


@pytest.mark.parametrize(
    ("text", "softened"),
    [
        ("一个 %(block)s 的", f"一个{SOFT_SPACE}%(block)s{SOFT_SPACE}的"),
        ("保存 {name}", f"保存{SOFT_SPACE}{{name}}"),
        ("词表 {V:,} 个", f"词表{SOFT_SPACE}{{V:,}}{SOFT_SPACE}个"),
        # Only between Han and a placeholder: Latin text and marks keep their spaces as written.
        ("BERT %(block)s", "BERT %(block)s"),
        ("%(a)s %(b)s", "%(a)s %(b)s"),
        ("类 abs 的", "类 abs 的"),
    ],
)
def test_a_space_between_han_and_a_placeholder_is_soft(text: str, softened: str) -> None:
    assert soften(text, "zh") == softened
    assert soften(text, "en") == text  # English is never changed


@pytest.mark.parametrize(
    ("value", "page"),
    [
        ("编码器层", "<p>一个编码器层的 11 步</p>"),
        ("Transformer 块", "<p>一个 Transformer 块的 11 步</p>"),
        ("<a>编码器层</a>", "<p>一个<a>编码器层</a>的 11 步</p>"),  # across tags
        ("<var>W</var>", "<p>一个 <var>W</var> 的 11 步</p>"),
    ],
)
def test_a_soft_space_goes_only_between_two_han_characters(value: str, page: str) -> None:
    html = "<p>" + soften("一个 {block} 的 11 步", "zh").format(block=value) + "</p>"
    assert tidy_spacing(html, "zh") == page


def test_a_soft_space_in_an_attribute_is_resolved_and_one_a_script_fills_in_is_left_to_it() -> None:
    text = soften("一个 {block} 的", "zh")
    html = f'<a title="{text.format(block="层")}">x</a><script>var s = "{text}";</script><p data-s="{text}">'
    assert tidy_spacing(html, "zh") == f'<a title="一个层的">x</a><script>var s = "{text}";</script><p data-s="{text}">'


def test_a_kept_element_after_a_dropped_soft_space_is_still_kept_and_what_follows_it_still_tidied() -> None:
    # Two soft spaces go before the <code>: it moves two characters, its spaces stay as written, and the
    # space right after it goes.
    text = soften("一个 {block} 的", "zh").format(block="层")
    html = f"<p>{text}</p><code>a ， b</code> ，这里"
    assert tidy_spacing(html, "zh") == "<p>一个层的</p><code>a ， b</code>，这里"


def _texts(value: object) -> list[str]:
    if isinstance(value, dict):
        return [text for v in value.values() for text in _texts(v)]
    return [value] if isinstance(value, str) else []


def test_chinese_texts_put_a_space_between_han_and_each_placeholder() -> None:
    """So that a value starting with Latin letters or digits is spaced from the Han beside it."""
    beside = re.compile(rf"[{HAN}](%\((\w+)\)s|\{{(\w+)[^{{}}]*\}})|(%\((\w+)\)s|\{{(\w+)[^{{}}]*\}})[{HAN}]")
    with translation.catalog_path("zh").open("rb") as file:
        texts = [m.string for m in read_po(file) if isinstance(m.string, str)]
    for page in sorted(p.stem for p in (content.CONTENT / "zh").glob("*.yaml")):
        texts += _texts(load_document(content.CONTENT / "zh" / f"{page}.yaml").data)
    found = [
        text
        for text in texts
        for m in beside.finditer(text)
        if not {m.group(2), m.group(3), m.group(5), m.group(6)} & PUNCTUATED
    ]
    assert found == []
