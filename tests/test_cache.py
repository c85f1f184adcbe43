"""The build cache: a rebuild reuses what did not change, and its site is byte for byte a fresh build's.

Every incremental build below is compared, file by file, with a build from scratch without the
cache (``--no-cache``) of the same inputs into another directory: after a card is edited, added
or removed, an option changed, a template or a content file edited, a cache damaged, two builds
run at once, or a build killed half-way.
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import MODELS, ROOT, cards_through, catalog_copy, snapshot
from generator.build import cache as cache_module
from generator.build import pipeline
from generator.build.cache import FORMAT, LIBRARIES, Blob, Cache
from generator.build.pipeline import build
from generator.build.reuse import ModelEntry, Reuse
from generator.cards.card import load_cards
from generator.counting.families import families
from generator.site import search
from generator.site.differences import PAIRS
from generator.site.page import Page
from generator.site.pages import calculator
from generator.site.pages.diffs import diff_path
from generator.site.render import Renderer, SiteOptions, pages
from generator.site.search import SearchIndex
from generator.site.views import Summary, model_of

# A few catalog cards of different families, among them cards the pages about many models name.
SAMPLE = ("bert-base-uncased", "albert-base-v2", "distilbert-base-uncased", "roberta-base", "electra-small-generator")


@pytest.fixture
def models(tmp_path: Path) -> Path:
    return catalog_copy(tmp_path / "models", SAMPLE)


def fresh(models: Path, tmp_path: Path, options: SiteOptions) -> dict[str, str]:
    """The site these cards make when built from scratch, without a cache."""
    out = tmp_path / "fresh"
    shutil.rmtree(out, ignore_errors=True)
    build(models, out, options)
    return snapshot(out)


def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the cards the next build counts for their own pages, or takes as another page's counting
    left them (builds here run in one process)."""
    return cards_through(monkeypatch, pipeline, "named_or_counted")


