"""A model's architecture figure, read off its derivation: one box per block, step and run of steps.

The figure draws what the family declares and nothing else: the blocks in the order the model runs
them (embeddings, encoder, pooler, heads), and inside each block its derivation's steps in the order
the class registers them, grouped into the runs the derivation heads (``runs.line_runs``). Each box
is a link to its step's anchor and carries that step's count, so the figure cannot disagree with the
page. Residual joins and the order of norms in the forward are not declared, so they are not drawn.
``diagram_svg`` writes the figure for the page and for a standalone file. A comparison page draws
both models' figures, each with the steps it lists as differing ``marked``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from html import escape

from generator.counting.architecture import Block, Kind
from generator.counting.derivation import BlockDerivation
from generator.site import formats
from generator.site.content import Text
from generator.site.page import SiteOptions
from generator.site.runs import line_runs
from generator.site.views import Model

# The order the model runs its blocks in; a class that registers its head first is drawn the same.
RUN_ORDER = {Kind.EMBEDDINGS: 0, Kind.ENCODER: 1, Kind.POOLER: 2, Kind.HEAD: 3}


@dataclass(frozen=True)
class Row:
    """One box inside a block: a step, or a run's heading over its steps (``depth`` 1 and 2)."""

    anchor: str
    label: str
    count: int  # one copy of its block
    depth: int
    names: tuple[str, ...] = ()  # the tensors it holds (a tie's target is found by name)
    tied: tuple[str, ...] = ()  # the tensors it reuses from elsewhere
    run: bool = False  # a run's heading: its count is its steps'
    formula: str = ""  # a family's figure: the count in the config's symbols, and no number
    # A comparison's figure: the step holds a tensor the other model lacks, or one it shapes differently.
    lacked: bool = False
    reshaped: bool = False

    @property
    def marked(self) -> bool:
        return self.lacked or self.reshaped


@dataclass(frozen=True)
class Group:
    """One block: its heading, its rows, and how often it is stored and applied."""

    anchor: str
    title: str
    per_copy: int
    copies: int
    subtotal: int
    repeat: tuple[tuple[str, int], ...]  # each repeat symbol and its value: (("L", 12),)
    applied: tuple[str, int] | None  # a shared block: the symbol of how often it runs, and its value
    rows: tuple[Row, ...]
    read_by: str = ""  # the title of the repeated block every copy of which reads this one, drawn next
    # A family's figure: one copy's count and the block's in symbols, and its copies (L, GK, L − 1).
    formula: str = ""
    subtotal_formula: str = ""
    copies_formula: str = ""


@dataclass(frozen=True)
class Diagram:
    """A model's figure before it is drawn: its groups and the total they add up to."""

    title: str
    total: int
    groups: tuple[Group, ...]
    setting: tuple[str, bool] | None = None  # a family's figure with one switch set against its default
    against: str = ""  # a comparison's figure: the other model's title, which its marks are read against

    @property
    def symbolic(self) -> bool:
        """A family's figure: its counts in the config's symbols, and no total."""
        return any(group.formula for group in self.groups)


def in_run_order(blocks: Iterable[Block]) -> list[Block]:
    """Blocks in the order the model runs them; a block every copy of another reads, just before that one."""
    ordered = sorted(blocks, key=lambda b: RUN_ORDER[b.kind])
    for read in [b for b in ordered if b.read_by is not None]:
        ordered.remove(read)
        ordered.insert(next(n for n, b in enumerate(ordered) if b.key == read.read_by), read)
    return ordered


def diagram_of(model: Model) -> Diagram:
    """The figure of a model, every count read from its derivation."""
    by_block = {id(b.block): b for b in model.derivation.blocks}
    ordered = [by_block[id(block)] for block in in_run_order(b.block for b in model.derivation.blocks)]
    titles = {b.block.key: b.block.title for b in ordered}
    groups = tuple(_group(model, b, titles.get(b.block.read_by or "", "")) for b in ordered)
    return Diagram(model.card.title, model.total, groups)


