"""RoBERTa (transformers ``model_type`` "roberta"): modeling_roberta.py in transformers 5.23.

The encoder layer is BERT's, tensor for tensor. What differs is in the embeddings and the
heads: RobertaEmbeddings registers ``word_embeddings``, ``token_type_embeddings`` and
``LayerNorm`` before ``position_embeddings``; the masked-LM head is ``lm_head`` (with
``layer_norm``, not ``LayerNorm``); the classification head is a dense layer and an
``out_proj`` on the first token, and the pooler is dropped for both heads.

XLM-RoBERTa (``xlm_roberta.py``) is generated from the same source (modular_xlm_roberta.py)
and declares itself with ``roberta_like`` below; the only difference there is that its heads are
registered before the backbone.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.counting import ops
from generator.counting.architecture import (
    Architecture,
    Block,
    Dtype,
    Family,
    Head,
    Kind,
    Module,
    Param,
    Part,
    Product,
    Saved,
    Tie,
)
from generator.counting.families import common
from generator.counting.families.symbols import symbols
from generator.counting.layouts import INPUT_IDS, TOKENS, b, embedding, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import FirstOf

V, P, T, H, I, C = (Poly.symbol(s) for s in "VPTHIC")

SYMBOLS = symbols(
    "VPTHILAC",
)

BACKBONE = "roberta."  # the attribute every head class stores the encoder under
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"
DECODER = "lm_head.decoder.weight"


def _embeddings(prefix: str, *, word_tied_to: str | None) -> Block:
    # position_embeddings comes last: RobertaEmbeddings.__init__ creates it after the LayerNorm.
    if word_tied_to is None:
        words = embedding("word_embeddings", "token embeddings", V, H)
    else:
        words = Module(
            "word_embeddings",
            "token embeddings (listed first as the decoder)",
            (Tie("weight", word_tied_to, "is the masked-LM decoder weight"),),
            saved=(INPUT_IDS,),
        )
    # RobertaEmbeddings makes new (b, s) id tensors for the token types and for the positions
    # (numbered from the padding index), and the tables keep them.
    modules = (
        words,
        embedding(
            "token_type_embeddings", "segment embeddings", T, H, ids=Saved("token type ids", (b, s), Dtype.INT64)
        ),
        layer_norm("LayerNorm", "embedding LayerNorm", H),
        embedding("position_embeddings", "position embeddings", P, H, ids=Saved("position ids", (b, s), Dtype.INT64)),
    )
    dropout = ops.dropout("dropout", "embedding dropout", (b, s, H), common.HIDDEN_DROPOUT)
    return Block("embeddings", "embeddings", Kind.EMBEDDINGS, f"{prefix}embeddings.", modules, ops=(dropout,))


def _backbone(
    on: Mapping[str, bool], prefix: str, *, pooler: bool, word_tied_to: str | None = None
) -> tuple[Block, ...]:
    blocks: tuple[Block, ...] = (_embeddings(prefix, word_tied_to=word_tied_to), common.bert_encoder_layer(on, prefix))
    if pooler:
        blocks += (common.bert_pooler(prefix),)
    return blocks


def _lm_head(on: Mapping[str, bool], *, heads_first: bool) -> tuple[Block, ...]:
    """RobertaLMHead: its own ``bias`` first, then dense, layer_norm and the decoder."""
    modules = common.mlm_transform("dense", "layer_norm")
    # RobertaLMHead applies gelu whatever hidden_act says.
    mlm_ops = common.mlm_ops("gelu", key="gelu", fixed=True)
    if not on["tied"]:
        untied = linear("decoder", "decoder (untied)", H, V)
        head = Block("mlm-head", "masked-LM head", Kind.HEAD, "lm_head.", (*modules, untied), ops=mlm_ops)
        return (head,)
    bias = Tie("bias", "lm_head.bias", "is the output bias")
    if not heads_first:
        decoder = Module(
            "decoder",
            "decoder (tied)",
            (Tie("weight", BACKBONE + WORD_EMBEDDINGS, "reuses the token embeddings"), bias),
            products=(Product("decoder (tied)", TOKENS, V, H),),
            saved=(Saved("decoder input", (TOKENS, H)),),
        )
        return (Block("mlm-head", "masked-LM head", Kind.HEAD, "lm_head.", (*modules, decoder), ops=mlm_ops),)
    # The head comes first, so the shared vocabulary matrix is first listed as the decoder's
    # weight: it is counted there, but it is the token embedding table, so it is an embedding.
    shared = (
        Module(
            "decoder",
            "token embeddings (decoder weight)",
            (Param("weight", (V, H), "table"),),
            part=Part.EMBEDDINGS,
            products=(Product("decoder (tied)", TOKENS, V, H),),
            saved=(Saved("decoder input", (TOKENS, H)),),
        ),
        Module("decoder", "decoder bias (tied)", (bias,)),
    )
    return (
        Block("mlm-head", "masked-LM head", Kind.HEAD, "lm_head.", modules, ops=mlm_ops),
        Block("shared-embeddings", "shared token embeddings", Kind.EMBEDDINGS, "lm_head.", shared),
    )


def _classifier() -> Block:
    """RobertaClassificationHead: dense + tanh on the first token, then out_proj."""
    return common.token_classifier("classifier.", "tanh")


def roberta_like(on: Mapping[str, bool], head: Head, *, class_prefix: str, heads_first: bool) -> Architecture:
    """Declare a RoBERTa-style class; ``heads_first`` when the head is registered before the backbone."""
    if head is Head.BASE:
        return Architecture(f"{class_prefix}Model", _backbone(on, "", pooler=True))
    if head is Head.MASKED_LM:
        lm_head = _lm_head(on, heads_first=heads_first)
        tied_first = heads_first and on["tied"]
        backbone = _backbone(on, BACKBONE, pooler=False, word_tied_to=DECODER if tied_first else None)
        blocks = (*lm_head, *backbone) if heads_first else (*backbone, *lm_head)
        return Architecture(f"{class_prefix}ForMaskedLM", blocks)
    classifier = _classifier()
    backbone = _backbone(on, BACKBONE, pooler=False)
    blocks = (classifier, *backbone) if heads_first else (*backbone, classifier)
    return Architecture(f"{class_prefix}ForSequenceClassification", blocks)


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers RoBERTa class for this head."""
    return roberta_like(on, head, class_prefix="Roberta", heads_first=False)


