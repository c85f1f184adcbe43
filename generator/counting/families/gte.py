"""GTE (transformers ``model_type`` "gte"): modeling_gte.py in transformers 5.23, Alibaba's multilingual GTE.

NomicBERT's model (``nomic_bert.py``) with biases and RoBERTa's masked-LM head. GteAttention's four
Linears have a bias, and so does GteMLP's ``down_proj``; the MLP also drops out the gate's product.
GteEmbeddings builds no segment table when type_vocab_size is 0. The masked-LM head is ``lm_head``
(``dense``, gelu whatever hidden_act says, ``layer_norm``, a ``decoder`` with its own bias), with
no bias of the head's own. Only the classifier's class builds the pooler. There is no ``head_dim``
key: heads are ⌊H/A⌋ wide.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting.conditions import gt
from generator.counting.families import activations, common, heads, nomic_bert
from generator.counting.families.blocks import rotary
from generator.counting.families.symbols import symbols
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import linear
from generator.counting.poly import Poly
from generator.counting.switches import Switch

H, V = Poly.symbol("H"), Poly.symbol("V")

SYMBOLS = symbols("VTHILA", nomic_bert.HEAD_SIZE_SYMBOL, "C")

BACKBONE = "gte."  # the attribute every head class stores the encoder under


def _backbone(on: Mapping[str, bool], prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    width = Poly.symbol("A") * nomic_bert.HEAD_SIZE if on["uneven_heads"] else H
    stack = nomic_bert.layer(prefix, width, nomic_bert.HEAD_SIZE, bias=True, mlp_dropout=True)
    return nomic_bert.backbone(nomic_bert.embeddings(prefix, segments=on["segments"]), stack, prefix, pooler)


def _lm_head(on: Mapping[str, bool]) -> arch.Block:
    """GteLMHead: dense, gelu, layer_norm, and a decoder with its own bias (its weight the token table when tied)."""
    if on["tied"]:
        decoder = linear(
            "decoder", "decoder-tied", H, V, tied_to=f"{BACKBONE}embeddings.word_embeddings.weight", writes="logits"
        )
    else:
        decoder = linear("decoder", "decoder-untied", H, V, writes="logits")
    modules = (*heads.mlm_transform("dense", "layer_norm", bias=False), decoder)
    return heads.mlm_head("lm_head.", modules, heads.mlm_ops("gelu", key="gelu", fixed=True))


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers GTE class for this head (only the classifier is pooled)."""
    on_top = {
        arch.Head.MASKED_LM: lambda: (_lm_head(on),),
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.classifier_head(),),
    }
    return common.assemble(
        "Gte",
        BACKBONE,
        head,
        functools.partial(_backbone, on),
        on_top,
        pooled=frozenset({arch.Head.SEQUENCE_CLASSIFICATION}),
    )


FAMILY = arch.Family(
    name="gte",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    build_rules=(
        nomic_bert.zero_head_size(own=False),
        common.padding_in_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *nomic_bert.BUILD_DROPOUTS,
        *activations.rules("gte"),
    ),
    step_rules=nomic_bert.step_rules_for(nomic_bert.odd_head_size),
    switches=(
        common.tied("mlm-head"),
        Switch("segments", gt("type_vocab_size", 0), ("embeddings",)),
        Switch("uneven_heads", nomic_bert.UNEVEN_HEADS, ("layer",)),
    ),
    ground_truth=GroundTruth(
        draws={
            "type_vocab_size": ((1, 2), (0,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "pad_token_id": ((0, 3), (None,)),
        },
        # The cos and sin tables are made afresh each step for s positions: no cache to outgrow.
        lengths=rotary.interior_lengths,
    ),
)
