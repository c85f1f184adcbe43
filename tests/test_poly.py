"""The polynomial algebra and how formulas are written."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from generator.counting.expr import grouped_expr, poly_expr, shape_expr, substitute, to_mathml, to_text
from generator.counting.poly import Poly, _mul_monomials, product, total

H, I, V, L = (Poly.symbol(s) for s in "HIVL")
ORDER = ("V", "P", "T", "H", "I", "L", "A", "C")


def test_arithmetic_and_evaluation() -> None:
    layer = 4 * H * H + 2 * H * I + 9 * H + I
    assert layer.evaluate({"H": 768, "I": 3072}) == 7_087_872
    assert (H + 1) * (H + 1) == H * H + 2 * H + 1
    assert product([H, I]) == I * H
    assert (H + (-1) * H).is_zero()


def test_terms_are_written_highest_degree_first_in_symbol_order() -> None:
    assert to_text(poly_expr(I + 9 * H + 2 * H * I + 4 * H * H, ORDER)) == "4H² + 2HI + 9H + I"
    assert to_text(poly_expr(V + 2 + 6 * H + 2 * H * H, ORDER)) == "2H² + V + 6H + 2"


def test_common_factor_is_taken_out_only_when_shorter() -> None:
    embeddings = V * H + Poly.symbol("P") * H + Poly.symbol("T") * H + 2 * H
    grouped = grouped_expr(embeddings, ORDER)
    assert grouped is not None and to_text(grouped) == "(V + P + T + 2)H"
    assert grouped_expr(H * H + H, ORDER) is None  # H(H + 1) is no shorter than H² + H


def test_substitution_keeps_the_structure() -> None:
    grouped = grouped_expr(V * H + 2 * H, ORDER)
    assert grouped is not None
    assert to_text(substitute(grouped, {"V": 30522, "H": 768})) == "(30,522 + 2) · 768"
    assert to_mathml(poly_expr(4 * H * H, ORDER)) == (
        '<math alttext="4H²"><semantics><mrow><mn>4</mn><mo>\u2062</mo><msup><mi>H</mi><mn>2</mn></msup></mrow>'
        '<annotation encoding="application/x-tex">4H^{2}</annotation></semantics></math>'
    )


def test_negative_terms_are_written_with_a_minus_sign() -> None:
    F = Poly.symbol("F")
    assert to_text(poly_expr(F + (-1), (*ORDER, "F"))) == "F − 1"
    assert to_text(poly_expr(2 * H + (-1) * I, ORDER)) == "2H − I"
    assert to_text(poly_expr((-3) * H + 1, ORDER)) == "−3H + 1"
    assert to_text(substitute(poly_expr(F + (-1), ("F",)), {"F": 4})) == "4 − 1"


def test_compound_dimensions_stay_together_when_substituted() -> None:
    A, K = Poly.symbol("A"), Poly.symbol("K")
    expr = shape_expr((A * K, H), ("H", "A", "K"))
    assert to_text(expr) == "AK × H"
    assert to_text(substitute(expr, {"A": 8, "K": 64, "H": 512})) == "(8 · 64) × 512"


# --- the fast paths give the terms the plain algorithm gives --------------------------------------
# Poly's terms are its identity (equality, hashing, the calculator's JSON): a polynomial built through
# a shortcut (a constant factor, an empty operand, the kept monomial products) must hold the very
# terms the schoolbook product and sum give, sorted, with no zero coefficient.


def _plain(coeffs: dict[tuple[tuple[str, int], ...], int]) -> tuple[tuple[tuple[tuple[str, int], ...], int], ...]:
    return tuple(sorted((m, c) for m, c in coeffs.items() if c))


def _plain_mul(a: Poly, b: Poly) -> tuple[tuple[tuple[tuple[str, int], ...], int], ...]:
    coeffs: dict[tuple[tuple[str, int], ...], int] = {}
    for m1, c1 in a.terms:
        for m2, c2 in b.terms:
            powers = dict(m1)
            for symbol, exp in m2:
                powers[symbol] = powers.get(symbol, 0) + exp
            mono = tuple(sorted(powers.items()))
            coeffs[mono] = coeffs.get(mono, 0) + c1 * c2
    return _plain(coeffs)


def _plain_add(a: Poly, b: Poly) -> tuple[tuple[tuple[tuple[str, int], ...], int], ...]:
    coeffs = dict(a.terms)
    for mono, coeff in b.terms:
        coeffs[mono] = coeffs.get(mono, 0) + coeff
    return _plain(coeffs)


_monomials = st.dictionaries(st.sampled_from("HILVA"), st.integers(1, 3), max_size=3).map(
    lambda powers: tuple(sorted(powers.items()))
)
polys = st.dictionaries(_monomials, st.integers(-5, 5), max_size=4).map(lambda c: Poly(_plain(c)))


@given(a=polys, b=polys, k=st.integers(-3, 3))
def test_products_and_sums_hold_the_plain_algorithms_terms(a: Poly, b: Poly, k: int) -> None:
    assert (a * b).terms == _plain_mul(a, b)
    assert (a + b).terms == _plain_add(a, b)
    assert (a * k).terms == (k * a).terms == _plain_mul(a, Poly.constant(k))
    assert (a + k).terms == _plain_add(a, Poly.constant(k))
    assert product([a, b, Poly.constant(k)]).terms == _plain_mul(Poly(_plain_mul(a, b)), Poly.constant(k))
    assert total([a, b, a]).terms == _plain_add(Poly(_plain_add(a, b)), a)


@given(a=_monomials, b=_monomials)
def test_kept_monomial_products_are_computed_ones(
    a: tuple[tuple[str, int], ...], b: tuple[tuple[str, int], ...]
) -> None:
    _mul_monomials(a, b)  # kept
    assert (
        _mul_monomials(a, b) == _mul_monomials.__wrapped__(a, b) == _plain_mul(Poly(((a, 1),)), Poly(((b, 1),)))[0][0]
    )
