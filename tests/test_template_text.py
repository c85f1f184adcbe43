"""No English prose in a template outside a translation mark: every sentence reaches the catalog.

A sentence a template writes as plain text shows in English on every edition's page. This test reads
each template as Jinja's lexer does, drops what ``{% trans %}`` and ``_()`` mark and every tag and
expression, and reads what is left as HTML: text, a label a reader hears, a string a script shows.
Any English word there is reported as template:line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser

import jinja2
import pytest

from generator.site.page import TEMPLATES

# The lexer of the build's environment (render.environment): the same delimiters, the same trimming.
LEXER = jinja2.Environment(extensions=["jinja2.ext.i18n"], trim_blocks=True, lstrip_blocks=True)
GETTEXT = {"_", "gettext", "ngettext", "pgettext", "npgettext"}
# Text inside these is code, a formula's letter or a script's: it stays as written in every edition.
VERBATIM = {"code", "var", "kbd", "samp", "pre", "script", "style"}
# Attributes a reader hears or sees as words (a script shows data-* ones, such as data-count).
WORDED = {"alt", "title", "aria-label", "aria-description", "placeholder", "label"}
# An English word: lower case or capitalized, with its hyphens and apostrophes ("feed-forward", "torch's").
# A name with capitals inside (LayerNorm, FLOPs, GiB), digits (fp32) or underscores (input_ids) is code.
# A token followed by "=" is an attribute a macro writes (data-address="..."), not a word.
TOKEN = re.compile(r"[\w.'’/-]+(?![\w.'’/=-])")
WORD = re.compile(r"[A-Z]?[a-z]+(?:[-'’][a-z]+)*")


def english_words(text: str) -> list[str]:
    """The English words of ``text``: every token of two letters or more that reads as a word, not as code."""
    words = (token.strip(".'’-/") for token in TOKEN.findall(text))
    return [w for w in words if len(w) > 1 and WORD.fullmatch(w)]


class _Reader(HTMLParser):
    """The words of an HTML text a reader meets: text outside code, and worded attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.inside: list[str] = []
        self.found: list[tuple[int, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            # A data-* value is a script's text when it has words at all: "{shown} of {all} models shown".
            if value and (name in WORDED or (name.startswith("data-") and len(english_words(value)) > 1)):
                self.found.append((self.getpos()[0], value))
        if tag in VERBATIM:
            self.inside.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.inside:
            del self.inside[self.inside.index(tag) :]

    def handle_data(self, data: str) -> None:
        if not self.inside:
            start = self.getpos()[0]
            self.found += [(start + i, part) for i, part in enumerate(data.split("\n"))]


def unmarked(source: str) -> Iterator[tuple[int, str]]:
    """Each line of a template's source with English outside a translation mark, and that English."""
    text: list[str] = []  # the source's text, every tag, expression and trans block made a space
    literals: list[tuple[int, str]] = []  # the strings of expressions that are not gettext's argument
    line, trans = 1, 0
    tag: list[tuple[str, str]] = []  # the tokens of the open tag or expression
    calls: list[bool] = []  # for each open parenthesis of a tag: is it a gettext call's
    for lineno, kind, value in LEXER.lex(source):
        if kind == "whitespace" or kind.startswith("comment"):
            continue
        if lineno > line:
            text.append("\n" * (lineno - line))
            line = lineno
        if kind in ("block_begin", "variable_begin"):
            tag, calls = [], []
            text.append(" ")
        elif kind in ("block_end", "variable_end"):
            first = tag[0][1] if tag and kind == "block_end" else ""
            trans += {"trans": 1, "endtrans": -1}.get(first, 0)
            tag = []
        elif kind == "data":
            text.append(" " + "\n" * value.count("\n") if trans else value)
            line += value.count("\n")
        else:
            if value == "(":
                calls.append(bool(tag) and tag[-1][0] == "name" and tag[-1][1] in GETTEXT)
            elif value == ")" and calls:
                calls.pop()
            elif kind == "string" and not (calls and calls[-1]) and len(english_words(value)) > 1:
                literals.append((lineno, value))
            tag.append((kind, value))
    reader = _Reader()
    reader.feed("".join(text))
    reader.close()
    lines: dict[int, list[str]] = {}  # the words a reader meets on each line, text and labels together
    for n, data in reader.found:
        lines.setdefault(n, []).extend(english_words(data))
    found = [(n, " ".join(words)) for n, words in lines.items() if words]
    found += [(n, " ".join(english_words(value))) for n, value in literals]
    yield from sorted(found)


TEMPLATE_NAMES = sorted(p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.glob("*.html"))


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_sentence_of_a_template_is_marked_for_translation(name: str) -> None:
    found = [f"templates/{name}:{line}: {words}" for line, words in unmarked((TEMPLATES / name).read_text("utf-8"))]
    assert found == []


def test_an_unmarked_sentence_label_or_string_is_found_on_its_line() -> None:
    template = (
        '{% trans count=n %}Marked, {{ count }}\ntimes.{% endtrans %} <p>{{ _("Marked too") }}</p>\n'
        "<p>Left <code>as_is</code> in English{% if x %}, twice{% endif %}.</p>\n"
        '<table aria-label="Every tensor"><td>{{ m.heading(2, "h-id", "A heading left unmarked") }}</td>\n'
        '<form data-count="{shown} of {all} shown" data-table="t-models"><var>H</var> · fp32 · LayerNorm</form>\n'
    )
    assert list(unmarked(template)) == [
        (3, "Left in English twice"),
        (4, "Every tensor"),
        (4, "heading left unmarked"),
        (5, "shown of all shown"),
    ]


def test_marked_text_code_formulas_and_names_are_not_prose() -> None:
    template = (
        "{% trans %}One <b>whole</b> sentence.{% endtrans %}\n"
        '<p class="n count" id="c-masks"><var>b</var>·<var>s</var>² · 4·L·H² · fp32 / bf16 · FLOPs, GiB</p>\n'
        '{{ permalink("c-rule", _("the %(rule)s rule") | format(rule="2N")) }} {% set key = "bf16_mixed" %}\n'
        "<pre>kept as written</pre><script>const words = 'a script of its own';</script>\n"
    )
    assert list(unmarked(template)) == []
