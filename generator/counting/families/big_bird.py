"""BigBird (transformers ``model_type`` "big_bird"): modeling_big_bird.py in transformers 5.23.

BERT's tensors under ``bert.``, with three differences in the parameters:

* the query, key and value have biases only with ``use_bias`` (the default);
* the pooler is one Linear, ``pooler`` itself, not BertPooler's ``pooler.dense``;
* the classifier is RoBERTa's shape (dense, then ``out_proj``, on token 0), with ``hidden_act``.

Every head class builds the pooler and runs it. Only the pre-training head reads its output, so
under the masked LM and the classifier its product has no backward. BigBirdEmbeddings drops out
before its LayerNorm, not after; that keeps as many tensors as BERT's order.

``attention_type`` picks the attention. "original_full" is BERT's eager attention. "block_sparse"
attends in blocks of ``block_size`` tokens (global, sliding and ``num_random_blocks`` random ones),
and pads s up to a multiple of the block. Both hold the same query, key and value tensors. For
s ≤ (5 + 2·num_random_blocks)·block_size, BigBirdModel switches itself to full attention (for good:
the model keeps that type for every later step).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import const, eq, gt, mul, sub, truthy
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.symbols import symbols
from generator.counting.ground_truth import ABSENT, GroundTruth, Pinned
from generator.counting.layouts import b, embedding, layer_norm, linear
from generator.counting.switches import Rule, Switch

H = common.H

SYMBOLS = symbols("VPTHILAC")

BACKBONE = "bert."  # the attribute every head class stores the encoder under


def _embeddings(prefix: str) -> arch.Block:
    """BertEmbeddings' tables and LayerNorm. The position and token type ids are views of buffers:
    BigBirdModel expands the zero buffer itself, so the segment table keeps nothing new."""
    modules = (
        common.token_table(H),
        common.position_table(H),
        embedding("token_type_embeddings", "segment-embeddings", common.T, H, ids=None),
        common.embedding_norm(H),
    )
    return common.embeddings_block(prefix, modules)


def _attention(path: str, bias: bool) -> tuple[arch.Module, ...]:
    """BigBirdAttention: query, key and value (with biases when ``use_bias``), output dense, LayerNorm."""
    projections = tuple(
        linear(f"{path}.self.{name}", name, H, H, bias=bias, heads="A", part=arch.Part.ATTENTION, saves="layer input")
        for name in ("query", "key", "value")
    )
    return (
        *projections,
        common.attention_output(f"{path}.output.dense"),
        layer_norm(f"{path}.output.LayerNorm", "attention-layernorm", H),
    )


def _layer(on: Mapping[str, bool], prefix: str) -> arch.Block:
    """BigBirdLayer, repeated L times: attention, cross-attention for a decoder, feed-forward."""
    modules = _attention("attention", on["qkv_bias"])
    if on["cross_attention"]:
        cross = _attention("crossattention", on["qkv_bias"])
        modules += tuple(arch.Module(m.path, f"cross-attention-{m.key}", m.params, m.heads, part=m.part) for m in cross)
    modules += (
        *common.feed_forward("intermediate.dense", "output.dense"),
        layer_norm("output.LayerNorm", "output-layernorm", H),
    )
    return common.layers(f"{prefix}encoder.layer.{{0}}.", modules, common.bert_layer_ops())


def _pooler(prefix: str, read: bool) -> arch.Block:
    """BigBirdModel's pooler: one H × H Linear on token 0, then tanh. Unless ``read``, no loss reads it."""
    block = arch.Block(
        "pooler",
        arch.Kind.POOLER,
        prefix,
        (linear("pooler", "pooler-dense", H, H, rows=b, saves=common.ENCODER_OUTPUT),),
        ops=(ops.tanh("activation", "pooler-tanh", (b, H), common.POOLED_OUTPUT.key),),
    )
    return block if read else common.unread(block)


