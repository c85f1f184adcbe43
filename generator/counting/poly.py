"""Polynomials over the config symbols (V, P, T, H, I, L, A, ...) with integer coefficients.

A tensor's symbolic shape is a tuple of polynomials, its count is their product, and a
model's closed-form total is their sum: exact, so that the derivation on a page is the
same arithmetic as the count, only unevaluated.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# A monomial is a sorted tuple of (symbol, exponent) pairs; () is the constant monomial.
Monomial = tuple[tuple[str, int], ...]


@functools.cache
def _mul_monomials(a: Monomial, b: Monomial) -> Monomial:
    # Kept by value: a model's polynomials are built from a few dozen monomials, multiplied again and again.
    if not a:
        return b
    if not b:
        return a
    powers = dict(a)
    for symbol, exp in b:
        powers[symbol] = powers.get(symbol, 0) + exp
    return tuple(sorted(powers.items()))


@dataclass(frozen=True)
class Poly:
    """A polynomial: monomials mapped to non-zero integer coefficients."""

    terms: tuple[tuple[Monomial, int], ...] = ()

    @staticmethod
    def symbol(name: str) -> Poly:
        monomial: Monomial = ((name, 1),)
        return Poly(((monomial, 1),))

    @staticmethod
    def constant(value: int) -> Poly:
        return Poly((((), value),)) if value else Poly()

    @staticmethod
    def of_terms(coeffs: Mapping[Monomial, int]) -> Poly:
        """The polynomial with these coefficients, in its one written form: terms sorted, none zero."""
        return Poly(tuple(sorted(item for item in coeffs.items() if item[1])))

    def _scaled(self, factor: int) -> Poly:
        """Every coefficient times a non-zero integer: the terms keep their order, which is the monomials'."""
        return self if factor == 1 else Poly(tuple((mono, coeff * factor) for mono, coeff in self.terms))

    def __add__(self, other: Poly | int) -> Poly:
        other = _lift(other)
        if not other.terms:
            return self
        if not self.terms:
            return other
        coeffs = dict(self.terms)
        for mono, coeff in other.terms:
            coeffs[mono] = coeffs.get(mono, 0) + coeff
        return Poly.of_terms(coeffs)

    __radd__ = __add__

    def __mul__(self, other: Poly | int) -> Poly:
        if not isinstance(other, Poly):
            return self._scaled(other) if other else Poly()
        mine, theirs = self.terms, other.terms
        if not mine or not theirs:
            return Poly()
        # A constant factor (a count, 2, 4, or 1 from ``product``) needs no monomial multiplied.
        if len(theirs) == 1 and not theirs[0][0]:
            return self._scaled(theirs[0][1])
        if len(mine) == 1 and not mine[0][0]:
            return other._scaled(mine[0][1])
        if len(mine) == 1 and len(theirs) == 1:  # b·s·H: one term, nothing to collect or sort
            return Poly(((_mul_monomials(mine[0][0], theirs[0][0]), mine[0][1] * theirs[0][1]),))
        coeffs: dict[Monomial, int] = {}
        for m1, c1 in mine:
            for m2, c2 in theirs:
                mono = _mul_monomials(m1, m2)
                coeffs[mono] = coeffs.get(mono, 0) + c1 * c2
        return Poly.of_terms(coeffs)

    __rmul__ = __mul__

    def evaluate(self, values: Mapping[str, int]) -> int:
        """Substitute every symbol by its value."""
        total = 0
        for mono, coeff in self.terms:
            term = coeff
            for symbol, exp in mono:
                term *= values[symbol] ** exp
            total += term
        return total

    def symbols(self) -> set[str]:
        return {symbol for mono, _ in self.terms for symbol, _ in mono}

    def common_factor(self) -> Monomial:
        """The largest monomial dividing every term (coefficients ignored)."""
        if not self.terms:
            return ()
        common = dict(self.terms[0][0])
        for mono, _ in self.terms[1:]:
            powers = dict(mono)
            common = {s: min(e, powers[s]) for s, e in common.items() if s in powers}
        return tuple(sorted(common.items()))

    def divide(self, factor: Monomial) -> Poly:
        """Divide every term by a monomial that divides it."""
        coeffs: dict[Monomial, int] = {}
        divisor = dict(factor)
        for mono, coeff in self.terms:
            powers = {s: e - divisor.get(s, 0) for s, e in mono}
            coeffs[tuple(sorted((s, e) for s, e in powers.items() if e))] = coeff
        return Poly.of_terms(coeffs)

    def is_zero(self) -> bool:
        return not self.terms


def _lift(value: Poly | int) -> Poly:
    return value if isinstance(value, Poly) else Poly.constant(value)


def product(factors: Iterable[Poly]) -> Poly:
    """Multiply polynomials together (the empty product is 1)."""
    result = Poly.constant(1)
    for factor in factors:
        result = result * factor
    return result


def total(polys: Iterable[Poly]) -> Poly:
    """Add polynomials together."""
    coeffs: Coefficients = {}
    for poly in polys:
        add_into(coeffs, poly)
    return Poly.of_terms(coeffs)


Coefficients = dict[Monomial, int]  # a sum being made: Poly.of_terms gives its polynomial


def add_into(coefficients: Coefficients, poly: Poly) -> None:
    """Add a polynomial into a sum kept as its coefficients."""
    for mono, coeff in poly.terms:
        coefficients[mono] = coefficients.get(mono, 0) + coeff


@functools.lru_cache(maxsize=256)
def partially_evaluated(poly: Poly, items: tuple[tuple[str, int], ...]) -> Poly:
    """Put in the symbols that have values (``items``), keeping the others (b and s) as symbols.

    Remembered for the last few cards: a page's compute section and its JSON ask for the same totals."""
    values = dict(items)
    coefficients: dict[Monomial, int] = {}
    for mono, coeff in poly.terms:
        kept = []
        for symbol, exp in mono:
            if symbol in values:
                coeff *= values[symbol] ** exp
            else:
                kept.append((symbol, exp))
        rest = tuple(kept)  # still in the monomial's sorted order
        coefficients[rest] = coefficients.get(rest, 0) + coeff
    return Poly.of_terms(coefficients)
