"""DeBERTa v1 (transformers ``model_type`` "deberta"): modeling_deberta.py in transformers 5.23.

Registration order follows the ``__init__`` of DebertaEmbeddings (word, position, token type,
``embed_proj``, LayerNorm), DebertaLayer (DisentangledSelfAttention: ``q_bias`` and ``v_bias``,
then ``in_proj``, the optional talking-head projections, ``pos_proj`` and ``pos_q_proj``; the
attention output, intermediate and output), then DebertaEncoder's ``rel_embeddings`` after its
layers, and the heads (ContextPooler and the classifier, or one of two masked-LM heads).

Against DeBERTa-v2: one fused ``in_proj`` without a bias instead of three projections; no
position buckets, no LayerNorm over the table, no convolution; every LayerNorm of the backbone is
DebertaLayerNorm, written in Python, which keeps other tensors than nn.LayerNorm; and each layer
projects only the 2·min(s, R) rows of the table that the sequence can reach.

The compute is one polynomial only while that span is s at every length the model takes (R at
least P). It is exact there with both position terms (and talking heads only with attention
dropout): each copy torch makes
of a strided operand for b > 1 and s > 1 is then matched, at b = 1 or s = 1, by the fused
projection's output, which the key is a view of. ``INEXACT_STEPS`` names the other configs.
Under a method that trains part of the layers they weigh differently: the flow says the copies,
and a step under such a method is derived for b and s above 1 only (``flow.COPIED_ABOVE_ONE``).
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
    eq,
    ge,
    given,
    gt,
    head_is,
    is_kind,
    lt,
    ne,
    truthy,
)
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.blocks import factorized, relative
from generator.counting.families.deberta_v2 import masked_embeddings, training
from generator.counting.families.symbols import shared, symbols
from generator.counting.flow import COPIED_ABOVE_ONE, own, param
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import TOKENS, b, s
from generator.counting.poly import Poly
from generator.counting.switches import FirstOf, Rule, Switch, per_setting_read

H, A, W = (Poly.symbol(name) for name in "HAW")

SYMBOLS = symbols(
    "VP",
    shared("T", size=False, minimum=1),
    arch.Symbol("E", "embedding_size", optional=True, minimum=0),
    arch.Symbol("R", "max_relative_positions", size=False),
    "HI",
    arch.Symbol("W", "pooler_hidden_size", optional=True, size=False),
    "LAC",
)

# getattr(config, key, default) in modeling_deberta.py; pooler_hidden_size from DebertaConfig's kwargs.
EXTRA_CONFIG: Mapping[str, Any] = {
    "embedding_size": None,  # config.hidden_size
    "talking_head": False,
    "pooler_hidden_size": None,  # hidden_size
    "cls_dropout": None,
}

BACKBONE = "deberta."  # the attribute every head class stores the encoder under
SPAN_ROWS = 2 * s  # the rows a layer projects: 2·min(s, R), which is 2s while R ≥ P


def layer_norm(path: str, key: str, dim: Poly = H, writes: str = "") -> arch.Module:
    """DebertaLayerNorm: the same γ and β as nn.LayerNorm, computed in Python in fp32.

    It subtracts the mean twice (once to square, once to divide), and keeps both differences in
    fp32, the square root of the variance per row, and the normalized rows in the model's type
    for the product by γ. It keeps nothing of its input itself. The differences and the root are
    kept for the input's gradient, the normalized rows for γ's.
    """
    weight = param(f"{path}.weight")
    return arch.Module(
        path,
        key,
        (arch.Param("weight", (dim,), "scale"), arch.Param("bias", (dim,), "shift")),
        part=arch.Part.NORMS,
        saved=(
            arch.Saved(f"{path} centred", (TOKENS, dim), arch.Dtype.FLOAT32, needs=(own(0),)),
            arch.Saved(f"{path} deviation", (TOKENS,), arch.Dtype.FLOAT32, needs=(own(0),)),
            arch.Saved(f"{path} centred again", (TOKENS, dim), arch.Dtype.FLOAT32, needs=(own(0),)),
            arch.Saved(f"{path} normalized", (TOKENS, dim), needs=(weight,)),
        ),
        reads=(f"{path} input",),
        writes=writes or f"{path} output",
    )


@per_setting_read
def _embeddings(on: Mapping[str, bool], prefix: str) -> arch.Block:
    width = factorized.width(on["projected"])  # E when embedding_size is given and differs from H
    modules: tuple[arch.Module, ...] = (common.token_table(width),)
    if on["position_table"]:
        modules += (common.position_table(width, "absolute-position-embeddings"),)
    if on["token_types"]:
        modules += (common.segment_table(width, arch.Saved("token types", (b, s), arch.Dtype.INT64)),)
    return masked_embeddings(prefix, modules, layer_norm("LayerNorm", "embedding-layernorm"), projected=on["projected"])


@per_setting_read
def _encoder_layer(on: Mapping[str, bool], prefix: str) -> arch.Block:
    modules: tuple[arch.Module, ...] = (relative.fused_query_key_value("attention.self"),)
    if on["talking_heads"]:
        modules += _talking_heads()
    if on["relative"]:
        modules += relative.position_projections(
            H,
            key="attention.self.pos_proj" if on["c2p"] else None,
            key_bias=False,
            query="attention.self.pos_q_proj" if on["p2c"] else None,
        )
    modules += (
        common.attention_output("attention.output.dense"),
        layer_norm("attention.output.LayerNorm", "attention-layernorm", writes="intermediate.dense input"),
        *common.feed_forward("intermediate.dense", "output.dense"),
        layer_norm("output.LayerNorm", "output-layernorm", writes="layer output"),
    )
    c2p, p2c = (on["relative"] and on[term] for term in ("c2p", "p2c"))
    # The query divided by the scale: c2p's product broadcasts it, a copy of its own.
    attention = relative.content_attention("attention.self", H, scaled=0, relative=c2p or p2c)
    layer_ops = (attention, *common.bert_layer_ops()[1:])
    joins = (*common.BERT_JOINS, *relative.fused_joins("attention.self"))
    key, query = (linear if term else None for linear, term in zip(POSITION_LINEARS, (c2p, p2c), strict=True))
    joins += relative.relative_joins(key, query)
    # The products copy the strided query and key only for b and s above 1. At b = 1 or s = 1 they
    # keep views: of the scaled query when the key or the position key needs a gradient, of in_proj's
    # (b, s, 3H) output when the query or the position query does. Under a method these weigh more.
    copied = tuple(
        name for name, term in (("query", True), (relative.POSITION_KEY, c2p), (relative.POSITION_QUERY, p2c)) if term
    )
    joins += (arch.Join(copied, COPIED_ABOVE_ONE),)
    block = common.layers(f"{prefix}encoder.layer.{{0}}.", modules, layer_ops, joins, "layer output")
    block = replace(block, outputs=(*block.outputs, (COPIED_ABOVE_ONE, COPIED_ABOVE_ONE)))
    if on["relative"]:  # each layer reads the table
        block = replace(block, inputs=(*block.inputs, (relative.POSITIONS, relative.POSITIONS)))
    return block


POSITION_LINEARS = ("attention.self.pos_proj", "attention.self.pos_q_proj")  # for c2p, for p2c


# What the talking heads read, in their refusal's words: the engine says "nothing writes" it.
TALKING_HEADS = "the scores the talking heads mix, inside the attention (their flow is not declared)"


def _talking_heads() -> tuple[arch.Module, ...]:
    """The two A × A mixes of the heads (``talking_head``), over the scores and over the probabilities.

    Each reads a permuted (b, s, s, A) tensor, so nn.Linear keeps a copy of it. Their flow inside the
    attention is not declared: they read a name nothing writes, so a step under a method refuses them."""
    grid = b * s * s
    return tuple(
        arch.Module(
            f"attention.self.{name}",
            key,
            (arch.Param("weight", (A, A), "weight", layer=arch.Layer.LINEAR),),
            part=arch.Part.ATTENTION,
            products=(arch.Product(key, grid, A, A),),
            saved=(arch.Saved(f"{key} input", (grid, A)),),
            reads=(TALKING_HEADS,),
            writes=f"{key} output",
        )
        for name, key in (("head_logits_proj", "talking-head-logits"), ("head_weights_proj", "talking-head-weights"))
    )


@per_setting_read
def _relative(on: Mapping[str, bool], prefix: str) -> tuple[arch.Block, ...]:
    """DebertaEncoder's table after its layers, and every layer's c2p and p2c work on a slice of it."""
    if not on["relative"]:
        return ()
    rows = relative.table_rows(on, buckets=None)
    work = relative.disentangled_attention(
        "attention.self",
        SPAN_ROWS,
        H,
        shared_projections=False,
        c2p=on["c2p"],
        p2c=on["p2c"],
        dropout=common.HIDDEN_DROPOUT,
        table_rows=rows,
        query_copy=True,
        scaled=("p2c",),
        scale_dtype=arch.Dtype.FLOAT32,
        linears=POSITION_LINEARS,
        scales_positions=True,
    )
    return (relative.block(f"{prefix}encoder.", (relative.table(rows),), (work,)),)


def _backbone(on: Mapping[str, bool], prefix: str, _pooler: bool) -> tuple[arch.Block, ...]:
    return (_embeddings(on, prefix), _encoder_layer(on, prefix), *_relative(on, prefix))


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers DeBERTa class for this head (the bare model has no pooler)."""
    on_top = heads.deberta_heads(on, BACKBONE, W)
    return common.assemble("Deberta", BACKBONE, head, functools.partial(_backbone, on), on_top)


