"""data2vec-text (transformers ``model_type`` "data2vec-text"): modeling_data2vec_text.py in transformers 5.23.

transformers generates this model from RoBERTa's source (modular_data2vec_text.py): every module
is RoBERTa's under the stem ``Data2VecText``, and the heads come after the backbone, as in
RoBERTa. One name differs: the head classes store the backbone as ``data2vec_text``, not
``roberta``. What data2vec changes is the training objective (regressing a teacher's averaged
layer outputs), which leaves no tensor in the classes counted here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting.families import bert, roberta
from generator.counting.ground_truth import GroundTruth

BACKBONE = "data2vec_text."  # the attribute every head class stores the encoder under


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers data2vec-text class for this head."""
    return roberta.roberta_like(on, head, stem="Data2VecText", heads_first=False, attribute=BACKBONE)


# RoBERTa's family in all but its name, its declaration and its place in the config sample.
FAMILY = dataclasses.replace(
    roberta.FAMILY,
    name="data2vec-text",
    declare=declare,
    ground_truth=GroundTruth(draws=bert.DRAWS),
    peft=arch.PeftDefaults(),  # peft has no defaults for it
)
