"""The original TensorFlow variable behind each PyTorch tensor, for a family with Google's checkpoints.

Which families were released as Google's TensorFlow checkpoints, and the scope those nest the
backbone in, are choices (content/choices.yaml: ``tensorflow-scopes``). Google's checkpoints
(modeling.py, run_pretraining.py, run_classifier.py) name variables by scope:
``<scope>/encoder/layer_3/attention/self/query/kernel``. A dense layer's ``kernel`` is
stored [in, out], where PyTorch's ``weight`` is [out, in]; LayerNorm's scale and shift are
``gamma`` and ``beta``; the masked-LM output layer has no weight of its own (it multiplies by
the word embeddings) and only a bias, ``cls/predictions/output_bias`` [V]; the next-sentence
layer's ``output_weights`` is already [2, H]. transformers' ``load_tf_weights_in_bert`` (transformers 4;
version 5 removed it) applied exactly these rules (kernel and gamma become weight, transposing only kernels; beta and
output_bias become bias; output_weights becomes weight as it is).

The mapping is declared below as rules over PyTorch names; nothing here counts.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from generator.analysis.choices import load_choices
from generator.cards.card import Card


class Layout(enum.Enum):
    """How the TensorFlow variable holds the PyTorch tensor's numbers."""

    SAME = "same shape"
    TRANSPOSED = "transposed: [in, out]"
    NONE = "no variable of its own"


@dataclass(frozen=True)
class Rule:
    pattern: str  # a PyTorch name below the optional "<scope>." prefix; groups are used in ``variable``
    variable: str  # the TensorFlow variable, with {scope} for the backbone's scope and {1}, {2} for the groups
    layout: Layout
    where: str = "modeling.py"  # the file of Google's code that creates the variable


_LINEAR = r"(attention\.self\.(?:query|key|value)|attention\.output\.dense|intermediate\.dense|output\.dense)"
RULES = (
    Rule(
        r"embeddings\.(word|position|token_type)_embeddings\.weight", "{scope}/embeddings/{1}_embeddings", Layout.SAME
    ),
    Rule(r"embeddings\.LayerNorm\.weight", "{scope}/embeddings/LayerNorm/gamma", Layout.SAME),
    Rule(r"embeddings\.LayerNorm\.bias", "{scope}/embeddings/LayerNorm/beta", Layout.SAME),
    Rule(rf"encoder\.layer\.(\d+)\.{_LINEAR}\.weight", "{scope}/encoder/layer_{1}/{2}/kernel", Layout.TRANSPOSED),
    Rule(rf"encoder\.layer\.(\d+)\.{_LINEAR}\.bias", "{scope}/encoder/layer_{1}/{2}/bias", Layout.SAME),
    Rule(
        r"encoder\.layer\.(\d+)\.(attention\.output|output)\.LayerNorm\.weight",
        "{scope}/encoder/layer_{1}/{2}/LayerNorm/gamma",
        Layout.SAME,
    ),
    Rule(
        r"encoder\.layer\.(\d+)\.(attention\.output|output)\.LayerNorm\.bias",
        "{scope}/encoder/layer_{1}/{2}/LayerNorm/beta",
        Layout.SAME,
    ),
    Rule(r"pooler\.dense\.weight", "{scope}/pooler/dense/kernel", Layout.TRANSPOSED),
    Rule(r"pooler\.dense\.bias", "{scope}/pooler/dense/bias", Layout.SAME),
    Rule(r"cls\.predictions\.bias", "cls/predictions/output_bias", Layout.SAME, "run_pretraining.py"),
    Rule(
        r"cls\.predictions\.transform\.dense\.weight",
        "cls/predictions/transform/dense/kernel",
        Layout.TRANSPOSED,
        "run_pretraining.py",
    ),
    Rule(
        r"cls\.predictions\.transform\.dense\.bias",
        "cls/predictions/transform/dense/bias",
        Layout.SAME,
        "run_pretraining.py",
    ),
    Rule(
        r"cls\.predictions\.transform\.LayerNorm\.weight",
        "cls/predictions/transform/LayerNorm/gamma",
        Layout.SAME,
        "run_pretraining.py",
    ),
    Rule(
        r"cls\.predictions\.transform\.LayerNorm\.bias",
        "cls/predictions/transform/LayerNorm/beta",
        Layout.SAME,
        "run_pretraining.py",
    ),
    Rule(r"cls\.predictions\.decoder\.weight", "{scope}/embeddings/word_embeddings", Layout.NONE, "run_pretraining.py"),
    Rule(r"cls\.predictions\.decoder\.bias", "cls/predictions/output_bias", Layout.NONE, "run_pretraining.py"),
    Rule(r"cls\.seq_relationship\.weight", "cls/seq_relationship/output_weights", Layout.SAME, "run_pretraining.py"),
    Rule(r"cls\.seq_relationship\.bias", "cls/seq_relationship/output_bias", Layout.SAME, "run_pretraining.py"),
    Rule(r"classifier\.weight", "output_weights", Layout.SAME, "run_classifier.py"),
    Rule(r"classifier\.bias", "output_bias", Layout.SAME, "run_classifier.py"),
)
_COMPILED = tuple((re.compile(rule.pattern), rule) for rule in RULES)


@dataclass(frozen=True)
class TfName:
    """A TensorFlow checkpoint variable: its name, its shape there, and how it holds the tensor."""

    variable: str
    layout: Layout
    where: str

    def shape(self, torch_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The variable's shape: a kernel is the PyTorch weight's shape reversed ([in, out])."""
        return tuple(reversed(torch_shape)) if self.layout is Layout.TRANSPOSED else torch_shape


def has_tf_names(card: Card) -> bool:
    """Whether the card's family was released as Google's TensorFlow checkpoints."""
    return card.family.name in load_choices().tensorflow_scopes


def tf_names_hypothetical(card: Card) -> bool:
    """Whether no checkpoint holds these names: an exercise model (``exercise-*``) was never trained."""
    return card.id.startswith("exercise-")


def tf_name(card: Card, name: str, *, tied: bool = False) -> TfName | None:
    """The TensorFlow variable behind a PyTorch tensor name, or None (no such checkpoints, or no original).

    A tied slot (the masked-LM decoder) maps to the variable it reuses; the same slot untied
    (``tie_word_embeddings: false``) has no variable in Google's checkpoints.
    """
    if not has_tf_names(card):
        return None
    scope = load_choices().tensorflow_scopes[card.family.name]
    local = name.removeprefix(f"{scope}.")
    for pattern, rule in _COMPILED:
        match = pattern.fullmatch(local)
        if match and (rule.layout is Layout.NONE) == tied:
            variable = rule.variable.replace("{scope}", scope)
            for index, group in enumerate(match.groups(), start=1):
                variable = variable.replace(f"{{{index}}}", group.replace(".", "/"))
            return TfName(variable, rule.layout, rule.where)
    return None
