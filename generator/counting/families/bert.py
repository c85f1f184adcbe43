"""BERT (transformers ``model_type`` "bert"): modeling_bert.py in transformers 5.23.

Registration order, and so the order of ``named_parameters()``, follows the ``__init__``
of BertEmbeddings, BertLayer (BertAttention, BertIntermediate, BertOutput), BertPooler and
the heads. A module's own parameters come before its children's, which is why the masked-LM
head lists ``cls.predictions.bias`` before its transform.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting.families import activations, common, dropouts, heads, step_checks
from generator.counting.families.symbols import symbols

SYMBOLS = symbols("VPTHILAC")


def _backbone(on: Mapping[str, bool], prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    blocks = (common.bert_embeddings(prefix, common.H), common.bert_encoder_layer(on, prefix))
    return (*blocks, common.bert_pooler(prefix)) if pooler else blocks


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers BERT class for this head."""
    on_top = heads.bert_heads(functools.partial(heads.bert_mlm_head, on, "bert."), heads.next_sentence_head)
    return common.assemble("Bert", "bert.", head, functools.partial(_backbone, on), on_top)


FAMILY = arch.Family(
    name="bert",
    symbols=SYMBOLS,
    declare=declare,
    checks=(*common.BERT_RULES, *activations.rules("bert")),
    step_checks=(*step_checks.BERT, *dropouts.BERT_STEP),
    switches=(common.tied("mlm-head"), common.CROSS_ATTENTION),
)