# Values the declaration reads that are neither sizes nor flags.
_value_types = FirstOf(
    (
        Rule("whole-type-vocab-size", ~is_kind("type_vocab_size", "int"), ("type_vocab_size",)),
        Rule(
            "whole-max-relative-positions",
            truthy("relative_attention") & ~is_kind("max_relative_positions", "int"),
            ("max_relative_positions",),
        ),
        *heads.CONTEXT_POOLER_RULES,
        relative.POSITION_TERMS_ARE_TEXT,
    )
)

SWITCHES = (
    Switch("projected", given("embedding_size") & ne("embedding_size", "hidden_size"), ("embeddings", "mlm-head")),
    Switch("position_table", truthy("position_biased_input"), ("embeddings",)),
    Switch("token_types", gt("type_vocab_size", 0), ("embeddings",)),
    Switch("talking_heads", truthy("talking_head"), ("layer",)),
    Switch("relative", truthy("relative_attention"), ("layer", "relative")),
    Switch("c2p", contains("pos_att_type", "c2p"), ("layer", "relative")),
    Switch("p2c", contains("pos_att_type", "p2c"), ("layer", "relative")),
    Switch("max_relative", ge("max_relative_positions", 1), ("relative",)),
    Switch("legacy", truthy("legacy"), ("mlm-head",)),
    common.tied("mlm-head"),
    Switch(
        "wide_pooler", given("pooler_hidden_size") & ne("pooler_hidden_size", "hidden_size"), ("pooler", "classifier")
    ),
)

