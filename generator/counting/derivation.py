"""The worked derivation of a card's total, read off its inventory.

Each line is one module of the declaration (a Linear, a LayerNorm, an embedding table):
its formula is the sum of its tensors' symbolic shapes, its value the sum of the same
tensors' counts in the inventory. Block subtotals and the total are likewise sums over the
inventory, so the derivation is a view of the table, never a second count.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from generator.counting.architecture import Block, Module, Param, Part, part_of
from generator.counting.expr import (
    Add,
    Expr,
    Mul,
    Num,
    Paren,
    Var,
    dim_expr,
    grouped_expr,
    poly_expr,
    shape_expr,
    substitute,
)
from generator.counting.inventory import Inventory, Tensor, TiedTensor
from generator.counting.memo import IdentityMemo
from generator.counting.poly import Poly, product, total


@dataclass(frozen=True)
class HeadSplit:
    """How a projection splits into attention heads: A heads of H × H/A each."""

    heads_symbol: str
    heads: int
    head_size: int
    inputs: int
    width: str = "H"  # the symbol of the projection's width (a bottleneck's B)


@dataclass(frozen=True)
class LineForm:
    """A line before any number is put in: its formula and how the page writes it.

    Cached by value (``line_form``), so it holds no module: equal modules of different cards
    share one form, and a line's tensors are found from the card's own module.
    """

    formula: Poly
    symbolic: Expr


@dataclass(frozen=True)
class BlockForm:
    """A component before any number is put in: what the derivation and the calculator both show.

    Kept for each block (``block_form``), it holds no block: its lines line up with the modules of
    whichever equal block asks, and those are read from that block.
    """

    lines: tuple[LineForm, ...]
    formula: Poly  # one instance
    expression: Expr
    subtotal_expression: Expr | None  # L(...) for a repeated block, else None


@functools.cache
def line_form(module: Module, order: tuple[str, ...]) -> LineForm:
    """A module's count in symbols: the sum of its tensors' shape products, times its repeat."""
    shapes = [p.shape for p in module.params if isinstance(p, Param)]
    terms = tuple(shape_expr(shape, order) for shape in shapes)
    symbolic: Expr = Num(0) if not terms else terms[0] if len(terms) == 1 else Add(terms)
    formula = total(product(shape) for shape in shapes)
    if module.repeat is not None:
        formula = formula * module.repeat
        symbolic = Mul((dim_expr(module.repeat, order), Paren(symbolic)))
    return LineForm(formula, symbolic)


# Each block's form, remembered by the block's identity (an Architecture and its blocks are built once per
# setting and head): keyed by value, every card's derivation hashed each of its blocks' trees again.
_FORMS: IdentityMemo[Block, BlockForm] = IdentityMemo(1024)


def block_form(block: Block, order: tuple[str, ...]) -> BlockForm:
    """A block's lines, its per-instance formula and, when it repeats, its subtotal in symbols."""
    found = _FORMS.get(block, order)
    if found is not None:
        return found
    lines = tuple(line_form(module, order) for module in block.modules)
    formula = total(s.formula for s in lines)
    expression = poly_expr(formula, order)
    subtotal_expression = Mul((*count_factors(block, order), Paren(expression))) if block.repeat else None
    return _FORMS.keep(block, BlockForm(lines, formula, expression, subtotal_expression), order)


def count_factors(block: Block, order: tuple[str, ...]) -> tuple[Expr, ...]:
    """A repeated block's counts as formulas write them: L, G K, or (L − 1) when it starts at 1."""
    return tuple(
        Paren(poly_expr(count, order)) if level == 0 and block.start else Var(symbol)
        for level, (symbol, count) in enumerate(zip(block.repeat, block.counts(), strict=True))
    )


@dataclass(frozen=True)
class Line:
    """One module: symbolic formula, the same with numbers, and the result."""

    key: str  # the module's, stable in every language: the line's anchor is d-<block>-<key>
    label: str
    names: tuple[str, ...]
    tied: tuple[tuple[str, str], ...]
    formula: Poly
    symbolic: Expr
    substituted: Expr
    value: int
    split: HeadSplit | None


@dataclass(frozen=True)
class BlockDerivation:
    """A component's lines, its per-instance formula and its subtotal."""

    block: Block
    lines: tuple[Line, ...]
    formula: Poly
    expression: Expr
    value: int
    repeat: int
    subtotal: int
    subtotal_expression: Expr | None


@dataclass(frozen=True)
class Derivation:
    """Every component's derivation and the closed-form total."""

    blocks: tuple[BlockDerivation, ...]
    formula: Poly
    closed_form: Expr
    substituted: Expr
    total: int


