"""nn.Dropout refuses a probability below 0 or above 1 when it is made: the families' range rules.

A config that gives such a probability to a dropout its class builds is one transformers cannot
build, so the card check refuses it (a family's ``checks``). Which dropouts a class builds depends
on the head (a classifier's own dropout) and on whether it has layers (the attention's): each rule
says when. A probability read only inside the forward, by ``nn.functional.dropout``, raises in the
training step instead (ModernBERT's attention, ``step_checks``). ``tests/test_config_ranges.py``
holds the rules to what transformers did with each probability of every family and head.
"""

from __future__ import annotations

from generator.counting.architecture import Head
from generator.counting.conditions import Condition, const, given, gt, head_is, is_kind, lt, value
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


def with_layers(key: str = "num_hidden_layers") -> Condition:
    """The class builds its layers, and with them their attention's dropout."""
    return gt(key, 0)


# BertModel and its copies (RoBERTa, XLM-R, ELECTRA, MobileBERT): the embeddings' and every layer's
# hidden dropout, the attention's in each layer, and the classifier's own when it is given (null:
# the hidden dropout, checked already).
BERT = (
    dropout_range("hidden_dropout_prob"),
    dropout_range("attention_probs_dropout_prob", with_layers()),
    dropout_range("classifier_dropout", CLASSIFIER & given("classifier_dropout")),
)

# ALBERT builds its shared group whatever the number of layers; its sentence-order head and its
# classifier each have a dropout of their own.
ALBERT = (
    dropout_range("hidden_dropout_prob"),
    dropout_range("attention_probs_dropout_prob"),
    dropout_range("classifier_dropout_prob", head_is(Head.SEQUENCE_CLASSIFICATION.value, Head.PRETRAINING.value)),
)

DISTILBERT = (
    dropout_range("dropout"),
    dropout_range("attention_dropout", with_layers("n_layers")),
    dropout_range("seq_classif_dropout", CLASSIFIER),
)

# DeBERTa's classifier drops out with cls_dropout when it is given (a key its config class does not
# declare), else with the hidden dropout; its pooler with pooler_dropout.
DEBERTA_V2 = (
    dropout_range("hidden_dropout_prob"),
    dropout_range("attention_probs_dropout_prob", with_layers()),
    dropout_range("pooler_dropout", CLASSIFIER),
    dropout_range("cls_dropout", CLASSIFIER & given("cls_dropout"), declared=False),
)

# ModernBertAttention makes its output's nn.Dropout only for a probability above 0 (else nn.Identity),
# so a negative one builds, and raises in the step, where the attention's nn.functional.dropout reads it.
MODERNBERT = (
    dropout_range("embedding_dropout"),
    dropout_range("mlp_dropout", with_layers()),
    dropout_range("attention_dropout", with_layers(), refused=gt("attention_dropout", 1)),
    dropout_range("classifier_dropout", CLASSIFIER),
)
MODERNBERT_STEP = (dropout_range("attention_dropout", with_layers()),)
