"""The whole build, top to bottom: cards -> each model's page -> pages about all models -> site.

Each card is counted, derived and written on its own, in every edition by one task (in parallel,
see parallel.py), and only its summary is kept; the pages about many models are made from the
summaries, edition by edition. Everything is written into a staging directory that replaces the
site only when the build succeeds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.build.cache import GENERATOR, Blob, Cache, fingerprint
from generator.build.output import Staging, check_cache_dir, check_output_dir, staged_site
from generator.build.progress import Progress
from generator.build.reuse import ModelEntry, Reuse
from generator.cards.card import Card, load_cards
from generator.cards.problems import InputError, Problem
from generator.counting.families import family_in
from generator.parallel import available_jobs, map_parallel
from generator.site import content, translation
from generator.site.page import Piece
from generator.site.render import TEMPLATES, Renderer, SiteOptions
from generator.site.search import SITE_SHARD, search_index
from generator.site.search_records import SearchRecord, model_record, page_record
from generator.site.views import Summary, SummaryNumbers, named_or_counted

PROJECT_ROOT = TEMPLATES.parent


@dataclass(frozen=True)
class BuildResult:
    """What a build left in the output directory (the search index included)."""

    cards: int
    pages: int
    files: int
    bytes: int


def build(
    models_dir: Path,
    out_dir: Path,
    options: SiteOptions | None = None,
    progress: Progress | None = None,
    jobs: int | None = None,
    cache_dir: Path | None = None,
) -> BuildResult:
    """Build the site from a directory of cards; raise InputError, touching nothing, on bad input.

    Each edition of ``options.editions`` is written (the first at the root, each other under its
    language's folder); without any, the one of ``options.language``. With ``cache_dir``, what the
    cache holds for unchanged inputs is reused (see cache.py); the site is the same, byte for byte,
    as one built without it.
    """
    options = options or SiteOptions()
    progress = progress or Progress()
    check_output_dir(
        out_dir,
        [models_dir, Path.cwd(), PROJECT_ROOT],
        inputs=[models_dir, GENERATOR, TEMPLATES, content.CONTENT, translation.LOCALES],
    )
    editions = [dataclasses.replace(options, language=language) for language in options.editions or (options.language,)]
    for edition in editions:  # before the cards are read: a typo or a gap in a translation fails at once
        content.check_language(edition.language)
        content.check_family_words(edition.language)
        translation.check(edition.language)
    if cache_dir is not None:
        check_cache_dir(cache_dir, out_dir)
    caches = [Cache(cache_dir, fingerprint(edition)) if cache_dir is not None else None for edition in editions]

    jobs = jobs or available_jobs()
    progress.start("reading cards")
    reuse = Reuse(caches[0])
    read = load_cards(models_dir, progress.advance, jobs, reuse.card if caches[0] else None)
    progress.finish(f"{len(read):,} cards")
    check_note_languages(read, translation.languages())

    with staged_site(out_dir, caches[0].spare(out_dir) if caches[0] is not None else None) as staging:
        with contextlib.ExitStack() as indexes:  # each edition's search index, open until its pages are made
            written = []
            for edition, cache in zip(editions, caches, strict=True):
                if edition.prefix:  # the edition's own entries of the cards read
                    reuse = Reuse(cache)
                    for card in read if cache is not None else ():
                        reuse.card(card.path)
                place = staging if not edition.prefix else Staging(staging.path / edition.language, staging.reused)
                written.append(_Edition(_in_language(read, edition.language), edition, place, reuse, indexes))

            def without_cards() -> None:
                for each in written:
                    each.without_cards()

            # One task writes a card in every edition: what the editions share (the fine-tuning section, its
            # numbers worked out from the card alone) is worked out once, by the process that writes them all.
            progress.start("model pages")
            counted = map_parallel(
                lambda number: [each.one_model(number) for each in written],
                len(read),
                jobs,
                progress.advance,
                meanwhile=without_cards,
            )
            progress.finish(f"{len(read):,} models" + (f" in {len(written)} editions" if len(written) > 1 else ""))
            # Each edition's results, let go of once its pages are made: at 10,000 cards they are tens of MB.
            by_edition = [list(models) for models in zip(*counted, strict=True)] or [[] for _ in written]
            del counted
            made: set[str] = set()
            for each in written:
                if each.options.prefix:
                    progress.say(f"the {each.options.language} edition, in {each.options.prefix}")
                paths = each.site_files(by_edition.pop(0), progress, jobs)
                made.update(each.options.prefix + path for path in paths)
        # Measured here, before the swap: once swapped in, another build may replace the site.
        files, pages, size = staging.measure(made)
        sealed = [cache.close() for cache in caches if cache is not None]  # every one, sealed or broken
        if not all(sealed):
            progress.say("the generator, templates or content changed during this build: the cache will not reuse it")
    return BuildResult(len(read), pages, files, size)


# What a worker sends back of one model in one edition: its summary numbers, its search record when the
# index is to be made (the build's own process adds it: see SearchIndex), whether its stand-in for Pagefind is
# written, and its files (with the cache).
Counted = tuple[SummaryNumbers, SearchRecord | None, bool, tuple[str, ...]]


class _Edition:
    """One edition being written below ``staging``: its cards (with their families' words in its language),
    its renderer, its use of the cache, and its search index (entered on ``indexes``)."""

    def __init__(
        self, cards: list[Card], options: SiteOptions, staging: Staging, reuse: Reuse, indexes: contextlib.ExitStack
    ) -> None:
        self.cards, self.options, self.staging, self.reuse = cards, options, staging, reuse
        self.renderer = Renderer(options, cards=cards)
        self.search_key = reuse.cards_key("search", cards) if options.search else ""
        # Every card as a build that indexed them had it: its index is placed at once, and no page's
        # record is worked out or written for Pagefind (a second on 1,000 cards with nothing changed).
        placed = reuse.place_all(self.search_key, staging.path) if options.search else {}
        self.index = indexes.enter_context(search_index(placed is None, len(cards), staging.path, options.tag))
        self.made = set(placed or ())  # every file put in the site with the cache (a reused staging keeps no other)

    def one_model(self, number: int) -> Counted:
        """The card ``number``'s files in this edition, written (in any process), and what the build keeps of them."""
        card, reuse, index = self.cards[number], self.reuse, self.index
        inputs = self.renderer.model_inputs(card.id)
        held = reuse.model(card, inputs, self.staging.path)
        if held is not None:
            return held.numbers, held.record if index is not None else None, False, tuple(held.files)
        model = named_or_counted(card)  # the few cards other pages name were counted for them already
        files = reuse.write(self.staging, self.renderer.model_files(model))
        # Kept with the model even when the index was placed, so a later build that indexes again finds it.
        record = model_record(model, self.renderer.text) if self.options.search else None
        numbers = model.numbers()
        reuse.store_model(ModelEntry(card, numbers, files, record, inputs))
        if index is not None and record is not None:
            index.write_model(record)  # here, in parallel, rather than one by one when its shard is indexed
            return numbers, record, True, tuple(files)
        return numbers, None, False, tuple(files)

    def without_cards(self) -> None:
        """What needs no card, done in the build's process while the workers write the model pages: the files
        made from the code alone (the calculator's data, the assets), and, when those were not in the cache (a
        first build, or new code), what the page kinds can work out before the summaries exist
        (``Renderer.prepare``). A rebuild leaves that to the pages it makes again."""
        if self.make(self.renderer.code_files(), 1, here=True)[1]:
            self.renderer.prepare()

    def site_files(self, counted: list[Counted], progress: Progress, jobs: int) -> set[str]:
        """The pages about many models from the models ``counted``, then the search index: every path the
        edition made, from its root."""
        reuse, index, staging = self.reuse, self.index, self.staging
        summaries = [Summary.of(card, numbers) for card, (numbers, *_) in zip(self.cards, counted, strict=True)]
        for _, record, written, paths in counted:
            self.made.update(paths)
            if index is not None and record is not None:
                index.add_model(record, written=written)
        # Every model's record is in: Pagefind indexes their shards while the pages about many models are made.
        models_indexed = None if index is None else reuse.start_index(index, staging.path, jobs, index.model_shards())

        progress.start("other pages")
        # When no card changed, every page about many models is as it was: placed without working out
        # what each shows (gathering the pages is itself half a second on 1,000 cards).
        unchanged = reuse.cards_key("site", self.cards)
        if (site_files := reuse.place_all(unchanged, staging.path)) is None:
            reuse.store_all(unchanged, self.make(self.renderer.site_files(summaries), jobs, progress.advance)[0])
        else:
            self.made.update(site_files)
            if index is not None:
                reuse.add_records(unchanged, staging.path, index)
        progress.finish()

        if self.options.search:
            progress.start("search index")
            if index is not None and models_indexed is not None:  # else placed when the edition began
                site_indexed = reuse.start_index(index, staging.path, jobs, [SITE_SHARD])
                bundle = reuse.finish_index(index, staging.path, models_indexed)
                bundle |= reuse.finish_index(index, staging.path, site_indexed)
                reuse.store_all(self.search_key, bundle)
                self.made.update(bundle)
            progress.finish()
        return self.made

    def make(
        self, pieces: list[Piece], jobs: int, on_done: Callable[[int, int], None] | None = None, *, here: bool = False
    ) -> tuple[dict[str, Blob], int]:
        """Each piece's files: placed from the cache, or made (in this process when ``here``, else over
        ``jobs`` processes) and stored under the piece's key. Returns them all, and how many pieces were made."""
        reuse, index = self.reuse, self.index
        files: dict[str, Blob] = {}
        todo = []
        for piece in pieces:
            key = reuse.piece_key(piece, self.cards)
            if (placed := reuse.place_all(key, self.staging.path)) is None:
                todo.append((key, piece))
                continue
            files |= placed
            if index is not None:  # the search index may still be missing: its pages' records, from the files
                reuse.add_records(key, self.staging.path, index)
        todo.sort(key=lambda entry: -entry[1].work(len(self.cards)))  # largest first (stable: else in order)
        work = [piece for _, piece in todo]
        if here:
            written = [self._write(work, number) for number in range(len(work))]
        else:
            # A page about many models is tens of milliseconds or more: worth a process of its own.
            written = map_parallel(functools.partial(self._write, work), len(work), jobs, on_done, per_job=1)
        for (key, _), piece_files in zip(todo, written, strict=True):
            reuse.store_all(key, piece_files)
            files |= piece_files
        self.made.update(files)
        return files, len(todo)

    def _write(self, work: Sequence[Callable[[], dict[str, bytes]]], number: int) -> dict[str, Blob]:
        files = work[number]()
        if self.index is not None:
            for path, content in files.items():
                if (record := page_record(path, content)) is not None:
                    self.index.add_page(record)
        return self.reuse.write(self.staging, files)


def _in_language(cards: list[Card], language: str) -> list[Card]:
    """The cards with their families' words in ``language`` (content/<language>/families.yaml)."""
    return [
        dataclasses.replace(card, family=family_in(card.family.name, language), language=language) for card in cards
    ]


def check_note_languages(cards: Sequence[Card], languages: Sequence[str]) -> None:
    """InputError, at each text, unless every card's notes are in a language the site has words for.

    That is any language with a catalog or a content folder, whether or not this build writes its
    edition: a catalog card keeps its Chinese notes in a build of English alone.
    """
    expected = f"expected one of the site's languages ({', '.join(languages)})"
    problems = [
        Problem(where, f"notes.{language}", f"{expected}, found {language!r}")
        for card in cards
        for language, where in card.notes.where.items()
        if language not in languages
    ]
    if problems:
        raise InputError(problems)
