"""The full-text search index: Pagefind, written into the staged site before it goes live.

Pagefind (the ``pagefind[bin]`` package) writes a static index and a small search UI under
``pagefind/``; only the search page loads them, and every page works without them. Each page's
record (search_records.py) is written as a stand-in page to a scratch folder with the published
page's path; Pagefind's command line indexes them one shard at a time (below: the site's pages, and
the models spread over a few more), and each shard's bundle is moved into the staged site.
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
from pathlib import Path

import pagefind_bin  # type: ignore[import-untyped]  # the package ships no type information

from generator.site.page import LANGUAGE
from generator.site.search_records import SearchRecord, searchable, stand_in


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
        page = stand_in(record, self.language) if record.html is None else searchable(record.html, self.language)
        self._write(SITE_SHARD, record.url, page)

    def write_model(self, record: SearchRecord) -> None:
        """Write a model's stand-in page for Pagefind now, from any process (a worker, beside the model's
        page): the build's own process then adds the record with ``written``."""
        self._write(shard_of(record.url, self.shards), record.url, stand_in(record, self.language))

    def add_model(self, record: SearchRecord, *, written: bool = False) -> None:
        """Add a model's record (in the build's own process); ``written``: its stand-in is in the scratch
        folder already (``write_model``), else it is written when its shard is indexed."""
        self.models.setdefault(shard_of(record.url, self.shards), {})[record.url] = stand_in(record, self.language)
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
