"""The comparison's chart of memory in training under each fine-tuning method, for a few models.

Each bar stacks what ``memory.memory_of`` holds in bf16 mixed precision for one method's
trainable count, then the activations of the model page's step (``comparison_tuning.method_bar``).
Drawn as ``svg``'s charts are: both layouts, a title and a description, patterns as well as colors,
and a table of the figures beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

from generator.analysis.calculator_compute import DEFAULT_SEQ
from generator.analysis.choices import load_choices
from generator.analysis.fine_tuning import STEP_BATCH, fine_tuning_of
from generator.counting.methods import Method
from generator.site import formats
from generator.site.comparison_tuning import LORA, MethodBar, method_bar
from generator.site.svg import NARROW, Series, _layouts, _legend, _nice_step, _num, _open, _patterns
from generator.site.views import Summary

# The templates read LORA's rank here, and the step's b and longest s.
__all__ = ["DEFAULT_SEQ", "LORA", "STEP_BATCH", "method_chart", "method_models"]

# The memory chart's models, a few of different sizes and families (choices.yaml: charts, methods).
METHOD_MODELS = load_choices().method_models
GIB = 2**30
# The chart's stacked parts, bf16 mixed precision: memory.TRAINING_STATE grouped as ZeRO groups it
# (Rajbhandari et al. 2020, section 3.1): the bf16 weights, their gradients, and Adam's fp32 states;
# then the bf16 activations of the page's step.
PARTS = ("weights", "gradients", "states", "activations")
PART_PATTERNS = ("solid", "diagonal", "dots", "grid")


@dataclass(frozen=True)
class MethodModel:
    """One of the chart's models and its bars, in the model page's order of methods."""

    model: Summary
    bars: tuple[MethodBar, ...]


def method_models(models: Sequence[Summary]) -> tuple[MethodModel, ...]:
    """The chart's models that the catalog has and transformers builds, in METHOD_MODELS order."""
    by_id = {m.id: m for m in models}
    found = []
    for key in METHOD_MODELS:
        model = by_id.get(key)
        analysis = fine_tuning_of(model.card) if model is not None else None
        if model is None or analysis is None:
            continue
        bars = tuple(
            method_bar(row.tuning, row.tuned.trainable, row.tuned.total, row.step)
            if row.tuned is not None
            else MethodBar(row.tuning, 0, 0, (0, 0, 0, 0), row.refusal)
            for row in analysis.rows
        )
        found.append(MethodModel(model, bars))
    return tuple(found)


def method_series(words: Mapping[str, str]) -> tuple[Series, ...]:
    """The four stacked parts, named in the page's words (``words[part]``)."""
    return tuple(Series(f"memory-{part}", words[part], p) for part, p in zip(PARTS, PART_PATTERNS, strict=True))


def method_chart(groups: Sequence[MethodModel], words: Mapping[str, str]) -> Markup:
    """Both layouts of the chart: a group of bars per model, one bar per method, stacked by part.

    ``words``: ``title``; ``desc`` with {models}, and on the first model {full} and {head} (full fine-tuning's
    bytes and the head alone's) and {least} (the smallest of the other methods'); each part's name (PARTS);
    each method's short name, by its value; ``tooltip`` with {model}, {method}, {part}, {gib} and {bytes};
    ``refused``; ``list`` (between two models' names: a title may hold a comma)."""
    series = method_series(words)
    first = {b.tuning.method: b for b in groups[0].bars}
    runs = [b for m, b in first.items() if m not in (Method.FULL, Method.HEAD) and not b.refusal]
    desc = words["desc"].format(
        models=str(words["list"]).join(g.model.card.title for g in groups),
        full=formats.binary(first[Method.FULL].bytes),
        head=formats.binary(first[Method.HEAD].bytes),
        least=formats.binary(min(b.bytes for b in runs)) if runs else "",
    )
    svg = _layouts("chart-methods", lambda id_, narrow: _draw(id_, words["title"], desc, series, groups, words, narrow))
    return Markup(svg)  # the words are escaped where they are drawn


def _draw(
    chart_id: str,
    title: str,
    desc: str,
    series: tuple[Series, ...],
    groups: Sequence[MethodModel],
    words: Mapping[str, str],
    narrow: bool,
) -> str:
    width = NARROW if narrow else 900
    label_width, value_width = (96, 62) if narrow else (150, 80)
    left, right = label_width, width - value_width
    legend, legend_bottom = _legend(
        [
            (f'<rect y="2" width="22" height="14" fill="url(#{chart_id}-{s.key})" class="swatch"/>', s.label, 22)
            for s in series
        ],
        width,
    )
    row_height, bar_height, heading = 20, 13, 26
    top = legend_bottom + 30
    rows = sum(len(g.bars) for g in groups)
    bottom = top + heading * len(groups) + row_height * rows
    height = bottom + 30
    largest = max(b.bytes for g in groups for b in g.bars)
    step = _nice_step(largest / GIB, 4 if narrow else 6)
    top_value = step * math.ceil(largest / GIB / step)

    def px(size: float) -> float:
        return left + size / GIB / top_value * (right - left)

    out = _open(chart_id, title, desc, width, height, narrow, [_patterns(chart_id, series), *legend])
    for n in range(round(top_value / step) + 1):
        gx = px(n * step * GIB)
        out.append(f'<line x1="{_num(gx)}" y1="{top - 6}" x2="{_num(gx)}" y2="{bottom}" class="grid"/>')
        for ty in (top - 12, bottom + 16):
            out.append(f'<text x="{_num(gx)}" y="{ty}" class="tick" text-anchor="middle">{n * step:g} GiB</text>')
    y = top
    for group in groups:
        name = escape(group.model.card.title)
        out.append(f'<text x="0" y="{y + heading - 8}" class="label group">{name}</text>')
        y += heading
        for bar in group.bars:
            method = escape(words[bar.tuning.method.value])
            out.append(f'<text x="{left - 6}" y="{y + bar_height - 2}" class="label" text-anchor="end">{method}</text>')
            if bar.refusal:
                out.append(
                    f'<text x="{left + 4}" y="{y + bar_height - 2}" class="tick">{escape(words["refused"])}</text>'
                )
            start = 0
            for s, size in zip(series, bar.parts, strict=True):
                if size:
                    tip = words["tooltip"].format(
                        model=group.model.card.title,
                        method=words[bar.tuning.method.value],
                        part=s.label,
                        gib=formats.binary(size),
                        bytes=f"{size:,}",
                    )
                    out.append(
                        f'<rect x="{_num(px(start))}" y="{y}" width="{_num(px(start + size) - px(start))}" '
                        f'height="{bar_height}" fill="url(#{chart_id}-{s.key})" class="segment">'
                        f"<title>{escape(tip)}</title></rect>"
                    )
                start += size
            if not bar.refusal:
                value = formats.binary(bar.bytes)
                out.append(f'<text x="{_num(px(start) + 5)}" y="{y + bar_height - 2}" class="tick">{value}</text>')
            y += row_height
    out.append("</svg>")
    return "\n".join(out)