def _backbone(on: Mapping[str, bool], head: arch.Head, prefix: str, _pooled: bool) -> tuple[arch.Block, ...]:
    # Every head class builds BigBirdModel with its pooler; only the pre-training head reads it.
    read = head in (arch.Head.BASE, arch.Head.PRETRAINING)
    return (_embeddings(prefix), _layer(on, prefix), _pooler(prefix, read))


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers BigBird class for this head."""
    mlm = functools.partial(heads.bert_mlm_head, on, BACKBONE)
    on_top = {
        arch.Head.PRETRAINING: lambda: (mlm(), heads.next_sentence_head()),
        arch.Head.MASKED_LM: lambda: (mlm(),),
        # BigBirdClassificationHead: RoBERTa's shape, with the config's hidden_act instead of tanh.
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.dense_classifier("hidden_act", configured=True),),
    }
    return common.assemble("BigBird", BACKBONE, head, functools.partial(_backbone, on, head), on_top)


# BigBirdModel runs full attention up to (5 + 2·num_random_blocks)·block_size tokens. A block-sparse
# config whose position table is longer reaches block-sparse attention at s = P: P − 5·block_size
# exceeds 2·num_random_blocks·block_size.
block_sparse_reached = Rule(
    "big-bird-block-sparse-long",
    eq("attention_type", const("block_sparse"))
    & gt(sub("max_position_embeddings", mul(5, "block_size")), mul(mul(2, "num_random_blocks"), "block_size")),
    ("attention_type", "block_size", "num_random_blocks", "max_position_embeddings"),
)


def fallback_lengths(config: Mapping[str, Any]) -> tuple[int, ...]:
    """A block-sparse config's last length of full attention, the first past it, and one that pads."""
    if config.get("attention_type", "block_sparse") != "block_sparse":
        return ()
    block = config.get("block_size", 64)
    last = (5 + 2 * config.get("num_random_blocks", 3)) * block
    return (last, last + 1, last + block)


FULL = eq("attention_type", const("original_full"))
BLOCK_SPARSE = eq("attention_type", const("block_sparse"))
# BigBirdAttention knows two types; BigBirdModel.forward raises on any other even without layers.
unknown_attention_type = Rule(
    "big-bird-attention-type",
    ~FULL & ~BLOCK_SPARSE,
    ("attention_type",),
)

# Only full attention makes nn.Dropout(attention_probs_dropout_prob); block-sparse attention has no
# dropout. BigBirdModel builds a decoder with cross-attention as full attention whatever the config says.
BUILT_FULL = dropouts.with_layers() & (FULL | truthy("add_cross_attention"))
DROPOUTS: dropouts.Dropouts = (
    dropouts.ENCODER[0],
    ("attention_probs_dropout_prob", BUILT_FULL),
    dropouts.ENCODER[2],
)
# A block-sparse model makes that dropout in its first step: a short input switches it to full attention.
attention_dropout_in_step = dropouts.dropout_range(
    "attention_probs_dropout_prob", dropouts.with_layers() & BLOCK_SPARSE & ~truthy("add_cross_attention")
)


FAMILY = arch.Family(
    name="big_bird",
    symbols=SYMBOLS,
    declare=declare,
    build_rules=(
        *common.LAYER_RULES,
        common.in_every_layer(unknown_attention_type),
        common.padding_in_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(DROPOUTS),
        *activations.rules("big_bird"),
    ),
    step_rules=(
        *step_rules.COMMON,
        step_rules.no_token_type_row,
        unknown_attention_type,
        attention_dropout_in_step,
        *dropouts.in_step(dropouts.ENCODER),
    ),
    inexact_steps=(block_sparse_reached,),
    switches=(
        Switch("qkv_bias", truthy("use_bias"), ("layer",)),
        common.tied("mlm-head"),
        common.CROSS_ATTENTION,
    ),
    ground_truth=GroundTruth(
        draws={
            "type_vocab_size": ((1, 2), (ABSENT,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "is_decoder": ((False,), (True, ABSENT)),
            "add_cross_attention": ((False,), (True, ABSENT)),
            "pad_token_id": ((0, 3), (None, 40)),
            "use_bias": ((True, False), (ABSENT,)),
            "rescale_embeddings": ((True, False), (ABSENT,)),
            "attention_type": (("original_full", "block_sparse"), (ABSENT,)),
            "block_size": ((2, 4), (ABSENT,)),
            "num_random_blocks": ((1, 2), (ABSENT,)),
        },
        pinned=(Pinned("sequence-classification", {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40}),),
        sentence_label="next_sentence_label",
        lengths=fallback_lengths,
    ),
)
