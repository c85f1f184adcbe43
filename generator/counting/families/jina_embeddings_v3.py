"""jina-embeddings-v3 (``model_type`` "jina_embeddings_v3"): modeling_jina_embeddings_v3.py in transformers 5.23.

XLM-RoBERTa with rotary positions. Against XLM-RoBERTa:

* the embeddings hold no position table: word, token type, LayerNorm;
* the bare model registers its pooler before the layers, which sit at ``layers.{i}``, not ``encoder.layer.{i}``;
* a layer registers ``post_attention_layernorm``, ``mlp.fc1``, ``mlp.fc2``, ``self_attn`` (q, k, v, o
  projections with biases) and ``post_mlp_layernorm``, in that order; it is post-LayerNorm, as BERT's;
* queries and keys are rotated by cos and sin tables the model makes once a step, for every layer.

The heads are XLM-RoBERTa's, created before the backbone. transformers 5.23 registers no LoRA tensor:
the checkpoint's five task adapters are not part of these classes, and no input selects a task.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.families import activations, common, dropouts, roberta, step_rules
from generator.counting.families.blocks import rotary
from generator.counting.families.symbols import symbols
from generator.counting.flow import own
from generator.counting.ground_truth import ABSENT, GroundTruth, Pinned
from generator.counting.layouts import b, layer_norm, s

H, A = common.H, common.A

SYMBOLS = symbols("VTHILAC")
# q·cos keeps cos only when q needs a gradient: the tables are kept where the query or key needs one.
COS, SIN = (dataclasses.replace(table, needs=(own(0), own(1))) for table in rotary.tables())


def _embeddings(prefix: str, word_tied_to: str | None) -> arch.Block:
    """RobertaEmbeddings without its position table: the positions are rotary."""
    block = roberta.embeddings(prefix, word_tied_to=word_tied_to)
    modules = tuple(m for m in block.modules if m.path != "position_embeddings")
    written = {m.writes for m in modules}
    joins = tuple(arch.Join(tuple(r for r in j.reads if r in written), j.writes) for j in block.joins)
    return dataclasses.replace(block, modules=modules, joins=joins)


def _layer(prefix: str) -> arch.Block:
    """JinaEmbeddingsV3Layer, in the order its __init__ creates its children."""
    modules = (
        layer_norm("post_attention_layernorm", "attention-layernorm", H, writes="mlp.fc1 input"),
        *common.feed_forward("mlp.fc1", "mlp.fc2"),
        *common.query_key_value(("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")),
        common.attention_output("self_attn.o_proj"),
        layer_norm("post_mlp_layernorm", "output-layernorm", H, writes="layer output"),
    )
    attention = ops.attention("self_attn", H, A, "attention_probs_dropout_prob", writes="self_attn.o_proj input")
    layer_ops = (
        rotary.rotated(attention, (COS, SIN)),
        ops.dropout(
            "post_attention_dropout",
            "attention-output-dropout",
            (b, s, H),
            common.HIDDEN_DROPOUT,
            reads="self_attn.o_proj output",
        ),
        common.feed_forward_activation("mlp.activation_fn"),
        ops.dropout("post_mlp_dropout", "output-dropout", (b, s, H), common.HIDDEN_DROPOUT, reads="mlp.fc2 output"),
    )
    return common.layers(f"{prefix}layers.{{0}}.", modules, layer_ops, JOINS, "layer output")


# Norms after each sub-layer, as BERT's: each sub-layer's output adds to its input.
JOINS = (
    arch.Join(("post_attention_dropout output", common.LAYER_INPUT), "post_attention_layernorm input"),
    arch.Join(("post_mlp_dropout output", "mlp.fc1 input"), "post_mlp_layernorm input"),
)


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers JinaEmbeddingsV3 class for this head."""
    # The masked LM lists its head first, so its decoder holds the shared token table.
    tied_first = head is arch.Head.MASKED_LM and on["tied"]

    def backbone(prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
        embeddings = _embeddings(prefix, roberta.DECODER if tied_first else None)
        pooled = (common.bert_pooler(prefix),) if pooler else ()
        return (embeddings, *pooled, _layer(prefix))

    return roberta.roberta_like(on, head, stem="JinaEmbeddingsV3", heads_first=True, backbone=backbone)


# JinaEmbeddingsV3Attention does not check the head count: it builds A·⌊H/A⌋-wide projections, and
# its forward runs on them. The site does not count that narrower model, so the card check refuses it.
# Its words (content/en/families.yaml) are the family's own: this forward does run.
heads_divide_hidden = common.in_every_layer(common.heads_divide_hidden_unchecked)

# The attention's dropout is nn.functional.dropout in the forward: nothing checks it when the model is built.
BUILT_DROPOUTS: dropouts.Dropouts = tuple(
    entry for entry in dropouts.ENCODER if entry[0] != "attention_probs_dropout_prob"
)

# inv_freq has ⌈d/2⌉ frequencies, so an odd d makes tables one wider than the heads.
odd_head_size = rotary.odd_head_size()

FAMILY = arch.Family(
    name="jina_embeddings_v3",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    compute_symbols=(rotary.HEAD_SIZE_SYMBOL,),
    build_rules=(
        heads_divide_hidden,
        common.padding_in_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(BUILT_DROPOUTS),
        *activations.rules("jina_embeddings_v3"),
    ),
    step_rules=(
        *step_rules.COMMON,
        step_rules.zero_width_heads("hidden_size"),
        step_rules.no_token_type_row,
        odd_head_size,
        dropouts.dropout_range("attention_probs_dropout_prob", dropouts.with_layers()),
        *dropouts.in_step(dropouts.ENCODER),
    ),
    switches=(common.tied("mlm-head", "shared-embeddings", "embeddings"),),
    ground_truth=GroundTruth(
        draws={
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "pad_token_id": ((1, 0), (ABSENT,)),
        },
        # The tables are made anew each step from arange(s), with no cache: lengths between 3 and P show no bend.
        lengths=lambda config: (4, 8),
        # A classifier on the first token, with a vocabulary the padding id fits.
        pinned=(Pinned("sequence-classification", {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40}),),
    ),
)
