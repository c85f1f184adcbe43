"""The charts page: every model's parameters by part, and every total against 12·L·H².

The numbers come from the inventories (``parts.part_subtotals``); this module gathers them
into rows, draws the two SVG charts with ``generator.site.svg`` and writes their descriptions.
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from markupsafe import Markup, escape

from generator.analysis.choices import load_choices
from generator.counting.architecture import Kind, Part
from generator.counting.expr import Add, Expr, Mul, Num, Paren, Pow, Var
from generator.counting.parts import Share, shares
from generator.counting.texts import part_titles
from generator.site import content
from generator.site.comparison_step import BATCH, compute_of
from generator.site.content import Text
from generator.site.formats import percent, times
from generator.site.page import LANGUAGE, Page, guide_page
from generator.site.svg import BarRow, Line, Point, Series, line_chart, log_scatter, stacked_bars
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
# Its work against the home page's (Page.cost): 0.20 against 0.05 s at 1,000 cards, in a rebuild.
CHARTS_COST = 4
LABELLED = load_choices().labelled  # landmarks labelled in the scatter plot, besides outliers
# The memory chart: a few models of different shapes, training memory at b = BATCH against s.
MEMORY_MODELS = load_choices().memory_models
MEMORY_SEQS = tuple(range(64, 513, 64))
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
    """One model against the rule of thumb: L, H, the rule's figure, and how far the counts are from it.

    Its ratios and reason are worked out once (the chart, its description and its table each read them)."""

    model: Summary
    layers: int
    hidden: int
    total: int
    embeddings: int
    attention: int
    feed_forward: int
    stored_layers: int  # fewer than L when layers are shared across depth
    shared_symbols: tuple[str, ...]
    layer_instances: int = 0  # every repeated layer stored, more than L with a decoder beside the encoder

    @property
    def lh2(self) -> int:
        return self.layers * self.hidden**2

    @property
    def rule(self) -> int:
        return RULE * self.lh2

    @property
    def without_embeddings(self) -> int:
        return self.total - self.embeddings

    @functools.cached_property
    def ratio(self) -> Fraction:
        return Fraction(self.total, self.rule)

    @functools.cached_property
    def ratio_without_embeddings(self) -> Fraction:
        return Fraction(self.without_embeddings, self.rule)

    @functools.cached_property
    def attention_ratio(self) -> Fraction:
        """Attention against the rule's 4·L·H² for it."""
        return Fraction(self.attention, 4 * self.lh2)

    @functools.cached_property
    def feed_forward_ratio(self) -> Fraction:
        """Feed-forward against the rule's 8·L·H² for it."""
        return Fraction(self.feed_forward, 8 * self.lh2)

    @functools.cached_property
    def embedding_share(self) -> Fraction:
        return next(s.fraction for s in shares(self.model.parts) if s.part is Part.EMBEDDINGS)

    @functools.cached_property
    def reason(self) -> str:
        """Which explanation the page gives: on the rule, embeddings, shared layers, a decoder beside the
        encoder, or the encoder's shape."""
        if abs(self.ratio_without_embeddings - 1) <= CLOSE:
            return "close" if abs(self.ratio - 1) <= CLOSE else "embeddings"
        if self.stored_layers < self.layers:
            return "shared"
        if self.layer_instances > self.layers:
            return "decoder"
        return "encoder"


@dataclass(frozen=True)
class MemoryRow:
    """One model's bf16 mixed-precision training memory at b = BATCH, by sequence length."""

    model: Summary
    memory: tuple[int, ...]  # bytes, one per MEMORY_SEQS
    activations: tuple[int, ...]  # bytes of bf16 activations, one per MEMORY_SEQS

    @property
    def growth(self) -> Fraction:
        """How much more the longest sequence needs than the shortest, as a multiple."""
        return Fraction(self.memory[-1], self.memory[0])


