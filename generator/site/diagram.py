"""A model's architecture figure as SVG: one box per block, step and run of steps (``diagram_model``).

Each box is a link to its step's anchor and carries that step's count and its weight's widths.
Where a block declares its data flow, its boxes follow the forward, and each sum is a ⊕ with its skips
(``diagram_marks``).
``figure_svg`` writes a page's figure in two layouts, one for a phone and one for a wider screen;
``standalone_svg`` the wide one as a file of its own. A comparison page draws both models' narrow
figures, each with the steps it lists as differing ``marked``, lined up block for block (``diagram_pair``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

from generator.counting.memo import IdentityMemo
from generator.site import formats, typography
from generator.site.content import Text
from generator.site.diagram_marks import JOIN, join_svg, skip_paths
from generator.site.diagram_model import Diagram, Group, Row, diagram_of, in_run_order, marked, step_anchor
from generator.site.diagram_text import describe, setting_words
from generator.site.diagram_text import diagram_words as diagram_words  # the pages read the words here
from generator.site.page import SiteOptions

__all__ = ["Diagram", "Group", "Row", "diagram_of", "in_run_order", "marked", "step_anchor"]

# Layout, in the figure's units. NARROW across, so that at a 390 px phone's 366 px column a 12-unit
# label is drawn at 12 px; WIDE, shown from 48rem on, draws its labels at 16 px at most, 50rem wide
# (static/diagram.css). The wide layout sets each row's widths in a column of their own.
NARROW, WIDE = 360, 600
CHAR = 7.3  # a Latin character's width at 12 units; a Han character is about 12
BOLD = 7.9  # the same in the headings' bold
LANE = 18  # the right margin where ties are drawn
ROW, LINE, GAP = 24, 14, 4
INDENT = (0, 12, 26)


# A figure writes and measures each row's texts several times: in each layout, and to place its block's
# column. Remembered: a row's texts by the row and what else decides them, a text's width by value.
_row_texts: IdentityMemo[Row, str] = IdentityMemo(512)  # a figure has a hundred rows at most


@functools.lru_cache(maxsize=4096)
def _width(text: str, char: float = CHAR) -> float:
    return sum(12.0 if ord(c) > 0x2E80 else char for c in text)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class _Box:
    """A row placed: its top and height, and the right edge a tie's line meets."""

    row: Row
    top: float
    height: float
    right: float


@dataclass(frozen=True)
class _Drawing:
    """What every box of one figure is drawn with: the total, the words, where links lead, the ids' start,
    the figure's width, and the column its rows' widths start at."""

    total: int
    words: Text
    href: str
    ident: str
    width: int
    column: float
    against: str  # a comparison's: the other model's title


def figure_svg(diagram: Diagram, words: Text, *, ident: str = "diagram") -> str:
    """A page's figure: its wide layout, then its narrow one (static/diagram.css shows the one that fits)."""
    return "\n".join(
        (
            diagram_svg(diagram, words, ident=ident, width=WIDE),
            diagram_svg(diagram, words, ident=f"{ident}-narrow", width=NARROW),
        )
    )


