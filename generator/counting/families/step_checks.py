"""Configs transformers builds but cannot train: each family's ``step_checks``.

Such a config passes the card check (the model is built, and its parameters are counted), but a
training step as issue 13 defines it raises in transformers. Each rule says when, in the words of
the error a reader would meet; ``compute.step_refusal`` reads them for ``count`` and the model
page, and the calculator's script reads the same rules (``compute_rules``: ``cannot_run``).
``tests/test_config_sample.py`` holds them to the steps torch ran and refused.
"""

from __future__ import annotations

from generator.counting.architecture import Head
from generator.counting.conditions import Condition, div, eq, given, gt, head_is, is_null, le, mod, mul, ne, sub
from generator.counting.switches import Rule

# max_position_embeddings of 0: the longest sequence the model takes (every family's bound on s; a
# position table's rows where it has one) has no token, and a step of no token raises.
no_position = Rule(
    "no-position",
    eq("max_position_embeddings", 0),
    ("max_position_embeddings",),
)


def empty_vocabulary(*heads: Head) -> Rule:
    """A masked-LM loss over a vocabulary of 0 rows, for ``heads``: logits.view(-1, vocab_size) cannot
    reshape an empty tensor."""
    return Rule(
        "empty-vocabulary",
        head_is(*(head.value for head in heads)) & eq("vocab_size", 0),
        ("vocab_size",),
    )


# A classifier with no label: its logits are empty, and every loss transformers picks raises on them.
no_label = Rule(
    "no-label",
    head_is(Head.SEQUENCE_CLASSIFICATION.value) & eq("num_labels", 0),
    ("num_labels",),
)

# A segment table of 0 rows, in a family that adds token_type_embeddings(token_type_ids): a step with
# input_ids alone looks up the default type, 0, which is no row. (The meta device does not check an
# index, so tools/config_sample.py's steps run there; on a CPU, as in the test cards' reference, it raises.)
no_token_type_row = Rule(
    "no-token-type-row",
    eq("type_vocab_size", 0),
    ("type_vocab_size",),
)


def zero_width_heads(*widths: str) -> Rule:
    """Heads 0 wide when any of ``widths`` is 0 (the hidden size, or a head size), in a model with layers:
    the attention's view(b, s, A, -1) of an empty tensor cannot reshape."""
    zero: Condition = eq(widths[0], 0)
    for width in widths[1:]:
        zero = zero | eq(width, 0)
    return Rule(
        "zero-width-heads",
        gt("num_hidden_layers", 0) & zero,
        widths,
    )


# BERT's, which most families share; ELECTRA's discriminator never reads the vocabulary.
COMMON = (no_position, empty_vocabulary(Head.MASKED_LM, Head.PRETRAINING), no_label)
BERT = (*COMMON, no_token_type_row)
ELECTRA = (no_position, empty_vocabulary(Head.MASKED_LM), no_label, no_token_type_row)
DISTILBERT = COMMON  # no segment table
MOBILEBERT = BERT

# RobertaEmbeddings numbers the positions from the padding index (input_ids.ne(padding_idx)), which
# raises on a null: the model is built (nn.Embedding takes padding_idx=None), but no step runs.
# Its first token takes position pad_token_id + 1, so a table of no more rows than that holds no token: a
# step of real tokens indexes past it. (The reference's input_ids are all the padding id, whose positions
# are all pad_token_id: such a step ran there, as a step with no token type row runs on the meta device.)
roberta_no_token_position = Rule(
    "roberta-no-token-position",
    le(sub("max_position_embeddings", "pad_token_id"), 1),
    ("max_position_embeddings", "pad_token_id"),
)
ROBERTA = (
    *BERT,
    Rule(
        "roberta-null-padding",
        is_null("pad_token_id"),
        ("pad_token_id",),
    ),
    roberta_no_token_position,
)

# AlbertForPreTraining reads its sentence-order logits in pairs (sop_scores.view(-1, 2)) against one
# label a sequence: with any other number of labels the two no longer match.
ALBERT = (
    *BERT,
    Rule(
        "sentence-order-pairs",
        head_is(Head.PRETRAINING.value) & ne("num_labels", 2),
        ("num_labels",),
    ),
)

# ModernBERT's rotary tables are built for an even head size (an odd one is rounded up): the rotation
# cannot broadcast over an odd-sized head.
MODERNBERT = (
    *COMMON,
    zero_width_heads("hidden_size"),
    Rule(
        "odd-head-size",
        gt("num_hidden_layers", 0) & eq(mod(div("hidden_size", "num_attention_heads"), 2), 1),
        ("hidden_size", "num_attention_heads"),
    ),
)

# DeBERTa-v2 builds what these configs ask for, but its forward pass cannot use it. It has a segment
# table only when type_vocab_size is above 0.
DEBERTA_V2 = (
    *COMMON,
    zero_width_heads("hidden_size", "attention_head_size"),
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
)