def memory_rows(models: Sequence[Summary]) -> tuple[MemoryRow, ...]:
    """The memory chart's models that are in the catalog and measured, in MEMORY_MODELS order."""
    by_id = {m.id: m for m in models}
    rows = []
    for key in MEMORY_MODELS:
        model = by_id.get(key)
        compute = compute_of(model.card) if model is not None else None
        if model is None or compute is None:
            continue
        # The sequence lengths stop at the position table's length (none of these models has one under 512).
        steps = [compute.at(BATCH, s) for s in MEMORY_SEQS if s <= model.values.get("P", s)]
        if len(steps) == len(MEMORY_SEQS):
            memory = tuple(f.training_memory["bf16_mixed"] for f in steps)
            rows.append(MemoryRow(model, memory, tuple(f.activations["bf16"] for f in steps)))
    return tuple(rows)


def _memory_chart(text: Text, rows: tuple[MemoryRow, ...]) -> Markup:
    """Both layouts of the training-memory chart."""
    gib = 2**30
    lines = [
        Line(
            row.model.card.title,
            tuple(zip(MEMORY_SEQS, row.memory, strict=True)),
            tuple(
                text("tooltip", model=row.model.card.title, seq=s, batch=BATCH, memory=m, gib=round(m / gib, 2))
                for s, m in zip(MEMORY_SEQS, row.memory, strict=True)
            ),
        )
        for row in rows
    ]
    steepest = max(rows, key=lambda r: r.growth)  # the largest ratio: not the steepest line on a GiB axis,
    highest = max(rows, key=lambda r: r.memory[-1] - r.memory[0])  # which is this one's
    activations = min(Fraction(r.activations[-1], r.activations[0]) for r in rows)
    desc = text(
        "description",
        models=", ".join(r.model.card.title for r in rows),
        batch=BATCH,
        low=MEMORY_SEQS[0],
        high=MEMORY_SEQS[-1],
        steepest=steepest.model.card.title,
        growth=times(steepest.growth),
        highest=highest.model.card.title,
        rise=round((highest.memory[-1] - highest.memory[0]) / gib, 1),
        ratio=MEMORY_SEQS[-1] // MEMORY_SEQS[0],
        activations=times(activations),
    )
    return Markup(
        line_chart(
            "chart-memory",
            text("title", batch=BATCH),
            desc,
            lines,
            x_label=text("x-axis"),
            y_label=text("y-axis", unit="GiB"),
            y_scale=gib,
        )
    )


def share_table(rows: Sequence[ShareRow], root: str) -> Markup:
    """The rows of the table of shares, as the chart shows them: a model's link, its total, each part's share
    and count. Written in Python: at a thousand models the template's loop was most of the page's time."""
    out = []
    for row in rows:
        model = row.model
        link = f'<a href="{escape(root)}models/{escape(model.id)}/index.html">{escape(model.card.title)}</a>'
        cells = "".join(
            f'<td class="n">{escape(percent(s.count, model.total))}<span class="count">{s.count:,}</span></td>'
            for s in row.shares
        )
        total = f'<td class="n count">{model.total:,}</td>'
        out.append(f'<tr id="share-{escape(model.id)}"><th scope="row">{link}</th>{total}{cells}</tr>')
    return Markup("\n".join(out))  # the template ends the last line


