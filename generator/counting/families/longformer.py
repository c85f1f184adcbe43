"""Longformer (transformers ``model_type`` "longformer"): modeling_longformer.py in transformers 5.23.

RoBERTa's classes under ``longformer.``, with one more set of projections. LongformerSelfAttention
registers ``query``, ``key`` and ``value``, then ``query_global``, ``key_global`` and
``value_global``, each H × H with a bias: six projections in every layer, not three. The layer
has no cross-attention. The embeddings, the masked-LM head and the classifier on the first
token are RoBERTa's, tensor for tensor.

``attention_window`` (an int, or one value per layer) sizes no tensor. It changes the step:
the model pads the sequence to a multiple of the widest window and attends within sliding
chunks. The classifier class puts global attention on the first token, so its global
projections run; the masked LM gives no global mask, so its do not.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting.conditions import ge, gt, largest, le, length, mod, ne, smallest
from generator.counting.families import activations, common, dropouts, roberta
from generator.counting.families.symbols import symbols
from generator.counting.ground_truth import ABSENT, GroundTruth, Pinned
from generator.counting.layouts import layer_norm, linear
from generator.counting.switches import Rule

H = common.H

SYMBOLS = symbols("VPTHILAC")

BACKBONE = "longformer."  # the attribute every head class stores the encoder under


def _attention(path: str) -> tuple[arch.Module, ...]:
    """LongformerAttention: the local query, key and value, their global copies, then the output."""
    own = f"{path}.self."
    global_projections = tuple(
        linear(f"{own}{name}_global", f"{name}-global", H, H, heads="A", part=arch.Part.ATTENTION)
        for name in ("query", "key", "value")
    )
    return (
        *common.query_key_value((f"{own}query", f"{own}key", f"{own}value")),
        *global_projections,
        common.attention_output(f"{path}.output.dense"),
        layer_norm(f"{path}.output.LayerNorm", "attention-layernorm", H),
    )


def _layer(prefix: str) -> arch.Block:
    """LongformerLayer, repeated L times: the attention above, then BERT's feed-forward."""
    modules = (
        *_attention("attention"),
        *common.feed_forward("intermediate.dense", "output.dense"),
        layer_norm("output.LayerNorm", "output-layernorm", H),
    )
    return common.layers(f"{prefix}encoder.layer.{{0}}.", modules, common.bert_layer_ops())


def _backbone(prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    blocks = (roberta.embeddings(prefix), _layer(prefix))
    return (*blocks, common.bert_pooler(prefix)) if pooler else blocks


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers Longformer class for this head."""
    return roberta.roberta_like(on, head, stem="Longformer", heads_first=False, attribute=BACKBONE, backbone=_backbone)


WINDOW = "attention_window"

# LongformerModel.__init__ and LongformerSelfAttention.__init__ assert that each window is even and
# positive, and that a list has one window per layer. The conditions read a list's two ends: a list
# whose inner values alone are odd passes here, and transformers refuses it.
WINDOW_RULES = (
    Rule("longformer-window-even", gt(mod(smallest(WINDOW), 2), 0) | gt(mod(largest(WINDOW), 2), 0), (WINDOW,)),
    Rule("longformer-window-positive", le(smallest(WINDOW), 0), (WINDOW,)),
    Rule(
        "longformer-window-per-layer",
        ge(length(WINDOW), 0) & ne(length(WINDOW), "num_hidden_layers"),
        (WINDOW, "num_hidden_layers"),
    ),
)

# The step pads s to a multiple of the window and multiplies chunks of it: no polynomial in b and s.
INEXACT_STEPS = (Rule("longformer-padded-window", ge("num_hidden_layers", 0), ("attention_window",)),)

FAMILY = arch.Family(
    name="longformer",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    build_rules=(
        common.in_every_layer(common.heads_divide_hidden),
        *WINDOW_RULES,
        roberta.padding_fits_tables,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(dropouts.ENCODER),
        *activations.rules("longformer"),
    ),
    step_rules=roberta.STEP_RULES,
    switches=(common.tied("mlm-head"),),
    positions_after="pad_token_id",  # create_position_ids_from_input_ids: padding_idx + 1 onwards
    inexact_steps=INEXACT_STEPS,
    ground_truth=GroundTruth(
        draws={
            "type_vocab_size": ((1, 2), (0,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "pad_token_id": ((0, 3), (None, -1, 40)),
            "attention_window": ((2, 4), (ABSENT,)),
        },
        pinned=(
            Pinned("sequence-classification", {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40}),
            # A window per layer, two of them different.
            Pinned("masked-lm", {"num_hidden_layers": 2, WINDOW: [2, 4], "vocab_size": 40}),
        ),
    ),
)
