"""The charts page: every model's parameters by part, and every total against 12·L·H².

The figures come from the inventories (``parts.part_subtotals``); this module gathers them
into rows, draws the two SVG charts with ``generator.site.svg`` and writes their descriptions.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from markupsafe import Markup

from generator.counting.architecture import Kind, Part
from generator.counting.expr import Add, Expr, Mul, Num, Paren, Pow, Var
from generator.counting.parts import Share, shares
from generator.counting.texts import part_titles
from generator.site import content
from generator.site.content import Text
from generator.site.formats import percent, times
from generator.site.page import LANGUAGE, Page, guide_page
from generator.site.svg import BarRow, Point, Series, log_scatter, stacked_bars
from generator.site.views import Summary

# Each part's pattern in the share chart; the key is also the part's CSS class suffix.
PATTERN_OF = {
    Part.EMBEDDINGS: "solid",
    Part.ATTENTION: "diagonal",
    Part.FEED_FORWARD: "dots",
    Part.NORMS: "vertical",
    Part.POOLER: "horizontal",
    Part.HEADS: "grid",
}


def series(language: str) -> tuple[Series, ...]:
    """Each part as the share chart draws it: its title in ``language`` and its pattern."""
    titles = part_titles(language)
    return tuple(Series(part.value, titles[part], PATTERN_OF[part]) for part in Part)


RULE = 12  # the rule of thumb: an encoder layer holds about 12·H² parameters (4H² attention, 8H² feed-forward)
CLOSE = Fraction(1, 10)  # within 10% of the rule counts as on it
LABELLED = ("bert-base-uncased", "bert-large-uncased")  # landmarks labelled in the scatter plot, besides outliers
H, I, L = Var("H"), Var("I"), Var("L")
H2 = Pow(H, 2)
# The formulas the page's explanation of the rule uses (written once, as expression trees).
MATH: dict[str, Expr] = {
    "rule": Mul((Num(RULE), L, H2), "·"),
    "attention": Mul((Num(4), H2)),
    "feed_forward": Mul((Num(2), H, I)),
    "feed_forward_4h": Mul((Num(8), H2)),
    "layer": Add((Mul((Num(12), H2)), Mul((Num(13), H)))),
    "embeddings": Mul((Paren(Add((Var("V"), Var("P"), Var("T")))), H)),
}


@dataclass(frozen=True)
class ShareRow:
    """One model's bar: its parts and their shares."""

    model: Summary
    shares: tuple[Share, ...]


@dataclass(frozen=True)
class RuleRow:
    """One model against the rule of thumb: L, H, the rule's figure, and how far the counts are from it."""

    model: Summary
    layers: int
    hidden: int
    total: int
    embeddings: int
    attention: int
    feed_forward: int
    stored_layers: int  # fewer than L when layers are shared (ALBERT)
    shared_symbols: tuple[str, ...]

    @property
    def lh2(self) -> int:
        return self.layers * self.hidden**2

    @property
    def rule(self) -> int:
        return RULE * self.lh2

    @property
    def without_embeddings(self) -> int:
        return self.total - self.embeddings

    @property
    def ratio(self) -> Fraction:
        return Fraction(self.total, self.rule)

    @property
    def ratio_without_embeddings(self) -> Fraction:
        return Fraction(self.without_embeddings, self.rule)

    @property
    def attention_ratio(self) -> Fraction:
        """Attention against the rule's 4·L·H² for it."""
        return Fraction(self.attention, 4 * self.lh2)

    @property
    def feed_forward_ratio(self) -> Fraction:
        """Feed-forward against the rule's 8·L·H² for it."""
        return Fraction(self.feed_forward, 8 * self.lh2)

    @property
    def embedding_share(self) -> Fraction:
        return next(s.fraction for s in shares(self.model.parts) if s.part is Part.EMBEDDINGS)

    @property
    def reason(self) -> str:
        """Which explanation the page gives: on the rule, embeddings, shared layers, or the encoder's shape."""
        if abs(self.ratio_without_embeddings - 1) <= CLOSE:
            return "close" if abs(self.ratio - 1) <= CLOSE else "embeddings"
        if self.stored_layers < self.layers:
            return "shared"
        return "encoder"


def share_rows(models: Sequence[Summary]) -> tuple[ShareRow, ...]:
    """Every model, families together in the order they first appear, smallest first within a family."""
    families = list(dict.fromkeys(m.card.family.name for m in models))
    ordered = sorted(models, key=lambda m: (families.index(m.card.family.name), m.total, m.id))
    return tuple(ShareRow(m, shares(m.parts)) for m in ordered)


