"""How a language punctuates what the templates and the code join, and how a page is spaced.

Two problems, two tools. Which mark joins items, a label or a note is a word of the language:
English writes ", " and ": ", Chinese "、" and "：". No rule can tell a list from a clause, so
each mark is a text of content/<language>/site.yaml (``punctuation``) that the edition sets.

Spacing is a rule. Chinese writes no space next to ，。：；（）: the mark's own width is the gap.
Templates join sentences with a space (``{% endtrans %} {% trans %}``), and a name and its note
too (``<code>BertModel</code> （本页）``). A joining word for each would mean hundreds, and every
new template would add more. So the page is tidied once, after rendering: whitespace next to a
full-width mark goes, across inline tags too (``。</a> 对于``). The work starts from the marks,
which are few, not from every tag and space: a scan of every tag cost a second for 170 pages.
The text of ``pre``, ``code``, ``script``, ``style`` and ``textarea`` is kept as written, and so is
every tag and attribute.
English pages are never tidied: their bytes stay as the templates write them.
"""

from __future__ import annotations

import bisect
import functools
import re

from markupsafe import Markup, escape

from generator.site import content
from generator.site.content import Text
from generator.site.soft_space import SOFT_SPACE, SPACELESS, resolved

# Full-width marks with no Latin twin. Curly quotes and the ellipsis are left out: English quoted on a
# Chinese page uses the same characters, with spaces around them.
FULL_WIDTH = "，。、；：？！（）［］【】《》〈〉「」『』〔〕"
_SPACES = " \t\r\n"
# An element whose text is kept as written, or a comment: where one may start, and the whole of it.
_KEPT_START = re.compile(r"<(?:pre|code|script|style|textarea)\b|<!--", re.I)
_KEPT = re.compile(r"<(?P<element>pre|code|script|style|textarea)\b.*?</(?P=element)\s*>|<!--.*?-->", re.S | re.I)
# Any other tag, seen through: whitespace on either side of it still touches the mark.
_TAG = r"<(?!(?:pre|code|script|style|textarea)\b)[^>]*>"
_AFTER = re.compile(rf"(?:{_TAG})*+[{_SPACES}](?:[{_SPACES}]|{_TAG})*+", re.I)
_GAP = re.compile(rf"({_TAG})|[{_SPACES}]+", re.I)
_MARK = re.compile(f"[{FULL_WIDTH}]")
_WHOLE_TAG = re.compile(_TAG, re.I)


def _kept_spans(html: str) -> list[tuple[int, int]]:
    """Where the kept elements and comments lie, as (start, end), in order."""
    spans: list[tuple[int, int]] = []
    for start in _KEPT_START.finditer(html):
        whole = _KEPT.match(html, start.start())
        if whole is not None and (not spans or whole.start() >= spans[-1][1]):
            spans.append(whole.span())
    return spans


def _gap_before(html: str, mark: int, floor: int) -> int:
    """Where the whitespace before ``mark`` starts, across tags but not below ``floor``; ``mark`` if none."""
    start = at = mark
    while at > floor:
        if html[at - 1] in _SPACES:
            at -= 1
            start = at
        elif (
            html[at - 1] == ">"
            and (opening := html.rfind("<", floor, at - 1)) >= 0
            and _WHOLE_TAG.fullmatch(html, opening, at)
        ):
            at = opening
        else:
            break
    return start


_SOFT = re.compile(SOFT_SPACE)


def _resolve_soft_spaces(html: str, kept: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """Each SOFT_SPACE outside a kept element as a space, or as nothing between two Han characters; and
    the kept elements where they then lie.

    Its neighbours are the characters beside it, across tags (``一个 <a>编码器层</a>``). One inside a
    kept element, or beside a placeholder not yet filled in, is a script's to resolve (the
    calculator's texts, the answer check's). So a kept element only moves, by the soft spaces dropped
    before it: no need to look for them again (a SOFT_SPACE is never inside a tag's name).
    """

    def neighbour(at: int, step: int) -> str:
        while 0 <= at < len(html):
            if html[at] == SOFT_SPACE:
                at += step
            elif step < 0 and html[at] == ">" and (opening := html.rfind("<", 0, at)) >= 0:
                at = opening - 1
            elif step > 0 and html[at] == "<" and (closing := html.find(">", at)) >= 0:
                at = closing + 1
            else:
                return html[at]
        return ""

    starts = [start for start, _ in kept]  # in order, and the spans do not overlap: a bisection finds the one

    def inside_kept(at: int) -> bool:
        last = bisect.bisect_right(starts, at) - 1
        return last >= 0 and at < kept[last][1]

    dropped: list[int] = []  # where each soft space that became nothing was, in order

    def replaced(found: re.Match[str]) -> str:
        at = found.start()
        before, after = neighbour(at - 1, -1), neighbour(at + 1, 1)
        if inside_kept(at) or before == "}" or after == "{":
            return SOFT_SPACE  # a script fills in the value beside it (a text in a data attribute)
        space = resolved(before, after)
        if not space:
            dropped.append(at)
        return space

    html = _SOFT.sub(replaced, html)
    moved = [(start, end, bisect.bisect_left(dropped, start)) for start, end in kept]
    return html, [(start - by, end - by) for start, end, by in moved]


def tidy_spacing(html: str, language: str) -> str:
    """``html`` with no whitespace next to a full-width mark, in a language of ``SPACELESS``; else as is.

    The work starts from the marks, which are few, rather than from every tag and space of the page:
    a mark inside a tag (an attribute's value) or inside a kept element is left alone.
    """
    if language not in SPACELESS:
        return html
    spans = _kept_spans(html)
    if SOFT_SPACE in html:
        html, spans = _resolve_soft_spaces(html, spans)
    pieces: list[str] = []
    done = 0  # html[:done] is in pieces, tidied
    after_span = 0  # how many kept spans end at or before the mark
    for found in _MARK.finditer(html):
        mark = found.start()
        while after_span < len(spans) and spans[after_span][1] <= mark:
            after_span += 1
        inside_kept = after_span < len(spans) and spans[after_span][0] <= mark
        floor = max(done, spans[after_span - 1][1] if after_span else 0)
        if mark < done or inside_kept or html.rfind("<", floor, mark) > html.rfind(">", floor, mark):
            continue
        start, after = _gap_before(html, mark, floor), _AFTER.match(html, mark + 1)
        if start == mark and after is None:
            continue
        pieces += (html[done:start], _GAP.sub(r"\1", html[start:mark]), found.group())
        done = mark + 1
        if after is not None:
            pieces.append(_GAP.sub(r"\1", after.group()))
            done = after.end()
    pieces.append(html[done:])
    return "".join(pieces)


# The marks of content/<language>/site.yaml's ``punctuation``, each the key templates and code use.
MARKS = ("list", "comma", "colon", "semicolon", "stop", "open", "close")


def marks_of(text: Text) -> dict[str, Markup]:
    """The language's punctuation for what templates and code join (``text`` is site.yaml's), as markup."""
    section = text.section("punctuation")
    return {key: escape(section(key)) for key in MARKS}


@functools.lru_cache(maxsize=64)
def mark(language: str, key: str) -> str:
    """One punctuation mark of ``language`` (a key of ``MARKS``), for text the code joins outside a template."""
    return content.load("site", language).section("punctuation")(key)
