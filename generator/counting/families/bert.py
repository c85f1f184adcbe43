"""BERT (transformers ``model_type`` "bert"): modeling_bert.py in transformers 5.23.

Registration order, and so the order of ``named_parameters()``, follows the ``__init__``
of BertEmbeddings, BertLayer (BertAttention, BertIntermediate, BertOutput), BertPooler and
the heads. A module's own parameters come before its children's, which is why the masked-LM
head lists ``cls.predictions.bias`` before its transform.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.counting.architecture import Architecture, Block, Family, Head, Kind
from generator.counting.families import common
from generator.counting.families.symbols import symbols
from generator.counting.poly import Poly

V, P, T, H, I, C = (Poly.symbol(s) for s in "VPTHIC")

SYMBOLS = symbols(
    "VPTHILAC",
)


def _backbone(on: Mapping[str, bool], prefix: str, *, pooler: bool) -> tuple[Block, ...]:
    embeddings = common.bert_embeddings(prefix, H)
    blocks: tuple[Block, ...] = (embeddings, common.bert_encoder_layer(on, prefix))
    if pooler:
        blocks += (common.bert_pooler(prefix),)
    return blocks


def _mlm_head(on: Mapping[str, bool]) -> Block:
    decoder = common.mlm_decoder(on["tied"], "bert.embeddings.word_embeddings.weight", "cls.predictions.bias", H)
    modules = (
        *common.mlm_transform("transform.dense", "transform.LayerNorm"),
        decoder,
    )
    mlm_ops = common.mlm_ops("transform.transform_act_fn")
    return Block("mlm-head", "masked-LM head", Kind.HEAD, "cls.predictions.", modules, ops=mlm_ops)


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers BERT class for this head."""
    if head is Head.BASE:
        return Architecture("BertModel", _backbone(on, "", pooler=True))
    if head is Head.PRETRAINING:
        nsp = common.next_sentence_head()
        return Architecture("BertForPreTraining", (*_backbone(on, "bert.", pooler=True), _mlm_head(on), nsp))
    if head is Head.MASKED_LM:
        return Architecture("BertForMaskedLM", (*_backbone(on, "bert.", pooler=False), _mlm_head(on)))
    classifier = common.classifier_head()
    return Architecture("BertForSequenceClassification", (*_backbone(on, "bert.", pooler=True), classifier))


FAMILY = Family(
    name="bert",
    title="BERT",
    symbols=SYMBOLS,
    heads=(Head.BASE, Head.PRETRAINING, Head.MASKED_LM, Head.SEQUENCE_CLASSIFICATION),
    declare=declare,
    flag_keys=("tie_word_embeddings", "add_cross_attention", "is_decoder"),
    checks=(*common.LAYER_RULES, common.padding_in_vocabulary),
    switches=(common.tied("mlm-head"), common.CROSS_ATTENTION),
)