def diagram_svg(
    diagram: Diagram,
    words: Text,
    *,
    href: str = "",
    address: str | None = None,
    ident: str = "diagram",
    width: int = NARROW,
    tops: Sequence[float] = (),
    absent: Sequence[tuple[float, float, str]] = (),
    tall: float = 0,
) -> str:
    """The figure as SVG: inline on the page (links ``#anchor``), or standalone with its own style,
    its title and ``address`` in small print (links to the page at ``href``: ``href#anchor``).
    ``ident`` starts the ids of its title, description and arrow: unique when a page holds several figures.
    A comparison lines two figures up (diagram_pair): it gives each block's top, the top, height and words
    of a dotted box facing each block only the other model has (``absent``), and the height of both."""
    standalone = address is not None
    body: list[str] = []
    boxes: list[_Box] = []
    y = 44.0 if standalone else 2.0  # the standalone file's heading above: the card's title and its total
    drawing = _drawing(diagram, words, href, ident, width)
    for n, group in enumerate(diagram.groups):
        y = _draw_group(body, boxes, group, drawing, tops[n] if tops else y) + 14
    for top, height, text in absent:
        body.append(f'<rect x="0" y="{_n(top)}" width="{width - LANE}" height="{_n(height)}" rx="6" class="absent"/>')
        body.append(f'<text x="8" y="{_n(top + 18)}" class="count">{escape(text)}</text>')
    body.extend(_ties(boxes, words, ident, width))
    height = max(y - 12, tall) + (22 if standalone else 0)
    title = words("title", title=diagram.title, total=formats.count(diagram.total))
    if diagram.symbolic:
        title = words("family-title", title=diagram.title)
        if diagram.setting is not None:
            title = words("variant-title", title=diagram.title, **setting_words(diagram.setting, words))
    layout = "wide" if width == WIDE else "narrow"
    # On the page its <title> and <desc> name and describe it; a file's first <title> is its name already.
    size = f'viewBox="0 0 {width} {_n(height)}" aria-labelledby="{ident}-title" aria-describedby="{ident}-desc"'
    if standalone:  # a margin all round, and room for a long title (a heading of 14 units)
        across = max(width, round(_width(diagram.title) * 14 / 12) + 4)
        size = f'viewBox="-10 -8 {across + 20} {_n(height + 16)}" width="{across + 20}" height="{_n(height + 16)}"'
    head = [
        f'<svg class="diagram diagram-{layout}" {size} xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{ident}-title">{escape(title)}</title>',
        f'<desc id="{ident}-desc">{escape(describe(diagram, words))}</desc>',
        f'<defs><marker id="{ident}-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0 L8,4 L0,8 z" class="arrow"/></marker></defs>',
    ]
    if standalone:
        total = words("heading-total", total=formats.count(diagram.total))
        head.insert(1, f"<style>{STANDALONE_STYLE}</style>")
        head.append(f'<text x="0" y="14" class="heading">{escape(diagram.title)}</text>')
        head.append(f'<text x="0" y="32" class="count">{escape(total)}</text>')
        body.append(f'<text x="0" y="{_n(height - 4)}" class="address">{escape(address or "")}</text>')
    return "\n".join([*head, *body, "</svg>"])


def group_heights(diagram: Diagram, words: Text, width: int = NARROW) -> tuple[float, ...]:
    """How tall each block of the figure is drawn, the copies stacked behind it included."""
    drawing = _drawing(diagram, words, "", "", width)
    return tuple(_draw_group([], [], group, drawing, 0.0) for group in diagram.groups)


def _drawing(diagram: Diagram, words: Text, href: str, ident: str, width: int) -> _Drawing:
    column = _column((r for g in diagram.groups for r in g.rows), words)
    return _Drawing(diagram.total, words, href, ident, width, column, diagram.against)


def standalone_svg(diagram: Diagram, words: Text, options: SiteOptions, url: str) -> bytes:
    """The figure as a file of its own beside the page at ``url``, in its wide layout, for a slide: its
    links lead to the page, at its address where the build knows the site's, else beside the file; the
    address printed is the page's. Its spaces are tidied as a page's are (a soft space resolved)."""
    where = options.absolute(url) if options.base_url else None
    href, address = (where, where) if where else ("index.html", options.prefix + url)
    svg = diagram_svg(diagram, words, href=href, address=address, width=WIDE)
    return typography.tidy_spacing(svg, options.language).encode()


def _heading(group: Group, drawing: _Drawing) -> tuple[str, str, list[str]]:
    """A block's title, its count and share (beside the title where they fit), and its lines below:
    how often it is stored and applied, in as few lines as the width takes."""
    words = drawing.words
    title = _sentence(group.title)
    if group.formula:  # a family's figure: its counts in symbols
        if group.repeat:
            title += " " + words("repeat", copies=group.copies_formula if group.applied is None else group.applied[0])
        return title, "", _symbolic_heading(group, words, drawing.width - LANE - 16)
    if group.repeat:  # × the times it runs: its copies, or for a shared block the times they are applied
        title += " " + words(
            "repeat", copies=formats.count(group.copies if group.applied is None else group.applied[1])
        )
    count = words("count", count=formats.count(group.subtotal), share=_share(group.subtotal, drawing.total))
    pieces = []
    if group.repeat:
        symbols = words("separator").join(f"{s} = {v}" for s, v in group.repeat)
        if group.applied is not None:  # one line, so that a phone's heading takes two with its title
            symbol, times = group.applied
            key = "applied" if group.copies == 1 else "applied-many"
            copies = formats.count(group.copies)
            pieces.append(words(key, symbols=symbols, copies=copies, symbol=symbol, times=formats.count(times)))
        else:
            pieces.append(
                words(
                    "copies", symbols=symbols, copies=formats.count(group.copies), count=formats.count(group.per_copy)
                )
            )
    if group.read_by:
        pieces.append(words("read-by", block=group.read_by))
    for symbol, value, meaning in group.width_symbols:  # a factorized table's width: E = 128
        pieces.append(words("width-symbol", symbol=symbol, value=formats.count(value), meaning=meaning))
    room = drawing.width - LANE - 16
    lines: list[str] = []
    for piece in pieces:  # side by side where they fit, " · " between
        if _width(piece) > room:
            lines.extend(_cut(piece, room))
            continue
        if lines and _width(lines[-1] + " · " + piece) <= room:
            lines[-1] += " · " + piece
        else:
            lines.append(piece)
    return title, count, lines


