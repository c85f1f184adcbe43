"""What a model page links to besides itself: its family, the diffs, errata and exercises that use it.

Gathered once per build from the cards, before any model page is written (model pages are
written first, in worker processes, so they cannot wait for the pages about many models). The
errata and exercises are built here for the few cards they work through, so their titles are
the pages' own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator.cards.card import Card
from generator.site import content
from generator.site.differences import PAIRS
from generator.site.erratum import Erratum, Link
from generator.site.page import LANGUAGE
from generator.site.pages import errata, exercises
from generator.site.pages.diffs import diff_path
from generator.site.pages.exercises import Exercise
from generator.site.views import named_model


@dataclass(frozen=True)
class Related:
    """The other pages about one model: comparisons that include it, errata and exercises that work it."""

    diffs: tuple[Link, ...] = ()
    errata: tuple[Link, ...] = ()
    exercises: tuple[Link, ...] = ()


def related_pages(cards: Sequence[Card], language: str = LANGUAGE) -> dict[str, Related]:
    """Each card's related pages by card id (a card nothing relates to is left out)."""
    ids = {card.id for card in cards}
    topics = content.load("diffs", language).section("topics")  # what each comparison teaches
    diffs: dict[str, list[Link]] = {}
    for pair in PAIRS:
        if pair.a in ids and pair.b in ids:
            link = Link(topics(pair.slug), diff_path(pair.slug))
            diffs.setdefault(pair.a, []).append(link)
            diffs.setdefault(pair.b, []).append(link)
    errata_by_model = _teaching(cards, {n for _, needs in errata.BUILDERS for n in needs}, "errata", language)
    exercises_by_model = _teaching(cards, {need for _, need in exercises.BUILDERS}, "exercises", language)
    return {
        card_id: Related(
            tuple(diffs.get(card_id, ())),
            tuple(errata_by_model.get(card_id, ())),
            tuple(exercises_by_model.get(card_id, ())),
        )
        for card_id in sorted(ids)
        if card_id in diffs or card_id in errata_by_model or card_id in exercises_by_model
    }


def _teaching(cards: Iterable[Card], needed: set[str], kind: str, language: str) -> dict[str, list[Link]]:
    """The errata or exercises (``kind``) by the id of the model each works through."""
    models = [named_model(card) for card in cards if card.id in needed]
    # Worked as the page works them, for their titles, without what only the page shows (the compute
    # errata, the numbers an exercise's answer box checks against): done here, before any worker starts.
    items: Sequence[Erratum | Exercise] = (errata if kind == "errata" else exercises).worked(models, language)
    path = errata.PATH if kind == "errata" else exercises.PATH
    found: dict[str, list[Link]] = {}
    for item in items:
        found.setdefault(item.model.id, []).append(Link(item.title, f"{path}#{item.id}"))
    return found