# Both tables are nn.Embedding(..., padding_idx=pad_token_id), which asserts that the index is a row.
padding_fits_tables = FirstOf((common.padding_fits("vocab_size"), common.padding_fits("max_position_embeddings")))


DIFFERENCES = (
    "**The same encoder, different embeddings.** Every encoder layer holds exactly the tensors of a BERT "
    "layer, so the per-layer formula is unchanged. The differences are in the tables the layers read from.",
    "**Position table with a padding offset (P = 514 in the published models).** RoBERTa numbers the "
    "positions of real tokens from `pad_token_id + 1` = 2 onwards: padding tokens all look up row 1 (the "
    "padding row, which gets no gradient) and row 0 is never read. To serve 512 tokens the table needs "
    "514 rows, two more than BERT's. Both extra rows are stored parameters like any other: 2H more.",
    "**One token type (T = 1).** RoBERTa drops next-sentence prediction and segment ids, but transformers "
    "still builds a `token_type_embeddings` table, of a single row: H parameters instead of BERT's 2H.",
    "**A much larger vocabulary.** The byte-level BPE vocabulary has V = 50,265 entries against BERT's "
    "30,522, and each entry is a row of H numbers. The extra rows, not the layers, make nearly all of the "
    "difference between RoBERTa-Base and BERT-Base.",
    "**Heads.** The masked-LM head is `lm_head` (`dense`, `layer_norm`, `decoder`, and its own `bias` listed "
    "first). With `tie_word_embeddings` (the default) the decoder weight is the token embedding table and "
    "the decoder bias is `lm_head.bias`: both are counted once, elsewhere. The classification head "
    "(`classifier.dense` and `classifier.out_proj`) reads the first token directly, so "
    "`RobertaForMaskedLM` and `RobertaForSequenceClassification` have no pooler.",
)

FAMILY = Family(
    name="roberta",
    title="RoBERTa",
    symbols=SYMBOLS,
    heads=(Head.BASE, Head.MASKED_LM, Head.SEQUENCE_CLASSIFICATION),
    declare=declare,
    flag_keys=("tie_word_embeddings", "add_cross_attention", "is_decoder"),
    differences=DIFFERENCES,
    checks=(*common.LAYER_RULES, padding_fits_tables),
    switches=(common.tied("mlm-head", "shared-embeddings", "embeddings"), common.CROSS_ATTENTION),
)