def _draw_group(out: list[str], boxes: list[_Box], group: Group, drawing: _Drawing, y: float) -> float:
    """One block's frame, heading and rows from ``y``; returns its bottom."""
    top, right = y, drawing.width - LANE
    title, count, lines = _heading(group, drawing)
    beside = bool(count) and _width(title, BOLD) + _width(count) + 16 <= right  # 8 each side: widths are generous
    if count and not beside:
        lines.insert(0, count)
    if group.lacked_copies:
        copies = formats.count(group.copies)
        lines.append(
            drawing.words(
                "lacked-copies", title=drawing.against, lacked=formats.count(group.lacked_copies), copies=copies
            )
        )
    bar = 5 if group.lacked_copies else 0
    parts = [f'<a href="{drawing.href}#{group.anchor}" class="block{" lacked" if bar else ""}">']
    height = 8 + 16 * (1 + len(lines))
    parts.append(f'<rect x="0" y="{_n(y)}" width="{_n(right)}" height="{height}" rx="4" class="heading-box"/>')
    if bar:
        parts.append(f'<rect x="0" y="{_n(y)}" width="{bar}" height="{height}" class="bar"/>')
    parts.append(f'<text x="{8 + bar}" y="{_n(y + 18)}" class="title">{escape(title)}</text>')
    if beside:
        parts.append(
            f'<text x="{_n(right - 8)}" y="{_n(y + 18)}" class="total" text-anchor="end">{escape(count)}</text>'
        )
    for number, text in enumerate(lines, start=1):
        parts.append(f'<text x="{8 + bar}" y="{_n(y + 18 + 16 * number)}" class="count">{escape(text)}</text>')
    parts.append("</a>")
    y += height + GAP
    column = _group_column(group, drawing)
    places: dict[tuple[int, int], float] = {}  # where a skip may leave: a row gap, the sums drawn there
    centres: list[float] = []  # each sum's ⊕, where its skips arrive
    for gap, row in enumerate((*group.rows, None)):
        places[(gap, 0)] = y - GAP / 2
        for n, joined in enumerate(j for j in group.joins if j.gap == gap):
            centres.append(y + JOIN / 2)
            parts.append(join_svg(joined, group, drawing.words, y, drawing.width - LANE - 6))
            y += JOIN + GAP
            places[(gap, n + 1)] = y - GAP / 2
        if row is not None:
            y = _draw_row(parts, boxes, row, group, drawing, y, column)
    parts.extend(skip_paths(group, places, centres))
    bottom = y + 4
    frame = "frame shared" if group.applied is not None else "frame"
    shadows = []
    if group.stacked and group.copies > 1:  # copies stacked behind: one layer, × L
        shadows = [
            f'<rect x="{d}" y="{_n(top + d)}" width="{_n(right - 6)}" height="{_n(bottom - top)}" rx="6" class="copy"/>'
            for d in (6, 3)
        ]
    out.extend(shadows)
    out.append(f'<rect x="0" y="{_n(top)}" width="{_n(right)}" height="{_n(bottom - top)}" rx="6" class="{frame}"/>')
    out.extend(parts)
    if group.read_by:  # an arrow into the block drawn next, which reads this one
        middle, arrow = _n(right / 2), f"url(#{drawing.ident}-arrow)"
        out.append(f'<path d="M{middle},{_n(bottom)} V{_n(bottom + 13)}" class="reads" marker-end="{arrow}"/>')
    return bottom + (6 if shadows else 0)