def step_anchor(block: str, module: str) -> str:
    """The anchor of a block's step on the model page: ``d-<block>-<module>``."""
    return f"d-{block}-{module}"


def marked(diagram: Diagram, against: str, lacked: Iterable[str], reshaped: Iterable[str]) -> Diagram:
    """The figure with its steps marked against the model titled ``against``: those at the anchors
    ``lacked`` hold a tensor it lacks, those at ``reshaped`` one it shapes differently."""
    lacks, other = frozenset(lacked), frozenset(reshaped)

    def mark(row: Row) -> Row:
        return row if row.run else replace(row, lacked=row.anchor in lacks, reshaped=row.anchor in other)

    groups = tuple(replace(g, rows=tuple(mark(r) for r in g.rows)) for g in diagram.groups)
    return replace(diagram, groups=groups, against=against)


def _group(model: Model, block: BlockDerivation, read_by: str) -> Group:
    values = model.inventory.values
    rows: list[Row] = []
    for run in line_runs(model, block):
        if run.anchor is not None:
            rows.append(Row(run.anchor, run.title, sum(line.value for line in run.lines), 1, run=True))
        for line in run.lines:
            tied = tuple(target for _, target in line.tied)
            depth = 2 if run.anchor is not None else 1
            anchor = step_anchor(block.block.key, line.key)
            rows.append(Row(anchor, line.label, line.value, depth, line.names, tied))
    applied = block.block.applied
    return Group(
        f"d-{block.block.key}",
        block.block.title,
        block.value,
        block.repeat,
        block.subtotal,
        tuple((symbol, values[symbol]) for symbol in block.block.repeat),
        (applied, values[applied]) if applied else None,
        tuple(rows),
        read_by,
    )


# Layout, in the figure's units: NARROW across, so that at a 390 px phone's 366 px column a 12-unit
# label is drawn at 12 px; the page lets it widen to 16 px at most (static/diagram.css).
WIDTH = 360
CHAR = 7.3  # a Latin character's width at 12 units; a Han character is about 12
LANE = 18  # the right margin where ties are drawn
ROW, GAP = 24, 4
INDENT = (0, 12, 26)


def _width(text: str) -> float:
    return sum(12.0 if ord(char) > 0x2E80 else CHAR for char in text)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class _Box:
    """A row placed: its top and height, and the right edge a tie's line meets."""

    row: Row
    top: float
    height: float
    right: float


