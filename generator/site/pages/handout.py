"""The handout: a formula sheet to print on a few pages (A4 or Letter).

The symbols, the closed form of every family's base model and what each head adds or leaves
out, one model worked in numbers (content/choices.yaml: ``handout``), and its memory at each
precision. Every formula comes from the families' declarations (``analysis.tensor_patterns``),
every number from that model's own inventory and ``counting.memory``: the page types none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.analysis.choices import load_choices
from generator.analysis.tensor_patterns import head_forms
from generator.counting.families import shared_symbols
from generator.site import content
from generator.site.page import LANGUAGE, Page, guide_page
from generator.site.pages.families import ordered_families
from generator.site.views import Summary

WORKED = load_choices().handout  # the card worked in numbers, when the build has it


@dataclass(frozen=True)
class Departure:
    """A model whose count is not its head's closed form as the sheet prints it (with the config class's
    defaults for every switch): its config turns one on or off (an embedding width equal to H: no projection)."""

    model: Summary
    off_by: int  # the closed form's figure, less the model's count


def departures(models: Sequence[Summary]) -> tuple[Departure, ...]:
    """The models a reader would count wrong with the sheet's forms, and by how much."""
    found = []
    for model in models:
        form = next((f for f in head_forms(model.card.family) if f.head is model.card.head), None)
        if form is None or not form.formula.symbols() <= model.values.keys():
            continue  # a form this model's symbols cannot fill in says nothing about it
        off_by = form.formula.evaluate(model.values) - model.total
        if off_by:
            found.append(Departure(model, off_by))
    return tuple(found)


def pages(models: Sequence[Summary], language: str = LANGUAGE) -> list[Page]:
    text = content.load("handout", language).section("page")
    worked = next((m for m in models if m.id == WORKED), None)
    lede = text.html("lede")

    def context() -> dict[str, object]:
        return {
            "symbols": shared_symbols(language),
            "families": [(family, head_forms(family)) for family in ordered_families(language)],
            "departures": departures(models),
            "worked": worked.model() if worked is not None else None,
            "lede": lede,
        }

    # It shows one model's derivation in numbers, and which models its forms miss: every model's summary.
    return [guide_page("handout/index.html", "handout.html", text, context)]