def _numbers(row: Row, group: Group, drawing: _Drawing) -> str:
    decided = ("numbers", group.stacked, group.copies, drawing.total, drawing.words)
    found = _row_texts.get(row, *decided)
    return found if found is not None else _row_texts.keep(row, _written_numbers(row, group, drawing), *decided)


def _written_numbers(row: Row, group: Group, drawing: _Drawing) -> str:
    """A box's count and share: one copy's times the copies, and their share, inside a stacked block."""
    if row.formula:
        return row.formula
    if (row.tied or not row.anchor) and not row.count:  # a slot that holds another's tensor
        return drawing.words("tied")
    if group.stacked:
        share = _share(row.count * group.copies, drawing.total)
        return drawing.words(
            "step-copies", count=formats.count(row.count), copies=formats.count(group.copies), share=share
        )
    return f"{formats.count(row.count)} · {_share(row.count, drawing.total)}"


def _shape(row: Row, words: Text) -> str:
    found = _row_texts.get(row, "shape", words)
    return found if found is not None else _row_texts.keep(row, _written_shape(row, words), "shape", words)


def _written_shape(row: Row, words: Text) -> str:
    """A box's widths as the tensor table gives them (30,522 × 768, 768 → 3,072), and its heads."""
    sign = " × " if row.table else " → "
    widths = sign.join(row.formula_widths or tuple(formats.count(w) for w in row.widths))
    found = [widths] if widths and widths != row.formula else []  # a family's table: V × E says it already
    if row.heads is not None:
        found.append(words("heads", heads=formats.count(row.heads[0]), size=formats.count(row.heads[1])))
    return words("separator").join(found)


def _column(rows: Iterable[Row], words: Text) -> float:
    """Where the widths of these rows start, in a column: past the longest label of a row that has some."""
    ends = [INDENT[r.depth] + 6 + _width(_sentence(r.label)) for r in rows if _shape(r, words)]
    return max(ends, default=0) + 16


def _fits(row: Row, group: Group, drawing: _Drawing, column: float) -> bool:
    """Whether a row's widths fit at ``column`` with its numbers beside them."""
    end = drawing.width - LANE - 12
    shape = _shape(row, drawing.words)
    return not shape or column + _width(shape) + 12 + _width(_numbers(row, group, drawing)) <= end


def _group_column(group: Group, drawing: _Drawing) -> float | None:
    """The column a block's rows set their widths in: the figure's in the wide layout, else the block's
    own, where every row fits it; none where one does not (each row's widths then go under its label)."""
    column = drawing.column if drawing.width == WIDE else _column(group.rows, drawing.words)
    return column if all(_fits(row, group, drawing, column) for row in group.rows) or drawing.width == WIDE else None


def _draw_row(
    out: list[str], boxes: list[_Box], row: Row, group: Group, drawing: _Drawing, y: float, column: float | None
) -> float:
    """One step or run heading as a linked box: its label, its widths and its numbers on one line where they
    fit, the widths in the block's column; else the widths and numbers on a second line."""
    left = INDENT[row.depth]
    inner = drawing.width - LANE - 6 - left
    label, shape, numbers = _sentence(row.label), _shape(row, drawing.words), _numbers(row, group, drawing)
    bar = 5 if row.lacked else 0  # a bar at its left: a shape, not a colour alone (a reshaped one: its outline)
    start = left + 6 + bar
    end = left + inner - 6
    after = start + _width(label) + 12  # the widths right after the label
    lines = 1
    if not shape:
        lines = 1 if after + _width(numbers) <= end else 2
    elif column is not None and column >= after - 8 and column + _width(shape) + 12 + _width(numbers) <= end:
        pass
    elif drawing.width == WIDE and after + _width(shape) + 12 + _width(numbers) <= end:
        column = after
    else:  # the widths under the label, the numbers beside them or under them
        column, lines = start, 2 if start + _width(shape) + 12 + _width(numbers) <= end else 3
    height = ROW + LINE * (lines - 1)
    kind = "run" if row.run else "tied" if row.tied else "step"
    kind += (" lacked" if row.lacked else "") + (" reshaped" if row.reshaped else "")
    out.append(f'<a href="{drawing.href}#{row.anchor}" class="{kind}">' if row.anchor else f'<g class="{kind}">')
    out.append(f'<rect x="{left}" y="{_n(y)}" width="{_n(inner)}" height="{height}" rx="3" class="box"/>')
    if bar:
        out.append(f'<rect x="{left}" y="{_n(y)}" width="{bar}" height="{height}" class="bar"/>')
    out.append(f'<text x="{start}" y="{_n(y + 16)}" class="label">{escape(label)}</text>')
    if shape:
        shape_y = y + 16 + (LINE if lines > 1 else 0)
        out.append(f'<text x="{_n(column or start)}" y="{_n(shape_y)}" class="shape">{escape(shape)}</text>')
    number_y = y + 16 + LINE * (lines - 1)
    out.append(f'<text x="{_n(end)}" y="{_n(number_y)}" class="number" text-anchor="end">{escape(numbers)}</text>')
    out.append("</a>" if row.anchor else "</g>")
    boxes.append(_Box(row, y, height, left + inner))
    return y + height + GAP


