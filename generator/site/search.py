"""The full-text search index: Pagefind, written into the staged site before it goes live.

Pagefind (the ``pagefind[bin]`` package) writes a static index and a small search UI under
``pagefind/``; only the search page loads them, and every page works without them. Model
pages are indexed from a short record of what a reader searches for (title, family, class,
size, published figures, the notes' opening and the component names) rather than
from their HTML, most of which is tensor tables: that keeps indexing fast and its memory
small at thousands of cards. The few other pages are indexed from their HTML. Pagefind's
command line indexes these stand-ins, written to a scratch folder with the published pages'
paths, one shard at a time (below: the site's pages, and the models spread over a few more), and
each shard's bundle is moved into the staged site.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
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
    kind: str = "page"  # what the search page shows beside the result (see KINDS)
    aside: str = ""  # text that finds the page but should barely rank it (ASIDE_WEIGHT)


class SearchIndexError(Exception):
    """Pagefind failed: a build error of its own, about no input file (the site is left as it was)."""


# The index is written in shards, so that a rebuild after one card is edited indexes that card's shard
# again and takes the others from the build cache (Pagefind has no incremental mode: one index of 1,000
# cards was 1.4 s of work after any edit). The pages that are not a model's are the "site" shard, the
# primary bundle in pagefind/ that the search page loads; the model records are spread over up to
# MAX_SHARDS more, about PER_SHARD each, which the search page merges into it (Pagefind's mergeIndex).
SITE_SHARD = "site"
# Where the stand-ins are written, by any process in any order, until their shard is indexed (``_arrange``).
WRITTEN = "written"
PER_SHARD = 128
MAX_SHARDS = 8
# What a merged bundle needs: its entry, metadata and index. The search UI, its scripts and the
# WebAssembly are the primary bundle's alone (a merged index is searched with the primary's).
_BUNDLE_DATA = re.compile(r"pagefind-entry\.json|[^/]+\.pf_meta|(index|fragment|filter)/[^/]+")


def model_shards(models: int) -> int:
    """How many shards the model records of a site with ``models`` models are spread over."""
    return max(1, min(MAX_SHARDS, -(-models // PER_SHARD)))


def shard_of(url: str, shards: int) -> str:
    """The shard that indexes a page: a model's by a digest of its address (the same in every build of
    the same number of shards), any other page's the site shard."""
    if not url.startswith("models/"):
        return SITE_SHARD
    number = int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "little") % shards
    return f"models-{number}"


def merged_bundles(model_ids: Sequence[str]) -> list[str]:
    """The folders below pagefind/ that the search page merges: the model shards that index a model."""
    shards = model_shards(len(model_ids))
    return sorted({shard_of(f"models/{model_id}/", shards) for model_id in model_ids})


