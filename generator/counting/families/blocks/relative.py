"""Relative-position attention: a table of relative positions the encoder holds once, read by every layer.

transformers' encoders have two kinds.

* Disentangled attention (DeBERTa v1, v2 and v3). The encoder registers ``rel_embeddings`` after
  its layers (``table``), v2 also a LayerNorm over it (``table_norm``). Each layer projects the
  whole table, with position projections (``position_projections``) or with its own query and
  key projections (v2's ``share_att_key``). It adds content-to-position (c2p) and
  position-to-content (p2c) scores to the content scores (``content_attention``,
  ``disentangled_attention``).
* A bucketed bias (MPNet, as in T5). The encoder registers an nn.Embedding of buckets × heads
  after its layers (``bucket_bias``), looks it up once a step and adds it to every layer's scores.

A family puts the table in the block ``block`` makes, the projections in its layer, and the ops
in its layer and in the relative block. What each family sets:

* DeBERTa-v2: ``table_rows(on)``, ``table_norm``, ``pos_key_proj`` and
  ``pos_query_proj`` with biases, and ``shared_projections`` from ``share_att_key``.
* DeBERTa v1: ``table_rows(on, buckets=None)``, no norm, ``fused_query_key_value`` for its
  ``in_proj``, and ``position_projections(key="attention.self.pos_proj", key_bias=False,
  query="attention.self.pos_q_proj")``. Its layers project 2·min(s, R) rows, not the table's 2R:
  ``disentangled_attention(..., table_rows=...)`` with 2s rows, exact while the span never clamps.
* MPNet: ``bucket_bias(B)`` in ``block("encoder.", ...)``, and BERT's attention in its layers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import Condition, is_kind, is_null
from generator.counting.flow import own, param
from generator.counting.layouts import TOKENS, b, embedding, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule

# DeBERTa reads pos_att_type as one string of terms joined by "|", or a list of them.
POSITION_TERMS_ARE_TEXT = Rule(
    "string-pos-att-type",
    ~(is_null("pos_att_type") | is_kind("pos_att_type", "str") | is_kind("pos_att_type", "strings")),
    ("pos_att_type",),
)

P, B, R, H, A, L = (Poly.symbol(name) for name in "PBRHAL")

# The data flow's names (``flow.py``): the table every layer reads (model-wide), a layer's projections
# of it, and the c2p and p2c scores it adds to the content scores.
POSITIONS = "relative positions"
POSITION_KEY, POSITION_QUERY, RELATIVE_SCORES = "position key", "position query", "relative scores"
TABLE = "rel_embeddings"  # the table's path, whose output the norm reads


def table_rows(on: Mapping[str, bool], *, buckets: str | None = "buckets", clamped: str = "max_relative") -> Poly:
    """Rows of DeBERTa's table: two per bucket, else two per relative position (R), else 2P.

    ``buckets`` names the switch on when position_buckets is above 0 (None for v1, which has no
    buckets); ``clamped`` the one on when max_relative_positions is 1 or more (below that,
    transformers falls back on max_position_embeddings). Each is read only when it decides, so the
    calculator tells apart only the configs that differ.
    """
    if buckets is not None and on[buckets]:
        return 2 * B
    if on[clamped]:
        return 2 * R
    return 2 * P


def table(rows: Poly, width: Poly = H, path: str = TABLE) -> arch.Module:
    """The relative position table, ``rows`` × ``width``: read whole by every layer, never looked up."""
    # The layers read its weight, never its forward: peft's LoRA adapter of it never runs.
    part = arch.Part.ATTENTION
    return embedding(path, "relative-position-embeddings", rows, width, part=part, ids=None, lookups=Poly())


def table_norm(rows: Poly, width: Poly = H, *, read: bool, path: str = "LayerNorm") -> arch.Module:
    """DeBERTa-v2's LayerNorm over the table (``norm_rel_ebd``): its input is a parameter, so it keeps
    only its statistics, one per row. Without relative attention (``read`` false) nothing normalizes
    the table (get_rel_embedding), and the norm computes nothing."""
    norm = layer_norm(path, "relative-position-layernorm", width, rows=rows)
    if not read:  # it computes nothing, and no layer reads what it gives
        return replace(norm, saved=(), reads=())
    return replace(norm, saved=norm.saved[1:], reads=(f"{TABLE} output",))


def fused_query_key_value(path: str = "attention.self", n_in: Poly = H, width: Poly = H) -> arch.Module:
    """DeBERTa v1's projections: ``q_bias`` and ``v_bias`` (the attention's own parameters, listed
    first), then ``in_proj``, one Linear without a bias from ``n_in`` to 3·``width``.

    It keeps the layer's input for its product; the bias additions keep nothing.
    """
    weight = param(f"{path}.in_proj.weight")
    product = arch.Product("fused-query-key-value", TOKENS, 3 * width, n_in, operands=((own(0),), (weight,)))
    return arch.Module(
        path,
        "fused-query-key-value",
        (
            arch.Param("q_bias", (width,), "query-bias"),
            arch.Param("v_bias", (width,), "value-bias"),
            arch.Param("in_proj.weight", (3 * width, n_in), "weight", layer=arch.Layer.LINEAR),
        ),
        part=arch.Part.ATTENTION,
        products=(product,),
        saved=(arch.Saved("layer input", (TOKENS, n_in), needs=(weight,)),),
        reads=("layer input",),
        writes="in_proj product",
    )


def fused_joins(path: str = "attention.self") -> tuple[arch.Join, ...]:
    """The query, key and value v1 takes from ``in_proj``'s output, the first and last plus their
    biases; that output needs a gradient when a method adapts ``in_proj`` (``@`` a module)."""
    return (
        arch.Join(("in_proj product", param(f"{path}.in_proj")), "in_proj output"),
        arch.Join(("in_proj output", param(f"{path}.q_bias")), "query"),
        arch.Join(("in_proj output",), "key"),
        arch.Join(("in_proj output", param(f"{path}.v_bias")), "value"),
    )


def position_projections(
    width: Poly,
    *,
    key: str | None,
    query: str | None,
    n_in: Poly = H,
    key_bias: bool = True,
    query_bias: bool = True,
) -> tuple[arch.Module, ...]:
    """A layer's own projections of the table: ``key`` for c2p, then ``query`` for p2c (their paths,
    None for an absent one), each ``n_in`` to ``width``.

    They read the table, not the tokens: their work is ``disentangled_attention``'s, so here they
    compute nothing, and their flow is its. DeBERTa-v2 names them ``pos_key_proj`` and
    ``pos_query_proj``, both with a bias; v1 names them ``pos_proj`` (no bias) and ``pos_q_proj``.
    """
    projections: tuple[arch.Module, ...] = ()
    if key is not None:
        projections += (linear(key, "position-key-c2p", n_in, width, bias=key_bias, part=arch.Part.ATTENTION),)
    if query is not None:
        projections += (linear(query, "position-query-p2c", n_in, width, bias=query_bias, part=arch.Part.ATTENTION),)
    return tuple(replace(ops.idle(p), reads=(), writes="") for p in projections)


def content_attention(
    path: str,
    width: Poly,
    heads: Poly = A,
    dropout_key: str = "attention_probs_dropout_prob",
    *,
    scaled: int = 1,
    relative: bool = False,
    query_kept_for: tuple[str, ...] = (),
) -> arch.Op:
    """DeBERTa's content attention: eager attention whose query (``scaled`` 0) or key (1) is divided by
    a scale tensor (kept, a scalar), and whose scores masked_fill keeps the mask of (each layer makes
    its own (b, 1, s, s) bool copy, ~mask).

    With ``relative`` it reads the c2p and p2c scores too, which join its scores before the softmax.
    Its query is also kept when one of ``query_kept_for`` needs a gradient (v2's c2p product).
    """
    reads = ("query", "key", "value", *((RELATIVE_SCORES,) if relative else ()))
    attention = ops.attention(path, width, heads, dropout_key, writes="attention.output.dense input")
    scores = (own(0), own(1), *((own(3),) if relative else ()))

    def joined(names: tuple[str, ...]) -> tuple[str, ...]:
        return scores + tuple(n for n in names if n not in scores) if own(0) in names and own(1) in names else names

    saved = tuple(replace(t, needs=joined(t.needs)) for t in attention.saved)
    saved = (replace(saved[0], needs=(*saved[0].needs, *query_kept_for)), *saved[1:])  # saved[0]: the query
    products = tuple(replace(p, operands=tuple(joined(g) for g in p.operands)) for p in attention.products)
    extra = (
        arch.Saved("content scale", (), needs=(own(scaled),)),
        arch.Saved("attention mask", (b, s, s), arch.Dtype.BOOL, needs=scores),
    )
    return replace(attention, products=products, saved=(*saved, *extra), reads=reads)


def relative_joins(key: str | None, query: str | None) -> tuple[arch.Join, ...]:
    """A layer's projections of the table, through the Linear at ``key`` (c2p) and ``query`` (p2c):
    they need a gradient when the table does or that Linear trains (``@`` a module, ``flow.py``)."""
    joins: tuple[arch.Join, ...] = ()
    if key is not None:
        joins += (arch.Join((POSITIONS, param(key)), POSITION_KEY),)
    if query is not None:
        joins += (arch.Join((POSITIONS, param(query)), POSITION_QUERY),)
    return joins


def disentangled_attention(
    path: str,
    rows: Poly,
    width: Poly,
    *,
    c2p: bool,
    p2c: bool,
    shared_projections: bool,
    dropout: Condition,
    heads: Poly = A,
    layers: Poly = L,
    table_rows: Poly | None = None,
    query_copy: bool = False,
    scaled: tuple[str, ...] = ("c2p", "p2c"),
    scale_dtype: arch.Dtype = arch.Dtype.ACTIVATION,
    linears: tuple[str, str] = ("attention.self.key_proj", "attention.self.query_proj"),
    scales_positions: bool = False,
) -> arch.Op:
    """The relative part of every layer's attention (``layers`` times), declared once in the relative block.

    Each layer drops the table out first (``dropout``) and keeps its copy, or, without dropout, reads
    the one table. It projects the ``rows`` rows to ``width`` with the query and key projections
    (``shared_projections``) or its position projections, which do not depend on b or s. The c2p
    and p2c scores are gathered at the clamped relative positions. DeBERTa-v2 projects the whole
    table (2·span rows). v1 drops out the whole table (``table_rows``), then projects a slice of
    ``rows`` rows; without dropout it reads the parameter itself, which keeps nothing. v1's c2p
    product broadcasts the query over the table's batch of one: a copy of its own (``query_copy``).
    v1 divides only p2c by a scale (``scaled``), an fp32 scalar in place (``scale_dtype``), and it
    divides the positional query, not the scores (``scales_positions``).

    Its data flow is each layer's: the key and query Linears it projects with (``linears``, their
    paths), the layer's query and key, and the projections ``relative_joins`` names. Each product
    keeps an operand when the other needs a gradient.
    """
    whole = rows if table_rows is None else table_rows
    # Shared, both projections run, but only the scores that read one carry its gradient: autograd
    # skips the backward of the other (c2p reads the key projection, p2c the query's).
    read = {"key": c2p, "query": p2c}
    projected = ("query", "key") if shared_projections else (("key",) if c2p else ()) + (("query",) if p2c else ())
    weights = {name: param(f"{linear}.weight") for name, linear in zip(("key", "query"), linears, strict=True)}
    table_input = tuple(weights[name] for name in projected)  # what each projection's weight gradient reads
    table_saved: tuple[arch.Saved, ...] = (
        arch.Saved("relative table dropout mask", (whole, H), when=dropout, needs=(POSITIONS,)),
        arch.Saved("dropped relative table", (whole, H), when=dropout, needs=table_input),
    )
    if table_rows is None:
        table_saved += (arch.Saved("relative table", (rows, H), shared=True, when=~dropout, needs=table_input),)
    products = [
        arch.Product(
            f"position-{name}-projection",
            rows,
            width,
            H,
            backward=2 if read[name] else 0,
            operands=((POSITIONS,), (weights[name],)),
        )
        for name in projected
    ]
    saved = list(table_saved)
    terms = {"c2p": ("query", POSITION_KEY), "p2c": ("key", POSITION_QUERY)}
    for kind, present in (("c2p", c2p), ("p2c", p2c)):
        if not present:
            continue
        tokens, positions = terms[kind]
        products.append(arch.Product(f"{kind}-scores", b * s, rows, width, operands=((tokens,), (positions,))))
        both = (tokens, positions)
        saved += [
            # repeated over the batch: a copy
            arch.Saved(f"{kind} position projection", (b, rows, width), needs=(tokens,)),
            arch.Saved(f"{kind} index", (s, s), arch.Dtype.INT64, needs=both),
            arch.Saved(f"{kind} scores", (b, heads, s, rows), needs=both),  # gather keeps its input
        ]
        if kind in scaled:
            saved.append(arch.Saved(f"{kind} scale", (), scale_dtype, needs=(positions,) if scales_positions else both))
        if kind == "c2p" and query_copy:
            saved.append(arch.Saved("c2p query", (b, s, width), needs=(positions,)))
    if p2c:  # p2c multiplies the key itself, not key / scale
        saved.append(arch.Saved("key layer", (b, s, width), needs=(POSITION_QUERY,)))
    reads = (*(terms["c2p"] if c2p else ()), *(terms["p2c"] if p2c else ()))
    return arch.Op(
        path,
        "disentangled-attention",
        tuple(products),
        tuple(saved),
        repeat=layers,
        reads=reads,
        writes=RELATIVE_SCORES,
    )


def bucket_bias(buckets: Poly, heads: Poly = A, path: str = "relative_attention_bias") -> arch.Module:
    """MPNet's bias table: ``buckets`` rows of one value per head, looked up once a step.

    Its backward keeps the (s, s) bucket index; the (b, A, s, s) bias it expands to is added to
    each layer's scores, which keeps nothing.
    """
    index = arch.Saved("relative position buckets", (s, s), arch.Dtype.INT64)
    return embedding(path, "relative-attention-bias", buckets, heads, part=arch.Part.ATTENTION, ids=index)


def block(path: str, modules: tuple[arch.Module, ...], relative_ops: tuple[arch.Op, ...] = ()) -> arch.Block:
    """The encoder's relative block under ``path``: the table (and its norm), and the ops that read it,
    once in every layer's attention. It gives the layers the table (or its norm) as POSITIONS."""
    outputs = ((modules[-1].writes, POSITIONS),)
    return arch.Block("relative", arch.Kind.ENCODER, path, modules, ops=relative_ops, read_by="layer", outputs=outputs)
