"""Family pages: ``families/`` lists every declared family, ``families/<family>/`` shows one.

A family page says how the family differs from the reference family, lists its heads with their closed forms
and its switches, every tensor name its classes can register as a pattern (one row per name,
shape and count in symbols), and its catalog models with their totals. Everything is read off
the family's declaration (``analysis.tensor_patterns``) and the models' summaries: nothing is
typed here, and the page counts nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from generator.analysis.choices import load_choices
from generator.analysis.tensor_patterns import BlockPatterns, HeadForm, defaults, family_patterns, head_forms
from generator.cards.config import load_schema
from generator.counting.architecture import Family, Symbol
from generator.counting.families import families, shared_symbols
from generator.counting.switches import Switch
from generator.site import content
from generator.site.page import LANGUAGE, SITE_TITLE, Page
from generator.site.views import Summary

INDEX = "families/index.html"
REFERENCE = load_choices().reference_family  # the family the others are described against


def family_path(name: str) -> str:
    return f"families/{name}/index.html"


def differences(family: Family) -> tuple[str, ...]:
    """The family's Markdown paragraphs on what differs from the reference: the one place this page reads them."""
    return family.differences


@dataclass(frozen=True)
class SwitchView:
    """A switch as the page lists it: what it decides, the keys it reads, and its setting by default."""

    switch: Switch
    keys: tuple[str, ...]
    default: bool


@dataclass(frozen=True)
class FamilyView:
    """What a family page shows."""

    family: Family
    differences: tuple[str, ...]
    symbols: tuple[Symbol, ...]
    heads: tuple[HeadForm, ...]
    switches: tuple[SwitchView, ...]
    blocks: tuple[BlockPatterns, ...]
    models: tuple[Summary, ...]
    config_class: str

    @property
    def name(self) -> str:
        return self.family.name

    @property
    def rows(self) -> int:
        return sum(len(block.rows) for block in self.blocks)


def family_view(family: Family, models: Sequence[Summary]) -> FamilyView:
    """A family's page, from its declaration and its catalog models (smallest first)."""
    config = defaults(family)
    switches = tuple(
        SwitchView(s, tuple(sorted(s.when.reads())), bool(s.when.evaluate(config))) for s in family.switches
    )
    own = sorted((m for m in models if m.card.family.name == family.name), key=lambda m: (m.total, m.id))
    return FamilyView(
        family=family,
        differences=differences(family),
        symbols=family.symbols,
        heads=head_forms(family),
        switches=switches,
        blocks=family_patterns(family),
        models=tuple(own),
        config_class=load_schema(family).config_class,
    )


def ordered_families(language: str = LANGUAGE) -> list[Family]:
    """Every family in ``language``: the reference first, then the others by title."""
    return sorted(families(language).values(), key=lambda f: (f.name != REFERENCE, f.title.lower()))


def prepare(language: str = LANGUAGE) -> None:
    """Work out every family's tensor name patterns (every switch setting of every head declared) and its
    heads' closed forms, which ``pages`` then finds made: a build does this while its workers count the cards."""
    for family in ordered_families(language):
        family_patterns(family)
        head_forms(family)


def pages(models: Sequence[Summary], language: str = LANGUAGE) -> list[Page]:
    """The family index and a page per family. Each gathers its view where it is rendered (``prepare``
    works the patterns out ahead in a first build); a family's page shows its own models alone, and
    the index how many each family has, so a rebuild makes again only the pages whose models changed."""
    text = content.load("family-pages", language)
    index, one = text.section("index"), text.section("family")
    ordered = ordered_families(language)
    own = {family.name: tuple(m for m in models if m.card.family.name == family.name) for family in ordered}
    result = [
        Page(
            INDEX,
            "families.html",
            index("title", site=SITE_TITLE),
            index("description", families=len(ordered)),
            functools.partial(_index_context, ordered, own, language, index.html("lede", root="../")),
            guide=index("guide"),
            shows=(),
            about=" ".join(f"{name}={len(found)}" for name, found in own.items()),
        )
    ]
    for family in ordered:
        found = own[family.name]
        words = {"family": family.title, "name": family.name, "site": SITE_TITLE, "models": len(found)}
        result.append(
            Page(
                family_path(family.name),
                "family.html",
                one("title", **words),
                one("description", **words),
                functools.partial(_family_context, family, found, one.html("reference")),
                shows=tuple(m.id for m in found),
            )
        )
    return result


def _index_context(
    ordered: list[Family], own: Mapping[str, Sequence[Summary]], language: str, lede: Markup
) -> dict[str, object]:
    views = [family_view(family, own[family.name]) for family in ordered]
    return {"families": views, "shared_symbols": shared_symbols(language), "lede": lede}


def _family_context(family: Family, models: Sequence[Summary], reference: Markup) -> dict[str, object]:
    """A family's page; ``reference`` is what the reference family's page says in place of differences."""
    return {"view": family_view(family, models), "reference": REFERENCE, "reference_words": reference}
