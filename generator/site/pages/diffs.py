"""Comparison pages: one for each declared pair (``differences.PAIRS``), and a list of them all."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from generator.counting.architecture import Part
from generator.counting.inventory import Tensor
from generator.counting.texts import part_titles
from generator.site import content
from generator.site.content import Text
from generator.site.diagram import Diagram, diagram_of, diagram_svg, diagram_words, marked, step_anchor
from generator.site.diagram_pair import Layout, pair_layouts, pair_svg
from generator.site.differences import PAIRS, Diff, Pairing, available_pairs
from generator.site.page import LANGUAGE, SITE_TITLE, Page, SiteOptions, guide_page
from generator.site.views import Model, Summary

INDEX = "diffs/index.html"
ROOT = "../../"  # from a comparison page, or the file beside it, back to the edition's root


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
                functools.partial(_context, pairing, titles, language),  # compared where the page is rendered
                shows=(pairing.pair.a, pairing.pair.b),
                beside=_standalone,
            )
        )
    return result


def _context(pairing: Pairing, titles: Mapping[Part, str], language: str) -> dict[str, object]:
    diff = pairing.compare()
    drawn = drawn_pair(diff, diagram_words(content.load("site", language)))
    hrefs = tuple(f"{ROOT}models/{model.id}/index.html" for model in (diff.a, diff.b))
    figures = tuple(
        Markup(diagram_svg(figure, drawn.words, href=href, ident=f"diagram-{side}", **vars(layout)))
        for side, figure, href, layout in zip("ab", drawn.diagrams, hrefs, drawn.layouts, strict=True)
    )
    return {"diff": diff, "topic": pairing.topic, "part_titles": titles, "figures": figures, "drawn": drawn}


@dataclass(frozen=True)
class Drawn:
    """A comparison's two figures, marked and lined up as its page draws them, and the words they use."""

    diagrams: tuple[Diagram, Diagram]
    layouts: tuple[Layout, Layout]
    words: Text


def drawn_pair(diff: Diff, words: Text) -> Drawn:
    """The comparison's two figures, each step marked as its tables say, their blocks lined up."""
    diagrams = pair_diagrams(diff)
    return Drawn(
        diagrams, pair_layouts(diagrams, (_kinds(diff.a, diagrams[0]), _kinds(diff.b, diagrams[1])), words), words
    )


def pair_file(diff: Diff, drawn: Drawn, options: SiteOptions) -> dict[str, bytes]:
    """The comparison's two figures as one file of their own beside its page: ``diffs/<slug>/architecture.svg``.

    Its links lead to the models' pages: at their addresses where the build knows the site's, else
    relative, as from the page beside it."""
    url = diff_path(diff.pair.slug).removesuffix("index.html")
    models = (diff.a.card.id, diff.b.card.id)
    a, b = (options.absolute(f"models/{i}/") if options.base_url else f"{ROOT}models/{i}/index.html" for i in models)
    return {f"{url}architecture.svg": pair_svg(drawn.diagrams, drawn.layouts, (a, b), drawn.words, options, url)}


def _standalone(context: Mapping[str, Any], options: SiteOptions) -> dict[str, bytes]:
    return pair_file(context["diff"], context["drawn"], options)


def _kinds(model: Model, figure: Diagram) -> list[str]:
    """The kind of each block of the model's figure, in its order: what a block is paired by."""
    kinds = {f"d-{b.block.key}": b.block.kind.value for b in model.derivation.blocks}
    return [kinds[group.anchor] for group in figure.groups]


def pair_diagrams(diff: Diff) -> tuple[Diagram, Diagram]:
    """Each model's figure, a step marked where the page lists a tensor of it as only in that model or reshaped."""
    a, b = diff.a.card.title, diff.b.card.title
    reshaped_a = _steps(t for row in diff.reshaped for t in row.tensors_a)
    reshaped_b = _steps(t for row in diff.reshaped for t in row.tensors_b)
    only_a = _copies(t for row in diff.removed for t in row.tensors_a)
    only_b = _copies(t for row in diff.added for t in row.tensors_b)
    return marked(diagram_of(diff.a), b, only_a, reshaped_a), marked(diagram_of(diff.b), a, only_b, reshaped_b)


def _steps(tensors: Iterable[Tensor]) -> frozenset[str]:
    return frozenset(step_anchor(t.block.key, t.module.key) for t in tensors)


def _copies(tensors: Iterable[Tensor]) -> dict[str, int]:
    """Each step of these tensors, and in how many copies of its block they lie: some, or all of them."""
    found: dict[str, set[tuple[int, ...]]] = {}
    for t in tensors:
        found.setdefault(step_anchor(t.block.key, t.module.key), set()).add(t.index)
    return {anchor: len(indices) for anchor, indices in found.items()}
