"""CamemBERT (transformers ``model_type`` "camembert"): modeling_camembert.py in transformers 5.23.

transformers generates CamemBERT from RoBERTa's source (modular_camembert.py): every module and
tensor name is RoBERTa's, and the backbone is stored as ``roberta``. Like XLM-RoBERTa, its
masked-LM and classification classes create their head before the backbone, so the head comes
first in ``named_parameters()``. Only the class names and the ``model_type`` differ.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting.families import bert, roberta
from generator.counting.ground_truth import GroundTruth


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers CamemBERT class for this head."""
    return roberta.roberta_like(on, head, stem="Camembert", heads_first=True)


# RoBERTa's family under another name and class stem, drawn in the config sample on its own.
FAMILY = dataclasses.replace(
    roberta.FAMILY,
    name="camembert",
    declare=declare,
    ground_truth=GroundTruth(draws=bert.DRAWS),
    peft=arch.PeftDefaults(),  # peft has no defaults for it
)