def rule_rows(models: Sequence[Summary]) -> tuple[RuleRow, ...]:
    """Every model whose count uses both L and H, by L·H² and then total."""
    rows = []
    for m in models:
        layers, hidden = m.symbol_value("L"), m.symbol_value("H")
        if layers is None or hidden is None:
            continue
        parts = m.parts
        shared = [b for b in m.architecture.blocks if b.applied and b.kind is Kind.ENCODER]
        stored = sum(b.copies().evaluate(m.values) for b in shared) if shared else layers
        if stored * hidden == 0:
            continue  # no layers, or 0 wide (transformers builds both): no place on a log scale of L·H²
        rows.append(
            RuleRow(
                model=m,
                layers=layers,
                hidden=hidden,
                total=m.total,
                embeddings=parts[Part.EMBEDDINGS],
                attention=parts[Part.ATTENTION],
                feed_forward=parts[Part.FEED_FORWARD],
                stored_layers=stored,
                shared_symbols=shared[0].repeat if shared else (),
            )
        )
    return tuple(sorted(rows, key=lambda r: (r.lh2, r.total, r.model.id)))


def _share_description(text: Text, rows: tuple[ShareRow, ...], parts: tuple[Series, ...]) -> str:
    def embedding(row: ShareRow) -> Fraction:
        return next(s.fraction for s in row.shares if s.part is Part.EMBEDDINGS)

    low = min(rows, key=embedding)
    high = max(rows, key=embedding)
    patterns = ", ".join(f"{s.label} ({s.pattern_name})" for s in parts)
    return text(
        "description",
        models=len(rows),
        patterns=patterns,
        low_share=percent(embedding(low)),
        low_model=low.model.id,
        high_share=percent(embedding(high)),
        high_model=high.model.id,
    )


def _rule_description(text: Text, rows: tuple[RuleRow, ...]) -> str:
    ratios = [r.ratio for r in rows]
    cores = [r.ratio_without_embeddings for r in rows]
    low = min(rows, key=lambda r: r.ratio_without_embeddings)
    high = max(rows, key=lambda r: r.ratio)
    return text(
        "description",
        models=len(rows),
        rule=RULE,
        low_ratio=times(min(ratios)),
        high_ratio=times(max(ratios)),
        median_ratio=times(statistics.median(ratios)),
        low_core=times(min(cores)),
        high_core=times(max(cores)),
        median_core=times(statistics.median(cores)),
        high_model=high.model.id,
        high_model_ratio=times(high.ratio),
        low_model=low.model.id,
        low_model_core=times(low.ratio_without_embeddings),
    )


def pages(models: Sequence[Summary], language: str = LANGUAGE) -> list[Page]:
    if not models:
        return []
    text = content.load("charts", language)
    texts, labels = text.section("shares"), text.section("rule")
    bars, parts = share_rows(models), series(language)
    share_args = (
        "chart-shares",
        texts("title"),
        _share_description(texts, bars, parts),
        parts,
        [BarRow(row.model.id, tuple(s.count for s in row.shares)) for row in bars],
    )
    # Both layouts of each chart; charts.css shows the one that fits the screen (see generator.site.svg).
    share_svg = "\n".join(stacked_bars(*share_args, narrow=narrow) for narrow in (False, True))
    context: dict[str, object] = {"share_rows": bars, "share_chart": Markup(share_svg), "parts": parts, "f": MATH}
    rule = rule_rows(models)
    if rule:
        points = [
            Point(
                label=row.model.id,
                x=row.lh2,
                y=row.total,
                low=row.without_embeddings or None,
                tooltip=labels(
                    "tooltip",
                    model=row.model.id,
                    lh2=row.lh2,
                    total=row.total,
                    ratio=times(row.ratio),
                    without_embeddings=row.without_embeddings,
                    core=times(row.ratio_without_embeddings),
                ),
                labelled=row.reason in ("shared", "encoder") or row.model.id in LABELLED,
            )
            for row in rule
        ]
        rule_svg = "\n".join(
            log_scatter(
                "chart-rule",
                labels("title", rule=RULE),
                _rule_description(labels, rule),
                points,
                x_label=labels("x-axis"),
                y_label=labels("y-axis"),
                slope=RULE,
                line_label=labels("line", rule=RULE),
                marker_labels=(labels("total-marker"), labels("core-marker")),
                narrow=narrow,
            )
            for narrow in (False, True)
        )
        context.update(rule_rows=rule, rule_chart=Markup(rule_svg), rule=RULE)
    else:
        context.update(rule_rows=(), rule_chart=None, rule=RULE)
    return [guide_page("charts/index.html", "charts.html", text.section("page"), context, rule=RULE)]