@dataclass
class Indexing:
    """Pagefind at work on some shards (``SearchIndex.start``): those still waiting, and those running."""

    shards: list[str]
    running: list[subprocess.Popen[str]]
    jobs: int
    waiting: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.waiting = list(self.shards)

    def launch(self, scratch: Path) -> None:
        """Start Pagefind on waiting shards until ``jobs`` run."""
        # The binary itself: ``python -m pagefind`` would start an interpreter first just to find it.
        binary = str(pagefind_bin.get_executable())
        while self.waiting and len(self.running) < self.jobs:
            shard = self.waiting.pop(0)
            command = [binary, "--site", str(scratch / shard), "--output-path", str(scratch / "bundles" / shard)]
            self.running.append(
                subprocess.Popen([*command, "--silent"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            )


class SearchIndex:
    """The pages Pagefind will index, and Pagefind run on each shard that the build does not take from
    its cache.

    A page other than a model's (``add_page``) is written to a scratch folder at once, from any
    process; a model's record (``add_model``) is kept in memory until its shard is indexed, so it must
    be added in the build's own process.
    """

    def __init__(self, scratch: Path, models: int, language: str = LANGUAGE) -> None:
        self.scratch = scratch
        self.shards = model_shards(models)
        self.language = language  # the stand-ins' <html lang>: Pagefind indexes (and stems) by it
        self.models: dict[str, dict[str, str]] = {}  # shard -> url -> the stand-in page
        self.runs: list[Indexing] = []  # started, for ``stop``
        self.written: set[str] = set()  # the models whose stand-in is written (``write_model``)

    def stop(self) -> None:
        """Stop every Pagefind still at work (a build that failed before waiting for them)."""
        for run in self.runs:
            run.waiting.clear()
            for process in run.running:
                process.kill()
                process.communicate()
            run.running.clear()

    def add_page(self, record: SearchRecord) -> None:
        self._write(SITE_SHARD, record.url, record.html if record.html is not None else _stub(record, self.language))

    def write_model(self, record: SearchRecord) -> None:
        """Write a model's stand-in page for Pagefind now, from any process (a worker, beside the model's
        page): the build's own process then adds the record with ``written``."""
        self._write(shard_of(record.url, self.shards), record.url, _stub(record, self.language))

    def add_model(self, record: SearchRecord, *, written: bool = False) -> None:
        """Add a model's record (in the build's own process); ``written``: its stand-in is in the scratch
        folder already (``write_model``), else it is written when its shard is indexed."""
        self.models.setdefault(shard_of(record.url, self.shards), {})[record.url] = _stub(record, self.language)
        if written:
            self.written.add(record.url)

    def contents(self, shards: Sequence[str]) -> dict[str, str]:
        """Each named shard and a digest of every page it indexes (its address and text): a shard whose
        digest a build has indexed before is the same bundle, byte for byte."""
        digests = {}
        for shard in shards:
            pages = self._written(SITE_SHARD) if shard == SITE_SHARD else self.models.get(shard, {})
            hasher = hashlib.blake2b(digest_size=20)
            for url in sorted(pages):
                for part in (url.encode(), pages[url].encode()):
                    hasher.update(len(part).to_bytes(8, "little"))
                    hasher.update(part)
            digests[shard] = hasher.hexdigest()
        return digests

    def model_shards(self) -> list[str]:
        """The model shards that hold a record, in order (each model's record is in by then)."""
        return sorted(self.models)

    def write(self, site: Path, shards: Sequence[str], jobs: int) -> dict[str, list[str]]:
        """Index the named shards (up to ``jobs`` Pagefind processes at once) into the staged site's
        ``pagefind/`` folder; return the files each wrote, as paths below ``site``."""
        return self.finish(self.start(shards, jobs), site)

    def start(self, shards: Sequence[str], jobs: int) -> Indexing:
        """Start Pagefind on the named shards, up to ``jobs`` at once, and return at once: the build makes
        its other pages meanwhile. ``finish`` starts the rest, waits, and places the bundles."""
        for shard in shards:
            for url, page in self.models.get(shard, {}).items():
                if url not in self.written:
                    self._write(shard, url, page)
        for shard in shards:
            self._arrange(shard)
        run = Indexing(list(shards), [], max(1, jobs))
        run.launch(self.scratch)
        self.runs.append(run)
        return run

    def finish(self, run: Indexing, site: Path) -> dict[str, list[str]]:
        """Wait for ``run`` (started by ``start``) and move each shard's bundle into the staged site."""
        failed: list[str] = []
        while run.running:
            process = run.running.pop(0)
            output, _ = process.communicate()
            if process.returncode != 0:
                failed.append(output)
            run.launch(self.scratch)
        if failed:
            detail = failed[0].strip().splitlines()
            message = f"the search index could not be built: {detail[-1] if detail else 'pagefind failed'}"
            raise SearchIndexError(message)
        return {shard: self._place(shard, site) for shard in run.shards}

    def _write(self, shard: str, url: str, page: str) -> None:
        path = self.scratch / WRITTEN / shard / url / "index.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page, encoding="utf-8")

    def _written(self, shard: str) -> dict[str, str]:
        folder = self.scratch / WRITTEN / shard
        return {
            path.parent.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
            for path in folder.rglob("index.html")
        }

    def _arrange(self, shard: str) -> None:
        """Move a shard's stand-ins from where they were written into the folder Pagefind reads, one page
        at a time in address order (a page's folder whole, unless other pages lie below it).

        Pagefind numbers pages in the order its walk of that folder meets them, and every file of the
        index depends on those numbers. On ext4 a folder lists its entries by a hash of their names,
        but on a tmpfs, btrfs or a small XFS folder it lists them in the order they were made: written
        by several processes at once, that order, and with it the index, changed from build to build.
        """
        written, folder = f"{self.scratch}/{WRITTEN}/{shard}", f"{self.scratch}/{shard}"
        if shard in self.models:  # every model's stand-in is written by now (``start``): no walk needed
            pages = sorted(url.rstrip("/") for url in self.models[shard])
        else:  # the site's own pages, a few dozen: found by a walk
            pages = sorted(path.parent.relative_to(written).as_posix() for path in Path(written).rglob("index.html"))
        above = {"/".join(page.split("/")[:depth]) for page in pages for depth in range(1, page.count("/") + 1)}
        # String paths: at 1,000 models, Path objects tripled the cost of the renames.
        made: set[str] = set()
        _make(folder, made)
        for page in pages:
            source, target = os.path.normpath(f"{written}/{page}"), os.path.normpath(f"{folder}/{page}")
            if page == "." or page in above:  # the folder holds other pages: this page's file alone
                _make(target, made)
                os.replace(f"{source}/index.html", f"{target}/index.html")  # noqa: PTH105
            else:
                _make(os.path.dirname(target), made)  # noqa: PTH120
                os.replace(source, target)  # noqa: PTH105

    def _place(self, shard: str, site: Path) -> list[str]:
        """Move a shard's bundle into ``site/pagefind`` (a model shard's data into its own folder there)."""
        bundle, placed = self.scratch / "bundles" / shard, []
        below = "pagefind" if shard == SITE_SHARD else f"pagefind/{shard}"
        for path in sorted(bundle.rglob("*")):
            name = path.relative_to(bundle).as_posix()
            if path.is_file() and (shard == SITE_SHARD or _BUNDLE_DATA.fullmatch(name)):
                target = site / below / name
                target.parent.mkdir(parents=True, exist_ok=True)
                path.replace(target)
                placed.append(f"{below}/{name}")
        return placed


def _make(folder: str, made: set[str]) -> None:
    """Make a folder once (``made``: made already), with those above it that are missing, top first."""
    if folder not in made:
        os.makedirs(folder, exist_ok=True)  # noqa: PTH103 (string paths, as in ``_arrange``)
        made.add(folder)


@contextlib.contextmanager
def search_index(enabled: bool, models: int, staging: Path, language: str = LANGUAGE) -> Iterator[SearchIndex | None]:
    """A search index for a site of ``models`` models staged in ``staging``, its scratch folder removed
    afterwards; None when search is off.

    The scratch folder sits beside the staging directory, not in the system's temporary folder: each
    bundle Pagefind writes there is renamed into the site, which only works on one file system (a /tmp
    kept in memory, as on Debian 13, Fedora and Arch, is another). The order Pagefind reads the pages in
    is ``SearchIndex._arrange``'s.
    """
    if not enabled:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix=f"{staging.name}.search-", dir=staging.parent) as scratch:
        index = SearchIndex(Path(scratch), models, language)
        try:
            yield index
        finally:
            index.stop()  # none left running once the build waited for them


# A result's kind, by the first folder of its address: a page of its own below the folder, or the
# folder's page itself (the errata and the exercises are one page each, an entry per anchor).
KINDS = {"models": "model", "families": "family", "diffs": "diff"}
WHOLE = {"errata": "erratum", "exercises": "exercise"}
# Pages a name search should not put above a model or family page: each word on them counts this much.
# At 0.5, "bert" (on nearly every page, so Pagefind weighs its rarer extensions such as "bert's")
# ranked the exercises page above the BERT family page (issue 12); at 0.3 the family page leads.
LIGHTER = {"diff": 0.3, "erratum": 0.3, "exercise": 0.3, "page": 0.3}
# A model page's title, weighted above any heading of a page indexed from its HTML (Pagefind's h1 is 7),
# and the rest of its record below plain text: a name search then ranks the page whose title it is
# first, not a longer title that repeats its words (ALBERT-Base v2 before "ALBERT-Base v2, with ...").
TITLE_WEIGHT = 10
RECORD_WEIGHT = 0.5
# A model's published figures and the opening of its notes name other models ("the same
# albert-base-v2 configuration"): they find the page, but count a tenth of plain text.
ASIDE_WEIGHT = 0.1
# Kinds whose tables hold little a reader searches for by name but repeat model names hundreds of
# times (a comparison's tensor lists): left out of the index, which keeps the page's prose.
NO_TABLES = ("diff",)
# The pages with a row for every model (the home page, the comparison, the charts): their rows are left
# out as well, each a model that its own record finds. That also keeps their records the same when a
# card is edited, so that a rebuild need not index the site shard again for them.
EVERY_MODEL = ("", "compare/", "charts/")
_DOTTED = re.compile(r"<code>[^<]*\.[^<]*</code>")
# A chart's drawing: Pagefind indexes no text of an <svg> (the catalog's index is the same, word for word,
# with or without the drawings; only the drawings' ids leave its list of anchors, which the search page
# does not show), and the chart's figures are in the table after it. Cut before Pagefind parses it: at
# 1,000 cards the drawings are two thirds of the charts page's 3.5 MB.


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


def _stub(record: SearchRecord, language: str) -> str:
    """A minimal page holding only what the index should know; it is indexed, never published."""
    return (
        f'<!doctype html><html lang="{escape(language)}"><head><meta charset="utf-8">'
        f"<title>{escape(record.title)}</title></head>"
        f"<body data-pagefind-body>{_kind_marks(record.kind)}"
        f'<h1 data-pagefind-weight="{TITLE_WEIGHT}">{escape(record.title)}</h1>'
        f'<p data-pagefind-weight="{RECORD_WEIGHT}">{escape(record.content)}</p>'
        + (f'<p data-pagefind-weight="{ASIDE_WEIGHT}">{escape(record.aside)}</p>' if record.aside else "")
        + "</body></html>"
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
        own("parts", parts=", ".join(group.block.title for group in model.groups)),
    ]
    aside = [
        " ".join(own("published", figure=claim.figure, source=claim.source) for claim in card.claims),
        _opening(card.notes),
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
    html = _without(content.decode("utf-8"), "svg")
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
