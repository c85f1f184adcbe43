"""A comparison's two architecture figures, lined up block for block, and the file that holds both.

The blocks are paired in the order the models run them: a block beside one of its kind (embeddings,
encoder, pooler, head), the same key first. Each pair starts at one height in both figures, so two
figures drawn at one width side by side line up. A block only one model has faces a dotted box in
the other's figure, which says so (a factorized embedding's projection, against a model without one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from generator.site import formats, typography
from generator.site.content import Text
from generator.site.diagram import NARROW, STANDALONE_STYLE, Diagram, diagram_svg, group_heights
from generator.site.page import SiteOptions

GAP = 24  # across, between the standalone file's two figures
TOP = 66  # the standalone file's figures start below its title and their own headings
# The marks of a comparison in the standalone file's black on white: a bar, a heavy outline, a dotted box.
PAIR_STYLE = (
    ".reshaped>.box{stroke:#1b1f24;stroke-width:2.5}.bar{fill:#1b1f24}"
    ".absent{fill:none;stroke:#57606a;stroke-width:1.5;stroke-dasharray:1 4;stroke-linecap:round}"
    ".side{font-size:13px;font-weight:600}"
)


@dataclass(frozen=True)
class Layout:
    """Where one figure of a pair draws its blocks, its dotted boxes (top, height, words), and its height."""

    tops: tuple[float, ...]
    absent: tuple[tuple[float, float, str], ...]
    tall: float


def pair_blocks(a: Sequence[tuple[str, str]], b: Sequence[tuple[str, str]]) -> list[tuple[int | None, int | None]]:
    """Two figures' blocks, each given as (key, kind) in run order, paired in order: as many pairs of
    one kind as there can be, a pair with the same key worth more. A block with no partner faces None."""

    def worth(i: int, j: int) -> int:
        return 0 if a[i][1] != b[j][1] else 3 if a[i][0] == b[j][0] else 2

    best = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]  # best[i][j]: the most the blocks from i, j can pair
    for i in reversed(range(len(a))):
        for j in reversed(range(len(b))):
            paired = best[i + 1][j + 1] + worth(i, j) if worth(i, j) else 0
            best[i][j] = max(best[i + 1][j], best[i][j + 1], paired)
    found: list[tuple[int | None, int | None]] = []
    i = j = 0
    while i < len(a) or j < len(b):
        if i < len(a) and j < len(b) and worth(i, j) and best[i][j] == best[i + 1][j + 1] + worth(i, j):
            found.append((i, j))
            i, j = i + 1, j + 1
        elif i < len(a) and (j == len(b) or best[i][j] == best[i + 1][j]):
            found.append((i, None))
            i += 1
        else:
            found.append((None, j))
            j += 1
    return found


def pair_layouts(
    figures: tuple[Diagram, Diagram], kinds: tuple[Sequence[str], Sequence[str]], words: Text
) -> tuple[Layout, Layout]:
    """Both figures' layouts in the narrow width: each pair of blocks at one top, below the taller of the last."""
    heights = (group_heights(figures[0], words), group_heights(figures[1], words))
    keys = [
        [(g.anchor, kind) for g, kind in zip(f.groups, k, strict=True)] for f, k in zip(figures, kinds, strict=True)
    ]
    tops: tuple[list[float], list[float]] = ([], [])
    absent: tuple[list[tuple[float, float, str]], list[tuple[float, float, str]]] = ([], [])
    y = 2.0
    for pair in pair_blocks(keys[0], keys[1]):
        for side, other in ((0, 1), (1, 0)):
            n, facing = pair[side], pair[other]
            if n is not None:
                tops[side].append(y)
            elif facing is not None:  # the other model's block, faced with a box that says this one has none
                text = words("absent", title=figures[side].title, block=figures[other].groups[facing].title)
                absent[side].append((y, heights[other][facing], text))
        y += max(heights[side][n] for side, n in enumerate(pair) if n is not None) + 14
    return Layout(tuple(tops[0]), tuple(absent[0]), y - 12), Layout(tuple(tops[1]), tuple(absent[1]), y - 12)


