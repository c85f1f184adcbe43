"""Family pages: ``families/`` lists every declared family, ``families/<family>/`` shows one.

A family page says how the family differs from the reference family, lists its heads with their closed forms
and its switches, every tensor name its classes can register as a pattern (one row per name,
shape and count in symbols), and its catalog models with their totals. Everything is read off
the family's declaration (``analysis.tensor_patterns``) and the models' summaries: nothing is
typed here, and the page counts nothing.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from markupsafe import Markup

from generator.analysis.choices import load_choices
from generator.analysis.tensor_patterns import (
    BlockPatterns,
    HeadForm,
    defaults,
    family_patterns,
    head_forms,
    pattern_name,
)
from generator.cards.config import load_schema
from generator.counting.architecture import Architecture, Family, Head, Symbol, Tie
from generator.counting.derivation import block_form
from generator.counting.expr import poly_expr, to_text
from generator.counting.families import families, shared_symbols
from generator.counting.switches import Switch
from generator.site import content
from generator.site.diagram import Diagram, Group, Row, diagram_words, figure_svg, in_run_order
from generator.site.diagram_model import in_forward_order, is_table, symbolic_widths, width_symbols
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

    @property
    def figure(self) -> Markup:
        """The base model's figure in symbols, drawn where the page asks for it (the index does not)."""
        words = diagram_words(content.load("site", self.family.language or LANGUAGE))
        return Markup(figure_svg(family_diagram(self.family), words))

    @property
    def variants(self) -> tuple[VariantView, ...]:
        """Each switch setting that changes the figure, with its switch as the page lists it and its figure drawn."""
        words = diagram_words(content.load("site", self.family.language or LANGUAGE))
        listed = {view.switch.name: view for view in self.switches}
        return tuple(
            VariantView(
                listed[v.switch],
                v.on,
                v.ident,
                Markup(figure_svg(v.diagram, words, ident=f"diagram-{v.ident}")),
                v.also,
                v.added,
                v.dropped,
            )
            for v in switch_variants(self.family)
        )


@dataclass(frozen=True)
class VariantView:
    """A variant of the family's figure as the page shows it: its switch, the switch's value, its id, the figure."""

    switch: SwitchView
    on: bool
    ident: str
    figure: Markup
    also: tuple[str, ...]
    added: tuple[str, ...]
    dropped: tuple[str, ...]


@dataclass(frozen=True)
class Variant:
    """The family's figure with one switch set against its default: drawn where that changes its blocks or steps."""

    switch: str
    on: bool
    diagram: Diagram
    # The switches that change nothing drawn at the defaults but do once this one is set (position
    # projections that exist only with relative attention on). Named under the figure, not drawn.
    also: tuple[str, ...] = ()
    # What it draws that the default figure does not, and the reverse: a block's title where the whole
    # block comes or goes, else its steps' labels.
    added: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()

    @property
    def ident(self) -> str:
        """Its figure's id on the page, after the switch and its value: ``bottleneck-off``."""
        return f"{self.switch}-{'on' if self.on else 'off'}"


def _figure_head(family: Family) -> Head:
    """The head a family's figure draws: the base model, or the family's first head where it has none."""
    return Head.BASE if Head.BASE in family.heads else family.heads[0]


def drawn(architecture: Architecture) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What a family's figure draws of an architecture: each block's key and its steps' keys, in run order."""
    return tuple((block.key, tuple(m.key for m in block.modules)) for block in in_run_order(architecture.blocks))


def switch_variants(family: Family) -> tuple[Variant, ...]:
    """For each switch, in declaration order, the figure with it set against its default, where the blocks or
    steps drawn differ from the default figure's; a switch that changes only counts or only heads draws none."""
    head = _figure_head(family)
    default = dict(family.decide(defaults(family)))
    usual = drawn(family.declared(default, head))
    flips = {s.name: {**default, s.name: not default[s.name]} for s in family.switches}
    changing = [name for name, setting in flips.items() if drawn(family.declared(setting, head)) != usual]
    found = []
    for name in changing:
        setting = flips[name]
        architecture = family.declared(setting, head)
        also = tuple(
            other
            for other in flips
            if other not in changing
            and drawn(family.declared({**setting, other: not setting[other]}, head)) != drawn(architecture)
        )
        diagram = dataclasses.replace(family_diagram(family, architecture), setting=(name, setting[name]))
        before = family.declared(default, head)
        found.append(
            Variant(name, setting[name], diagram, also, _missing(architecture, before), _missing(before, architecture))
        )
    return tuple(found)


def _missing(architecture: Architecture, other: Architecture) -> tuple[str, ...]:
    """What ``architecture`` draws and ``other`` does not: a block's title, or the labels of its steps."""
    theirs = {block.key: {m.key for m in block.modules} for block in other.blocks}
    found: list[str] = []
    for block in in_run_order(architecture.blocks):
        if block.key not in theirs:
            found.append(block.title)
        else:
            found.extend(m.label for m in block.modules if m.key not in theirs[block.key])
    return tuple(found)


def family_diagram(family: Family, architecture: Architecture | None = None) -> Diagram:
    """A family's base model (or its first head) with its default switches, or ``architecture`` (one of its
    settings), every count in symbols; each block and each step links to its tensor names on the family page."""
    if architecture is None:
        architecture = family.architecture(defaults(family), _figure_head(family))
    blocks = in_run_order(architecture.blocks)
    order = tuple(s.name for s in family.symbols)
    titles = {block.key: block.title for block in blocks}
    groups = []
    for block in blocks:
        form = block_form(block, order)
        rows = tuple(
            Row(
                tensor_anchor(pattern_name(block, module, module.params[0])),
                module.label,
                0,
                1,
                tied=tuple(param.tied_to for param in module.params if isinstance(param, Tie)),
                formula=to_text(line.symbolic) if not line.formula.is_zero() else "",
                formula_widths=symbolic_widths(module, order),
                table=is_table(module),
            )
            for module, line in zip(block.modules, form.lines, strict=True)
        )
        # In the order the forward runs them, with the sums that join, where the family declares its flow.
        rows, joins, flowed = in_forward_order(block, [(None, ((n, row),)) for n, row in enumerate(rows)])
        widths = tuple((name, 0, meaning) for name, meaning in width_symbols(block, family.symbols))
        subtotal = to_text(form.subtotal_expression) if form.subtotal_expression is not None else ""
        applied = (block.applied, 0) if block.applied else None
        repeat = tuple((symbol, 0) for symbol in block.repeat)
        group = Group(f"tensors-{block.key}", block.title, 0, 0, 0, repeat, applied, rows)
        groups.append(
            dataclasses.replace(
                group,
                read_by=titles.get(block.read_by or "", ""),
                formula=to_text(form.expression),
                subtotal_formula=subtotal,
                copies_formula=to_text(poly_expr(block.copies(), order)),
                joins=joins,
                flowed=flowed,
                width_symbols=widths,
            )
        )
    return Diagram(family.title, 0, tuple(groups))


def tensor_anchor(name: str) -> str:
    """The fragment of a tensor name's row on its family page, escaped as the page's own links escape it."""
    return "t-" + quote(name)


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
