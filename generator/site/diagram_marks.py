"""What the architecture figure draws between its boxes: the sums where residuals join, and their skips.

A sum (``diagram_model.Joined``) is a row of its own, a ⊕ and a few words, at its place in the forward.
Each skip runs in the block's left margin, from the gap where its activation leaves the path down to
the ⊕ that adds it back: a post-norm layer draws the ⊕ above its LayerNorm, a pre-norm one below.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from html import escape

from generator.site.content import Text
from generator.site.diagram_model import Group, Joined

JOIN = 20  # a sum's row: its ⊕ and its words on one line
RADIUS = 6
EDGE = 12  # the left edge of a block's boxes, where a skip leaves the path
LANES = (6, 2.5, 9.5)  # the margin's lanes, left of the boxes: a skip takes the first free one


@functools.lru_cache(maxsize=1024)
def _width(text: str) -> float:
    return sum(12.0 if ord(c) > 0x2E80 else 7.3 for c in text)


def join_words(joined: Joined, group: Group, words: Text) -> tuple[str, ...]:
    """What a sum's row may say, the fullest first: a residual and where its skip comes from, or a sum of
    steps that run side by side."""
    if not joined.residual:
        return (words("join-sum", count=str(len(joined.adds))),)
    (kind, label), *_ = joined.adds
    if kind == "input" and group.repeat:  # a layer's input, however the layer is titled
        kind = "layer-input"
    found = words(f"join-from-{kind}", step=label, block=group.title)
    if kind.endswith("input"):
        return found, words("join-from-input-short"), words("join-residual")
    return found, words("join-residual")


def join_svg(joined: Joined, group: Group, words: Text, y: float, end: float) -> str:
    """A sum's row at ``y``: its ⊕ at the left, where the boxes' labels start, and its words beside it."""
    left = 12 if joined.depth == 1 else 26
    x, middle = left + RADIUS + 2, y + JOIN / 2
    said = join_words(joined, group, words)  # the fullest that fits: the skip shows where it comes from
    text = next((t for t in said if x + RADIUS + 6 + _width(t) <= end), said[-1])
    return "\n".join(
        (
            '<g class="join">',
            f'<circle cx="{_n(x)}" cy="{_n(middle)}" r="{RADIUS}"/>',
            f'<path d="M{_n(x - 4)},{_n(middle)} H{_n(x + 4)} M{_n(x)},{_n(middle - 4)} V{_n(middle + 4)}"/>',
            f'<text x="{_n(x + RADIUS + 6)}" y="{_n(middle + 4)}" class="count">{escape(text)}</text>',
            "</g>",
        )
    )


def skip_paths(group: Group, places: Mapping[tuple[int, int], float], centres: Sequence[float]) -> list[str]:
    """Each sum's skips: from the gap where each leaves, along a lane of the margin, into its ⊕."""
    taken: list[list[tuple[float, float]]] = [[] for _ in LANES]
    out = []
    for joined, centre in zip(group.joins, centres, strict=True):
        starts = [places[branch] for branch in joined.branches]
        span = (min(starts), centre)
        lane = next((n for n, spans in enumerate(taken) if all(b <= span[0] or a >= span[1] for a, b in spans)), 0)
        taken[lane].append(span)
        x = LANES[lane]
        circle = (12 if joined.depth == 1 else 26) + 2
        for start in starts:
            out.append(f'<path d="M{EDGE},{_n(start)} H{_n(x)} V{_n(centre)} H{_n(circle)}" class="skip-line"/>')
    return out


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")
