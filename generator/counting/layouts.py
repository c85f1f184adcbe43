"""The PyTorch modules every family is made of, as declared modules: nn.Linear, nn.LayerNorm, nn.Embedding.

Each writes its parameters in the order and layout PyTorch registers them, and what it computes
and keeps for the backward in the batch size b and the sequence length s; a family's
declaration strings them together (``families/``).
"""

from __future__ import annotations

from dataclasses import replace

from generator.counting.architecture import Dtype, Layer, Module, Param, Part, Product, Saved, Tie
from generator.counting.flow import own, param
from generator.counting.poly import Poly

b, s = Poly.symbol("b"), Poly.symbol("s")
TOKENS = b * s  # rows of every per-token matrix: the batch times the sequence
# The token ids, saved by the token table's backward (torch's embedding_backward needs the indices).
INPUT_IDS = Saved("input ids", (b, s), Dtype.INT64, shared=True)


def linear(
    path: str,
    key: str,
    n_in: Poly,
    n_out: Poly,
    *,
    bias: bool = True,
    heads: str | None = None,
    part: Part | None = None,
    rows: Poly = TOKENS,
    saves: str | Saved | tuple[Saved, ...] | None = "",
    tied_to: str | None = None,
    reads: str = "",
    writes: str = "",
) -> Module:
    """nn.Linear: weight [out, in], then bias [out]; one rows × in by in × out product.

    It keeps its input for the weight's gradient: under its own key by default, under ``saves``
    when other modules read the same tensor (a string names the [rows, in] storage; a ``Saved``
    is the whole storage the input is a view of), nothing when ``saves`` is None. With
    ``tied_to`` its weight is that token table (an output projection tied to the embeddings):
    counted there, but the product is the same. ``reads`` names its input activation (by default
    the storage it keeps), ``writes`` its output (by default "<path> output").

    The backward computes the input's gradient when the input needs one and the weight's when it
    trains; only the weight's gradient reads the input, so the input is kept only when it trains.
    """
    weight = (
        Param("weight", (n_out, n_in), "weight", layer=Layer.LINEAR)
        if tied_to is None
        else Tie("weight", tied_to, "token-embeddings-reused", Layer.LINEAR)
    )
    params: tuple[Param | Tie, ...] = (weight,)
    if bias:
        params += (Param("bias", (n_out,), "bias", layer=Layer.LINEAR),)
    trains = param(f"{path}.weight")
    kept = tuple(replace(t, needs=(trains,)) for t in input_saved(path, (rows, n_in), saves))
    return Module(
        path,
        key,
        params,
        heads,
        part=part,
        products=(Product(key, rows, n_out, n_in, operands=((own(0),), (trains,))),),
        saved=kept,
        reads=(reads or _input_name(path, saves),),
        writes=writes or f"{path} output",
    )


def _input_name(path: str, saves: str | Saved | tuple[Saved, ...] | None) -> str:
    """The activation a Linear reads, by default: the storage it keeps of it."""
    if isinstance(saves, Saved):
        return saves.key
    if isinstance(saves, tuple):
        return saves[0].key if saves else f"{path} input"
    return saves or f"{path} input"


def input_saved(path: str, shape: tuple[Poly, ...], saves: str | Saved | tuple[Saved, ...] | None) -> tuple[Saved, ...]:
    """What a module keeps of its input: its own storage, a named one, given ones, or none."""
    if saves is None:
        return ()
    if isinstance(saves, Saved):
        return (saves,)
    if isinstance(saves, tuple):
        return saves
    return (Saved(saves or f"{path} input", shape),)


def layer_norm(
    path: str, key: str, dim: Poly, *, rows: Poly = TOKENS, saves: str = "", bias: bool = True, writes: str = ""
) -> Module:
    """nn.LayerNorm: a learned scale γ and shift β (mean and variance are computed, not learned).

    ``bias`` false: nn.LayerNorm(bias=False), the scale alone; it keeps the same either way.

    Its backward needs the input and, per row, the mean and the reciprocal standard deviation,
    which the meta kernel of native_layer_norm keeps in fp32 whatever the model's precision, as CUDA's
    does (torch 2.13's CPU kernel keeps them in the input's type; the reference runs on meta).
    """
    return Module(
        path,
        key,
        (
            Param("weight", (dim,), "scale", layer=Layer.LAYER_NORM),
            Param("bias", (dim,), "shift", layer=Layer.LAYER_NORM),
        )
        if bias
        else (Param("weight", (dim,), "scale", layer=Layer.LAYER_NORM),),
        part=Part.NORMS,
        saved=(
            Saved(saves or f"{path} input", (rows, dim)),
            Saved(f"{path} mean", (rows,), Dtype.FLOAT32),
            Saved(f"{path} reciprocal deviation", (rows,), Dtype.FLOAT32),
        ),
        reads=(saves or f"{path} input",),
        writes=writes or f"{path} output",
    )


def embedding(
    path: str,
    key: str,
    rows: Poly,
    dim: Poly,
    *,
    part: Part = Part.EMBEDDINGS,
    frozen: bool = False,
    ids: Saved | None = INPUT_IDS,
    lookups: Poly | None = TOKENS,
) -> Module:
    """nn.Embedding: one row of size dim per id; a lookup, no product. Its backward keeps the ids
    (none when they are a view of a buffer the model holds anyway, such as ``position_ids``).

    ``lookups`` is the rows its output has: b·s token ids by default, s for a slice of a position
    buffer that the batch shares, zero for a table the model reads whole, None for a table whose
    forward takes no ids (peft's LoRA adapter of it is not derived)."""
    saved = (ids,) if ids is not None and not frozen else ()
    table = Param("weight", (rows, dim), "table", frozen=frozen, layer=Layer.EMBEDDING)
    return Module(path, key, (table,), part=part, saved=saved, writes=f"{path} output", lookups=lookups)