def _cut(text: str, room: float) -> list[str]:
    """A line too long for ``room`` in two: after its last comma or colon that leaves a first part that fits."""
    cuts = [m + 1 for m, c in enumerate(text) if c in ",:，：" and _width(text[: m + 1]) <= room]
    if not cuts:
        return [text]
    return [text[: cuts[-1]], text[cuts[-1] :].lstrip()]


def _symbolic_heading(group: Group, words: Text, room: float) -> list[str]:
    """A family's block under its title: one copy's count and the block's, in symbols."""
    if not group.repeat:
        widths = [words("family-width-symbol", symbol=s, meaning=meaning) for s, _, meaning in group.width_symbols]
        return [group.formula, *widths]
    if group.applied is None:  # its own tensors in each layer
        each = words("family-each", copies=group.copies_formula, formula=group.formula)
        return [*_cut(each, room), group.subtotal_formula]
    shared = words("family-applied", copies=group.copies_formula, symbol=group.applied[0])
    return [*_cut(shared, room), *_cut(words("family-one-copy", formula=group.formula), room), group.subtotal_formula]


def _ties(boxes: list[_Box], words: Text, ident: str, width: int) -> list[str]:
    """A line in the right margin from each tied step to the step that holds its tensor."""
    holders = {name: box for box in boxes for name in box.row.names}
    out = []
    drawn = 0
    for box in boxes:
        for target in dict.fromkeys(box.row.tied):
            held = holders.get(target)
            if held is None:
                continue
            lane = width - 4 - 6 * (drawn % 2)  # two ties of one step run side by side
            drawn += 1
            y0, y1 = box.top + box.height / 2, held.top + held.height / 2
            tip = escape(words("tie", slot=box.row.label, target=held.row.label))
            out.append(
                f'<path d="M{_n(box.right)},{_n(y0)} H{_n(lane)} V{_n(y1)} H{_n(held.right + 2)}" class="tie" '
                f'marker-end="url(#{ident}-arrow)"><title>{tip}</title></path>'
            )
    return out


def _share(count: int, total: int) -> str:
    return formats.percent(count, total)


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


# The standalone file's own style, for a slide: dark text on white, no reference outside the file.
STANDALONE_STYLE = (
    "text{font:12px system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans','Noto Sans CJK SC',sans-serif;fill:#1b1f24}"
    ".heading{font-size:14px;font-weight:600}.address{font-size:10px;fill:#57606a}"
    ".title,.total{font-weight:600}.count,.number,.shape{fill:#57606a}"
    ".frame{fill:#f6f8fa;stroke:#57606a}.frame.shared{stroke-dasharray:6 3}.copy{fill:#fff;stroke:#8c959f}"
    ".heading-box{fill:none}.box{fill:#fff;stroke:#d0d7de}.run>.box{fill:#eaeef2}.tied>.box{fill:#fff8e1}"
    ".run>.label{font-weight:600}.tie{fill:none;stroke:#bf5700;stroke-width:1.5;stroke-dasharray:4 2}"
    ".arrow{fill:#bf5700}.reads{stroke:#57606a;stroke-width:1.5}a{text-decoration:none}"
    ".join circle{fill:#fff;stroke:#1b1f24;stroke-width:1.5}.join path{stroke:#1b1f24;stroke-width:1.5}"
    ".skip-line{fill:none;stroke:#1b1f24;stroke-width:1.5}"
)