def derive(inventory: Inventory) -> Derivation:
    """Derive a card's total component by component."""
    order = tuple(s.name for s in inventory.card.family.symbols)
    values = inventory.values
    forms = tuple(block_form(block, order) for block in inventory.architecture.blocks)
    blocks = tuple(_derive_block(inventory, b, f) for b, f in zip(inventory.architecture.blocks, forms, strict=True))
    formula = total(b.formula * b.block.copies() for b in blocks)
    closed = closed_form(forms, order)
    return Derivation(blocks, formula, closed, substitute(closed, values), inventory.total)


def _derive_block(inventory: Inventory, block: Block, form: BlockForm) -> BlockDerivation:
    """One block of this card, its lines lined up with ``block.modules`` (``form`` holds none)."""
    values = inventory.values
    repeat = block.copies().evaluate(values)
    first = block.first  # a property: read once, not once a tensor
    shown = [e for e in inventory.of_block(block) if e.index == first]
    lines = []
    for module, line in zip(block.modules, form.lines, strict=True):
        tensors = [t for t in shown if t.module is module and isinstance(t, Tensor)]
        tied = [t for t in shown if t.module is module and isinstance(t, TiedTensor)]
        lines.append(
            Line(
                key=module.key,
                label=module.label,
                names=tuple(t.name for t in tensors),
                tied=tuple((t.name, t.tied_to) for t in tied),
                formula=line.formula,
                symbolic=line.symbolic,
                substituted=substitute(line.symbolic, values),
                # A block with no copies (no encoder layers) has no tensors to read: its lines show
                # what one copy would hold, and its subtotal, L times that, is 0 like the inventory's.
                value=sum(t.count for t in tensors) if repeat else line.formula.evaluate(values),
                split=_head_split(module, values),
            )
        )
    return BlockDerivation(
        block=block,
        lines=tuple(lines),
        formula=form.formula,
        expression=form.expression,
        value=sum(s.value for s in lines),
        repeat=repeat,
        subtotal=inventory.count_of(block=block.key),
        subtotal_expression=form.subtotal_expression,
    )


def _head_split(module: Module, values: dict[str, int]) -> HeadSplit | None:
    if module.heads is None:
        return None
    weight = next(p for p in module.params if isinstance(p, Param) and p.name == "weight")
    rows = weight.shape[0].evaluate(values)
    heads = values[module.heads]
    width = next((s for s in weight.shape[0].symbols() if weight.shape[0] == Poly.symbol(s)), "H")
    return HeadSplit(module.heads, heads, rows // heads, weight.shape[1].evaluate(values), width)


def closed_form(blocks: Sequence[BlockForm], order: Sequence[str]) -> Expr:
    """Group the total by component: factored sums, L(...) for repeated layers, the rest merged."""
    groups: list[Expr] = []
    rest = Poly()
    for block in blocks:
        if block.subtotal_expression is not None:
            groups.append(block.subtotal_expression)
            continue
        grouped = grouped_expr(block.formula, order)
        if grouped is not None:
            groups.append(grouped)
        else:
            rest = rest + block.formula
    if not rest.is_zero():
        tail = poly_expr(rest, order)
        groups.extend(tail.terms if isinstance(tail, Add) else (tail,))
    return groups[0] if len(groups) == 1 else Add(tuple(groups))


def part_form(inventory: Inventory, part: Part) -> tuple[Expr, frozenset[str]]:
    """A part's count in symbols, and the symbols it uses: the closed form of one part.

    It groups as ``closed_form`` does, block by block, with two differences the comparison pages
    show: the blocks that are not repeated are added up into one group written first, and a
    repeated block with a single term is written as one product (4LH, not L(4H)).
    """
    order = tuple(s.name for s in inventory.card.family.symbols)
    groups: list[Expr] = []
    rest = Poly()
    used: set[str] = set()
    for block in inventory.architecture.blocks:
        inner = _block_part_formula(block, part)
        if inner.is_zero():
            continue
        used |= inner.symbols() | block.copies().symbols()
        if not block.repeat:
            rest = rest + inner
            continue
        if len(inner.terms) == 1 and not block.start:  # L · 4H is written 4LH
            groups.append(poly_expr(inner * block.copies(), order))
            continue
        body = poly_expr(inner, order)
        groups.append(Mul((*count_factors(block, order), Paren(body) if isinstance(body, Add) else body)))
    if not rest.is_zero():
        grouped = grouped_expr(rest, order)
        if grouped is not None:
            groups.insert(0, grouped)
        else:
            tail = poly_expr(rest, order)
            groups[:0] = tail.terms if isinstance(tail, Add) else (tail,)
    if not groups:
        return Num(0), frozenset()
    return (groups[0] if len(groups) == 1 else Add(tuple(groups))), frozenset(used)


def _block_part_formula(block: Block, part: Part) -> Poly:
    """One instance of a block: the shape products of its tensors in this part."""
    result = Poly()
    for module in block.modules:
        repeat = module.repeat if module.repeat is not None else Poly.constant(1)
        for param in module.params:
            if isinstance(param, Param) and part_of(block, module, param) is part:
                result = result + product(param.shape) * repeat
    return result
