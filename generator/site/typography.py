"""How a language punctuates what the templates and the code join, and how a page is spaced.

Two problems, two tools. Which mark joins items, a label or a note is a word of the language:
English writes ", " and ": ", Chinese "、" and "：". No rule can tell a list from a clause, so
each mark is a text of content/<language>/site.yaml (``punctuation``) that the edition sets.

Spacing is a rule. Chinese writes no space next to ，。：；（）: the mark's own width is the gap.
Templates join sentences with a space (``{% endtrans %} {% trans %}``), and a name and its note
too (``<code>BertModel</code> （本页）``). A joining word for each would mean hundreds, and every
new template would add more. So the page is tidied once, after rendering: whitespace next to a
full-width mark goes, across inline tags too (``。</a> 对于``). The text of ``pre``, ``code``,
``script``, ``style`` and ``textarea`` is kept as written, and so is every tag and attribute.
English pages are never tidied: their bytes stay as the templates write them.
"""

from __future__ import annotations

import functools
import re

from markupsafe import Markup, escape

from generator.site import content
from generator.site.content import Text

# The languages whose pages are tidied: their full-width punctuation takes no space beside it.
SPACELESS = frozenset({"zh"})
# Full-width marks with no Latin twin. Curly quotes and the ellipsis are left out: English quoted on a
# Chinese page uses the same characters, with spaces around them.
FULL_WIDTH = "，。、；：？！（）［］【】《》〈〉「」『』〔〕"
_SPACE = "[ \t\r\n]"
# An element whose text is kept as written, or a comment, matched to be passed over whole; and any other tag.
_KEPT = r"<(?P<element>pre|code|script|style|textarea)\b.*?</(?P=element)\s*>|<!--.*?-->"
_TAG = r"<(?!(?:pre|code|script|style|textarea)\b)[^>]*>"
# One regular expression finds only what may change, so that a page's many tags and marks cost no call:
# a kept element, passed over whole; a full-width mark and the whitespace after it (across tags); and
# whitespace, with the tags after it, up to a mark. A match that starts inside a tag (a mark in an
# attribute's value) is left as it is.
_TIDY = re.compile(
    rf"(?P<kept>{_KEPT})"
    rf"|(?P<mark>[{FULL_WIDTH}])(?P<after>(?:{_TAG})*+{_SPACE}(?:{_SPACE}|{_TAG})*+)"
    rf"|(?P<before>{_SPACE}(?:{_SPACE}|{_TAG})*+)(?=[{FULL_WIDTH}])",
    re.S | re.I,
)
_GAP = re.compile(rf"({_TAG})|{_SPACE}+", re.S)


def _tidied(found: re.Match[str]) -> str:
    html, start = found.string, found.start()
    if html.rfind("<", 0, start) > html.rfind(">", 0, start):  # inside a tag
        return found.group()
    if found["mark"] is not None:
        return found["mark"] + _GAP.sub(r"\1", found["after"])
    if found["before"] is not None:
        return _GAP.sub(r"\1", found["before"])
    return found.group()


def tidy_spacing(html: str, language: str) -> str:
    """``html`` with no whitespace next to a full-width mark, in a language of ``SPACELESS``; else as is."""
    return _TIDY.sub(_tidied, html) if language in SPACELESS else html


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