# Steps one polynomial cannot say. torch copies the strided query and key for each product only when
# b and s are both above 1; with both position terms those copies weigh what the fused projection's
# output, kept at b = 1 or s = 1, weighs. A span R below P makes the rows 2s up to R, 2R after.
INEXACT_STEPS = (
    Rule(
        "one-position-term",
        gt("num_hidden_layers", 0)
        & ~(truthy("relative_attention") & contains("pos_att_type", "c2p") & contains("pos_att_type", "p2c")),
        ("relative_attention", "pos_att_type"),
    ),
    # Without attention dropout the product by the values copies the talking heads' output only then too.
    Rule(
        "talking-heads-copies",
        gt("num_hidden_layers", 0) & truthy("talking_head") & ~ops.probability("attention_probs_dropout_prob"),
        ("talking_head", "attention_probs_dropout_prob"),
    ),
    # Measured: with one head the position projections are views at every b, and more differs.
    Rule("one-head", gt("num_hidden_layers", 0) & eq("num_attention_heads", 1), ("num_attention_heads",)),
    Rule(
        "span-clamps",
        truthy("relative_attention")
        & ge("max_relative_positions", 1)
        & lt("max_relative_positions", "max_position_embeddings"),
        ("max_relative_positions", "max_position_embeddings"),
    ),
)

