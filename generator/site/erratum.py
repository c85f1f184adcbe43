"""An erratum: a published derivation's steps, each set beside the exact step of a card's derivation.

The page (``generator/site/pages/errata.py``) evaluates each published method as a formula in
the config's symbols on a card's own numbers; the helpers here put each of its steps beside
the same card's exact step, and assemble an erratum from its texts in the content. Their numbers
come from their formula and the card's values, the exact ones from the inventory. What a source
printed is kept apart: a total as the card's claim records it, and a step's figure as the source
writes it, so that a slip of arithmetic shows where it was made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from generator.analysis.erratum_methods import ROUND_VOCABULARY
from generator.cards.published import parse_figure
from generator.counting.derivation import BlockDerivation
from generator.counting.expr import Add, Expr, Mul, Num, Paren, Pow, Var, grouped_expr, poly_expr
from generator.counting.poly import Poly
from generator.site import content
from generator.site.content import Text
from generator.site.views import Model, Summary

V, P, T, H, I, L, A = (Poly.symbol(s) for s in "VPTHILA")
ORDER = ("V", "U", "P", "T", "H", "I", "L", "A")
ZERO = Poly()


@dataclass(frozen=True)
class Source:
    """Where a derivation was published: the kind of source, what it is, and a link when public."""

    kind: str
    title: str
    url: str | None = None


@dataclass(frozen=True)
class Symbol:
    """A symbol the rows use: its name, the card's value and what it stands for."""

    name: str
    value: int
    meaning: str


@dataclass(frozen=True)
class Link:
    """A page of the site that bears on an erratum; ``path`` is relative to the site root."""

    text: str
    path: str


def exact_figure(text: str | None) -> int | None:
    """A figure as a number when every digit is written out ("14,155,008"), else None ("110M", or a
    figure in words, which the card check lets a claim give)."""
    if text is None:
        return None
    try:
        parts = parse_figure(text)
    except ValueError:
        return None
    return parts[0].value if len(parts) == 1 and parts[0].exact else None


@dataclass(frozen=True)
class Row:
    """One step: the published formula and number beside the exact formula and number."""

    label: str
    theirs: Expr | None  # None: the step is not in the published derivation at all
    theirs_value: int  # the published formula evaluated on the card's values
    exact: Expr
    exact_value: int
    anchor: str | None = None  # the model page's derivation step, e.g. "d-layer-query"
    subtotal: bool = False
    printed: str | None = None  # the step's figure as the source prints it, when it prints one
    carried: int = 0  # how far off the printed figures are that this step's printed figure adds up

    @property
    def difference(self) -> int:
        return self.theirs_value - self.exact_value

    @property
    def printed_value(self) -> int | None:
        """The printed figure as a number, when it is written out in full ("14,155,008")."""
        return exact_figure(self.printed)

    @property
    def off(self) -> int:
        """How far the printed figure is from the method's own value; 0 when nothing is printed."""
        printed = self.printed_value
        return 0 if printed is None else printed - self.theirs_value

    @property
    def slip(self) -> int:
        """The part of ``off`` made at this step, not carried from the figures it adds up."""
        return self.off - self.carried


@dataclass(frozen=True)
class Variant:
    """One way of counting the same checkpoint (for the pooler and heads erratum)."""

    label: str
    class_name: str
    count: int
    difference: int  # from the bare encoder with its pooler


@dataclass(frozen=True)
class Erratum:
    """A published derivation, worked beside the exact one."""

    id: str
    title: str
    claim: str  # what the derivation says, in this site's words
    diverges: str  # where it goes wrong, in words; the numbers are in the rows
    sources: tuple[Source, ...]
    model: Model  # the card whose page has the right count
    symbols: tuple[Symbol, ...]  # the config values the rows use, each with what it means
    rows: tuple[Row, ...]
    their_total: int | None
    method: str  # what their_total is, as the verdict names it (content: errata.yaml page.method)
    printed: str | None = None  # the figure as the source prints it, from the card's claims
    variants: tuple[Variant, ...] = ()
    see_also: tuple[Link, ...] = ()

    @property
    def printed_value(self) -> int | None:
        """The printed figure as a number, when it is exact ("218,671,424"); None otherwise."""
        return exact_figure(self.printed)


# Helpers: the card's own steps, as formula and value ------------------------------------------


