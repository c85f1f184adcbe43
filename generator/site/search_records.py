"""What the search index knows of each page: a model's short record, another page's HTML trimmed.

A model page is indexed from a record of what a reader searches for (title, family, class, size,
published figures, the notes' opening and the component names) rather than from its HTML, most of
which is tensor tables: that keeps indexing fast and its memory small at thousands of cards. The
other pages are indexed from their HTML, with what Pagefind would not index, or should not, cut
first. search.py writes these records for Pagefind and runs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape

from generator.site.content import Text
from generator.site.views import Model, rounded

# Characters of a card's notes the search index keeps (see model_record).
NOTES_OPENING = 240


@dataclass(frozen=True)
class SearchRecord:
    """What the index knows of one page: its address below the site root and its text."""

    url: str
    title: str
    content: str = ""
    html: str | None = None  # index these pages from their HTML instead
    kind: str = "page"  # what the search page shows beside the result (see KINDS)
    aside: str = ""  # text that finds the page but should barely rank it (ASIDE_WEIGHT)


# A result's kind, by the first folder of its address: a page of its own below the folder, or the
# folder's page itself (the errata and the exercises are one page each, an entry per anchor).
KINDS = {"models": "model", "families": "family", "diffs": "diff"}
WHOLE = {"errata": "erratum", "exercises": "exercise"}
# Pages a name search should not put above a model or family page: each word on them counts this much.
# At 0.5, a family's name that is on nearly every page (so Pagefind weighs its rarer extensions, its
# possessive) ranked the exercises page above that family's page; at 0.3 the family page leads.
# The errata work the reference family's base model in numbers and name it on nearly every line: at
# 0.3, with a hundred models, they ranked above that model's own page for its name; at 0.2 it leads.
LIGHTER = {"diff": 0.3, "erratum": 0.2, "exercise": 0.3, "page": 0.3}
# A model page's title, weighted above any heading of a page indexed from its HTML (Pagefind's h1 is 7),
# and the rest of its record below plain text: a name search then ranks the page whose title it is
# first, not a longer title that repeats its words ("X-Base v2" before "X-Base v2, with ...").
TITLE_WEIGHT = 10
RECORD_WEIGHT = 0.5
# A model's published figures and the opening of its notes name other models ("the same
# configuration as <another card's id>"): they find the page, but count a tenth of plain text.
ASIDE_WEIGHT = 0.1
# Kinds whose tables hold little a reader searches for by name but repeat model names hundreds of
# times (a comparison's tensor lists): left out of the index, which keeps the page's prose.
NO_TABLES = ("diff",)
# The pages with a row for every model (the home page, the comparison, the charts): their rows are left
# out as well, each a model that its own record finds. That also keeps their records the same when a
# card is edited, so that a rebuild need not index the site shard again for them.
EVERY_MODEL = ("", "compare/", "charts/")
# Pagefind's own mark for an element none of whose text, metadata or filters it indexes. The pages that
# list some of the models (a family's catalog models, the calculator's model links) carry it on that
# list: each entry is a model its own record finds. Such an element is cut from the record before
# Pagefind parses it, which changes nothing Pagefind writes and keeps the record the same when a card
# is edited, as above.
_IGNORED = 'data-pagefind-ignore="all"'
# The page's own data for its scripts (``data-query``, ``data-value``, ...): Pagefind indexes no such
# attribute, and they hold a model's numbers, which a card's edit changes.
_DATA = re.compile(r'\sdata-(?!pagefind-)[\w-]+="[^"]*"')
_DOTTED = re.compile(r"<code>[^<]*\.[^<]*</code>")
# A chart's drawing: Pagefind indexes no text of an <svg> (the catalog's index is the same, word for word,
# with or without the drawings; only the drawings' ids leave its list of anchors, which the search page
# does not show), and the chart's numbers are in the table after it. Cut before Pagefind parses it: at
# 1,000 cards the drawings are two thirds of the charts page's 3.5 MB.
# A formula's TeX source is cut too: the formula is indexed from its MathML, and "\cdot" is no word to find.


def _without(html: str, element: str) -> str:
    """``html`` with every ``element`` cut, from its start tag to the next end tag (they hold no other of
    their kind). Found with ``str.find``: a non-greedy regex over a chart page of 3.5 MB took 18 ms."""
    opening, closing, parts, start = f"<{element}", f"</{element}>", [], 0
    while (found := html.find(opening, start)) >= 0:
        after = html[found + len(opening) : found + len(opening) + 1]
        if after.isalnum() or after == "_":  # another element whose name starts the same
            parts.append(html[start : found + len(opening)])
            start = found + len(opening)
            continue
        end = html.find(closing, found)
        if end < 0:
            break
        parts.append(html[start:found])
        start = end + len(closing)
    parts.append(html[start:])
    return "".join(parts)


def _without_ignored(html: str) -> str:
    """``html`` with every element marked ``_IGNORED`` cut, from its start tag to its own end tag."""
    parts, start = [], 0
    while (mark := html.find(_IGNORED, start)) >= 0:
        opening = html.rfind("<", start, mark)
        name = re.match(r"<([a-z][a-z0-9]*)", html[opening:])
        if opening < 0 or name is None:
            raise ValueError(f"{_IGNORED} outside a start tag, at character {mark}")
        tag = name.group(1)
        tags = re.compile(rf"<(/?){tag}\b[^>]*>")
        depth, end = 0, -1
        for found in tags.finditer(html, opening):
            depth += -1 if found.group(1) else 1
            if depth == 0:
                end = found.end()
                break
        if end < 0:
            raise ValueError(f"<{tag} {_IGNORED}> at character {opening} is never closed")
        parts.append(html[start:opening])
        start = end
    parts.append(html[start:])
    return "".join(parts)


def kind_of(url: str) -> str:
    """model, family, diff, erratum, exercise or page, for an address below the site root."""
    folder, _, rest = url.partition("/")
    if folder in WHOLE:
        return WHOLE[folder]
    if folder not in KINDS or not rest.strip("/"):
        return "page"  # the home page, and the lists of models, families and comparisons
    if folder == "models" and rest.startswith("exercise-"):
        return "exercise"  # an exercise's worked answer is a model page (models/exercise-*)
    return KINDS[folder]


def _kind_marks(kind: str) -> str:
    """An empty element that gives a page its kind as metadata, which the search page shows.

    Metadata and not a Pagefind filter: Pagefind 1.5 writes a filter's values in no fixed order,
    and builds must stay byte-identical.
    """
    return f'<span data-pagefind-meta="kind:{kind}"></span>'


# Chinese has no spaces between words, and Pagefind's own binary indexes a whole run of Han characters
# as one word. The browser cuts a query with Intl.Segmenter ("层归一化" as 层|归|一|化, "参数量" as
# 参数|量) and needs every piece to start a word of the page. So a zh page is indexed with each Han
# character starting a word of its next PIECE_LENGTH characters: any piece up to that length finds
# where it is written. static/search.js joins the pieces again in what a result shows.
_HAN_RUN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
PIECE_LENGTH = 4
SEGMENTED = ("zh",)  # languages (the primary subtag of <html lang>) whose words no space separates


def searchable(page: str, language: str) -> str:
    """``page`` as Pagefind should read it in ``language``: in Chinese, each run of Han characters as
    overlapping pieces ("层归一化" as "层归一化 归一化 一化 化"); in any other language, as it is."""
    if language.split("-")[0].lower() not in SEGMENTED:
        return page
    return _HAN_RUN.sub(lambda run: " ".join(run[0][i : i + PIECE_LENGTH] for i in range(len(run[0]))), page)


def stand_in(record: SearchRecord, language: str) -> str:
    """A minimal page holding only what the index should know; it is indexed, never published."""
    return searchable(
        f'<!doctype html><html lang="{escape(language)}"><head><meta charset="utf-8">'
        f"<title>{escape(record.title)}</title></head>"
        f"<body data-pagefind-body>{_kind_marks(record.kind)}"
        f'<h1 data-pagefind-weight="{TITLE_WEIGHT}">{escape(record.title)}</h1>'
        f'<p data-pagefind-weight="{RECORD_WEIGHT}">{escape(record.content)}</p>'
        + (f'<p data-pagefind-weight="{ASIDE_WEIGHT}">{escape(record.aside)}</p>' if record.aside else "")
        + "</body></html>",
        language,
    )


def model_record(model: Model, text: Text) -> SearchRecord:
    """The searchable text of a model page: its names, family, class, size, published figures,
    the opening of its notes and the components it is made of.

    Pagefind holds what it indexes of every page in memory at once, so the record leaves out
    what is long and tells pages apart poorly: the config values (numbers), the full notes,
    the derivation's step labels and the tensor names, which the page itself shows. Measured
    on 1,000 generated cards, that takes Pagefind from 175 MB to 69 MB; 10,000 cards stay
    under 1 GB. Its sentences are the ``model-record`` texts of content/<language>/site.yaml.
    """
    card, own = model.card, text.section("model-record")
    words = [  # the title is the stub's heading: repeated here, it would open every snippet
        card.id,
        own("kind", family=card.family.title, name=card.family.name, head=card.head.value, class_name=model.class_name),
        own("size", total=model.total, rounded=rounded(model.total)),
        own("parts", parts=text.section("punctuation")("list").join(group.block.title for group in model.groups)),
    ]
    aside = [
        " ".join(own("published", figure=claim.figure, source=claim.source) for claim in card.claims),
        _opening(card.notes_shown()[0]),
    ]
    url = f"models/{card.id}/"
    return SearchRecord(url, card.title, "\n".join(words), kind=kind_of(url), aside="\n".join(w for w in aside if w))


def _opening(notes: str, limit: int = NOTES_OPENING) -> str:
    """The first paragraph of a card's notes, cut at a word boundary after ``limit`` characters."""
    first = " ".join(notes.strip().split("\n\n", 1)[0].split())
    return first if len(first) <= limit else first[:limit].rsplit(" ", 1)[0] + " …"


