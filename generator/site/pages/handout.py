"""The handout: a formula sheet to print on one or two pages (A4 or Letter).

The symbols, the closed form of every family's base model and what each head adds or leaves
out, BERT-Base worked in numbers, and its memory at each precision. Every formula comes from
the families' declarations (``analysis.tensor_patterns``), every number from BERT-Base's own
inventory and ``counting.memory``: the page types none.
"""

from __future__ import annotations

from collections.abc import Sequence

from generator.analysis.tensor_patterns import head_forms
from generator.counting.families import shared_symbols
from generator.site import content
from generator.site.page import LANGUAGE, Page, guide_page
from generator.site.pages.families import ordered_families
from generator.site.views import Summary

WORKED = "bert-base-uncased"  # the card worked in numbers, when the build has it


def pages(models: Sequence[Summary], language: str = LANGUAGE) -> list[Page]:
    text = content.load("handout", language).section("page")
    worked = next((m for m in models if m.id == WORKED), None)

    def context() -> dict[str, object]:
        return {
            "symbols": shared_symbols(language),
            "families": [(family, head_forms(family)) for family in ordered_families(language)],
            "worked": worked.model() if worked is not None else None,
        }

    # It shows one model's figures, when the build has it: an edit of any other card leaves it as it was.
    return [guide_page("handout/index.html", "handout.html", text, context, shows=(WORKED,))]
