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

from generator.counting.architecture import Architecture, Head
from generator.counting.families import roberta


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers XLM-RoBERTa class for this head."""
    return roberta.roberta_like(on, head, stem="XLMRoberta", heads_first=True)


DIFFERENCES = (
    "**RoBERTa's architecture, a multilingual vocabulary.** Every tensor is a RoBERTa tensor with the same "
    "name, so everything RoBERTa changes from BERT applies here too: a position table of P = 514 rows "
    "(real tokens are numbered from `pad_token_id + 1` = 2, so two rows sit below the first position), a "
    "single token type (T = 1), no pooler under the heads, and the `lm_head` / `classifier.out_proj` heads.",
    "**A vocabulary of 250,002 SentencePiece pieces** covering 100 languages, against BERT's 30,522. The token "
    "table V × H dominates the count: in the base size it holds more parameters than all twelve encoder "
    "layers together, and even in the large size it is close to half of the model.",
    "**Heads registered first.** The head classes create `lm_head` or `classifier` before the `roberta` "
    "backbone, so `named_parameters()` lists the head first. With tied word embeddings (the default), the "
    "shared vocabulary matrix is therefore first met as `lm_head.decoder.weight`, which is where transformers "
    "counts it, and `roberta.embeddings.word_embeddings.weight` is the tied slot. The atlas counts it there "
    "too, but files it under the embeddings, since it is the token table. The decoder bias is "
    "`lm_head.bias`, as in RoBERTa.",
)

# RoBERTa's family in all but its name, its declaration and its notes.
FAMILY = dataclasses.replace(
    roberta.FAMILY, name="xlm-roberta", title="XLM-RoBERTa", declare=declare, differences=DIFFERENCES
)