def test_every_change_rebuilds_only_what_it_touches_and_the_site_is_a_fresh_builds(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, out, options = tmp_path / "cache", tmp_path / "site", SiteOptions()

    def rebuild(options: SiteOptions = options) -> list[str]:
        seen = counted(monkeypatch)
        build(models, out, options, jobs=1, cache_dir=cache)
        made = list(seen)
        assert snapshot(out) == fresh(models, tmp_path, options)
        return made

    assert sorted(rebuild()) == sorted(SAMPLE)  # the first build counts every card
    assert (out / "pagefind" / "pagefind.js").is_file()
    assert rebuild() == []  # nothing changed: nothing counted, the search index reused

    card = models / "roberta-base.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("num_hidden_layers: 12", "num_hidden_layers: 11"))
    assert "num_hidden_layers: 11" in card.read_text(encoding="utf-8")
    assert rebuild() == ["roberta-base"]

    added = models / "bert-large-uncased.yaml"
    shutil.copy(MODELS / added.name, added)
    # BERT-Base's page links to the comparison of the two (generator/site/related.py), so it changes too.
    assert rebuild() == ["bert-base-uncased", "bert-large-uncased"]
    added.unlink()
    assert rebuild() == ["bert-base-uncased"]

    assert sorted(rebuild(SiteOptions(base_url="https://example.org/atlas/"))) == sorted(SAMPLE)
    assert sorted(rebuild(SiteOptions(search=False))) == sorted(SAMPLE)
    assert not (out / "pagefind").exists()


def test_a_page_about_many_models_is_made_again_only_when_what_it_shows_changes(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    original = Renderer._page_file

    def page_file(self: Renderer, page: Page) -> dict[str, bytes]:
        made.append(page.path)
        return original(self, page)

    monkeypatch.setattr(Renderer, "_page_file", page_file)
    cache, out, options = tmp_path / "cache", tmp_path / "site", SiteOptions(search=False)

    def rebuild() -> set[str]:
        made.clear()
        build(models, out, options, jobs=1, cache_dir=cache)
        families = {path for path in made if path.startswith("families/")}
        this_build = list(made)  # before the build from scratch, which makes every page again
        assert snapshot(out) == fresh(models, tmp_path, options)
        made[:] = this_build
        return families

    first = rebuild()
    assert {"families/index.html", "families/roberta/index.html", "families/bert/index.html"} <= first
    assert rebuild() == set() and made == []  # nothing changed: no page made again

    card = models / "roberta-base.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("num_hidden_layers: 12", "num_hidden_layers: 11"))
    # Its family's page lists its total; the family index only counts each family's models.
    assert rebuild() == {"families/roberta/index.html"}
    assert {"index.html", "compare/index.html"} <= set(made)  # they list every model's total
    # The comparisons made again are the list and the one of RoBERTa's three pairs here; the errata
    # show BERT-Base and cards of their own. The handout names the models its closed forms miss, so it
    # reads every model's total.
    assert {path for path in made if path.startswith("diffs/")} == {"diffs/index.html", comparison("roberta-base")}
    assert "handout/index.html" in made and "errata/index.html" not in made

    shutil.copy(MODELS / "bert-large-uncased.yaml", models / "bert-large-uncased.yaml")
    assert rebuild() == {"families/index.html", "families/bert/index.html"}
    assert {path for path in made if path.startswith("diffs/")} == {
        "diffs/index.html",
        comparison("bert-large-uncased"),
    }

    card = models / "bert-base-uncased.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("num_hidden_layers: 12", "num_hidden_layers: 11"))
    rebuild()
    assert {"handout/index.html", "errata/index.html"} <= set(made)
    assert len([path for path in made if path.startswith("diffs/") and path != "diffs/index.html"]) == 4


def comparison(card_id: str) -> str:
    """The one comparison page of the sample (and BERT-Large) that has ``card_id`` in it."""
    (pair,) = [p for p in PAIRS if card_id in (p.a, p.b) and {p.a, p.b} <= {*SAMPLE, "bert-large-uncased"}]
    return diff_path(pair.slug)


def test_the_data_made_from_the_code_alone_is_made_again_only_when_the_fingerprint_changes(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    original = calculator.family_files

    def family_files(name: str, language: str) -> dict[str, bytes]:
        made.append(name)
        return original(name, language)

    monkeypatch.setattr(calculator, "family_files", family_files)
    cache, out = tmp_path / "cache", tmp_path / "site"

    def rebuild(options: SiteOptions) -> list[str]:
        made.clear()
        build(models, out, options, jobs=1, cache_dir=cache)
        families = sorted(made)
        assert snapshot(out) == fresh(models, tmp_path, options)
        return families

    every = sorted(families())  # one document per family, each made once
    plain = SiteOptions(search=False)
    assert rebuild(plain) == every
    card = models / "albert-base-v2.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("num_hidden_layers: 12", "num_hidden_layers: 6"))
    assert rebuild(plain) == []  # a card changed: every page about many models is made again, not the data
    assert sorted((out / "calculator").glob("*.json")) and (out / "static" / "style.css").is_file()
    assert rebuild(SiteOptions(search=False, base_url="https://example.org/atlas/")) == every  # options: a new key


def test_the_first_build_counts_every_card_once(models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = counted(monkeypatch)
    build(models, tmp_path / "site", SiteOptions(search=False), jobs=1, cache_dir=tmp_path / "cache")
    assert sorted(seen) == sorted(SAMPLE)


def damage(cache: Path) -> tuple[int, int]:
    """Spoil every entry and blob in a cache, each in one of several ways; return how many of each."""
    entries = sorted(p for p in (cache / "entries").rglob("*") if p.is_file())
    blobs = sorted(p for p in (cache / "blobs").rglob("*") if p.is_file())
    for number, path in enumerate(entries):
        data = path.read_bytes()
        spoiled = [
            data[: len(data) // 2],  # cut short
            data[:-1] + bytes([data[-1] ^ 1]),  # one bit flipped
            b"",
            FORMAT + b"0" * 40 + pickle.dumps("foreign"),  # a wrong checksum
        ][number % 4]
        path.write_bytes(spoiled)
    for number, path in enumerate(blobs):
        path.write_bytes(b"<p>altered</p>" if number % 2 else b"")
    return len(entries), len(blobs)


def test_cards_as_an_indexed_build_had_them_place_its_search_index_and_write_no_record(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing changed since a build with the search index: the index is placed from the cache and no
    page's record is written for Pagefind. A model made again meanwhile (its entry lost) keeps its
    record all the same, so the next build that indexes again still finds it."""
    cache, out, options = tmp_path / "cache", tmp_path / "site", SiteOptions()
    build(models, out, options, jobs=1, cache_dir=cache)
    recorded: list[str] = []
    indexed: list[Sequence[str]] = []
    monkeypatch.setattr(SearchIndex, "add_page", lambda self, record: recorded.append(record.url))
    monkeypatch.setattr(SearchIndex, "add_model", lambda self, record, written=False: recorded.append(record.url))
    monkeypatch.setattr(SearchIndex, "write_model", lambda self, record: recorded.append(record.url))
    monkeypatch.setattr(SearchIndex, "start", lambda self, shards, jobs: indexed.append(shards))
    lost = "albert-base-v2"
    held = Reuse.model
    monkeypatch.setattr(Reuse, "model", lambda self, card, *rest: None if card.id == lost else held(self, card, *rest))
    seen = counted(monkeypatch)
    build(models, out, options, jobs=1, cache_dir=cache)
    assert (seen, recorded, indexed) == ([lost], [], [])
    monkeypatch.undo()
    assert snapshot(out) == fresh(models, tmp_path, options)

    card = models / "roberta-base.yaml"  # another card changes: the index is made again, from every record
    card.write_text(card.read_text(encoding="utf-8").replace("num_hidden_layers: 12", "num_hidden_layers: 11"))
    build(models, out, options, jobs=1, cache_dir=cache)
    assert snapshot(out) == fresh(models, tmp_path, options)


def test_an_edited_card_indexes_its_own_shard_again_and_the_rest_of_the_index_is_placed(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the model records spread over shards (two cards a shard here), editing a card runs Pagefind on
    that card's shard alone: the pages that list the card (its family's page, the calculator's, the
    pages about every model) keep their records, which leave its numbers out; an edit the index does not
    see runs it on none. The site is a fresh build's, byte for byte, each time."""
    monkeypatch.setattr(search, "PER_SHARD", 2)
    cache, out, options = tmp_path / "cache", tmp_path / "site", SiteOptions()
    indexed: list[str] = []  # every shard Pagefind was started on, since the last look
    start = SearchIndex.start
    monkeypatch.setattr(
        SearchIndex, "start", lambda self, shards, jobs: indexed.extend(shards) or start(self, shards, jobs)
    )
    bundles = search.merged_bundles(list(SAMPLE))
    assert len(bundles) >= 2  # five cards over three shards: at least two of them hold a model

    def rebuild() -> list[str]:
        build(models, out, options, jobs=1, cache_dir=cache)
        shards = sorted(indexed)
        indexed.clear()
        assert snapshot(out) == fresh(models, tmp_path, options)
        assert sorted(indexed) == sorted(["site", *bundles])  # from scratch, every shard is indexed
        indexed.clear()
        return shards

    assert rebuild() == sorted(["site", *bundles])
    assert rebuild() == []  # nothing changed: the whole index placed at once
    # A card no comparison page names (a comparison states both totals in its prose, which it indexes).
    card = models / "electra-small-generator.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("num_hidden_layers: 12", "num_hidden_layers: 11"))
    assert rebuild() == [search.shard_of("models/electra-small-generator/", search.model_shards(len(SAMPLE)))]
    card.write_text(card.read_text(encoding="utf-8") + "# a comment: the same card\n")
    assert rebuild() == []  # read again (its text changed), but every shard indexes what it did


def test_a_rebuild_starts_from_the_site_before_last_and_keeps_nothing_of_it_but_what_it_makes(
    models: Path, tmp_path: Path
) -> None:
    """The site a swap retires waits in the cache for the next build, which starts from it: unchanged files
    stay where they are (the very links to their blobs), and whatever else is there goes, whether a build
    made it (an edited card's old page, Pagefind's old fragments) or not (a stray file or folder, a file
    replaced by another). A file written through its link is noticed by its blob and made again."""
    cache, out, options = tmp_path / "cache", tmp_path / "site", SiteOptions()
    build(models, out, options, jobs=1, cache_dir=cache)
    spare = Cache(cache, "any").spare(out)
    assert not spare.exists()  # nothing retired yet
    build(models, out, options, jobs=1, cache_dir=cache)
    assert snapshot(spare) == snapshot(out)  # the first site, retired and kept
    page = "models/bert-base-uncased/index.html"
    unchanged = (spare / page).stat().st_ino
    (spare / "stray" / "deep").mkdir(parents=True)
    (spare / "stray" / "deep" / "file.txt").write_text("left by someone", encoding="utf-8")
    (spare / "models" / "roberta-base.csv").unlink()
    (spare / "models" / "roberta-base.csv").write_text("not a build's", encoding="utf-8")
    (spare / "models" / "distilbert-base-uncased.json").unlink()
    with (spare / "models" / "albert-base-v2.csv").open("a", encoding="utf-8") as through_its_link:
        through_its_link.write("written into the blob\n")
    card = models / "electra-small-generator.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("num_hidden_layers: 12", "num_hidden_layers: 11"))

    build(models, out, options, jobs=1, cache_dir=cache)
    assert snapshot(out) == fresh(models, tmp_path, options)
    assert (out / page).stat().st_ino == unchanged  # taken over, not linked again
    assert not (out / "stray").exists()
    build(models, out, options, jobs=1, cache_dir=cache)  # from the second site, which the third retired
    assert snapshot(out) == fresh(models, tmp_path, options)

    other = tmp_path / "elsewhere"  # another output has a spare of its own
    build(models, other, options, jobs=1, cache_dir=cache)
    build(models, other, options, jobs=1, cache_dir=cache)
    assert Cache(cache, "any").spare(other) != spare and snapshot(other) == snapshot(out)


def test_a_damaged_cache_is_ignored_and_repaired(models: Path, tmp_path: Path) -> None:
    cache, out, options = tmp_path / "cache", tmp_path / "site", SiteOptions()
    build(models, out, options, cache_dir=cache)
    entries, blobs = damage(cache)
    assert entries >= len(SAMPLE) + 2 and blobs > 3 * len(SAMPLE)
    build(models, out, options, cache_dir=cache)
    assert snapshot(out) == fresh(models, tmp_path, options)


def test_a_build_run_again_in_its_process_reads_no_unchanged_card_again(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve's builder builds again and again in one process: a card whose entry the last build read, the
    entry's file unchanged, is taken as it was read, not read and unpickled again. An entry replaced on
    disk since (here by a foreign value with a valid checksum) is read again, and is a miss."""
    cache_dir, out, options = tmp_path / "cache", tmp_path / "site", SiteOptions(search=False)
    build(models, out, options, jobs=1, cache_dir=cache_dir)  # makes every entry
    build(models, out, options, jobs=1, cache_dir=cache_dir)  # reads every card's
    edited = models / "albert-base-v2.yaml"
    edited.write_text(edited.read_text(encoding="utf-8").replace("num_hidden_layers: 12", "num_hidden_layers: 6"))
    read: list[object] = []
    original = Cache.load
    monkeypatch.setattr(Cache, "load", lambda self, key: read.append(value := original(self, key)) or value)
    build(models, out, options, jobs=1, cache_dir=cache_dir)
    assert [type(value).__name__ for value in read if isinstance(value, ModelEntry)] == []
    assert snapshot(out) == fresh(models, tmp_path, options)
    monkeypatch.undo()
    card = models / "bert-base-uncased.yaml"
    cache = Cache(cache_dir, pipeline.fingerprint(options))
    cache.store(cache.key("card", str(card), card.read_bytes()), "a foreign value")
    seen = counted(monkeypatch)
    build(models, out, options, jobs=1, cache_dir=cache_dir)
    assert seen == ["bert-base-uncased"]
    assert snapshot(out) == fresh(models, tmp_path, options)


def test_an_entry_that_is_well_formed_but_foreign_is_a_miss(models: Path, tmp_path: Path) -> None:
    cache_dir, out, options = tmp_path / "cache", tmp_path / "site", SiteOptions(search=False)
    build(models, out, options, cache_dir=cache_dir)
    cache = Cache(cache_dir, "")
    assert cache.close()  # sealed, so that it reads what it stores
    for number, path in enumerate(sorted(p for p in (cache_dir / "entries").rglob("*") if p.is_file())):
        # Valid checksums around values of the wrong kind, or file lists that leave the site.
        value = ["a list", {"../outside.html": "0" * 40}, {"/etc/passwd": "0" * 40}, 42][number % 4]
        cache.store(path.name, value)
        assert cache.load(path.name) == value
    build(models, out, options, cache_dir=cache_dir)
    assert snapshot(out) == fresh(models, tmp_path, options)
    assert not (tmp_path / "outside.html").exists()


def test_what_a_build_made_from_sources_changed_after_it_loaded_them_is_never_reused(
    models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build runs the code its process loaded, but fingerprints the files on disk: an edit saved
    while it runs (or after a test session imported the generator) gives pages made by other code
    than the key says. Such a build breaks the seal, and the next one makes everything again."""
    cache, out, options = tmp_path / "cache", tmp_path / "site", SiteOptions(search=False)
    build(models, out, options, jobs=1, cache_dir=cache)
    card = models / "albert-base-v2.yaml"
    card.write_text(card.read_text(encoding="utf-8").replace("num_hidden_layers: 12", "num_hidden_layers: 6"))
    # The code this build runs is not the code on disk: it writes other pages.
    original = Renderer.model_files
    monkeypatch.setattr(Renderer, "model_files", lambda self, model: {**original(self, model), "stale.txt": b"old"})
    monkeypatch.setattr(cache_module, "LOADED", ())
    build(models, out, options, jobs=1, cache_dir=cache)
    monkeypatch.undo()
    seen = counted(monkeypatch)
    build(models, out, options, jobs=1, cache_dir=cache)
    assert sorted(seen) == sorted(SAMPLE)
    assert snapshot(out) == fresh(models, tmp_path, options)
    seen.clear()
    build(models, out, options, jobs=1, cache_dir=cache)  # sealed again by a build with nothing changed
    assert seen == []


def test_store_and_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Cache(tmp_path, "fingerprint")
    assert cache.key("a", "bc") != cache.key("ab", "c")  # the parts are delimited
    assert cache.key("a") != Cache(tmp_path, "another").key("a")
    cache.store(cache.key("a"), {"x": (1, 2)})
    assert cache.load(cache.key("a")) is None  # not sealed: no build has finished under this fingerprint
    assert cache.close()
    assert cache.load(cache.key("a")) == {"x": (1, 2)}
    assert Cache(tmp_path, "fingerprint").load(cache.key("a")) == {"x": (1, 2)}  # the seal is on disk
    with monkeypatch.context() as sources:
        sources.setattr(cache_module, "LOADED", ())  # the sources changed since they were loaded
        assert not Cache(tmp_path, "fingerprint").close()  # the seal is broken
    assert Cache(tmp_path, "fingerprint").load(cache.key("a")) is None
    blob = cache.put(b"<p>hello</p>")
    assert blob.size == len(b"<p>hello</p>")
    placed = tmp_path / "site" / "a.html"
    placed.parent.mkdir()
    assert cache.place(blob, placed) and placed.read_bytes() == b"<p>hello</p>"
    assert not cache.place(Blob("0" * 40, 12, blob.modified), tmp_path / "site" / "b.html")  # no such blob
    placed.write_bytes(b"<p>edited</p>")  # in place, through the link: the blob is altered too
    assert not cache.place(blob, tmp_path / "site" / "c.html")
    assert cache.put(b"<p>hello</p>") != blob  # written anew
    assert not list(tmp_path.rglob(".new-*"))  # no temporary file left behind


def test_no_cache_reads_and_writes_none(models: Path, tmp_path: Path) -> None:
    one_edition = ("--no-search", "--language", "en")  # the cache's folder is the same for every edition
    result = run("build", "--models", str(models), "--out", "site", *one_edition, "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / ".cache").exists()
    result = run("build", "--models", str(models), "--out", "site", *one_edition, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / ".cache" / "atlas" / "entries").is_dir()  # the default: beside where the build runs


def test_a_cache_inside_the_site_is_refused(models: Path, tmp_path: Path) -> None:
    result = run("build", "--models", str(models), "--out", "site", "--cache-dir", "site/cache", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        result.stderr.splitlines()[0]
        == "site/cache:1:1: --cache-dir: expected a directory outside site, found one in it"
    )


def test_a_cache_that_is_a_file_is_refused_not_silently_skipped(models: Path, tmp_path: Path) -> None:
    """A file where the cache should be: the build could keep nothing, and every build would make everything."""
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    cases = (  # given, shown where, what is found
        ("notes.txt", "notes.txt", "a file"),
        ("notes.txt/cache", "notes.txt/cache", "a file at notes.txt"),
        ("notes.txt/../cache", "notes.txt/../cache", "a file at notes.txt"),  # no way back out of a file
        (f"{tmp_path}/notes.txt/cache", "notes.txt/cache", f"a file at {tmp_path / 'notes.txt'}"),
    )
    for given, shown, found in cases:
        result = run("build", "--models", str(models), "--out", "site", "--cache-dir", given, cwd=tmp_path)
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert result.stderr.splitlines()[0] == (
            f"{shown}:1:1: --cache-dir: expected a directory (or none yet), found {found}"
        )
        assert not (tmp_path / "site").exists()
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_the_fingerprint_names_every_library_the_project_depends_on() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    names = {entry.split("[")[0].split(">")[0].split("=")[0].strip().lower() for entry in declared}
    assert names <= set(LIBRARIES)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the generator, its templates, content and catalogs, run with ``python -m generator`` from the copy."""
    copy = tmp_path / "project"
    copy.mkdir()
    for name in ("generator", "templates", "content", "locales"):
        shutil.copytree(ROOT / name, copy / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_templates_content_and_code_are_part_of_the_key(models: Path, project: Path) -> None:
    # One edition: the key hashes every folder of content/ and locales/ whatever the edition. Both editions'
    # cached builds are compared with a fresh one in test_two_builds_at_once_and_a_build_killed_half_way.
    def rebuild() -> None:
        for out, extra in (("site", ()), ("fresh", ("--no-cache",))):
            shutil.rmtree(project / "fresh", ignore_errors=True)
            options = ("--no-search", "--language", "en", *extra)
            result = run("build", "--models", str(models), "--out", out, *options, cwd=project)
            assert result.returncode == 0, result.stderr
        assert snapshot(project / "site") == snapshot(project / "fresh")

    rebuild()
    base = project / "templates" / "base.html"
    assert base.read_text(encoding="utf-8").count("</footer>") == 1
    base.write_text(base.read_text(encoding="utf-8").replace("</footer>", "<p>Edited.</p></footer>"))
    rebuild()
    assert "<p>Edited.</p>" in (project / "site" / "models" / "roberta-base" / "index.html").read_text(encoding="utf-8")
    site_text = project / "content" / "en" / "site.yaml"
    before = (project / "site" / "index.html").read_text(encoding="utf-8")
    site_text.write_text(
        site_text.read_text(encoding="utf-8").replace(
            "for BERT and its variants", "for the models of the BERT family", 1
        )
    )
    rebuild()
    after = (project / "site" / "index.html").read_text(encoding="utf-8")
    assert "models of the BERT family" in after and "models of the BERT family" not in before


def test_two_builds_at_once_and_a_build_killed_half_way(models: Path, tmp_path: Path) -> None:
    for number in range(40):  # enough cards that a build is still running when it is killed
        source = MODELS / f"{SAMPLE[number % len(SAMPLE)]}.yaml"
        text = source.read_text(encoding="utf-8").split("\n", 1)[1]  # all but its first line, its id
        (models / f"copy-{number:02d}.yaml").write_text(f"id: copy-{number:02d}\n{text}", encoding="utf-8")
    common = ["-m", "generator", "build", "--models", str(models), "--cache-dir", "cache", "--no-search"]
    # Dated like the in-process build they are compared with (make test exports SOURCE_DATE_EPOCH).
    env = {name: value for name, value in os.environ.items() if name != "SOURCE_DATE_EPOCH"}
    killed = subprocess.Popen(
        [sys.executable, *common, "--out", "killed"], cwd=tmp_path, start_new_session=True, env=env
    )
    deadline = time.monotonic() + 60
    while len(list((tmp_path / "cache").glob("entries/*/*"))) < 5:  # killed once some cards are kept
        assert time.monotonic() < deadline and killed.poll() is None
        time.sleep(0.01)
    os.killpg(killed.pid, signal.SIGKILL)
    assert killed.wait() == -signal.SIGKILL
    assert not (tmp_path / "killed").exists()
    both = [subprocess.Popen([sys.executable, *common, "--out", out], cwd=tmp_path, env=env) for out in ("one", "two")]
    assert [process.wait() for process in both] == [0, 0]
    # A fresh build without the cache, started the same way: a process of its own, as a user starts it.
    command = [sys.executable, "-m", "generator", "build", "--models", str(models), "--no-search", "--no-cache"]
    alone = subprocess.run([*command, "--out", "alone"], cwd=tmp_path, env=env, check=False)
    assert alone.returncode == 0
    expected = snapshot(tmp_path / "alone")
    assert snapshot(tmp_path / "one") == expected
    assert snapshot(tmp_path / "two") == expected


class Watched:
    """A summary that notes its id in ``read`` whenever anything but its id is read of it."""

    def __init__(self, summary: Summary, read: set[str]) -> None:
        self._summary, self._read = summary, read

    def __getattr__(self, name: str) -> Any:
        if name != "id":
            self._read.add(self._summary.id)
        return getattr(self._summary, name)


def test_every_page_that_names_the_models_it_shows_reads_no_other() -> None:
    """The cache makes a page again only when a summary it names in ``shows`` changes: a page that read
    another card's summary would go stale when that card is edited. Render every page about many
    models of the catalog from summaries that note who reads them."""
    cards = load_cards(MODELS)
    summaries = [Summary.of(card, model_of(card).numbers()) for card in cards]
    read: set[str] = set()
    renderer = Renderer(SiteOptions(), cards=cards)
    named = 0
    for page in pages([Watched(s, read) for s in summaries]):  # type: ignore[misc]
        if page.shows is None or page.about:  # every model's; or keyed by ``about`` (how many per family)
            continue
        read.clear()
        renderer.render(page)
        assert read <= set(page.shows), (page.path, sorted(read - set(page.shows)))
        named += 1
    # The comparisons and their list, each family's page, the errata and the exercises (the handout reads
    # every model's total: it names the models its closed forms do not count).
    assert named == 1 + len(PAIRS) + len({card.family.name for card in cards}) + 2