def rule_table(rows: Sequence[RuleRow], root: str, reasons: Mapping[str, str]) -> Markup:
    """The rows of the table against the rule: a model's link, its total, L, H, L·H², the rule's figure, the
    ratios, and the main reason for the gap, in the template's words (``reasons``, markup: ``close``;
    ``embeddings`` with {share}; ``shared`` with {stored}, {symbols} and {layers}; ``encoder`` with
    {attention} and {feed_forward}). Written in Python, as ``share_table``."""
    out = []
    for row in rows:
        model = row.model
        link = f'<a href="{escape(root)}models/{escape(model.id)}/index.html">{escape(model.card.title)}</a>'
        # The words are the template's markup; what goes into them is numbers, and symbols escaped here.
        reason = reasons[row.reason]
        if row.reason == "embeddings":
            reason = reason.format(share=percent(row.embedding_share))
        elif row.reason == "shared":
            symbols = "·".join(f"<var>{escape(symbol)}</var>" for symbol in row.shared_symbols)
            reason = reason.format(stored=row.stored_layers, symbols=symbols, layers=row.layers)
        elif row.reason == "decoder":
            reason = reason.format(instances=row.layer_instances, layers=row.layers)
        elif row.reason == "encoder":
            reason = reason.format(attention=times(row.attention_ratio), feed_forward=times(row.feed_forward_ratio))
        out.append(
            f'<tr id="rule-{escape(model.id)}">\n'
            f'  <th scope="row">{link}</th><td class="n count">{row.total:,}</td>\n'
            f'  <td class="n">{row.layers:,}</td><td class="n">{row.hidden:,}</td><td class="n">{row.lh2:,}</td>'
            f'<td class="n">{row.rule:,}</td>\n'
            f'  <td class="n">{times(row.ratio)}</td><td class="n">{row.without_embeddings:,}</td>'
            f'<td class="n">{times(row.ratio_without_embeddings)}</td>\n'
            f'  <td class="n">{times(row.attention_ratio)}</td><td class="n">{times(row.feed_forward_ratio)}</td>\n'
            f"  <td>{reason}</td>\n"
            "</tr>"
        )
    return Markup("\n".join(out))  # the template ends the last line


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
        repeated = [b for b in m.architecture.blocks if b.repeat and b.kind is Kind.ENCODER]
        instances = sum(b.copies().evaluate(m.values) for b in repeated)
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
                layer_instances=instances,
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
    """The charts page; its charts are drawn where it is rendered (a worker process, in a build)."""
    if not models:
        return []
    text = content.load("charts", language)
    return [
        guide_page(
            "charts/index.html",
            "charts.html",
            text.section("page"),
            functools.partial(_context, models, text, language),
            cost=CHARTS_COST,
            rule=RULE,
        )
    ]


def _prose(text: Text) -> dict[str, object]:
    """The page's paragraphs in HTML; the template fills the rule's formulas (``MATH``, by name) in."""
    parts = text.section("parts")
    keys = ("embeddings", "attention", "feed-forward", "norms", "pooler", "heads")
    prose: dict[str, object] = {"parts": {key: parts.html(key) for key in keys}}
    for key in ("rule-origin", "rule-omits"):
        text.html(key, **dict.fromkeys(MATH, ""))  # a placeholder that is no formula's name is reported here
        prose[key] = Markup(text.template(key))
    prose |= {key: text.html(key) for key in ("shares", "rule-caption", "outliers")}
    return prose


def _context(models: Sequence[Summary], text: Text, language: str) -> dict[str, object]:
    texts, labels = text.section("shares"), text.section("rule")
    bars, parts = share_rows(models), series(language)
    # Each chart in both layouts; charts.css shows the one that fits the screen (see generator.site.svg).
    share_svg = stacked_bars(
        "chart-shares",
        texts("title"),
        _share_description(texts, bars, parts),
        parts,
        [BarRow(row.model.id, tuple(s.count for s in row.shares)) for row in bars],
    )
    context: dict[str, object] = {"share_chart": Markup(share_svg), "parts": parts, "f": MATH}
    context["prose"] = _prose(text.section("prose"))
    context["share_table"] = functools.partial(share_table, bars)
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
                labelled=row.reason in ("shared", "decoder", "encoder") or row.model.id in LABELLED,
            )
            for row in rule
        ]
        rule_svg = log_scatter(
            "chart-rule",
            labels("title", rule=RULE),
            _rule_description(labels, rule),
            points,
            x_label=labels("x-axis"),
            y_label=labels("y-axis"),
            slope=RULE,
            line_label=labels("line", rule=RULE),
            marker_labels=(labels("total-marker"), labels("core-marker")),
        )
        context.update(rule_rows=rule, rule_chart=Markup(rule_svg), rule=RULE)
        context["rule_table"] = functools.partial(rule_table, rule)
    else:
        context.update(rule_rows=(), rule_chart=None, rule=RULE)
    memory = memory_rows(models)
    context.update(
        memory_rows=memory,
        memory_chart=_memory_chart(text.section("memory"), memory) if memory else None,
        memory_seqs=MEMORY_SEQS,
        batch=BATCH,
    )
    return context
