"""nn.Dropout refuses a probability below 0 or above 1 when it is made: the families' range rules.

A config that gives such a probability to a dropout its class builds is one transformers cannot
build, so the card check refuses it (a family's ``checks``). Which dropouts a class builds depends
on the head (a classifier's own dropout) and on whether it has layers (the attention's): each rule
says when. A probability read only inside the forward, by ``nn.functional.dropout``, raises in the
training step instead (ModernBERT's attention, ``step_checks``). So does NaN, which nn.Dropout takes
(neither of its comparisons with 0 and 1 holds), wherever the step runs a dropout with it (the
``*_STEP`` rules). ``tests/test_config_ranges.py`` holds the rules to what transformers did with each
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


# Each family's dropouts as (key, when the class makes it), which the training step also runs.
Dropouts = tuple[tuple[str, Condition | None], ...]

# BertModel and its copies (RoBERTa, XLM-R, ELECTRA, MobileBERT): the embeddings' and every layer's
# hidden dropout, the attention's in each layer, and the classifier's own when it is given (null:
# the hidden dropout, checked already).
_BERT: Dropouts = (
    ("hidden_dropout_prob", None),
    ("attention_probs_dropout_prob", with_layers()),
    ("classifier_dropout", CLASSIFIER & given("classifier_dropout")),
)
BERT = tuple(dropout_range(key, when) for key, when in _BERT)
BERT_STEP = tuple(nan_in_step(key, when) for key, when in _BERT)

# ALBERT builds its shared group whatever the number of layers, but runs it only with layers; its
# sentence-order head and its classifier each have a dropout of their own.
_ALBERT_HEADS = head_is(Head.SEQUENCE_CLASSIFICATION.value, Head.PRETRAINING.value)
ALBERT = (
    dropout_range("hidden_dropout_prob"),
    dropout_range("attention_probs_dropout_prob"),
    dropout_range("classifier_dropout_prob", _ALBERT_HEADS),
)
ALBERT_STEP = (
    nan_in_step("hidden_dropout_prob"),
    nan_in_step("attention_probs_dropout_prob", with_layers()),
    nan_in_step("classifier_dropout_prob", _ALBERT_HEADS),
)

_DISTILBERT: Dropouts = (
    ("dropout", None),
    ("attention_dropout", with_layers("n_layers")),
    ("seq_classif_dropout", CLASSIFIER),
)
DISTILBERT = tuple(dropout_range(key, when) for key, when in _DISTILBERT)
DISTILBERT_STEP = tuple(nan_in_step(key, when) for key, when in _DISTILBERT)

# DeBERTa's classifier drops out with cls_dropout when it is given (a key its config class does not
# declare), else with the hidden dropout; its pooler with pooler_dropout.
_DEBERTA_V2: Dropouts = (
    ("hidden_dropout_prob", None),
    ("attention_probs_dropout_prob", with_layers()),
    ("pooler_dropout", CLASSIFIER),
    ("cls_dropout", CLASSIFIER & given("cls_dropout")),
)
DEBERTA_V2 = tuple(dropout_range(key, when, declared=key != "cls_dropout") for key, when in _DEBERTA_V2)
DEBERTA_V2_STEP = tuple(nan_in_step(key, when) for key, when in _DEBERTA_V2)

# ModernBertAttention makes its output's nn.Dropout only for a probability above 0 (else nn.Identity),
# so a negative one builds, and raises in the step, where the attention's nn.functional.dropout reads it.
_MODERNBERT: Dropouts = (
    ("embedding_dropout", None),
    ("mlp_dropout", with_layers()),
    ("attention_dropout", with_layers()),
    ("classifier_dropout", CLASSIFIER),
)
MODERNBERT = tuple(
    dropout_range(key, when, refused=gt(key, 1) if key == "attention_dropout" else None) for key, when in _MODERNBERT
)
MODERNBERT_STEP = (
    dropout_range("attention_dropout", with_layers()),
    *(nan_in_step(key, when) for key, when in _MODERNBERT),
)