def pair_svg(
    figures: tuple[Diagram, Diagram],
    layouts: tuple[Layout, Layout],
    hrefs: tuple[str, str],
    words: Text,
    options: SiteOptions,
    url: str,
) -> bytes:
    """Both figures as a file of their own beside the comparison page at ``url``, for a slide: A at the left,
    B at the right, lined up as on the page, under the pair's title, with the page's address in small print.
    Each box links to its step on its model's page, at ``hrefs``."""
    a, b = figures
    title = words("pair-title", title=a.title, target=b.title)
    parts = [
        f"<style>{STANDALONE_STYLE}{PAIR_STYLE}</style>",
        f"<title>{escape(title)}</title>",
        f"<desc>{escape(words('pair-desc', title=a.title, target=b.title))}</desc>",
        f'<text x="0" y="14" class="heading">{escape(title)}</text>',
    ]
    for n, (figure, layout, href, slot) in enumerate(zip(figures, layouts, hrefs, "AB", strict=True)):
        x, tall = n * (NARROW + GAP), _n(layout.tall)
        svg = diagram_svg(figure, words, href=href, ident=f"diagram-{slot.lower()}", **vars(layout))
        heading, total = words("pair-side", slot=slot, title=figure.title), formats.count(figure.total)
        parts.append(f'<text x="{x}" y="40" class="side">{escape(heading)}</text>')
        parts.append(f'<text x="{x}" y="58" class="count">{escape(words("pair-total", total=total))}</text>')
        parts.append(f'<svg x="{x}" y="{TOP}" width="{NARROW}" height="{tall}">{svg}</svg>')
    # Wide enough for the title at 14 units: at most a Han character's 14 a character, a Latin one's 8.6.
    across = max(2 * NARROW + GAP, round(sum(14 if ord(c) > 0x2E80 else 8.6 for c in title)))
    address = options.absolute(url) if options.base_url else options.prefix + url
    legend = _legend(figures, words, TOP + layouts[0].tall + 10)
    parts.extend(legend)
    height = TOP + layouts[0].tall + 22 + 18 * (len(legend) // 2)
    parts.append(f'<text x="0" y="{_n(height - 4)}" class="address">{escape(address)}</text>')
    size = f'viewBox="-10 -8 {across + 20} {_n(height + 16)}" width="{across + 20}" height="{_n(height + 16)}"'
    svg = "\n".join([f'<svg {size} xmlns="http://www.w3.org/2000/svg">', *parts, "</svg>"])
    return typography.tidy_spacing(svg, options.language).encode()


def _legend(figures: tuple[Diagram, Diagram], words: Text, top: float) -> list[str]:
    """What each mark drawn means, one line each, for a slide that has not the page's words: a sample, then words."""
    groups = [g for figure in figures for g in figure.groups]
    steps = [r for g in groups for r in g.rows]
    samples = {  # each mark, drawn as the figures draw it
        "legend-reshaped": '<g class="reshaped"><rect x="0" y="{y}" width="18" height="12" rx="2" class="box"/></g>',
        "legend-lacked": '<rect x="0" y="{y}" width="18" height="12" rx="2" class="box"/>'
        '<rect x="0" y="{y}" width="5" height="12" class="bar"/>',
        "legend-shared": '<rect x="0" y="{y}" width="18" height="12" rx="2" class="frame shared"/>',
        "legend-join": '<g class="join"><circle cx="9" cy="{middle}" r="6"/>'
        '<path d="M5,{middle} H13 M9,{above} V{below}"/></g>',
    }
    shown = {
        "legend-reshaped": any(r.reshaped for r in steps),
        "legend-lacked": any(r.lacked for r in steps) or any(g.lacked_copies for g in groups),
        "legend-shared": any(g.applied is not None for g in groups),
        "legend-join": any(g.joins for g in groups),
    }
    lines: list[str] = []
    for key, sample in samples.items():
        if shown[key]:
            y = top + 18 * (len(lines) // 2)
            lines += [
                sample.format(y=_n(y), middle=_n(y + 6), above=_n(y + 2), below=_n(y + 10)),
                f'<text x="26" y="{_n(y + 11)}" class="count">{escape(words(key))}</text>',
            ]
    return lines


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")
