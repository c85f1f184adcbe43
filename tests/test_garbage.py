"""A model's files, and every step a build takes for one card, leave no reference cycle behind: what a worker made for one card is
freed as soon as it is written, by reference counting alone, so a build runs with the garbage collector
off (cli._collector_off).

A macro defined in a template that a model page includes is made anew, with the include's context, at
each render, and closes a cycle through it: the context holds the page's variables, so every model of a
build stayed in memory until the garbage collector found the cycle, and each collection walked them all
(a tenth of the CPU time of a build of 500 cards). Such macros live in templates imported without the
page's context (templates/_model_macros.html).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from conftest import MODELS, card_by_id, catalog_copy
from generator.build import pipeline
from generator.cards.card import load_card, load_cards
from generator.cli import main
from generator.site import views
from generator.site.render import Renderer, SiteOptions
from generator.site.search_records import model_record
from generator.site.views import Summary, model_of


def test_a_model_page_with_every_part_leaves_no_reference_cycle() -> None:
    renderer = Renderer(SiteOptions(), cards=load_cards(MODELS))
    card = card_by_id("bert-base-uncased")  # published figures, other classes, related pages, compute
    files = renderer.model_files(model_of(card))
    page = files["models/bert-base-uncased/index.html"].decode("utf-8")
    assert 'id="claim-1"' in page and 'id="class-counts"' in page and "Compared tensor by tensor" in page
    del files, page
    gc.collect()
    was = gc.isenabled()
    gc.disable()  # only the collection below finds what this render left
    try:
        renderer.model_files(model_of(card))
        assert gc.collect() == 0  # nothing unreachable: every object of the render was freed as it went
    finally:
        if was:
            gc.enable()


def test_every_step_a_build_takes_for_one_card_leaves_no_reference_cycle() -> None:
    """What a build does card by card, from reading the card to its summary, leaves nothing for a collector:
    the command line builds with it off (cli._collector_off), so a cycle left per card would stay until the
    process ends, thousands of times over. What a build makes once (its template environment, the pages
    about many models) may be cyclic: it is bounded by the build, and freed with its process."""
    renderer = Renderer(SiteOptions(), cards=load_cards(MODELS))

    def one_card(path: Path) -> Summary:
        card = load_card(path)
        model = model_of(card)
        assert renderer.model_files(model) and model_record(model, renderer.text) is not None
        return Summary.of(card, model.numbers())

    paths = [MODELS / f"{card_id}.yaml" for card_id in ("bert-base-uncased", "deberta-v3-base", "albert-base-v2")]
    for path in paths:
        one_card(path)  # what the process keeps (the compiled templates, say) is made already
    views._shaped.clear()  # each card counted again, not taken from its shape (views.model_of)
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        for path in paths:
            one_card(path)
        assert gc.collect() == 0
    finally:
        if was:
            gc.enable()


def test_the_command_line_builds_without_the_collector_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    """A caller that runs ``main`` in its own process keeps its collector; during the build there is none."""
    seen: list[bool] = []
    real_build = pipeline.build

    def build(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real_build(*args, **kwargs)

    models = catalog_copy(tmp_path / "models", ["bert-base-uncased"])
    command = ["build", "--models", str(models), "--out", str(tmp_path / "site"), "--no-search", "--no-cache", "-q"]
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            with pytest.MonkeyPatch.context() as patched:
                patched.setattr(pipeline, "build", build)
                assert main(command) == 0
            assert gc.isenabled() is enabled
        finally:
            gc.enable()
    assert seen == [False, False]