def diagram_svg(
    diagram: Diagram, words: Text, *, href: str = "", address: str | None = None, ident: str = "diagram"
) -> str:
    """The figure as SVG: inline on the page (links ``#anchor``), or standalone with its own style,
    its title and ``address`` in small print (links to the page at ``href``: ``href#anchor``).
    ``ident`` starts the ids of its title, description and arrow: unique when a page holds several figures."""
    standalone = address is not None
    body: list[str] = []
    boxes: list[_Box] = []
    y = 44.0 if standalone else 2.0  # the standalone file's heading above: the card's title and its total
    right = WIDTH - LANE
    for group in diagram.groups:
        y = _draw_group(body, boxes, group, (diagram.total, words, href, ident), y, right) + 14
    body.extend(_ties(boxes, words, ident))
    height = y - 12 + (22 if standalone else 0)
    width = WIDTH
    title = words("title", title=diagram.title, total=formats.count(diagram.total))
    if diagram.symbolic:
        title = words("family-title", title=diagram.title)
        if diagram.setting is not None:
            title = words("variant-title", title=diagram.title, **_setting(diagram.setting, words))
    # On the page its <title> and <desc> name and describe it; a file's first <title> is its name already.
    size = f'viewBox="0 0 {WIDTH} {_n(height)}" aria-labelledby="{ident}-title" aria-describedby="{ident}-desc"'
    if standalone:  # a margin all round, and room for a long title (a heading of 14 units)
        width = max(WIDTH, round(_width(diagram.title) * 14 / 12) + 4)
        size = f'viewBox="-10 -8 {width + 20} {_n(height + 16)}" width="{width + 20}" height="{_n(height + 16)}"'
    head = [
        f'<svg class="diagram" {size} xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{ident}-title">{escape(title)}</title>',
        f'<desc id="{ident}-desc">{escape(_desc(diagram, words))}</desc>',
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


# Every placeholder a text of the figure may use, each filled with its own name: to check the words.
PLACEHOLDERS = (
    *("title", "total", "copies", "symbols", "symbol", "times", "count", "share", "slot", "target", "blocks"),
    *("formula", "switch", "setting"),
)


def diagram_words(text: Text) -> Text:
    """The figure's words (site.yaml: diagram), every text read and its placeholders checked, whether or
    not this model's figure uses it: a text no model uses is then no unused text, and a bad one fails early."""
    words = text.section("diagram")
    for key in KEYS:
        words(key, block="block", **{name: name for name in PLACEHOLDERS})
    return words


KEYS = (
    *("title", "heading-total", "repeat", "symbols", "applied", "applied-many", "one-copy", "count", "tied", "tie"),
    *("read-by", "block", "block-copies", "desc", "desc-shared", "desc-read-by", "desc-tie", "separator"),
    *("desc-lacked", "desc-reshaped", "sentence-join"),
    *("family-title", "family-desc", "family-block", "family-one-copy", "family-applied"),
    *("variant-title", "variant-desc", "switch-on", "switch-off"),
)


def standalone_svg(diagram: Diagram, words: Text, options: SiteOptions, url: str) -> bytes:
    """The figure as a file of its own beside the page at ``url``: its links lead to the page, at its
    address where the build knows the site's, else beside the file; the address printed is the page's."""
    if options.base_url:
        return diagram_svg(diagram, words, href=options.absolute(url), address=options.absolute(url)).encode()
    return diagram_svg(diagram, words, href="index.html", address=options.prefix + url).encode()


# What every box of one figure is drawn with: the total, the words, where links lead, the ids' start.
_Drawing = tuple[int, Text, str, str]


def _draw_group(out: list[str], boxes: list[_Box], group: Group, drawing: _Drawing, y: float, right: float) -> float:
    """One block's frame, heading and rows from ``y``; returns its bottom."""
    total, words, href, ident = drawing
    top = y
    repeated = bool(group.repeat)
    heading = _sentence(group.title)
    if group.formula:  # a family's figure: its counts in symbols
        lines = _symbolic_heading(group, words)
    elif repeated:  # × the times it runs: its copies, or for a shared block the times they are applied
        runs = group.copies if group.applied is None else group.applied[1]
        lines = [heading + " " + words("repeat", copies=formats.count(runs))]
    else:
        lines = [heading]
    if repeated and not group.formula:
        symbols = words("separator").join(f"{s} = {v}" for s, v in group.repeat)
        lines.append(words("symbols", symbols=symbols))
        if group.applied is not None:
            symbol, times = group.applied
            key = "applied" if group.copies == 1 else "applied-many"
            lines.append(words(key, copies=formats.count(group.copies), symbol=symbol, times=formats.count(times)))
        if group.copies != 1:
            lines.append(words("one-copy", count=formats.count(group.per_copy), share=_share(group.per_copy, total)))
    if not group.formula:
        lines.append(words("count", count=formats.count(group.subtotal), share=_share(group.subtotal, total)))
    if group.read_by:
        lines.append(words("read-by", block=group.read_by))
    parts = [f'<a href="{href}#{group.anchor}" class="block">']
    height = 8 + 16 * len(lines)
    parts.append(f'<rect x="0" y="{_n(y)}" width="{_n(right)}" height="{height}" rx="4" class="heading-box"/>')
    for number, text in enumerate(lines):
        kind = "title" if number == 0 else "count"
        parts.append(f'<text x="8" y="{_n(y + 18 + 16 * number)}" class="{kind}">{escape(text)}</text>')
    parts.append("</a>")
    y += height + GAP
    for row in group.rows:
        y = _draw_row(parts, boxes, row, total, words, href, y, right)
    bottom = y + 4
    frame = "frame shared" if group.applied is not None else "frame"
    shadows = []
    if repeated and group.applied is None and group.copies > 1:  # copies stacked behind: one layer, × L
        shadows = [
            f'<rect x="{d}" y="{_n(top + d)}" width="{_n(right - 6)}" height="{_n(bottom - top)}" rx="6" class="copy"/>'
            for d in (6, 3)
        ]
    out.extend(shadows)
    out.append(f'<rect x="0" y="{_n(top)}" width="{_n(right)}" height="{_n(bottom - top)}" rx="6" class="{frame}"/>')
    out.extend(parts)
    if group.read_by:  # an arrow into the block drawn next, which reads this one
        middle = _n(right / 2)
        out.append(
            f'<path d="M{middle},{_n(bottom)} V{_n(bottom + 13)}" class="reads" marker-end="url(#{ident}-arrow)"/>'
        )
    return bottom + (6 if shadows else 0)


def _draw_row(
    out: list[str], boxes: list[_Box], row: Row, total: int, words: Text, href: str, y: float, right: float
) -> float:
    """One step or run heading as a linked box; its numbers on a second line where they do not fit beside it."""
    left = INDENT[row.depth]
    inner = right - 6 - left
    label = _sentence(row.label)
    if row.formula:
        numbers = row.formula
    elif (row.tied or not row.anchor) and not row.count:  # a slot that holds another's tensor
        numbers = words("tied")
    else:
        numbers = f"{formats.count(row.count)} · {_share(row.count, total)}"
    bar = 5 if row.lacked else 0  # a bar at its left: a shape, not a colour alone (a reshaped one: its outline)
    two_lines = _width(label) + _width(numbers) + 24 + bar > inner
    height = ROW + (14 if two_lines else 0)
    kind = "run" if row.run else "tied" if row.tied else "step"
    kind += (" lacked" if row.lacked else "") + (" reshaped" if row.reshaped else "")
    out.append(f'<a href="{href}#{row.anchor}" class="{kind}">' if row.anchor else f'<g class="{kind}">')
    out.append(f'<rect x="{left}" y="{_n(y)}" width="{_n(inner)}" height="{height}" rx="3" class="box"/>')
    if bar:
        out.append(f'<rect x="{left}" y="{_n(y)}" width="{bar}" height="{height}" class="bar"/>')
    out.append(f'<text x="{left + 6 + bar}" y="{_n(y + 16)}" class="label">{escape(label)}</text>')
    number_y = y + (30 if two_lines else 16)
    out.append(
        f'<text x="{_n(left + inner - 6)}" y="{_n(number_y)}" class="number" text-anchor="end">{escape(numbers)}</text>'
    )
    out.append("</a>" if row.anchor else "</g>")
    boxes.append(_Box(row, y, height, left + inner))
    return y + height + GAP


def _symbolic_heading(group: Group, words: Text) -> list[str]:
    """A family's block: its title × its copies, then one copy's count and the block's, in symbols."""
    if not group.repeat:
        return [_sentence(group.title), group.formula]
    runs = group.copies_formula if group.applied is None else group.applied[0]
    lines = [_sentence(group.title) + " " + words("repeat", copies=runs)]
    if group.applied is not None:
        lines.append(words("family-applied", symbol=group.applied[0]))
    return [*lines, words("family-one-copy", formula=group.formula), group.subtotal_formula]


def _ties(boxes: list[_Box], words: Text, ident: str) -> list[str]:
    """A line in the right margin from each tied step to the step that holds its tensor."""
    holders = {name: box for box in boxes for name in box.row.names}
    out = []
    drawn = 0
    for box in boxes:
        for target in dict.fromkeys(box.row.tied):
            held = holders.get(target)
            if held is None:
                continue
            lane = WIDTH - 4 - 6 * (drawn % 2)  # two ties of one step run side by side
            drawn += 1
            y0, y1 = box.top + box.height / 2, held.top + held.height / 2
            tip = escape(words("tie", slot=box.row.label, target=held.row.label))
            out.append(
                f'<path d="M{_n(box.right)},{_n(y0)} H{_n(lane)} V{_n(y1)} H{_n(held.right + 2)}" class="tie" '
                f'marker-end="url(#{ident}-arrow)"><title>{tip}</title></path>'
            )
    return out


def _desc(diagram: Diagram, words: Text) -> str:
    """The figure in words: every block with its count and share, then what it shares and ties."""
    if diagram.symbolic:
        listed = words("separator").join(
            words("family-block", title=g.title, formula=g.subtotal_formula or g.formula) for g in diagram.groups
        )
        if diagram.setting is not None:
            return words("variant-desc", title=diagram.title, blocks=listed, **_setting(diagram.setting, words))
        return words("family-desc", title=diagram.title, blocks=listed)
    blocks = []
    for group in diagram.groups:
        share = _share(group.subtotal, diagram.total)
        key = "block-copies" if group.repeat and group.copies != 1 else "block"
        values = {"title": group.title, "count": formats.count(group.subtotal), "share": share}
        blocks.append(words(key, copies=formats.count(group.copies), **values))
    sentences = [words("desc", title=diagram.title, blocks=words("separator").join(blocks))]
    for group in diagram.groups:
        if group.read_by:
            sentences.append(words("desc-read-by", title=group.title, block=group.read_by))
        if group.applied is not None:
            symbol, times = group.applied
            sentences.append(words("desc-shared", title=group.title, symbol=symbol, times=formats.count(times)))
    holders = {name: row for group in diagram.groups for row in group.rows for name in row.names}
    for group in diagram.groups:
        for row in group.rows:
            for target in dict.fromkeys(row.tied):
                if target in holders:
                    sentences.append(words("desc-tie", slot=row.label, target=holders[target].label))
    for key, kind in (("desc-lacked", "lacked"), ("desc-reshaped", "reshaped")):
        steps = dict.fromkeys(row.label for group in diagram.groups for row in group.rows if getattr(row, kind))
        if steps:
            sentences.append(words(key, title=diagram.against, blocks=words("separator").join(steps)))
    return words("sentence-join").join(sentences)


def _setting(setting: tuple[str, bool], words: Text) -> dict[str, str]:
    """A switch and its value as the figure's words name them: ``bottleneck`` and "off"."""
    name, on = setting
    return {"switch": name, "setting": words("switch-on" if on else "switch-off")}


def _share(count: int, total: int) -> str:
    return formats.percent(count, total)


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


# The standalone file's own style, for a slide: dark text on white, no reference outside the file.
STANDALONE_STYLE = (
    "text{font:12px system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans','Noto Sans CJK SC',sans-serif;fill:#1b1f24}"
    ".heading{font-size:14px;font-weight:600}.address{font-size:10px;fill:#57606a}"
    ".title{font-weight:600}.count,.number{fill:#57606a}"
    ".frame{fill:#f6f8fa;stroke:#57606a}.frame.shared{stroke-dasharray:6 3}.copy{fill:#fff;stroke:#8c959f}"
    ".heading-box{fill:none}.box{fill:#fff;stroke:#d0d7de}.run>.box{fill:#eaeef2}.tied>.box{fill:#fff8e1}"
    ".run>.label{font-weight:600}.tie{fill:none;stroke:#bf5700;stroke-width:1.5;stroke-dasharray:4 2}"
    ".arrow{fill:#bf5700}.reads{stroke:#57606a;stroke-width:1.5}a{text-decoration:none}"
)
