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

import functools
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting.conditions import Condition, is_null, le, sub
from generator.counting.families import activations, bert, common, dropouts, heads, step_rules
from generator.counting.families.symbols import symbols
from generator.counting.flow import own, param
from generator.counting.ground_truth import GroundTruth, Pinned
from generator.counting.layouts import INPUT_IDS, TOKENS, b, s
from generator.counting.poly import Poly
from generator.counting.switches import FirstOf, Rule

V, H = (Poly.symbol(s) for s in "VH")

SYMBOLS = symbols("VPTHILAC")

BACKBONE = "roberta."  # the attribute every head class stores the encoder under
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"
DECODER = "lm_head.decoder.weight"


def embeddings(prefix: str, *, word_tied_to: str | None = None, norm: bool = True) -> arch.Block:
    """RobertaEmbeddings: token, segment and position tables, with a LayerNorm unless ``norm`` is false
    (XLM-RoBERTa-XL's embeddings have none)."""
    # position_embeddings comes last: RobertaEmbeddings.__init__ creates it after the LayerNorm.
    if word_tied_to is None:
        words = common.token_table(H)
    else:
        words = arch.Module(
            "word_embeddings",
            "token-embeddings-listed-first-as-the-decoder",
            (arch.Tie("weight", word_tied_to, "masked-lm-decoder-weight", arch.Layer.EMBEDDING),),
            saved=(INPUT_IDS,),
            writes="word_embeddings output",
            lookups=TOKENS,
        )
    # RobertaEmbeddings makes new (b, s) id tensors for the token types and for the positions
    # (numbered from the padding index), and the tables keep them.
    types = common.segment_table(H, arch.Saved("token types", (b, s), arch.Dtype.INT64))
    positions = common.position_table(H, ids=arch.Saved("position ids", (b, s), arch.Dtype.INT64))
    normed = (common.embedding_norm(H),) if norm else ()
    return common.embeddings_block(prefix, (words, types, *normed, positions))


def _backbone(on: Mapping[str, bool], word_tied_to: str | None, prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    blocks = (embeddings(prefix, word_tied_to=word_tied_to), common.bert_encoder_layer(on, prefix))
    return (*blocks, common.bert_pooler(prefix)) if pooler else blocks


def _lm_head(on: Mapping[str, bool], *, heads_first: bool, attribute: str) -> tuple[arch.Block, ...]:
    """RobertaLMHead: its own ``bias`` first, then dense, layer_norm and the decoder."""
    modules = heads.mlm_transform("dense", "layer_norm")
    # RobertaLMHead applies gelu whatever hidden_act says.
    head_ops = heads.mlm_ops("gelu", key="gelu", fixed=True)
    if not (heads_first and on["tied"]):
        decoder = heads.mlm_decoder(on["tied"], attribute + WORD_EMBEDDINGS, "lm_head.bias", H)
        return (heads.mlm_head("lm_head.", (*modules, decoder), head_ops),)
    # The head comes first, so the shared vocabulary matrix is first listed as the decoder's
    # weight: it is counted there, but it is the token embedding table, so it is an embedding.
    # Its flow is the head's: it reads the transform's output and writes the logits the loss reads.
    weight = param("decoder.weight")
    shared = (
        arch.Module(
            "decoder",
            "token-embeddings-decoder-weight",
            (arch.Param("weight", (V, H), "table", layer=arch.Layer.LINEAR),),
            part=arch.Part.EMBEDDINGS,
            products=(arch.Product("decoder-tied", TOKENS, V, H, operands=((own(0),), (weight,))),),
            saved=(arch.Saved("decoder input", (TOKENS, H), needs=(weight,)),),
            reads=("decoder input",),
            writes="logits",
        ),
        arch.Module(
            "decoder", "decoder-bias-tied", (arch.Tie("bias", "lm_head.bias", "output-bias", arch.Layer.LINEAR),)
        ),
    )
    return (
        heads.mlm_head("lm_head.", modules, head_ops),
        arch.Block("shared-embeddings", arch.Kind.EMBEDDINGS, "lm_head.", shared),
    )


def roberta_like(
    on: Mapping[str, bool],
    head: arch.Head,
    *,
    stem: str,
    heads_first: bool,
    attribute: str = BACKBONE,
    backbone: common.Backbone | None = None,
    classifier_dropout: Condition | None = None,
) -> arch.Architecture:
    """Declare a RoBERTa-style class; ``heads_first`` when the head is registered before the backbone.

    ``attribute`` is where the head classes store the backbone; ``backbone`` replaces RoBERTa's own
    embeddings and layers, for a class that keeps RoBERTa's heads only (XLM-RoBERTa-XL's).
    ``classifier_dropout`` is the classifier's dropout where it is not ``classifier_dropout``'s.
    """
    tied_first = head is arch.Head.MASKED_LM and heads_first and on["tied"]
    if backbone is None:
        backbone = functools.partial(_backbone, on, DECODER if tied_first else None)
    on_top = {
        arch.Head.MASKED_LM: lambda: _lm_head(on, heads_first=heads_first, attribute=attribute),
        # On the first token: no pooler.
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.dense_classifier("tanh", classifier_dropout),),
    }
    return common.assemble(
        stem, attribute, head, backbone, on_top, pooled=frozenset({arch.Head.BASE}), heads_first=heads_first
    )


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers RoBERTa class for this head."""
    return roberta_like(on, head, stem="Roberta", heads_first=False)


# Both tables are nn.Embedding(..., padding_idx=pad_token_id), which asserts that the index is a row.
padding_fits_tables = FirstOf((common.padding_fits("vocab_size"), common.padding_fits("max_position_embeddings")))

# RobertaEmbeddings numbers the positions from the padding index (input_ids.ne(padding_idx)), which
# raises on a null: the model is built (nn.Embedding takes padding_idx=None), but no step runs.
# Its first token takes position pad_token_id + 1, so a table of no more rows than that holds no token: a
# step of real tokens indexes past it. (The reference's input_ids are all the padding id, whose positions
# are all pad_token_id: such a step ran there, as a step with no token type row runs on the meta device.)
no_token_position = Rule(
    "roberta-no-token-position",
    le(sub("max_position_embeddings", "pad_token_id"), 1),
    ("max_position_embeddings", "pad_token_id"),
)
STEP_RULES = (
    *step_rules.COMMON,
    step_rules.no_token_type_row,
    Rule(
        "roberta-null-padding",
        is_null("pad_token_id"),
        ("pad_token_id",),
    ),
    no_token_position,
    *dropouts.in_step(dropouts.ENCODER),
)

FAMILY = arch.Family(
    name="roberta",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    build_rules=(
        *common.LAYER_RULES,
        padding_fits_tables,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(dropouts.ENCODER),
        *activations.rules("roberta"),
    ),
    step_rules=STEP_RULES,
    switches=(common.tied("mlm-head", "shared-embeddings", "embeddings"), common.CROSS_ATTENTION),
    positions_after="pad_token_id",  # create_position_ids_from_input_ids: padding_idx + 1 onwards
    peft=bert.FAMILY.peft,  # peft lists the same modules for both
    ground_truth=GroundTruth(
        draws=bert.DRAWS,
        # A classifier on the first token, with a vocabulary the padding id fits.
        pinned=(Pinned("sequence-classification", {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40}),),
    ),
)
