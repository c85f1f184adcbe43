"""DeBERTa-v2 and -v3 (transformers ``model_type`` "deberta-v2"): modeling_deberta_v2.py in transformers 5.23.

Registration order follows the ``__init__`` of DebertaV2Embeddings (word, position, token type,
``embed_proj``, LayerNorm), DebertaV2Layer (DisentangledSelfAttention with its optional
``pos_key_proj``/``pos_query_proj``, the attention output, intermediate and output), then
DebertaV2Encoder's own modules after its layers (``rel_embeddings``, ``LayerNorm``, ``conv``),
ContextPooler and the heads.

Several keys that change the tensors are not fields of DebertaV2Config: the modeling code reads
them with ``getattr(config, key, default)``. They are declared in ``EXTRA_CONFIG`` with the
defaults that code uses (``None`` where the default means "absent" or "the hidden size"); test
cards that leave them out check those defaults against transformers.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import (
    contains,
    div,
    eq,
    ge,
    given,
    gt,
    head_is,
    is_kind,
    is_null,
    lt,
    mod,
    mul,
    ne,
    truthy,
)
from generator.counting.families import activations, common, heads
from generator.counting.families.deberta_v2 import training
from generator.counting.families.symbols import shared, symbols
from generator.counting.layouts import TOKENS, b, embedding, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import FirstOf, Rule, Switch, per_setting_read

V, P, T, E, B, R, H, I, D, K, Q, W, A, C, L = (Poly.symbol(name) for name in "VPTEBRHIDKQWACL")

SYMBOLS = symbols(
    "VP",
    shared("T", size=False, minimum=1),
    arch.Symbol("E", "embedding_size", optional=True, minimum=0),
    arch.Symbol("B", "position_buckets", optional=True, size=False),
    arch.Symbol("R", "max_relative_positions", size=False),
    shared("H", minimum=0),
    "I",
    arch.Symbol("D", "attention_head_size", optional=True, minimum=0),
    arch.Symbol("K", "conv_kernel_size", size=False),
    arch.Symbol(
        "Q",
        "hidden_size / conv_groups",
        value=div("hidden_size", "conv_groups"),
    ),
    arch.Symbol(
        "W",
        "pooler_hidden_size",
        optional=True,
        size=False,  # only the classification head reads it (deberta_v2's _value_types)
    ),
    "LAC",
)

# getattr(config, key, default) in modeling_deberta_v2.py / kwargs in DebertaV2Config.__post_init__.
EXTRA_CONFIG: Mapping[str, Any] = {
    "embedding_size": None,  # config.hidden_size
    "position_buckets": -1,  # DisentangledSelfAttention and the encoder: 0 or less, no buckets
    "norm_rel_ebd": "none",
    "share_att_key": False,
    "attention_head_size": None,  # hidden_size // num_attention_heads
    "conv_kernel_size": 0,  # DebertaV2Encoder builds ConvLayer only when it is above 0
    "conv_groups": 1,
    "conv_act": "tanh",
    "pooler_hidden_size": None,  # hidden_size
    "cls_dropout": None,
}

BACKBONE = "deberta."  # the attribute every head class stores the encoder under


def _embedding_width(on: Mapping[str, bool]) -> Poly:
    """E when embedding_size is given and differs from the hidden size, else H."""
    return E if on["projected"] else H


def _projection_width(on: Mapping[str, bool]) -> Poly:
    """What query, key and value project to: A·D when attention_head_size changes it, else H."""
    return A * D if on["wide_heads"] else H


def _relative_rows(on: Mapping[str, bool]) -> Poly:
    """Rows of rel_embeddings: two per bucket, else two per relative position."""
    if on["buckets"]:
        return 2 * B
    if on["max_relative"]:
        return 2 * R
    return 2 * P  # max_relative_positions < 1 falls back on max_position_embeddings


@per_setting_read
def _embeddings(on: Mapping[str, bool], prefix: str) -> arch.Block:
    width = _embedding_width(on)
    modules: tuple[arch.Module, ...] = (common.token_table(width),)
    if on["position_table"]:
        modules += (common.position_table(width, "absolute-position-embeddings"),)
    if on["token_types"]:
        modules += (common.segment_table(width, arch.Saved("token types", (b, s), arch.Dtype.INT64)),)
    if on["projected"]:
        modules += (linear("embed_proj", "embedding-projection-e-h", E, H, bias=False, part=arch.Part.EMBEDDINGS),)
    block = common.embeddings_block(prefix, (*modules, common.embedding_norm(H)))
    # DebertaV2Embeddings multiplies by the attention mask (ones here), cast to the model's type, and keeps it.
    mask = arch.Op("mask", "embedding-mask", saved=(arch.Saved("embedding mask", (b, s)),))
    return replace(block, ops=(*block.ops, mask))


@per_setting_read
def _encoder_layer(on: Mapping[str, bool], prefix: str) -> arch.Block:
    width = _projection_width(on)
    split = None if on["wide_heads"] else "A"  # the page's "H/A per head" aside only holds then
    projections = ("attention.self.query_proj", "attention.self.key_proj", "attention.self.value_proj")
    modules = common.query_key_value(projections, H, width, heads=split)
    # The position projections read the relative table, not the tokens: their work is the relative
    # block's (_relative_attention), so they compute nothing here.
    if on["relative"] and not on["shared_keys"]:
        if on["c2p"]:
            key = linear("attention.self.pos_key_proj", "position-key-c2p", H, width, part=arch.Part.ATTENTION)
            modules += (ops.idle(key),)
        if on["p2c"]:
            query = linear("attention.self.pos_query_proj", "position-query-p2c", H, width, part=arch.Part.ATTENTION)
            modules += (ops.idle(query),)
    modules += (
        common.attention_output("attention.output.dense"),
        layer_norm("attention.output.LayerNorm", "attention-layernorm", H),
        *common.feed_forward("intermediate.dense", "output.dense"),
        layer_norm("output.LayerNorm", "output-layernorm", H),
    )
    return common.layers(f"{prefix}encoder.layer.{{0}}.", modules, _layer_ops(width))


def _layer_ops(width: Poly) -> tuple[arch.Op, ...]:
    """BERT's, with DeBERTa's attention: the key divided by a scale tensor (kept, a scalar), the
    attention mask kept by masked_fill (each layer makes its own (b, 1, s, s) bool copy, ~mask)."""
    bert = common.bert_layer_ops()
    attention = replace(ops.attention("attention.self", width, A, "attention_probs_dropout_prob"), key="attention")
    extra = (arch.Saved("content scale", ()), arch.Saved("attention mask", (b, s, s), arch.Dtype.BOOL))
    return (replace(attention, saved=(*attention.saved, *extra)), *bert[1:])


@per_setting_read
def _encoder_extras(on: Mapping[str, bool], prefix: str) -> tuple[arch.Block, ...]:
    """What DebertaV2Encoder registers after its layers: relative positions, then the convolution."""
    blocks: tuple[arch.Block, ...] = ()
    relative: tuple[arch.Module, ...] = ()
    rows = _relative_rows(on)
    if on["relative"]:
        relative += (
            embedding(
                "rel_embeddings", "relative-position-embeddings", rows, H, part=arch.Part.ATTENTION, ids=None
            ),  # read whole, not looked up
        )
    if on["relative_norm"]:
        # Its input is the table itself, a parameter: it keeps only its statistics, one per row.
        norm = layer_norm("LayerNorm", "relative-position-layernorm", H, rows=rows)
        # Without relative attention the table is never read, nor normalized (get_rel_embedding).
        relative += (replace(norm, saved=norm.saved[1:]) if on["relative"] else ops.idle(norm),)
    if relative:
        relative_ops = (_relative_attention(on, rows),) if on["relative"] else ()
        blocks += (arch.Block("relative", arch.Kind.ENCODER, f"{prefix}encoder.", relative, ops=relative_ops),)
    if on["conv"]:
        blocks += (_convolution(on, prefix),)
    return blocks


def _convolution(on: Mapping[str, bool], prefix: str) -> arch.Block:
    """ConvLayer, run once, after the first layer, on the encoder's input (DebertaV2Encoder.forward).

    nn.Conv1d reads a transposed copy of its input (``permute(0, 2, 1).contiguous()``; at s = 1 the
    permuted tensor is contiguous already, so no copy is made) and multiplies each of the b·s
    outputs of H channels by K positions of its group's channels. Its backward computes the input's
    gradient with a product of the forward's size, and the kernel's; FlopCounterMode counts the
    kernel's as if it were whole (H channels in, not Q), so a grouped kernel's backward counts
    2·b·s·H·(H − Q)·K more. Then, in the forward: padding positions filled with 0 (a bool mask,
    kept), dropout, conv_act, the residual and a LayerNorm, and the product by the attention mask,
    which keeps that mask cast to the model's type.
    """
    per_group = Q if on["grouped_conv"] else H
    key = "grouped-convolution" if on["grouped_conv"] else "convolution"
    products: tuple[arch.Product, ...] = (arch.Product(key, TOKENS, H, per_group * K),)
    if on["grouped_conv"]:
        counted = arch.Product("grouped-weight-gradient", TOKENS, H, (H + Q * -1) * K, backward=1, backward_only=True)
        products += (counted,)
    conv = arch.Module(
        "conv",
        key,
        (arch.Param("weight", (H, per_group, K), "kernel"), arch.Param("bias", (H,), "bias")),
        part=arch.Part.ATTENTION,
        products=products,
        saved=(arch.Saved("conv input", (b, H, s), seq_above_one=True),),
    )
    modules = (conv, layer_norm("LayerNorm", "convolution-layernorm", H))
    dropout = common.HIDDEN_DROPOUT
    padding = arch.Op("", "convolution-padding", saved=(arch.Saved("padding mask", (b, s), arch.Dtype.BOOL),))
    # The activation's input is the dropped output, or without dropout the masked one: a storage of its own either way.
    activation = ops.activation(
        "", "convolution-activation", "conv_act", (TOKENS, H), before="activation input", after="activation output"
    )
    mask = arch.Op("", "convolution-mask", saved=(arch.Saved("attention mask", (b, s), arch.Dtype.CAST),))
    steps = (padding, ops.dropout("dropout", "convolution-dropout", (b, s, H), dropout), activation, mask)
    return arch.Block("conv", arch.Kind.ENCODER, f"{prefix}encoder.conv.", modules, ops=steps)


def _relative_attention(on: Mapping[str, bool], rows: Poly) -> arch.Op:
    """The disentangled attention of every layer (L times): the relative table projected by the
    layer's query and key projections (or its own position projections), and the content-to-position
    and position-to-content scores, gathered at the clamped relative positions.

    The projections of the r = 2·span table do not depend on b or s; each layer drops the table out
    first (hidden_dropout_prob) and keeps its copy, or, without dropout, reads the one normalized table.
    """
    width = _projection_width(on)
    dropout = common.HIDDEN_DROPOUT
    table = (
        arch.Saved("relative table dropout mask", (rows, H), when=dropout),
        arch.Saved("dropped relative table", (rows, H), when=dropout),
        arch.Saved("relative table", (rows, H), shared=True, when=~dropout),
    )
    projected = (
        ("query", "key") if on["shared_keys"] else (("key",) if on["c2p"] else ()) + (("query",) if on["p2c"] else ())
    )
    products = [arch.Product(f"position-{name}-projection", rows, width, H) for name in projected]
    saved = list(table)
    for kind, present in (("c2p", on["c2p"]), ("p2c", on["p2c"])):
        if not present:
            continue
        products.append(arch.Product(f"{kind}-scores", b * s, rows, width))
        saved += [
            arch.Saved(f"{kind} position projection", (b, rows, width)),  # repeated over the batch: a copy
            arch.Saved(f"{kind} index", (s, s), arch.Dtype.INT64),
            arch.Saved(f"{kind} scores", (b, A, s, rows)),  # gather keeps its input
            arch.Saved(f"{kind} scale", ()),
        ]
    if on["p2c"]:
        saved.append(arch.Saved("key layer", (b, s, width)))  # p2c multiplies the key itself, not key / scale
    return arch.Op("attention.self", "disentangled-attention", tuple(products), tuple(saved), repeat=L)


def _backbone(on: Mapping[str, bool], prefix: str, _pooler: bool) -> tuple[arch.Block, ...]:
    return (_embeddings(on, prefix), _encoder_layer(on, prefix), *_encoder_extras(on, prefix))


@per_setting_read
def _mlm_head(on: Mapping[str, bool]) -> arch.Block:
    if on["legacy"]:
        width = _embedding_width(on)
        return heads.bert_mlm_head(on, BACKBONE, width, width)
    # DebertaV2LMPredictionHead: multiplies by the word embeddings in forward, registers no decoder.
    decoder = arch.Op(
        "decoder",
        "decoder-tied",
        (arch.Product("decoder-tied", TOKENS, V, H),),
        (arch.Saved("decoder input", (TOKENS, H)),),
    )
    head_ops = (*heads.mlm_ops("transform_act_fn"), decoder)
    return heads.mlm_head("lm_predictions.lm_head.", heads.mlm_transform("dense", "LayerNorm"), head_ops)


@per_setting_read
def _classification(on: Mapping[str, bool]) -> tuple[arch.Block, ...]:
    """ContextPooler, then the classifier on what it pools."""
    pooler_width = W if on["wide_pooler"] else H
    acts = ops.probability("pooler_dropout")
    dense_input = ops.either(acts, arch.Saved("dropped", (b, pooler_width)), common.ENCODER_OUTPUT)
    activated = arch.Saved("pooled output", (b, pooler_width), shared=True)
    activation = arch.Op(
        "activation",
        "pooler-activation",
        saved=(arch.Saved("pooler hidden", (b, pooler_width)), activated),
        activation="pooler_hidden_act",
    )
    pooler = arch.Block(
        "pooler",
        arch.Kind.POOLER,
        "pooler.",
        (linear("dense", "pooler-dense", pooler_width, pooler_width, rows=b, saves=dense_input),),
        ops=(ops.dropout("dropout", "pooler-dropout", (b, pooler_width), acts), activation),
    )
    # The classifier's dropout is cls_dropout, else the hidden dropout (DebertaV2ForSequenceClassification).
    return (pooler, heads.classifier_head(heads.classifier_dropout("cls_dropout"), activated, _class_loss()))


def _class_loss() -> tuple[arch.Op, ...]:
    """DebertaV2ForSequenceClassification's loss: its own without a problem_type, else transformers' usual one.

    Its own, with several labels, gathers the rows whose label is 0 or more (``(labels >= 0).nonzero()``,
    every row here) and keeps the row indices and the logits for that gather; the cross-entropy on
    the gathered logits cast to fp32 keeps its fp32 log-probabilities, the gathered labels and an fp32
    total weight. With one label it casts the logits to the labels' type (fp32) and the mean squared
    error keeps both. With a problem_type (a fine-tuned config.json often names one) it is BERT's
    (``heads.class_loss``).
    """
    own = is_null("problem_type")
    labels = arch.Saved("gathered labels", (b,), arch.Dtype.INT64)
    gathered = ops.cross_entropy("loss", "classification-loss", b, C, labels, dtype=arch.Dtype.FLOAT32)
    gather = (arch.Saved("label rows", (b,), arch.Dtype.INT64), arch.Saved("logits", (b, C)))
    cast = (arch.Saved("loss input", (b,), arch.Dtype.FLOAT32), arch.Saved("loss labels", (b,), arch.Dtype.FLOAT32))
    entropy, squared, binary = heads.class_loss()  # binary: a named problem_type only, never its own
    own_entropy = ops.only(replace(gathered, saved=(*gather, *gathered.saved)), ne("num_labels", 1) & own)
    own_squared = ops.only(replace(squared, saved=cast), eq("num_labels", 1) & own)
    return (
        replace(entropy, saved=(*own_entropy.saved, *ops.only(entropy, ~own).saved)),
        replace(squared, saved=(*own_squared.saved, *ops.only(squared, ~own).saved)),
        binary,
    )


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers DeBERTa-v2 class for this head (the bare model has no pooler)."""
    on_top = {
        arch.Head.MASKED_LM: lambda: (_mlm_head(on),),
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: _classification(on),
    }
    return common.assemble("DebertaV2", BACKBONE, head, functools.partial(_backbone, on), on_top)


