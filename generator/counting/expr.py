"""Formula expressions: built from polynomials, written as plain text, MathML or TeX.

The derivation builds these trees from the inventory's symbolic shapes; substituting a
card's numbers is a walk over the same tree, so the symbolic line and the numeric line of
a step always have the same structure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from generator.counting.poly import Monomial, Poly


@dataclass(frozen=True)
class Num:
    value: int


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Pow:
    base: Expr
    exponent: int


@dataclass(frozen=True)
class Mul:
    """A product; ``sign`` is "" for juxtaposition (2HI), "·" or "×"."""

    factors: tuple[Expr, ...]
    sign: str = ""


@dataclass(frozen=True)
class Add:
    terms: tuple[Expr, ...]


@dataclass(frozen=True)
class Paren:
    inner: Expr


Expr = Num | Var | Pow | Mul | Add | Paren


def _monomial_key(mono: Monomial, order: Sequence[str]) -> tuple[int, tuple[int, ...]]:
    powers = dict(mono)
    degree = sum(powers.values())
    rank = tuple(-powers.get(s, 0) for s in order) + tuple(-e for s, e in sorted(mono) if s not in order)
    return (-degree, rank)


def monomial_expr(mono: Monomial, coeff: int, order: Sequence[str]) -> Expr:
    """One term, e.g. 2HI or 4H², symbols in the family's order."""
    ranked = sorted(mono, key=lambda item: order.index(item[0]) if item[0] in order else len(order))
    factors: list[Expr] = [Var(s) if e == 1 else Pow(Var(s), e) for s, e in ranked]
    if coeff == -1 and factors:
        factors.insert(0, Num(-1))  # written as a leading minus sign, never as "-1H"
    elif coeff != 1 or not factors:
        factors.insert(0, Num(coeff))
    return factors[0] if len(factors) == 1 else Mul(tuple(factors))


def poly_expr(poly: Poly, order: Sequence[str]) -> Expr:
    """A polynomial as a sum of terms, highest degree first."""
    terms = sorted(poly.terms, key=lambda t: _monomial_key(t[0], order)) if len(poly.terms) > 1 else poly.terms
    exprs = tuple(monomial_expr(m, c, order) for m, c in terms)
    if not exprs:
        return Num(0)
    return exprs[0] if len(exprs) == 1 else Add(exprs)


def dim_expr(dim: Poly, order: Sequence[str]) -> Expr:
    """A tensor dimension; a compound one (2I) is bracketed when it stands in a product."""
    expr = poly_expr(dim, order)
    return Paren(expr) if isinstance(expr, Add) else expr


def shape_expr(dims: Sequence[Poly], order: Sequence[str]) -> Expr:
    """A tensor's count as the product of its dimensions: H × I."""
    factors = tuple(dim_expr(d, order) for d in dims)
    return factors[0] if len(factors) == 1 else Mul(factors, "×")


def _symbol_count(poly: Poly) -> int:
    return sum(len(mono) for mono, _ in poly.terms)


def grouped_expr(poly: Poly, order: Sequence[str]) -> Expr | None:
    """``(V + P + T + 2)H`` when factoring out a common factor shortens the sum, else None."""
    factor = poly.common_factor()
    if not factor or len(poly.terms) < 2:
        return None
    inner = poly.divide(factor)
    if _symbol_count(inner) + len(factor) >= _symbol_count(poly):
        return None
    return Mul((Paren(poly_expr(inner, order)), monomial_expr(factor, 1, order)))


def substitute(expr: Expr, values: Mapping[str, int]) -> Expr:
    """Replace each symbol by its number; juxtaposed products get an explicit dot."""
    if isinstance(expr, Var):
        return Num(values[expr.name])
    if isinstance(expr, Pow):
        return Pow(substitute(expr.base, values), expr.exponent)
    if isinstance(expr, Mul):
        factors = tuple(substitute(f, values) for f in expr.factors)
        if expr.sign == "×":  # keep a compound dimension together: (8 · 64) × 512
            factors = tuple(Paren(f) if isinstance(f, Mul) else f for f in factors)
        return Mul(factors, expr.sign or "·")
    if isinstance(expr, Add):
        return Add(tuple(substitute(t, values) for t in expr.terms))
    if isinstance(expr, Paren):
        return Paren(substitute(expr.inner, values))
    return expr


_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _negated(term: Expr) -> Expr | None:
    """The positive form of a negative term (-2H -> 2H), or None for a positive one."""
    if isinstance(term, Num) and term.value < 0:
        return Num(-term.value)
    if isinstance(term, Mul) and isinstance(term.factors[0], Num) and term.factors[0].value < 0:
        first = -term.factors[0].value
        rest = term.factors[1:]
        if first == 1 and term.sign != "×":  # −E, and −128 once E is substituted (not "− 1 · 128")
            return rest[0] if len(rest) == 1 else Mul(rest, term.sign)
        return Mul((Num(first), *rest), term.sign)
    return None


