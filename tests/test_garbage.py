"""A model's files leave no reference cycle behind: what a worker made for one card is freed as soon as it
is written, by reference counting alone.

A macro defined in a template that a model page includes is made anew, with the include's context, at
each render, and closes a cycle through it: the context holds the page's variables, so every model of a
build stayed in memory until the garbage collector found the cycle, and each collection walked them all
(a tenth of the CPU time of a build of 500 cards). Such macros live in templates imported without the
page's context (templates/_model_macros.html).
"""

from __future__ import annotations

import gc

from conftest import MODELS, card_by_id
from generator.cards.card import load_cards
from generator.site.render import Renderer, SiteOptions
from generator.site.views import model_of


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
