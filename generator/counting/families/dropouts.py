"""nn.Dropout refuses a probability below 0 or above 1 when it is made: the rules families build theirs from.

A config that gives such a probability to a dropout its class builds is one transformers cannot
build, so the card check refuses it (a family's ``build_rules``). Which dropouts a class builds depends
on the head (a classifier's own dropout) and on whether it has layers (the attention's): each rule
says when. A probability read only inside the forward, by ``nn.functional.dropout``, raises in the
training step instead (a ``step_rules`` rule made with ``dropout_range``). So does NaN, which nn.Dropout takes
(neither of its comparisons with 0 and 1 holds), wherever the step runs a dropout with it
(``in_step``). ``tests/test_config_ranges.py`` holds the rules to what transformers did with each
probability of every family and head.
"""

from __future__ import annotations

from generator.counting.architecture import Head
from generator.counting.conditions import Condition, const, given, gt, head_is, is_kind, lt, ne, value
from generator.counting.switches import Rule

CLASSIFIER = head_is(Head.SEQUENCE_CLASSIFICATION.value)


def outside(key: str) -> Condition:
    """The probability is below 0 or above 1 (a number: the card check has refused any other type)."""
    return lt(key, 0) | gt(key, 1)


def dropout_range(
    key: str, when: Condition | None = None, *, declared: bool = True, refused: Condition | None = None
) -> Rule:
    """``key`` is a probability nn.Dropout is made with, when ``when`` holds (always when None).

    ``declared``: the config class declares the key's type, which the card check has checked; a key
    it does not declare (read with getattr) must also be something nn.Dropout compares with 0 and 1.
    ``refused``: the probabilities refused, where not all of those outside [0, 1] are."""
    fails = outside(key) if refused is None else refused
    fails = fails if declared else ~is_kind(key, "number") | fails
    fails = fails if when is None else when & fails
    return Rule("dropout-range", fails, (key,), values=(("name", const(key)), ("found", value(key))))


def is_nan(key: str) -> Condition:
    """The value is NaN: the one value not equal to itself (and no ordering of it holds)."""
    return ne(key, key)


def nan_in_step(key: str, when: Condition | None = None) -> Rule:
    """``key`` is NaN where the training step runs a dropout with it (``when``; always when None):
    nn.functional.dropout raises on it. A step check: the model is built, its parameters are counted."""
    fails = is_nan(key) if when is None else when & is_nan(key)
    return Rule("dropout-nan", fails, (key,), values=(("name", const(key)),))


def with_layers(key: str = "num_hidden_layers") -> Condition:
    """The class builds its layers, and with them their attention's dropout."""
    return gt(key, 0)


# A family's dropouts as (key, when the class makes it), which the training step also runs.
Dropouts = tuple[tuple[str, Condition | None], ...]


def ranges(dropouts: Dropouts) -> tuple[Rule, ...]:
    """The card check's rules for ``dropouts``: each a probability nn.Dropout is made with."""
    return tuple(dropout_range(key, when) for key, when in dropouts)


def in_step(dropouts: Dropouts) -> tuple[Rule, ...]:
    """The step rules for ``dropouts``: each runs in the training step, which raises on NaN."""
    return tuple(nan_in_step(key, when) for key, when in dropouts)


# The dropouts of the encoder most classes copy: the embeddings' and every layer's hidden dropout,
# the attention's in each layer, and the classifier's own when it is given (null: the hidden
# dropout, checked already).
ENCODER: Dropouts = (
    ("hidden_dropout_prob", None),
    ("attention_probs_dropout_prob", with_layers()),
    ("classifier_dropout", CLASSIFIER & given("classifier_dropout")),
)
