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
    ge,
    given,
    gt,
    is_kind,
    lt,
    mod,
    mul,
    ne,
    truthy,
)
from generator.counting.families import activations, common, heads
from generator.counting.families.blocks import factorized, relative
from generator.counting.families.deberta_v2 import training
from generator.counting.families.symbols import shared, symbols
from generator.counting.layouts import TOKENS, b, layer_norm, s
from generator.counting.poly import Poly
from generator.counting.switches import FirstOf, Rule, Switch, per_setting_read

H, D, K, Q, W, A = (Poly.symbol(name) for name in "HDKQWA")

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


def _projection_width(on: Mapping[str, bool]) -> Poly:
    """What query, key and value project to: A·D when attention_head_size changes it, else H."""
    return A * D if on["wide_heads"] else H


@per_setting_read
def _embeddings(on: Mapping[str, bool], prefix: str) -> arch.Block:
    width = factorized.width(on["projected"])  # E when embedding_size is given and differs from H
    modules: tuple[arch.Module, ...] = (common.token_table(width),)
    if on["position_table"]:
        modules += (common.position_table(width, "absolute-position-embeddings"),)
    if on["token_types"]:
        modules += (common.segment_table(width, arch.Saved("token types", (b, s), arch.Dtype.INT64)),)
    return masked_embeddings(prefix, modules, common.embedding_norm(H), projected=on["projected"])


def masked_embeddings(
    prefix: str, tables: tuple[arch.Module, ...], norm: arch.Module, *, projected: bool
) -> arch.Block:
    """DeBERTa's embeddings (v1 and v2): the tables' sum, ``projected`` by embed_proj, then ``norm``,
    then the product by the attention mask (ones here), cast to the model's type and kept, then dropout."""
    modules = tables
    if projected:  # the tables' sum, projected, is the LayerNorm's input
        projection = factorized.projection("embed_proj", "embedding-projection-e-h", bias=False)
        modules += (replace(projection, writes=norm.reads[0]),)
    block = common.embeddings_block(prefix, (*modules, norm))
    mask = arch.Op(
        "mask", "embedding-mask", saved=(arch.Saved("embedding mask", (b, s)),), reads=(norm.writes,), writes="masked"
    )
    dropout = replace(block.ops[0], reads=(mask.writes,))
    summed = "embed_proj input" if projected else norm.reads[0]
    joins = (arch.Join(tuple(m.writes for m in tables), summed),)
    return replace(block, ops=(dropout, mask), joins=joins, outputs=((dropout.writes, common.HIDDEN),))


@per_setting_read
def _encoder_layer(on: Mapping[str, bool], prefix: str) -> arch.Block:
    width = _projection_width(on)
    split = None if on["wide_heads"] else "A"  # the page's "H/A per head" aside only holds then
    projections = ("attention.self.query_proj", "attention.self.key_proj", "attention.self.value_proj")
    modules = common.query_key_value(projections, H, width, heads=split)
    if on["relative"] and not on["shared_keys"]:
        modules += relative.position_projections(
            width,
            key="attention.self.pos_key_proj" if on["c2p"] else None,
            query="attention.self.pos_query_proj" if on["p2c"] else None,
        )
    modules += (
        common.attention_output("attention.output.dense"),
        layer_norm("attention.output.LayerNorm", "attention-layernorm", H, writes="intermediate.dense input"),
        *common.feed_forward("intermediate.dense", "output.dense"),
        layer_norm("output.LayerNorm", "output-layernorm", H, writes="layer output"),
    )
    c2p, p2c = (on["relative"] and on[term] for term in ("c2p", "p2c"))
    joins: tuple[arch.Join, ...] = common.BERT_JOINS
    if c2p or p2c:
        key, query = _position_linears(on)
        joins += relative.relative_joins(key if c2p else None, query if p2c else None)
    block = common.layers(f"{prefix}encoder.layer.{{0}}.", modules, _layer_ops(width, c2p, p2c), joins, "layer output")
    if on["relative"]:  # each layer reads the table, or its norm
        block = replace(block, inputs=(*block.inputs, (relative.POSITIONS, relative.POSITIONS)))
    return block


