"""Configs transformers builds but cannot train: the rules families build their ``step_rules`` from.

Such a config passes the card check (the model is built, and its parameters are counted), but the
project's training step raises in transformers. Each rule says when, in the words of the error a
reader would meet; ``compute.step_refusal`` reads them for ``count`` and the model page, and the
calculator's script reads the same rules (``calculator_compute``: ``cannot_run``). A family's module
lists its own; ``tests/test_config_sample.py`` holds them to the steps torch ran and refused.
"""

from __future__ import annotations

from generator.counting.architecture import Head
from generator.counting.conditions import Condition, eq, gt, head_is
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


# The rules most families share: a segment table adds ``no_token_type_row``; a family's module adds its own.
COMMON = (no_position, empty_vocabulary(Head.MASKED_LM, Head.PRETRAINING), no_label)