# Values the declaration reads that are neither sizes nor flags.
_value_types = FirstOf(
    (
        Rule(
            "whole-type-vocab-size",
            ~is_kind("type_vocab_size", "int"),
            ("type_vocab_size",),
        ),
        Rule(
            "whole-max-relative-positions",
            ~is_kind("max_relative_positions", "int"),
            ("max_relative_positions",),
        ),
        # DebertaV2Encoder compares conv_kernel_size with 0 whatever the other keys say.
        Rule(
            "whole-conv-kernel-size",
            ~is_kind("conv_kernel_size", "int"),
            ("conv_kernel_size",),
        ),
        # With relative attention, the encoder and every attention layer compare position_buckets with 0.
        Rule(
            "whole-position-buckets",
            truthy("relative_attention") & ~is_kind("position_buckets", "int"),
            ("position_buckets",),
        ),
        # Only ContextPooler, in the classification head, reads pooler_hidden_size (nn.Linear(W, W)).
        Rule(
            "whole-pooler-hidden-size",
            given("pooler_hidden_size") & ~is_kind("pooler_hidden_size", "int"),
            ("pooler_hidden_size",),
        ),
        Rule(
            "pooler-not-negative",
            head_is("sequence-classification") & lt("pooler_hidden_size", 0),
            ("pooler_hidden_size",),
        ),
        Rule(
            "string-norm-rel-ebd",
            ~is_kind("norm_rel_ebd", "str"),
            ("norm_rel_ebd",),
        ),
        Rule(
            "string-pos-att-type",
            ~(is_null("pos_att_type") | is_kind("pos_att_type", "str") | is_kind("pos_att_type", "strings")),
            ("pos_att_type",),
        ),
    )
)

