"""The full-text search index: Pagefind, written into the staged site before it goes live.

Pagefind (the ``pagefind[bin]`` package) writes a static index and a small search UI under
``pagefind/``; only the search page loads them, and every page works without them. Model
pages are indexed from a short record of what a reader searches for (title, family, class,
size, published figures, the notes' opening and the component names) rather than
from their HTML, most of which is tensor tables: that keeps indexing fast and its memory
small at thousands of cards. The few other pages are indexed from their HTML. Pagefind's
command line indexes these stand-ins, written to a scratch folder with the published pages'
paths, and writes its bundle into the staged site.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from html import escape
from pathlib import Path

import pagefind_bin  # type: ignore[import-untyped]  # the package ships no type information

from generator.site.content import Text
from generator.site.page import LANGUAGE
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


class SearchIndexError(Exception):
    """Pagefind failed: a build error of its own, about no input file (the site is left as it was)."""


class SearchIndex:
    """The pages Pagefind will index, written to a scratch folder as the build makes them."""

    def __init__(self, scratch: Path, language: str = LANGUAGE) -> None:
        self.scratch = scratch
        self.language = language  # the stand-ins' <html lang>: Pagefind indexes (and stems) by it

    def add(self, record: SearchRecord) -> None:
        page = self.scratch / record.url / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(record.html if record.html is not None else _stub(record, self.language), encoding="utf-8")

    def write(self, site: Path) -> None:
        """Index what was added and write the bundle into the staged site's ``pagefind/`` folder."""
        # The binary itself: ``python -m pagefind`` would start an interpreter first just to find it.
        command = [str(pagefind_bin.get_executable()), "--site", str(self.scratch)]
        command += ["--output-path", str(site / "pagefind"), "--silent"]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()
            message = f"the search index could not be built: {detail[-1] if detail else 'pagefind failed'}"
            raise SearchIndexError(message)


@contextlib.contextmanager
def search_index(enabled: bool, language: str = LANGUAGE) -> Iterator[SearchIndex | None]:
    """A search index to add pages to, with its scratch folder removed afterwards; None when search is off."""
    if not enabled:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="bert-atlas-search-") as scratch:
        yield SearchIndex(Path(scratch), language)


def _stub(record: SearchRecord, language: str) -> str:
    """A minimal page holding only what the index should know; it is indexed, never published."""
    return (
        f'<!doctype html><html lang="{escape(language)}"><head><meta charset="utf-8">'
        f"<title>{escape(record.title)}</title></head>"
        f"<body data-pagefind-body><h1>{escape(record.title)}</h1><p>{escape(record.content)}</p></body></html>"
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
    words = [
        card.title,
        card.id,
        own("kind", family=card.family.title, name=card.family.name, head=card.head.value, class_name=model.class_name),
        own("size", total=model.total, rounded=rounded(model.total)),
        " ".join(own("published", figure=claim.figure, source=claim.source) for claim in card.claims),
        _opening(card.notes),
        own("parts", parts=", ".join(group.block.title for group in model.groups)),
    ]
    return SearchRecord(f"models/{card.id}/", card.title, "\n".join(w for w in words if w))


def _opening(notes: str, limit: int = NOTES_OPENING) -> str:
    """The first paragraph of a card's notes, cut at a word boundary after ``limit`` characters."""
    first = " ".join(notes.strip().split("\n\n", 1)[0].split())
    return first if len(first) <= limit else first[:limit].rsplit(" ", 1)[0] + " …"


def page_record(path: str, content: bytes) -> SearchRecord | None:
    """A page other than a model's, indexed from its HTML; search, 404 and non-pages are left out."""
    if not path.endswith(".html") or path in ("search/index.html", "404.html") or path.startswith("models/"):
        return None
    return SearchRecord(path.removesuffix("index.html"), "", html=content.decode("utf-8"))
