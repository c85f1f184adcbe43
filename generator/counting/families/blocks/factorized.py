"""Factorized embeddings: tables E wide, projected to the hidden size H by one Linear.

ALBERT always projects (``encoder.embedding_hidden_mapping_in``); ELECTRA and RoFormer only when
``embedding_size`` differs from ``hidden_size`` (``embeddings_project``, registered by the model);
DeBERTa-v2 then too, inside its embeddings and without a bias (``embed_proj``). MobileBERT's
``embedding_transformation`` projects E, or 3E with its trigram input, the same way. The tables
themselves are the family's, at ``width``; what varies here is the path, the key, the widths and
the bias, and whether the projection is a block of its own (``block``).
"""

from __future__ import annotations

from generator.counting import architecture as arch
from generator.counting.flow import HIDDEN
from generator.counting.layouts import linear
from generator.counting.poly import Poly

E, H = (Poly.symbol(name) for name in "EH")


def width(projected: bool) -> Poly:
    """The tables' width: E when the family projects it to H, else H."""
    return E if projected else H


def projection(
    path: str, key: str = "e-to-h-projection", *, n_in: Poly = E, n_out: Poly = H, bias: bool = True
) -> arch.Module:
    """The Linear from the tables' ``n_in`` to the hidden ``n_out``: an embeddings parameter."""
    return linear(path, key, n_in, n_out, bias=bias, part=arch.Part.EMBEDDINGS)


def block(path: str, projection: arch.Module) -> arch.Block:
    """The projection as a block of its own, where the model (not its embeddings module) registers it:
    it reads the embeddings' output and gives the layers theirs."""
    flow = {"inputs": ((projection.reads[0], HIDDEN),), "outputs": ((projection.writes, HIDDEN),)}
    return arch.Block("embedding-projection", arch.Kind.EMBEDDINGS, path, (projection,), **flow)  # type: ignore[arg-type]
