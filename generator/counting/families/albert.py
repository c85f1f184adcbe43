"""ALBERT (transformers ``model_type`` "albert"): modeling_albert.py in transformers 5.23.

Registration order follows the ``__init__`` of AlbertEmbeddings, AlbertTransformer (the
embedding projection, then ``albert_layer_groups``), AlbertLayer (its own LayerNorm first,
then attention, ffn, ffn_output), the pooler and the heads. The stored encoder is
``num_hidden_groups`` groups of ``inner_group_num`` layers each; AlbertTransformer.forward
runs ``num_hidden_layers`` steps over them, so the depth L never changes what is stored.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import head_is, ne
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.blocks import factorized
from generator.counting.families.symbols import symbols
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import b, layer_norm, linear
from generator.counting.poly import Poly
from generator.counting.switches import Rule

E, H, C, A = (Poly.symbol(name) for name in "EHCA")
# ALBERT's heads drop out with classifier_dropout_prob, not BERT's classifier_dropout.
CLASSIFIER_DROPOUT = ops.probability("classifier_dropout_prob")

SYMBOLS = symbols(
    "VPT",
    arch.Symbol("E", "embedding_size", minimum=0),
    "HIL",  # L counts the steps over the stored groups (its meaning is ALBERT's own)
    arch.Symbol("G", "num_hidden_groups"),
    arch.Symbol("K", "inner_group_num"),
    "AC",
)


def _embeddings(prefix: str) -> tuple[arch.Block, ...]:
    tables = common.bert_embeddings(prefix, E)
    # AlbertTransformer registers the projection before its layer groups; it always exists,
    # even when E equals H.
    return tables, factorized.block(f"{prefix}encoder.", factorized.projection("embedding_hidden_mapping_in"))


def _shared_layer(prefix: str) -> arch.Block:
    modules = (
        layer_norm("full_layer_layer_norm", "output-layernorm", H),
        *common.query_key_value(("attention.query", "attention.key", "attention.value")),
        common.attention_output("attention.dense"),
        layer_norm("attention.LayerNorm", "attention-layernorm", H, writes="ffn input"),
        *common.feed_forward("ffn", "ffn_output"),
    )
    # Its residual connections, and its output, into full_layer_layer_norm (registered first).
    joins = (
        arch.Join(("attention.output_dropout output", common.LAYER_INPUT), "attention.LayerNorm input"),
        arch.Join(("ffn_output output", "ffn input"), "full_layer_layer_norm input"),
    )
    return arch.Block(
        "layer",
        arch.Kind.ENCODER,
        f"{prefix}encoder.albert_layer_groups.{{0}}.albert_layers.{{1}}.",
        modules,
        repeat=("G", "K"),
        applied="L",
        # AlbertLayer drops out the attention's output only; its feed-forward output goes straight
        # into full_layer_layer_norm.
        ops=(
            ops.attention("attention", H, A, "attention_probs_dropout_prob", writes="attention.dense input"),
            common.attention_output_dropout("attention.output_dropout", "attention.dense"),
            common.feed_forward_activation("activation"),
        ),
        joins=joins,
        inputs=((common.LAYER_INPUT, common.HIDDEN),),
        outputs=(("full_layer_layer_norm output", common.HIDDEN),),
    )


def _backbone(prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    blocks = (*_embeddings(prefix), _shared_layer(prefix))
    # AlbertModel.pooler is a bare nn.Linear, not a module holding a "dense".
    dense = linear("pooler", "pooler-dense", H, H, rows=b, saves=common.ENCODER_OUTPUT)
    tanh = ops.tanh("pooler_activation", "pooler-tanh", (b, H), common.POOLED_OUTPUT.key, reads=dense.writes)
    flow = {"inputs": ((dense.reads[0], common.HIDDEN),), "outputs": ((tanh.writes, common.POOLER_OUTPUT),)}
    bare_pooler = arch.Block("pooler", arch.Kind.POOLER, prefix, (dense,), ops=(tanh,), **flow)  # type: ignore[arg-type]
    return (*blocks, bare_pooler) if pooler else blocks


def _mlm_head(on: Mapping[str, bool]) -> arch.Block:
    decoder = heads.mlm_decoder(on["tied"], "albert.embeddings.word_embeddings.weight", "predictions.bias", E)
    modules = (heads.output_bias(), *heads.narrow_transform("LayerNorm", "dense"), decoder)
    return heads.mlm_head("predictions.", modules, heads.mlm_ops("activation", E))


def _sentence_order_head() -> arch.Block:
    """AlbertSOPHead: dropout (classifier_dropout_prob) and one Linear on the pooled output, H to C."""
    saved = ops.either(CLASSIFIER_DROPOUT, arch.Saved("dropped", (b, H)), common.POOLED_OUTPUT)
    return arch.Block(
        "sop-head",
        arch.Kind.HEAD,
        "sop_classifier.",
        (linear("classifier", "sentence-order-classifier", H, C, rows=b, saves=saved, writes="logits"),),
        ops=(
            ops.dropout(
                "dropout",
                "classifier-dropout",
                (b, H),
                CLASSIFIER_DROPOUT,
                reads=common.POOLED_OUTPUT.key,
                writes="dropped",
            ),
            ops.cross_entropy("loss", "sentence-order-loss", b, C, ops.SENTENCE_LABELS),
        ),
        inputs=((common.POOLED_OUTPUT.key, common.POOLER_OUTPUT),),
    )


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers ALBERT class for this head."""
    on_top = {
        **heads.bert_heads(functools.partial(_mlm_head, on), _sentence_order_head),
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.classifier_head(CLASSIFIER_DROPOUT),),
    }
    return common.assemble("Albert", "albert.", head, _backbone, on_top)


