"""The whole build, top to bottom: cards -> each model's page -> pages about all models -> site.

Each card is counted, derived and written on its own (in parallel, see parallel.py), and only
its summary is kept; the pages about many models are made from the summaries. Everything is
written into a staging directory that replaces the site only when the build succeeds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from generator.build.output import check_output_dir, staged_site
from generator.build.progress import Progress
from generator.cards.card import in_language, load_cards
from generator.parallel import available_jobs, map_parallel
from generator.site import content
from generator.site.render import TEMPLATES, Renderer, SiteOptions
from generator.site.search import model_record, page_record, search_index
from generator.site.views import Summary, SummaryNumbers, model_of

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
) -> BuildResult:
    """Build the site from a directory of cards; raise InputError, touching nothing, on bad input."""
    options = options or SiteOptions()
    progress = progress or Progress()
    check_output_dir(out_dir, protected=[models_dir, Path.cwd(), PROJECT_ROOT])
    content.check_language(options.language)  # before the cards are read: a typo fails at once
    content.check_family_words(options.language)

    jobs = jobs or available_jobs()
    progress.start("reading cards")
    cards = in_language(load_cards(models_dir, progress.advance, jobs), options.language)
    progress.finish(f"{len(cards):,} cards")

    renderer = Renderer(options, cards=cards)
    with staged_site(out_dir) as staging, search_index(options.search, options.language) as index:

        def one_model(number: int) -> SummaryNumbers:
            model = model_of(cards[number])
            for path, content in renderer.model_files(model).items():
                staging.write(path, content)
            if index is not None:
                index.add(model_record(model, renderer.text))
            return model.numbers()

        def write(work: list[Callable[[], dict[str, bytes]]], number: int) -> None:
            for path, content in work[number]().items():
                staging.write(path, content)
                if index is not None and (record := page_record(path, content)) is not None:
                    index.add(record)

        progress.start("model pages")
        counted = map_parallel(one_model, len(cards), jobs, progress.advance)
        summaries = [Summary.of(card, numbers) for card, numbers in zip(cards, counted, strict=True)]
        progress.finish(f"{len(summaries):,} models")

        progress.start("other pages")
        other = renderer.site_files(summaries)
        map_parallel(functools.partial(write, other), len(other), jobs, progress.advance)
        progress.finish()

        if index is not None:
            progress.start("search index")
            index.write(staging.path)
            progress.finish()
        # Measured here, before the swap: once swapped in, another build may replace the site.
        files, pages, size = staging.measure()
    return BuildResult(len(cards), pages, files, size)
