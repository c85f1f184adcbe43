"""XLM-RoBERTa-XL (transformers ``model_type`` "xlm-roberta-xl"): modeling_xlm_roberta_xl.py in transformers 5.23.

RoBERTa's tensors and heads, with pre-LayerNorm layers. Against RoBERTa:

* the embeddings have no LayerNorm: the summed tables go through a dropout into layer 0;
* each layer normalizes before attention (``attention.self_attn_layer_norm``, registered after the
  attention's projections) and before the feed-forward network (``LayerNorm``, registered last);
* ``attention.output`` has no LayerNorm, and ``output`` neither LayerNorm nor dropout;
* the encoder ends with a LayerNorm of its own, ``encoder.LayerNorm``.

The heads are RoBERTa's, created after the backbone (unlike XLM-RoBERTa's).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.families import activations, bert, common, dropouts, roberta
from generator.counting.families.blocks import prenorm
from generator.counting.ground_truth import GroundTruth, Pinned
from generator.counting.layouts import layer_norm

H, A = common.H, common.A

# The query, key and value read the attention norm's output: one storage, kept once.
NORMED = "attention norm output"


# What each of a layer's norms writes: the attention's input, and the feed-forward network's.
NORM_WRITES = {"attention.self_attn_layer_norm": NORMED, "LayerNorm": "intermediate.dense input"}


def _norm(path: str, key: str) -> arch.Module:
    return layer_norm(path, key, H)


def _layer_norm(path: str, key: str) -> arch.Module:
    """A layer's norm, writing what its sub-layer reads."""
    return layer_norm(path, key, H, writes=NORM_WRITES[path])


def _attention(path: str) -> tuple[arch.Module, ...]:
    """XLMRobertaXLAttention without its norm: query, key and value, then the output dense."""
    paths = (f"{path}.self.query", f"{path}.self.key", f"{path}.self.value")
    return (*common.query_key_value(paths, reads=(NORMED, NORMED)), common.attention_output(f"{path}.output.dense"))


def _cross_attention() -> tuple[arch.Module, ...]:
    """A decoder's cross-attention, with its own norm. It runs only on an encoder's states, which
    a step with ``input_ids`` alone does not give: parameters, and nothing computed."""
    modules = (*_attention("crossattention"), _norm("crossattention.self_attn_layer_norm", "attention-layernorm"))
    return tuple(arch.Module(m.path, f"cross-attention-{m.key}", m.params, m.heads, part=m.part) for m in modules)


def _layer_ops() -> tuple[arch.Op, ...]:
    """Attention, the dropout after its output dense, the feed-forward activation.

    XLMRobertaXLOutput has no dropout: the feed-forward output goes straight into the residual sum.
    """
    return (
        ops.attention("attention.self", H, A, "attention_probs_dropout_prob", writes="attention.output.dense input"),
        common.attention_output_dropout(),
        common.feed_forward_activation("intermediate.intermediate_act_fn"),
    )


# The residual stream skips the norms: the attention's norm reads the layer's input as it is, and
# each sub-layer's output adds to its input.
JOINS = (
    arch.Join((common.LAYER_INPUT,), "attention.self_attn_layer_norm input"),
    arch.Join(("attention.output.dropout output", common.LAYER_INPUT), "LayerNorm input"),
    arch.Join(("output.dense output", "LayerNorm input"), "layer output"),
)


def _layer(on: Mapping[str, bool], prefix: str) -> arch.Block:
    modules = prenorm.layer(
        _layer_norm,
        _attention("attention"),
        common.feed_forward("intermediate.dense", "output.dense"),
        attention_norm="attention.self_attn_layer_norm",
        feed_forward_norm="LayerNorm",
        order=prenorm.NORMS_AFTER,
    )
    if on["cross_attention"]:
        # XLMRobertaXLLayer creates crossattention after attention (and its norm), before intermediate.
        after_attention = len(_attention("attention")) + 1
        modules = (*modules[:after_attention], *_cross_attention(), *modules[after_attention:])
    return common.layers(f"{prefix}encoder.layer.{{0}}.", modules, _layer_ops(), JOINS, "layer output")


def _backbone(on: Mapping[str, bool], prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    blocks = (
        roberta.embeddings(prefix, norm=False),
        _layer(on, prefix),
        prenorm.final_norm(f"{prefix}encoder.", _norm("LayerNorm", "final-norm")),
    )
    return (*blocks, common.bert_pooler(prefix)) if pooler else blocks


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers XLM-RoBERTa-XL class for this head."""
    backbone = functools.partial(_backbone, on)
    return roberta.roberta_like(on, head, stem="XLMRobertaXL", heads_first=False, backbone=backbone)


# RoBERTa's symbols, step checks and position offset; its own checks, switches and place in the sample.
FAMILY = dataclasses.replace(
    roberta.FAMILY,
    name="xlm-roberta-xl",
    declare=declare,
    build_rules=(
        *common.LAYER_RULES,
        roberta.padding_fits_tables,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(dropouts.ENCODER),
        *activations.rules("xlm-roberta-xl"),
    ),
    # The token table is never listed first (the heads come after the backbone): only the head depends on it.
    switches=(common.tied("mlm-head"), common.CROSS_ATTENTION),
    ground_truth=GroundTruth(
        draws=bert.DRAWS,
        # A classifier on the first token, with a vocabulary the padding id fits.
        pinned=(Pinned("sequence-classification", {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40}),),
    ),
    peft=arch.PeftDefaults(),  # peft has no defaults for it
)