# The classifier drops out with cls_dropout when it is given (a key its config class does not
# declare), else with the hidden dropout; its pooler with pooler_dropout.
UNDECLARED = ("cls_dropout",)
DROPOUTS: dropouts.Dropouts = training.DROPOUTS

STEP_RULES = (
    *step_rules.COMMON,
    # ContextPooler's dense layer is pooler_hidden_size wide both ways, and reads the first token's H values.
    Rule(
        "pooler-reads-hidden",
        head_is(arch.Head.SEQUENCE_CLASSIFICATION.value)
        & given("pooler_hidden_size")
        & ne("pooler_hidden_size", "hidden_size"),
        ("pooler_hidden_size", "hidden_size"),
    ),
    # DebertaLMPredictionHead multiplies its H-wide output by the E-wide token table.
    Rule(
        "new-head-reads-hidden",
        head_is(arch.Head.MASKED_LM.value)
        & ~truthy("legacy")
        & given("embedding_size")
        & ne("embedding_size", "hidden_size"),
        ("legacy", "embedding_size", "hidden_size"),
    ),
    *dropouts.in_step(DROPOUTS),
)

GROUND_TRUTH = GroundTruth(
    draws={
        "type_vocab_size": ((1, 2), (0, -1)),
        "relative_attention": ((True,), (False, ABSENT)),
        "position_biased_input": ((True, False), (ABSENT,)),
        "pos_att_type": ((["c2p", "p2c"], "c2p|p2c"), ("p2c|c2p", "c2p", "p2c", "none", [], None, ABSENT)),
        "max_relative_positions": ((20,), (-1, 0, 3, ABSENT)),
        "talking_head": ((False,), (True, ABSENT)),
        "embedding_size": ((6,), (ABSENT, None)),
        "pooler_hidden_size": ((10,), (ABSENT, 0, -1)),
        "legacy": ((True, False), (ABSENT,)),
        "tie_word_embeddings": ((True, False), (ABSENT,)),
        "pad_token_id": ((0, 3), (None, 40)),
    },
    per_head=30,
    undeclared_probabilities=UNDECLARED,
    lengths=training.span_lengths,
)

FAMILY = arch.Family(
    name="deberta",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    extra_config=EXTRA_CONFIG,
    # getattr(config, "embedding_size", H) returns a null that was written down: nn.Embedding then fails.
    null_refused=("embedding_size",),
    build_rules=(
        common.in_every_layer(common.heads_divide_hidden),
        common.padding_in_vocabulary,
        _value_types,
        *common.PROBLEM_TYPE_RULES,
        *training.DROPOUT_RANGES,
        *activations.rules("deberta"),
    ),
    step_rules=STEP_RULES,
    inexact_steps=INEXACT_STEPS,
    switches=SWITCHES,
    ground_truth=GROUND_TRUTH,
    peft=arch.PeftDefaults(lora=("in_proj",), ia3=("in_proj", "output.dense"), feedforward=("output.dense",)),
)
