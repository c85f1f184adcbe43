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
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.symbols import symbols
from generator.counting.ground_truth import ABSENT, GroundTruth, Pinned

SYMBOLS = symbols("VPTHILAC")


def _backbone(on: Mapping[str, bool], prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    blocks = (common.bert_embeddings(prefix, common.H), common.bert_encoder_layer(on, prefix))
    return (*blocks, common.bert_pooler(prefix)) if pooler else blocks


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers BERT class for this head."""
    on_top = heads.bert_heads(functools.partial(heads.bert_mlm_head, on, "bert."), heads.next_sentence_head)
    return common.assemble("Bert", "bert.", head, functools.partial(_backbone, on), on_top)


# What the config sampler draws for BertConfig's own keys; RoBERTa's and ELECTRA's configs share them.
DRAWS = {
    "type_vocab_size": ((1, 2), (0,)),
    "tie_word_embeddings": ((True, False), (ABSENT,)),
    "is_decoder": ((False,), (True, ABSENT)),
    "add_cross_attention": ((False,), (True, ABSENT)),
    "pad_token_id": ((0, 3), (None, -1, 40)),
}

FAMILY = arch.Family(
    name="bert",
    symbols=SYMBOLS,
    declare=declare,
    build_rules=(*common.LAYER_RULES, *common.EMBEDDING_AND_CONFIG_RULES, *activations.rules("bert")),
    step_rules=(*step_rules.COMMON, step_rules.no_token_type_row, *dropouts.in_step(dropouts.ENCODER)),
    switches=(common.tied("mlm-head"), common.CROSS_ATTENTION),
    peft=arch.PeftDefaults(
        lora=("query", "value"), ia3=("key", "value", "output.dense"), feedforward=("output.dense",)
    ),
    ground_truth=GroundTruth(
        draws=DRAWS,
        # A segment table of no rows with a vocabulary the padding id fits.
        pinned=(Pinned("base", {"hidden_size": 8, "num_attention_heads": 2, "type_vocab_size": 0, "vocab_size": 40}),),
        sentence_label="next_sentence_label",
    ),
)
