"""A Chinese page's spacing: no whitespace beside a full-width mark, code and markup kept as written."""

from __future__ import annotations

import pytest

from generator.site.typography import tidy_spacing


@pytest.mark.parametrize(
    ("html", "tidied"),
    [
        # Two sentences a template joins with a space; a note in brackets after a name.
        ("<p>构建）。 对于 transformers 的模型</p>", "<p>构建）。对于 transformers 的模型</p>"),
        ("<h4>自注意力 （共 4 步）</h4>", "<h4>自注意力（共 4 步）</h4>"),
        # Across tags: the mark ends a link, the next sentence starts after it; a name in code before a note.
        ('<a href="#a">见上。</a> 对于', '<a href="#a">见上。</a>对于'),
        ("<code>BertModel</code> （本页）", "<code>BertModel</code>（本页）"),
        ("甲，\n  <em>乙</em>", "甲，<em>乙</em>"),
        # Whitespace after code is the page's; the code's own stays. A comment ends the gap as code does.
        ("<code>a </code> <b> ，乙", "<code>a </code><b>，乙"),
        ("<!-- a --> 。", "<!-- a -->。"),
        # A mark in an attribute, then one in the text: only the text's gap goes.
        ('<a title="甲。 乙"> 。 </a> 丙', '<a title="甲。 乙">。</a>丙'),
        # The space between Chinese and Latin letters or digits stays.
        ("BERT-Base 有 109,482,240 个参数。", "BERT-Base 有 109,482,240 个参数。"),
    ],
)
def test_whitespace_beside_a_full_width_mark_goes(html: str, tidied: str) -> None:
    assert tidy_spacing(html, "zh") == tidied


@pytest.mark.parametrize(
    "html",
    [
        "<pre>a ， b</pre>",  # code and preformatted text are as written
        "<code>x 。 y</code>",
        '<script type="application/json">{"a": "甲。 乙"}</script>',
        '<a title="甲。 乙" href="#x">x</a>',  # an attribute is never touched
        "<p>English: one, two; three (four).</p>",
    ],
)
def test_code_markup_and_latin_text_are_kept(html: str) -> None:
    assert tidy_spacing(html, "zh") == html


def test_english_pages_are_never_tidied() -> None:
    html = "<p>A note ， quoted （as is）。 Then more.</p>"
    assert tidy_spacing(html, "en") == html