def block_of(model: Model, key: str) -> BlockDerivation:
    return next(b for b in model.derivation.blocks if b.block.key == key)


def lines_of(model: Model, block: str, *keys: str) -> tuple[Poly, int]:
    """The summed formula and count of some steps of one block (one instance of a repeated block), by module key."""
    steps = [s for s in block_of(model, block).lines if s.key in keys]  # by key: the labels are the build language's
    assert len(steps) == len(keys), (model.id, block, keys)
    formula = ZERO
    for step in steps:
        formula = formula + step.formula
    return formula, sum(s.value for s in steps)


def line_row(
    model: Model,
    label: str,
    theirs: Poly | None,
    exact: tuple[Poly, int],
    anchor: str | None = None,
    printed: str | None = None,
) -> Row:
    values = model.inventory.values
    their_value = theirs.evaluate(values) if theirs is not None else 0
    return Row(
        label,
        poly_expr(theirs, ORDER) if theirs is not None else None,
        their_value,
        poly_expr(exact[0], ORDER),
        exact[1],
        anchor,
        printed=printed,
    )


def subtotal_row(
    model: Model,
    label: str,
    theirs: Poly,
    exact: tuple[Poly, int],
    anchor: str | None = None,
    shown: tuple[Expr | None, Expr | None] = (None, None),
    printed: tuple[str | None, int] = (None, 0),
) -> Row:
    """A subtotal row; ``shown`` writes either formula grouped, (V + P + T)H + L(...), instead of expanded.

    ``printed`` is the source's figure for the subtotal and how far off the printed figures it adds up are.
    """
    row = dataclasses.replace(
        line_row(model, label, theirs, exact, anchor, printed[0]), subtotal=True, carried=printed[1]
    )
    return dataclasses.replace(row, theirs=shown[0] or row.theirs, exact=shown[1] or row.exact)


def grouped(poly: Poly) -> Expr:
    return grouped_expr(poly, ORDER) or poly_expr(poly, ORDER)


def per_layer(poly: Poly) -> Expr:
    return Mul((Var("L"), Paren(poly_expr(poly, ORDER))))


def closed_form(model: Model) -> Expr:
    """The model's closed-form total, as its page writes it."""
    return model.derivation.closed_form


def symbols_of(model: Model, names: str) -> tuple[Symbol, ...]:
    """The card's values of some of its family's symbols, with the meanings the family declares."""
    meanings = {s.name: s.meaning for s in model.card.family.symbols}
    return tuple(Symbol(n, model.inventory.values[n], meanings[n]) for n in names)


def _names(expr: Expr | None) -> set[str]:
    """The symbols a formula uses."""
    if expr is None or isinstance(expr, Num):
        return set()
    if isinstance(expr, Var):
        return {expr.name}
    if isinstance(expr, Pow):
        return _names(expr.base)
    if isinstance(expr, Paren):
        return _names(expr.inner)
    factors = expr.factors if isinstance(expr, Mul) else expr.terms
    return set().union(*(_names(f) for f in factors))


def used_symbols(model: Model, rows: Sequence[Row], leave_out: str = "") -> tuple[Symbol, ...]:
    """Every symbol the rows' formulas use, in the family's order, so that none is left undefined."""
    used = set().union(*(_names(r.theirs) | _names(r.exact) for r in rows))
    order = "".join(s.name for s in model.card.family.symbols if s.name in used and s.name not in leave_out)
    return symbols_of(model, order)


def printed_by(model: Summary, source_words: str) -> str | None:
    """The figure a source printed, as the card's claim from that source records it."""
    return next((c.figure for c in model.card.claims if source_words in c.source), None)


def one_layer(model: Model) -> tuple[Poly, int]:
    block = block_of(model, "layer")
    return block.formula, block.value


def total_of(model: Model) -> tuple[Poly, int]:
    return model.derivation.formula, model.total


def all_layers(t: Text, model: Model, their_layer: Poly, printed: tuple[str, int]) -> Row:
    """All L encoder layers, as the source multiplies its per-layer figure out."""
    block = block_of(model, "layer")
    label = t.root.section("rows")("layers", layers=model.inventory.values["L"])
    row = subtotal_row(model, label, L * their_layer, (L * block.formula, block.subtotal), "d-layer", printed=printed)
    return dataclasses.replace(row, theirs=per_layer(their_layer), exact=per_layer(block.formula))


