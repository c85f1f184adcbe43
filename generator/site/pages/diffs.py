"""Comparison pages: one for each declared pair (``differences.PAIRS``), and a list of them all."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from generator.counting.architecture import Part
from generator.counting.texts import part_titles
from generator.site import content
from generator.site.differences import PAIRS, Diff, Pairing, available_pairs
from generator.site.page import LANGUAGE, SITE_TITLE, Page, guide_page
from generator.site.views import Summary

INDEX = "diffs/index.html"


def diff_path(slug: str) -> str:
    return f"diffs/{slug}/index.html"


def pages(models: Sequence[Summary], language: str = LANGUAGE) -> list[Page]:
    if not models:
        return []
    text = content.load("diffs", language)
    page, pair = text.section("page"), text.section("pair")
    pairings = available_pairs(models, text.section("topics"))
    titles = part_titles(language)  # a tensor's part, in the tables of tensors added, removed or renamed
    # The list shows the declared pairs' models (whichever are in the build); a comparison its own two.
    listed = tuple(dict.fromkeys(card_id for p in PAIRS for card_id in (p.a, p.b)))
    result = [guide_page(INDEX, "diffs.html", page, {"diffs": pairings}, shows=listed)]
    for pairing in pairings:
        a, b = pairing.a.card.title, pairing.b.card.title
        result.append(
            Page(
                diff_path(pairing.pair.slug),
                "diff.html",
                pair("title", a=a, b=b, site=SITE_TITLE),
                pair("description", a=a, b=b, a_total=pairing.a.total, b_total=pairing.b.total),
                functools.partial(_context, pairing, titles),  # compared where the page is rendered
                shows=(pairing.pair.a, pairing.pair.b),
            )
        )
    return result


def _context(pairing: Pairing, titles: Mapping[Part, str]) -> dict[str, Diff | str | Mapping[Part, str]]:
    return {"diff": pairing.compare(), "topic": pairing.topic, "part_titles": titles}
