"""DeBERTa-v2's training step: what it refuses, its dropouts, and what the reference tools run.

The package's ``__init__`` declares the tensors; this module holds the rest of the family's
declaration, which ``FAMILY`` there gathers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.counting.architecture import Head
from generator.counting.conditions import eq, given, gt, head_is, mul, ne, truthy
from generator.counting.families import dropouts, step_rules
from generator.counting.ground_truth import ABSENT, GroundTruth, Pinned
from generator.counting.switches import Rule

# The classifier drops out with cls_dropout when it is given (a key its config class does not
# declare), else with the hidden dropout; its pooler with pooler_dropout.
UNDECLARED = ("cls_dropout",)
DROPOUTS: dropouts.Dropouts = (
    ("hidden_dropout_prob", None),
    ("attention_probs_dropout_prob", dropouts.with_layers()),
    ("pooler_dropout", dropouts.CLASSIFIER),
    ("cls_dropout", dropouts.CLASSIFIER & given("cls_dropout")),
)
DROPOUT_RANGES = tuple(dropouts.dropout_range(key, when, declared=key not in UNDECLARED) for key, when in DROPOUTS)

# The class builds what these configs ask for, but its forward pass cannot use it. It has a segment
# table only when type_vocab_size is above 0.
STEP_RULES = (
    *step_rules.COMMON,
    step_rules.zero_width_heads("hidden_size", "attention_head_size"),
    # DebertaV2SelfOutput's dense layer is H × H, and reads the A·D-wide output of the heads.
    Rule(
        "heads-span-hidden",
        gt("num_hidden_layers", 0)
        & given("attention_head_size")
        & ne(mul("attention_head_size", "num_attention_heads"), "hidden_size"),
        ("attention_head_size", "num_attention_heads", "hidden_size"),
    ),
    # DebertaV2Encoder.forward returns the output of its last layer: with none, the variable is never set.
    Rule(
        "no-layers",
        eq("num_hidden_layers", 0),
        ("num_hidden_layers",),
    ),
    # ContextPooler's dense layer is pooler_hidden_size wide both ways, and reads the first token's H values.
    Rule(
        "pooler-reads-hidden",
        head_is(Head.SEQUENCE_CLASSIFICATION.value)
        & given("pooler_hidden_size")
        & ne("pooler_hidden_size", "hidden_size"),
        ("pooler_hidden_size", "hidden_size"),
    ),
    # The non-legacy lm_predictions head multiplies its H-wide output by word_embeddings.weight itself,
    # E wide, whether or not the decoder is tied (the legacy head's decoder reads H, after embed_proj).
    Rule(
        "mlm-reads-embedding-width",
        head_is(Head.MASKED_LM.value)
        & ~truthy("legacy")
        & given("embedding_size")
        & ne("embedding_size", "hidden_size"),
        ("legacy", "embedding_size", "hidden_size"),
    ),
    *dropouts.in_step(DROPOUTS),
)


def span_lengths(config: Mapping[str, Any]) -> tuple[int, int]:
    """The relative span (position_buckets, else max_relative_positions, else the longest sequence)
    and one past it: the lengths where the span would clamp, if it did. In transformers 5.23 it is a
    constant of the config (pos_ebd_size), so the step totals stay one polynomial across it."""
    buckets = config.get("position_buckets", -1)
    span = buckets if buckets > 0 else None
    relative = config["max_relative_positions"]
    span = span or (relative if relative >= 1 else config["max_position_embeddings"])
    return (span, span + 1)


GROUND_TRUTH = GroundTruth(
    draws={
        "type_vocab_size": ((1, 2), (0, -1)),
        "relative_attention": ((True, False), (ABSENT,)),
        "position_biased_input": ((True, False), (ABSENT,)),
        "pos_att_type": ((["c2p"], ["p2c", "c2p"]), ("p2c|c2p", "c2p", "none", [], None, ABSENT)),
        "position_buckets": ((4,), (-1, 0, None, ABSENT)),
        "max_relative_positions": ((3,), (-1, 0, ABSENT)),
        "share_att_key": ((True, False), (ABSENT,)),
        "norm_rel_ebd": (("none", "layer_norm"), ("layer_norm|none", ABSENT)),
        "conv_kernel_size": ((3,), (0, -1, None, ABSENT)),
        "conv_groups": ((1, 2), (ABSENT,)),
        "embedding_size": ((6,), (ABSENT, 0, None)),
        "attention_head_size": ((4,), (ABSENT, 0)),
        "pooler_hidden_size": ((10,), (ABSENT, 0, -1)),
        "legacy": ((True, False), (ABSENT,)),
        "tie_word_embeddings": ((True, False), (ABSENT,)),
        "pad_token_id": ((0, 3), (None, 40)),
    },
    per_head=30,  # the sentinels combine in many ways: draw more of them
    # Sentinels that once gave a wrong count: no convolution (0, then null), and relative attention
    # with no buckets, no span and the legacy position type.
    pinned=(
        Pinned("base", {"hidden_size": 8, "num_attention_heads": 2, "conv_kernel_size": 0}),
        Pinned(
            "masked-lm",
            {
                "hidden_size": 8,
                "num_attention_heads": 2,
                "relative_attention": True,
                "position_buckets": -1,
                "max_relative_positions": -1,
                "pos_att_type": "p2c|c2p",
                "max_position_embeddings": 12,
            },
        ),
        Pinned("base", {"hidden_size": 8, "num_attention_heads": 2, "conv_kernel_size": None}),
    ),
    undeclared_probabilities=UNDECLARED,
    lengths=span_lengths,
)