# What a snippet should not show: the "#" of each permalink, and the breadcrumbs above the title.
_NOISE = re.compile(r'<a class="permalink"[^>]*>#</a>|<p class="crumbs">.*?</p>|<thead>.*?</thead>', re.DOTALL)
_BODY = re.compile(r"<main\b[^>]*\bdata-pagefind-body\b[^>]*>")


def page_record(path: str, content: bytes) -> SearchRecord | None:
    """A page other than a model's, indexed from its HTML; search, 404 and non-pages are left out.

    The HTML is indexed with its kind marked, its permalinks and breadcrumbs left out, and, on
    the kinds a name search should rank below a model or family page, every word after the
    title made lighter: the title keeps a page's own name ("calculator") ranking it first. A
    comparison's title names two models, so there the title is lighter too.
    """
    if not path.endswith(".html") or path in ("search/index.html", "404.html") or path.startswith("models/"):
        return None
    url = path.removesuffix("index.html")
    kind = kind_of(url)
    html = _DATA.sub("", _without_ignored(_without(_without(content.decode("utf-8"), "svg"), "annotation")))
    if kind in NO_TABLES or url in EVERY_MODEL:
        html = _DOTTED.sub("", _without(html, "table"))
    html = _NOISE.sub("", html)
    html = _BODY.sub(lambda m: m.group(0) + _kind_marks(kind), html, count=1)
    weight = LIGHTER.get(kind)
    if weight:
        lighter = f'<div data-pagefind-weight="{weight}">'
        title_end = html.find("</h1>")
        if kind in NO_TABLES or title_end < 0:
            html = _BODY.sub(lambda m: m.group(0) + lighter, html, count=1)
        else:
            html = html[: title_end + 5] + lighter + html[title_end + 5 :]
        html = html.replace("</main>", "</div></main>", 1)
    return SearchRecord(url, "", html=html, kind=kind)
