"""A block that runs on a padded length: every s in its products and saved shapes becomes that length.

A class that pads its input (Longformer to a multiple of its window, BigBird to a multiple of its
block) runs its embeddings and layers on the padded sequence. Declare them as for s, then pass
them through ``padded`` with the length as a polynomial in step symbols (``step_symbols.py``):
Longformer's is 2·w·N, N the number of windows. The heads after the unpadding keep s.
"""

from __future__ import annotations

from dataclasses import replace

from generator.counting import architecture as arch
from generator.counting.poly import Poly, product, total

SEQ = "s"


def substitute(poly: Poly, length: Poly) -> Poly:
    """The polynomial with ``length`` in place of s."""
    return total(
        product((length if name == SEQ else Poly.symbol(name)) for name, exp in mono for _ in range(exp)) * coeff
        for mono, coeff in poly.terms
    )


def _shape(shape: tuple[Poly, ...], length: Poly) -> tuple[Poly, ...]:
    return tuple(substitute(size, length) for size in shape)


def _saved(item: arch.Saved, length: Poly) -> arch.Saved:
    return replace(item, shape=_shape(item.shape, length))


def _product(item: arch.Product, length: Poly) -> arch.Product:
    return replace(item, m=substitute(item.m, length), n=substitute(item.n, length), k=substitute(item.k, length))


def padded(block: arch.Block, length: Poly) -> arch.Block:
    """The block with ``length`` for s in every module's and op's products and saved tensors, and in
    the rows its tables look up."""
    modules = tuple(
        replace(
            m,
            products=tuple(_product(p, length) for p in m.products),
            saved=tuple(_saved(t, length) for t in m.saved),
            lookups=None if m.lookups is None else substitute(m.lookups, length),
        )
        for m in block.modules
    )
    ops = tuple(
        replace(
            o, products=tuple(_product(p, length) for p in o.products), saved=tuple(_saved(t, length) for t in o.saved)
        )
        for o in block.ops
    )
    return replace(block, modules=modules, ops=ops)