# ALBERT builds its shared group whatever the number of layers, but runs it only with layers; its
# sentence-order head and its classifier each have a dropout of their own.
_OWN_HEADS = head_is(arch.Head.SEQUENCE_CLASSIFICATION.value, arch.Head.PRETRAINING.value)
DROPOUT_RANGES = (
    dropouts.dropout_range("hidden_dropout_prob"),
    dropouts.dropout_range("attention_probs_dropout_prob"),
    dropouts.dropout_range("classifier_dropout_prob", _OWN_HEADS),
)
DROPOUT_STEPS = dropouts.in_step(
    (
        ("hidden_dropout_prob", None),
        ("attention_probs_dropout_prob", dropouts.with_layers()),
        ("classifier_dropout_prob", _OWN_HEADS),
    )
)

# AlbertForPreTraining reads its sentence-order logits in pairs (sop_scores.view(-1, 2)) against one
# label a sequence: with any other number of labels the two no longer match.
SENTENCE_PAIRS = 2
sentence_order_pairs = Rule(
    "sentence-order-pairs",
    head_is(arch.Head.PRETRAINING.value) & ne("num_labels", SENTENCE_PAIRS),
    ("num_labels",),
)

FAMILY = arch.Family(
    name="albert",
    symbols=SYMBOLS,
    declare=declare,
    build_rules=(
        common.heads_divide_hidden_unchecked,
        common.padding_in_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *DROPOUT_RANGES,
        *activations.rules("albert"),
    ),
    step_rules=(*step_rules.COMMON, step_rules.no_token_type_row, sentence_order_pairs, *DROPOUT_STEPS),
    switches=(common.tied("mlm-head"),),
    ground_truth=GroundTruth(
        draws={
            "type_vocab_size": ((1, 2), (0,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "pad_token_id": ((0, 3), (None, 40)),
            "embedding_size": ((4, 8), (ABSENT, 0)),
            "num_hidden_groups": ((1, 2), (ABSENT, 0, -1)),
            "inner_group_num": ((1, 2), (ABSENT, 0, -1)),
        },
        rare=("num_hidden_groups", "inner_group_num"),
        sentence_label="sentence_order_label",
        sentence_label_pairs=SENTENCE_PAIRS,
    ),
)