# Sources, links and texts --------------------------------------------------------------------------


def source_of(t: Text) -> Source:
    """A source as its content describes it: its kind, its title and, if it is public, its address."""
    return Source(t("kind"), t("title"), t.optional("url"))


def erratum(
    t: Text,
    model: Model,
    symbols: tuple[Symbol, ...],
    rows: Sequence[Row],
    their_total: int | None,
    printed: str | None = None,
    *,
    sources: tuple[str, ...],
    see_also: tuple[str, ...] = (),
    variants: tuple[Variant, ...] = (),
    method: str | None = None,
    **values: object,
) -> Erratum:
    """An erratum with its texts from the content, ``values`` filled into them."""
    source = t.root.section("sources")
    return Erratum(
        t.key,
        t("title", **values),
        t("claim", **values),
        t("diverges", **values),
        tuple(source_of(source.section(k)) for k in sources),
        model,
        symbols,
        tuple(rows),
        their_total,
        method or t.root.section("page")("method"),
        printed,
        variants,
        tuple(Link(link("title"), link("path")) for link in (t.root.section("links").section(key) for key in see_also)),
    )


def embedding_rows(t: Text, model: Model, printed: str) -> tuple[Row, Row]:
    """The three tables, as both the published methods count them, then the LayerNorm they leave out."""
    common = t.root.section("rows")
    tables = lines_of(model, "embeddings", "token-embeddings", "position-embeddings", "segment-embeddings")
    return (
        line_row(model, common("tables"), (V + P + T) * H, tables, "d-embeddings", printed),
        line_row(
            model,
            common("embedding-norm"),
            None,
            lines_of(model, "embeddings", "embedding-layernorm"),
            "d-embeddings-embedding-layernorm",
        ),
    )


# What the answer checks need of the errata, read without counting a card again: each erratum's
# title, and each figure a source printed in full that its card's count is not (its slips). The
# builders are generator/site/pages/errata.py's BUILDERS: (function, the ids of the cards it needs).
Builders = Sequence[tuple[Callable[..., Erratum], tuple[str, ...]]]


def erratum_id(build: Callable[..., object]) -> str:
    """An erratum's id, and the key of its texts: its builder's name, dashed (an exercise's, too)."""
    return build.__name__.replace("_", "-")


def titles(builders: Builders, models: Sequence[Summary], language: str) -> dict[str, str]:
    """The title of each erratum whose cards are in the catalog, by its id."""
    section = content.load("errata", language).section("errata")
    ids = {m.id for m in models}
    return {
        erratum_id(build): section.section(erratum_id(build))("title", theirs=ROUND_VOCABULARY)  # vocabulary-30000's V
        for build, needs in builders
        if all(n in ids for n in needs)
    }


# The source whose printed figure an erratum's card records as a claim, by the words of its source.
PRINTED_BY = {
    "per-head-projections": "assignment",
    "textbook-formula": "challenge",
    "intermediate-bias": "issue 656",
    "tied-twice": "issue 656",
}


def printed_figures(builders: Builders, models: Sequence[Summary]) -> list[tuple[str, Summary, int]]:
    """(erratum, card, figure) for each figure a source printed in full that differs from the card's count."""
    by_id = {m.id: m for m in models}
    found = []
    for build, needs in builders:
        key = erratum_id(build)
        if key in PRINTED_BY and needs[0] in by_id:
            card = by_id[needs[0]]
            figure = exact_figure(printed_by(card, PRINTED_BY[key]))
            if figure is not None and figure != card.total:
                found.append((key, card, figure))
    return found


def layered_total(
    t: Text, model: Model, theirs: Poly, their_layer: Poly, printed: tuple[str | None, int], pooler: Poly | None = None
) -> Row:
    """The total of a method that counts the tables, L equal layers and a pooler, written grouped as it adds them."""
    terms = (
        grouped((V + P + T) * H),
        per_layer(their_layer),
        *((poly_expr(pooler, ORDER),) if pooler is not None else ()),
    )
    total = t.root.section("rows")("total")
    return subtotal_row(model, total, theirs, total_of(model), "d-total", (Add(terms), closed_form(model)), printed)


def quotient(numerator: Expr, denominator: Expr) -> Expr:
    """A quotient as the sources write it, H / A; only displayed, since the counting never divides."""
    return Mul((numerator, denominator), "/")
