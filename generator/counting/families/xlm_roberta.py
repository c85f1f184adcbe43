"""XLM-RoBERTa (transformers ``model_type`` "xlm-roberta"): modeling_xlm_roberta.py in transformers 5.23.

transformers generates this model from RoBERTa's source (modular_xlm_roberta.py), so its
modules and names are RoBERTa's (the backbone is still stored as ``roberta``) and the
declaration is ``roberta.roberta_like``. One thing differs, and it changes the order of
``named_parameters()``: XLMRobertaForMaskedLM and XLMRobertaForSequenceClassification create
their head (``lm_head``, ``classifier``) before the backbone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting.families import bert, roberta
from generator.counting.ground_truth import GroundTruth


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers XLM-RoBERTa class for this head."""
    return roberta.roberta_like(on, head, stem="XLMRoberta", heads_first=True)


# RoBERTa's family in all but its name, its declaration and its notes, and its place in the config sample.
FAMILY = dataclasses.replace(
    roberta.FAMILY,
    name="xlm-roberta",
    declare=declare,
    ground_truth=GroundTruth(draws=bert.DRAWS),
    peft=arch.PeftDefaults(lora=("query", "value")),  # peft has no IA³ default for it
)