def _join_terms(terms: tuple[Expr, ...], show: Callable[[Expr], str], minus: str = "−") -> str:
    text = ""
    for position, term in enumerate(terms):
        positive = _negated(term)
        if positive is None:
            text += (" + " if position else "") + show(term)
        else:
            text += (f" {minus} " if position else minus) + show(positive)
    return text


def to_text(expr: Expr) -> str:
    """Plain text, for alt text, exports and tests: (V + P + T + 2)H, 4H²."""
    if isinstance(expr, Num):
        return f"{expr.value:,}"
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, Pow):
        return f"{to_text(expr.base)}{str(expr.exponent).translate(_SUPERSCRIPTS)}"
    if isinstance(expr, Mul):
        joiner = f" {expr.sign} " if expr.sign else ""
        return joiner.join(to_text(f) for f in expr.factors)
    if isinstance(expr, Add):
        return _join_terms(expr.terms, to_text)
    return f"({to_text(expr.inner)})"


def to_mathml(expr: Expr) -> str:
    """MathML Core markup (math, mrow, mi, mn, mo, msup), rendered by browsers without scripts.

    The formula carries its TeX source as an annotation, which browsers do not render: a lecturer
    copies it into LaTeX notes. ``<semantics>`` renders its first child only, so that child is one element.
    """
    shown = _mathml(expr)
    if isinstance(expr, Num) and expr.value < 0:
        shown = f"<mrow>{shown}</mrow>"
    tex = f'<annotation encoding="application/x-tex">{escape(to_tex(expr), quote=False)}</annotation>'
    return f'<math alttext="{escape(to_text(expr))}"><semantics>{shown}{tex}</semantics></math>'


def _mathml(expr: Expr) -> str:
    if isinstance(expr, Num):
        return f"<mn>{expr.value:,}</mn>" if expr.value >= 0 else f"<mo>−</mo><mn>{-expr.value:,}</mn>"
    if isinstance(expr, Var):
        return f"<mi>{escape(expr.name)}</mi>"
    if isinstance(expr, Pow):
        return f"<msup>{_mathml(expr.base)}<mn>{expr.exponent}</mn></msup>"
    if isinstance(expr, Mul):
        # Juxtaposition is an invisible times (U+2062), so that it is read as "times", not as a name.
        joiner = f"<mo>{expr.sign}</mo>" if expr.sign else "<mo>\u2062</mo>"
        return "<mrow>" + joiner.join(_mathml(f) for f in expr.factors) + "</mrow>"
    if isinstance(expr, Add):
        parts = []
        for position, term in enumerate(expr.terms):
            positive = _negated(term)
            if positive is None:
                parts.append(("<mo>+</mo>" if position else "") + _mathml(term))
            else:
                parts.append("<mo>−</mo>" + _mathml(positive))
        return "<mrow>" + "".join(parts) + "</mrow>"
    return f"<mrow><mo>(</mo>{_mathml(expr.inner)}<mo>)</mo></mrow>"


# The signs of a product in TeX; "" (juxtaposition, 2HI) stays juxtaposition.
_TEX_SIGNS = {"": "", "·": r" \cdot ", "×": r" \times ", "/": " / "}


def tex_symbol(name: str) -> str:
    """A symbol as TeX reads it: one letter italic, as MathML's <mi> shows it; a longer name upright, as <mi> too."""
    if not name.isascii() or not name.isalpha():
        raise ValueError(f"symbol {name!r}: expected ASCII letters, which TeX reads as MathML shows them")
    return name if len(name) == 1 else rf"\mathrm{{{name}}}"


def tex_number(value: int) -> str:
    """A whole number as the MathML prints it, 109,482,240: ``{,}`` makes each comma an ordinary
    symbol, so TeX adds no space after it (a bare comma in math mode is punctuation, spaced)."""
    digits = f"{abs(value):,}".replace(",", "{,}")
    return f"-{digits}" if value < 0 else digits


def to_tex(expr: Expr) -> str:
    """LaTeX math source, sign for sign the MathML: (V + P + T + 2)H, 4H^{2}, 12 \\cdot 768."""
    if isinstance(expr, Num):
        return tex_number(expr.value)
    if isinstance(expr, Var):
        return tex_symbol(expr.name)
    if isinstance(expr, Pow):
        base = to_tex(expr.base)
        # A number's exponent would sit on its last digit group alone: the braces make it the whole number's.
        base = base if isinstance(expr.base, Var | Paren) else f"{{{base}}}"
        return f"{base}^{{{expr.exponent}}}"
    if isinstance(expr, Mul):
        return _TEX_SIGNS[expr.sign].join(to_tex(f) for f in expr.factors)
    if isinstance(expr, Add):
        return _join_terms(expr.terms, to_tex, minus="-")
    return f"({to_tex(expr.inner)})"