def _position_linears(on: Mapping[str, bool]) -> tuple[str, str]:
    """The Linears a layer projects the table with, for c2p and for p2c: its own key and query
    projections (``share_att_key``), else its position projections."""
    if on["shared_keys"]:
        return ("attention.self.key_proj", "attention.self.query_proj")
    return ("attention.self.pos_key_proj", "attention.self.pos_query_proj")


def _layer_ops(width: Poly, c2p: bool, p2c: bool) -> tuple[arch.Op, ...]:
    """BERT's, with DeBERTa's content attention for BERT's attention."""
    query_kept_for = (relative.POSITION_KEY,) if c2p else ()  # c2p multiplies the same query
    attention = relative.content_attention("attention.self", width, relative=c2p or p2c, query_kept_for=query_kept_for)
    return (attention, *common.bert_layer_ops()[1:])


@per_setting_read
def _encoder_extras(on: Mapping[str, bool], prefix: str) -> tuple[arch.Block, ...]:
    """What DebertaV2Encoder registers after its layers: relative positions, then the convolution."""
    blocks: tuple[arch.Block, ...] = ()
    table: tuple[arch.Module, ...] = ()
    rows = relative.table_rows(on)
    if on["relative"]:
        table += (relative.table(rows),)
    if on["relative_norm"]:
        table += (relative.table_norm(rows, read=on["relative"]),)
    if table:
        relative_ops = (_relative_attention(on, rows),) if on["relative"] else ()
        blocks += (relative.block(f"{prefix}encoder.", table, relative_ops),)
    if on["conv"]:
        blocks += (_convolution(on, prefix),)
    return blocks


def _relative_attention(on: Mapping[str, bool], rows: Poly) -> arch.Op:
    """Every layer's c2p and p2c scores, from its position projections or, shared, its query and key's."""
    return relative.disentangled_attention(
        "attention.self",
        rows,
        _projection_width(on),
        shared_projections=on["shared_keys"],
        c2p=on["c2p"],
        p2c=on["p2c"],
        dropout=common.HIDDEN_DROPOUT,
        linears=_position_linears(on),
    )


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
        (
            arch.Param("weight", (H, per_group, K), "kernel", layer=arch.Layer.CONV1D),
            arch.Param("bias", (H,), "bias", layer=arch.Layer.CONV1D),
        ),
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
    # Its data flow is not declared, so a step under a method refuses it: in fp32 the mask it keeps is
    # the storage the embeddings' mask keeps, and the step keeps it when either does. Its bf16 copy
    # is its own. Saved entries cannot say "one storage, kept by either block".
    return arch.Block("conv", arch.Kind.ENCODER, f"{prefix}encoder.conv.", modules, ops=steps)


def _backbone(on: Mapping[str, bool], prefix: str, _pooler: bool) -> tuple[arch.Block, ...]:
    return (_embeddings(on, prefix), _encoder_layer(on, prefix), *_encoder_extras(on, prefix))


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers DeBERTa-v2 class for this head (the bare model has no pooler)."""
    on_top = heads.deberta_heads(on, BACKBONE, W)
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
        *heads.CONTEXT_POOLER_RULES,
        Rule(
            "string-norm-rel-ebd",
            ~is_kind("norm_rel_ebd", "str"),
            ("norm_rel_ebd",),
        ),
        relative.POSITION_TERMS_ARE_TEXT,
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
    build_rules=(
        common.in_every_layer(common.heads_divide_hidden),
        common.padding_in_vocabulary,
        _value_types,
        _convolution_groups,
        *common.PROBLEM_TYPE_RULES,
        *training.DROPOUT_RANGES,
        *activations.rules("deberta-v2"),
    ),
    step_rules=training.STEP_RULES,
    switches=SWITCHES,
    ground_truth=training.GROUND_TRUTH,
    peft=arch.PeftDefaults(
        lora=("query_proj", "value_proj"), ia3=("key_proj", "value_proj", "output.dense"), feedforward=("output.dense",)
    ),
)