# nn.Conv1d(H, H, K, groups=G) needs G to divide H; checked only when there is a convolution.
_convolution_groups = FirstOf(
    (
        Rule(
            "whole-conv-groups",
            gt("conv_kernel_size", 0) & (~is_kind("conv_groups", "int") | lt("conv_groups", 1)),
            ("conv_groups",),
        ),
        Rule(
            "conv-groups-divide-hidden",
            gt("conv_kernel_size", 0) & ne(mod("hidden_size", "conv_groups"), 0),
            ("conv_groups", "hidden_size"),
        ),
    )
)

SWITCHES = (
    Switch("projected", given("embedding_size") & ne("embedding_size", "hidden_size"), ("embeddings", "mlm-head")),
    Switch("position_table", truthy("position_biased_input"), ("embeddings",)),
    Switch("token_types", gt("type_vocab_size", 0), ("embeddings",)),
    Switch(
        "wide_heads",
        given("attention_head_size") & ne(mul("attention_head_size", "num_attention_heads"), "hidden_size"),
        ("layer", "relative"),
    ),
    Switch("relative", truthy("relative_attention"), ("layer", "relative")),
    Switch("shared_keys", truthy("share_att_key"), ("layer", "relative")),
    Switch("c2p", contains("pos_att_type", "c2p"), ("layer", "relative")),
    Switch("p2c", contains("pos_att_type", "p2c"), ("layer", "relative")),
    Switch("buckets", gt("position_buckets", 0), ("relative",)),
    Switch("max_relative", ge("max_relative_positions", 1), ("relative",)),
    Switch("relative_norm", contains("norm_rel_ebd", "layer_norm"), ("relative",)),
    Switch("conv", gt("conv_kernel_size", 0), ("conv",)),
    Switch("grouped_conv", ne("conv_groups", 1), ("conv",)),
    Switch("legacy", truthy("legacy"), ("mlm-head",)),
    common.tied("mlm-head"),
    Switch(
        "wide_pooler", given("pooler_hidden_size") & ne("pooler_hidden_size", "hidden_size"), ("pooler", "classifier")
    ),
)


FAMILY = arch.Family(
    name="deberta-v2",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    extra_config=EXTRA_CONFIG,
    # getattr(config, key, default) returns a null that was written down (DebertaV2Embeddings,
    # DisentangledSelfAttention): nn.Embedding and the head size arithmetic then fail.
    null_refused=("embedding_size", "attention_head_size"),
    checks=(
        common.in_every_layer(common.heads_divide_hidden),
        common.padding_in_vocabulary,
        _value_types,
        _convolution_groups,
        *common.PROBLEM_TYPE_RULES,
        *training.DROPOUT_RANGES,
        *activations.rules("deberta-v2"),
    ),
    step_checks=training.STEP_CHECKS,
    switches=SWITCHES,
    ground_truth=training.GROUND_TRUTH,
)
