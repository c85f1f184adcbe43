"""RoFormer (transformers ``model_type`` "roformer"): modeling_roformer.py in transformers 5.23.

BERT's layer with rotary positions. Registration order follows RoFormerModel (``embeddings``,
then ``embeddings_project`` when ``embedding_size`` differs from ``hidden_size``, then
``encoder``), RoFormerEmbeddings (``word_embeddings``, ``token_type_embeddings``, ``LayerNorm``:
no position table), RoFormerEncoder (``embed_positions``, a frozen P × d sinusoid table, before
``layer``) and the heads. There is no pooler and no pre-training class.

Each layer turns the table's first s rows into cos and sin tables of its own, which the products
with the query and key (and the value, with ``rotary_value``) keep: two storages per layer. The
rotations are elementwise, so they add no FLOPs, and the rotated tensors replace BERT's copies
of the query, key and value one for one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace

from generator.counting import architecture as arch
from generator.counting.conditions import given, ne, truthy
from generator.counting.families import activations, bert, common, dropouts, heads, step_rules
from generator.counting.families.blocks import factorized, rotary
from generator.counting.families.symbols import symbols
from generator.counting.flow import own
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import b, s
from generator.counting.switches import Switch

SYMBOLS = symbols(
    "VPT",
    arch.Symbol("E", "embedding_size", optional=True, minimum=0),
    "HILA",
    rotary.HEAD_SIZE_SYMBOL,
    "C",
)

BACKBONE = "roformer."  # the attribute every head class stores the encoder under
# Made by every layer from the table: not shared. q·cos keeps cos only when q needs a gradient, so
# the tables are kept when the query or key does, or the value with rotary_value.
ROTATES_VALUE = truthy("rotary_value")
ROTARY = tuple(
    replace(table, when=when, needs=needs)
    for table in rotary.tables(shared=False)
    for when, needs in ((~ROTATES_VALUE, (own(0), own(1))), (ROTATES_VALUE, (own(0), own(1), own(2))))
)


def _embeddings(on: Mapping[str, bool], prefix: str) -> tuple[arch.Block, ...]:
    width = factorized.width(on["projected"])
    # RoFormerModel passes zeros of (b, s) as token types, which the segment table keeps.
    types = common.segment_table(width, arch.Saved("token types", (b, s), arch.Dtype.INT64))
    tables = common.embeddings_block(prefix, (common.token_table(width), types, common.embedding_norm(width)), width)
    if not on["projected"]:
        return (tables,)
    return tables, factorized.block(prefix, factorized.projection("embeddings_project"))


def _layer(on: Mapping[str, bool], prefix: str) -> arch.Block:
    """BertLayer, whose attention also keeps its layer's cos and sin tables."""
    layer = common.bert_encoder_layer(on, prefix)
    attention, *rest = layer.ops
    return replace(layer, ops=(replace(attention, saved=(*attention.saved, *ROTARY)), *rest))


def _backbone(on: Mapping[str, bool], prefix: str, _pooler: bool) -> tuple[arch.Block, ...]:
    table = (rotary.sinusoid_table(),)  # RoFormerEncoder makes the sines once and passes them to every layer
    # Frozen, the table gives the layers no gradient: the flow only gives its output on.
    outputs = ((table[0].writes, "sinusoid positions"),)
    positions = arch.Block("positions", arch.Kind.ENCODER, f"{prefix}encoder.", table, read_by="layer", outputs=outputs)
    return (*_embeddings(on, prefix), positions, _layer(on, prefix))


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers RoFormer class for this head (it has no pooler)."""
    width = factorized.width(on["projected"])
    on_top = {
        arch.Head.MASKED_LM: lambda: (heads.bert_mlm_head(on, BACKBONE, width, width),),
        # RoFormerClassificationHead: on token 0, with hidden_act and the hidden dropout.
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (
            heads.dense_classifier("hidden_act", dropout=common.HIDDEN_DROPOUT, configured=True),
        ),
    }
    return common.assemble("RoFormer", BACKBONE, head, functools.partial(_backbone, on), on_top, pooled=frozenset())


# RoFormer reads no classifier_dropout: its head drops out with hidden_dropout_prob.
DROPOUTS: dropouts.Dropouts = (
    ("hidden_dropout_prob", None),
    ("attention_probs_dropout_prob", dropouts.with_layers()),
)

# apply_rotary_position_embeddings chunks the (s, d) table into halves and stacks each twice:
# with an odd d the halves differ, and the stack cannot take the table's shape.
odd_head_size = rotary.odd_head_size()

FAMILY = arch.Family(
    name="roformer",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    # RoFormerSelfAttention's head check is skipped when the config has embedding_size, as RoFormerConfig always does.
    build_rules=(
        common.in_every_layer(common.heads_divide_hidden_unchecked),
        common.in_every_layer(common.cross_attention_needs_decoder),
        common.padding_in_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(DROPOUTS),
        *activations.rules("roformer"),
    ),
    step_rules=(
        *step_rules.COMMON,
        step_rules.no_token_type_row,
        step_rules.zero_width_heads("hidden_size"),
        odd_head_size,
        *dropouts.in_step(DROPOUTS),
    ),
    switches=(
        common.tied("mlm-head"),
        common.CROSS_ATTENTION,
        Switch(
            "projected",
            given("embedding_size") & ne("embedding_size", "hidden_size"),
            ("embeddings", "embedding-projection", "mlm-head"),
        ),
    ),
    ground_truth=GroundTruth(
        draws={
            **bert.DRAWS,
            "embedding_size": ((6, 8), (ABSENT, None)),
            "rotary_value": ((True, False), (ABSENT,)),
        },
        derived=("embedding_size",),
    ),
)
