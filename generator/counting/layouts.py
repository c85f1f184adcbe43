"""The PyTorch modules every family is made of, as declared modules: nn.Linear, nn.LayerNorm, nn.Embedding.

Each writes its parameters in the order and layout PyTorch registers them; a family's
declaration strings them together (``families/``).
"""

from __future__ import annotations

from generator.counting.architecture import Module, Param, Part, Tie
from generator.counting.poly import Poly


def linear(
    path: str,
    key: str,
    n_in: Poly,
    n_out: Poly,
    *,
    bias: bool = True,
    heads: str | None = None,
    part: Part | None = None,
) -> Module:
    """nn.Linear: weight [out, in], then bias [out]."""
    params: tuple[Param | Tie, ...] = (Param("weight", (n_out, n_in), "weight"),)
    if bias:
        params += (Param("bias", (n_out,), "bias"),)
    return Module(path, key, params, heads, part=part)


def layer_norm(path: str, key: str, dim: Poly) -> Module:
    """nn.LayerNorm: a learned scale γ and shift β (mean and variance are computed, not learned)."""
    return Module(path, key, (Param("weight", (dim,), "scale γ"), Param("bias", (dim,), "shift β")), part=Part.NORMS)


def embedding(
    path: str, key: str, rows: Poly, dim: Poly, *, part: Part = Part.EMBEDDINGS, frozen: bool = False
) -> Module:
    """nn.Embedding: one row of size dim per id."""
    return Module(path, key, (Param("weight", (rows, dim), "table", frozen=frozen),), part=part)
