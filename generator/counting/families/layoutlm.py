"""LayoutLM (transformers ``model_type`` "layoutlm"): modeling_layoutlm.py in transformers 5.23.

BERT's layers with 2-D positions. LayoutLMEmbeddings registers four more tables between the
position table and the segment table: ``x_position_embeddings``, ``y_position_embeddings``,
``h_position_embeddings`` and ``w_position_embeddings``, each D rows (``max_2d_position_embeddings``)
and H wide. Its forward adds six rows to every token: x for the box's left and right edges, y for
its top and bottom, h for its height and w for its width.

Three things differ from BERT besides. The model takes boxes, ``bbox`` (b, s, 4); a step with
``input_ids`` alone gets boxes of zeros, made in the forward as any boxes would be given, so the
figures are a real step's. LayoutLMModel always keeps its pooler, so LayoutLMForMaskedLM runs it
and keeps its output although the loss never reads it: its product has no backward. The
attention's softmax runs in fp32 and is cast back, and the classifier drops out with the hidden
dropout. There is no pre-training class and no cross-attention.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import eq
from generator.counting.families import activations, bert, common, dropouts, heads, step_rules
from generator.counting.families.symbols import symbols
from generator.counting.ground_truth import GroundTruth
from generator.counting.layouts import b, embedding, layer_norm, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule

D, H = Poly.symbol("D"), common.H

SYMBOLS = symbols("VP", arch.Symbol("D", "max_2d_position_embeddings", minimum=0), "THILAC")

# The boxes (b, s, 4): the x and y tables look up views of them, one storage both keep.
BOXES = arch.Saved("boxes", (b, s, Poly.constant(4)), arch.Dtype.INT64)
# LayoutLMModel.forward makes the token types, torch.zeros(input_shape): a new (b, s) tensor.
TOKEN_TYPE_IDS = arch.Saved("token type ids", (b, s), arch.Dtype.INT64)


def _embeddings(prefix: str) -> arch.Block:
    """Token and 1-D position tables, the four 2-D tables, the segment table, then the LayerNorm."""
    # Heights and widths are differences of two box columns: new (b, s) tensors their tables keep.
    heights = arch.Saved("box heights", (b, s), arch.Dtype.INT64)
    widths = arch.Saved("box widths", (b, s), arch.Dtype.INT64)
    # The x and y tables are each looked up twice, at a box's two corners.
    corners = 2 * b * s
    modules = (
        common.token_table(H),
        common.position_table(H),
        embedding("x_position_embeddings", "x-position-embeddings", D, H, ids=BOXES, lookups=corners),
        embedding("y_position_embeddings", "y-position-embeddings", D, H, ids=BOXES, lookups=corners),
        embedding("h_position_embeddings", "h-position-embeddings", D, H, ids=heights),
        embedding("w_position_embeddings", "w-position-embeddings", D, H, ids=widths),
        common.segment_table(H, TOKEN_TYPE_IDS),
        common.embedding_norm(H),
    )
    return common.embeddings_block(prefix, modules)


def _layer(prefix: str) -> arch.Block:
    """BertLayer's modules; its attention (copied from ALIGN's) runs the softmax in fp32."""
    modules = (
        *common.bert_attention("attention"),
        *common.feed_forward("intermediate.dense", "output.dense"),
        layer_norm("output.LayerNorm", "output-layernorm", H, writes="layer output"),
    )
    attention = ops.attention(
        "attention.self",
        H,
        common.A,
        "attention_probs_dropout_prob",
        float_softmax=True,
        writes="attention.output.dense input",
    )
    layer_ops = (attention, *common.bert_layer_ops()[1:])  # BERT's, the attention replaced

    return common.layers(f"{prefix}encoder.layer.{{0}}.", modules, layer_ops, common.BERT_JOINS, "layer output")


def _backbone(head: arch.Head, prefix: str, _pooler: bool) -> tuple[arch.Block, ...]:
    # LayoutLMModel builds and runs its pooler under every head.
    pooler = common.bert_pooler(prefix)
    return (_embeddings(prefix), _layer(prefix), common.unread(pooler) if head is arch.Head.MASKED_LM else pooler)


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers LayoutLM class for this head."""
    on_top = {
        arch.Head.MASKED_LM: lambda: (heads.bert_mlm_head(on, "layoutlm."),),
        # LayoutLMForSequenceClassification drops out with hidden_dropout_prob; the config has no classifier_dropout.
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.classifier_head(ops.probability("hidden_dropout_prob")),),
    }
    return common.assemble("LayoutLM", "layoutlm.", head, functools.partial(_backbone, head), on_top)


# The step's boxes are zeros, so each 2-D table is looked up at row 0: a table of 0 rows has none.
# A CPU raises IndexError; the meta device checks no index (GroundTruth.meta_blind).
no_box_row = Rule(
    "layoutlm-no-box-row",
    eq("max_2d_position_embeddings", 0),
    ("max_2d_position_embeddings",),
)

# LayoutLMConfig has no classifier_dropout: every dropout is the hidden one or the attention's.
DROPOUTS: dropouts.Dropouts = dropouts.ENCODER[:2]

FAMILY = arch.Family(
    name="layoutlm",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    build_rules=(
        common.in_every_layer(common.heads_divide_hidden),
        common.padding_in_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(DROPOUTS),
        *activations.rules("layoutlm"),
    ),
    step_rules=(*step_rules.COMMON, step_rules.no_token_type_row, no_box_row, *dropouts.in_step(DROPOUTS)),
    switches=(common.tied("mlm-head"),),
    ground_truth=GroundTruth(
        # BERT's keys but the decoder's (LayoutLMConfig has none), and the 2-D tables, of a few rows or none.
        draws={
            **{key: bert.DRAWS[key] for key in ("type_vocab_size", "tie_word_embeddings", "pad_token_id")},
            "max_2d_position_embeddings": ((4, 9), (0,)),
        },
        meta_blind=(no_box_row.name,),
    ),
    peft=arch.PeftDefaults(lora=("query", "value")),  # peft has no IA³ default for it
)
