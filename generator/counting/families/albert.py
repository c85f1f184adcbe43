"""ALBERT (transformers ``model_type`` "albert"): modeling_albert.py in transformers 5.23.

Registration order follows the ``__init__`` of AlbertEmbeddings, AlbertTransformer (the
embedding projection, then ``albert_layer_groups``), AlbertLayer (its own LayerNorm first,
then attention, ffn, ffn_output), the pooler and the heads. The stored encoder is
``num_hidden_groups`` groups of ``inner_group_num`` layers each; AlbertTransformer.forward
runs ``num_hidden_layers`` steps over them, so the depth L never changes what is stored.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.counting import ops
from generator.counting.architecture import Architecture, Block, Family, Head, Kind, Module, Param, Part, Saved, Symbol
from generator.counting.conditions import div, mod, mul, ne
from generator.counting.families import common
from generator.counting.families.symbols import shared, symbols
from generator.counting.layouts import b, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule

V, P, T, E, H, I, C, A = (Poly.symbol(name) for name in "VPTEHICA")

SYMBOLS = symbols(
    "VPT",
    Symbol("E", "embedding_size", "embedding width (the tables are E wide, then projected to H)", minimum=0),
    "HI",
    shared("L", meaning="layer steps the encoder runs (reusing the stored groups)"),
    Symbol("G", "num_hidden_groups", "stored groups of layers (shared across depth)"),
    Symbol("K", "inner_group_num", "stored layers inside each group"),
    "A",
    shared("C", meaning="classification labels (also the sentence-order classes)"),
)


def _embeddings(prefix: str) -> tuple[Block, ...]:
    tables = common.bert_embeddings(prefix, E)
    # AlbertTransformer registers the projection before its layer groups; it always exists,
    # even when E equals H.
    projection = Block(
        "embedding-projection",
        "embedding projection",
        Kind.EMBEDDINGS,
        f"{prefix}encoder.",
        (linear("embedding_hidden_mapping_in", "E to H projection", E, H, part=Part.EMBEDDINGS),),
    )
    return tables, projection


def _shared_layer(prefix: str) -> Block:
    modules = (
        layer_norm("full_layer_layer_norm", "output LayerNorm", H),
        linear("attention.query", "query", H, H, heads="A", part=Part.ATTENTION, saves="layer input"),
        linear("attention.key", "key", H, H, heads="A", part=Part.ATTENTION, saves="layer input"),
        linear("attention.value", "value", H, H, heads="A", part=Part.ATTENTION, saves="layer input"),
        linear("attention.dense", "attention output", H, H, part=Part.ATTENTION),
        layer_norm("attention.LayerNorm", "attention LayerNorm", H),
        linear("ffn", "feed-forward in", H, I, part=Part.FEED_FORWARD),
        linear("ffn_output", "feed-forward out", I, H, part=Part.FEED_FORWARD, saves="feed-forward activated"),
    )
    # AlbertLayer drops out the attention's output only; its feed-forward output goes straight
    # into full_layer_layer_norm.
    layer_ops = (
        ops.attention("attention", H, A, "attention_probs_dropout_prob"),
        ops.dropout("attention.output_dropout", "attention output dropout", (b, s, H), common.HIDDEN_DROPOUT),
        ops.activation(
            "activation",
            "feed-forward activation",
            "hidden_act",
            (b, s, I),
            before="feed-forward hidden",
            after="feed-forward activated",
        ),
    )
    return Block(
        "layer",
        "shared encoder layer",
        Kind.ENCODER,
        f"{prefix}encoder.albert_layer_groups.{{0}}.albert_layers.{{1}}.",
        modules,
        repeat=("G", "K"),
        applied="L",
        ops=layer_ops,
    )


def _backbone(prefix: str, *, pooler: bool) -> tuple[Block, ...]:
    blocks = (*_embeddings(prefix), _shared_layer(prefix))
    if pooler:
        # AlbertModel.pooler is a bare nn.Linear, not a module holding a "dense".
        dense = linear("pooler", "pooler dense", H, H, rows=b, saves=common.ENCODER_OUTPUT)
        tanh = ops.tanh("pooler_activation", "pooler tanh", (b, H), common.POOLED.key)
        blocks += (Block("pooler", "pooler", Kind.POOLER, prefix, (dense,), ops=(tanh,)),)
    return blocks


def _mlm_head(on: Mapping[str, bool]) -> Block:
    decoder = common.mlm_decoder(on["tied"], "albert.embeddings.word_embeddings.weight", "predictions.bias", E)
    modules = (
        Module("", "output bias", (Param("bias", (V,), "bias"),)),
        layer_norm("LayerNorm", "transform LayerNorm", E, saves="transform activated"),
        linear("dense", "transform dense (H to E)", H, E, saves=common.ENCODER_OUTPUT),
        decoder,
    )
    mlm_ops = common.mlm_ops("activation", E)
    return Block("mlm-head", "masked-LM head", Kind.HEAD, "predictions.", modules, ops=mlm_ops)


def _sentence_order_head() -> Block:
    """AlbertSOPHead: dropout (classifier_dropout_prob) and one Linear on the pooled output, H to C."""
    acts = ops.probability("classifier_dropout_prob")
    kept = ops.either(acts, Saved("dropped", (b, H)), common.POOLED)
    return Block(
        "sop-head",
        "sentence-order head",
        Kind.HEAD,
        "sop_classifier.",
        (linear("classifier", "sentence-order classifier", H, C, rows=b, saves=kept),),
        ops=(
            ops.dropout("dropout", "classifier dropout", (b, H), acts),
            ops.cross_entropy("loss", "sentence-order loss", b, C, ops.SENTENCE_LABELS),
        ),
    )


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers ALBERT class for this head."""
    if head is Head.BASE:
        return Architecture("AlbertModel", _backbone("", pooler=True))
    if head is Head.PRETRAINING:
        sop = _sentence_order_head()
        return Architecture("AlbertForPreTraining", (*_backbone("albert.", pooler=True), _mlm_head(on), sop))
    if head is Head.MASKED_LM:
        return Architecture("AlbertForMaskedLM", (*_backbone("albert.", pooler=False), _mlm_head(on)))
    classifier = common.classifier_head(ops.probability("classifier_dropout_prob"))
    return Architecture("AlbertForSequenceClassification", (*_backbone("albert.", pooler=True), classifier))


# AlbertAttention's own check never fires (an AlbertConfig always has embedding_size), so
# transformers builds A·⌊H/A⌋-wide query/key/value that its forward pass cannot use.
_heads_divide_hidden = Rule(
    ne(mod("hidden_size", "num_attention_heads"), 0),
    "the hidden size ({hidden_size}) is not a multiple of the number of attention heads ({num_attention_heads}); "
    "transformers would build {built}-wide query, key and value projections that its forward pass cannot use",
    ("hidden_size", "num_attention_heads"),
    values=(("built", mul("num_attention_heads", div("hidden_size", "num_attention_heads"))),),
)


DIFFERENCES = (
    "**Factorized embeddings.** The token, position and segment tables are *E* wide instead of *H*, "
    "and one linear layer, `encoder.embedding_hidden_mapping_in`, projects them up to *H*. The "
    "vocabulary costs *V*·*E* + *E*·*H* instead of *V*·*H*; with *E* = 128 and *H* = 4096 that is "
    "less than a twentieth of the table a BERT of the same width would carry. The projection exists "
    "even when *E* equals *H*.",
    "**Cross-layer sharing.** The encoder stores *G* (`num_hidden_groups`) groups of *K* "
    "(`inner_group_num`) layers and counts each stored layer once. The forward pass runs *L* "
    "(`num_hidden_layers`) steps; step *i* uses group ⌊*i*·*G*/*L*⌋ and runs its *K* layers in turn. "
    "*L* therefore sets the computation, not the parameter count: the encoder term is "
    "*G*·*K*·(one layer), and *L* appears nowhere in the total. The published checkpoints use "
    "*G* = *K* = 1, one layer applied *L* times.",
    "**Layer layout.** Each layer has the same tensors as a BERT layer (so one layer is the same "
    "4*H*² + 2*HI* + 9*H* + *I*), under other names: `attention.dense` is the attention output, "
    "`ffn` and `ffn_output` the feed-forward pair, `full_layer_layer_norm` the closing LayerNorm, "
    "which transformers registers first.",
    "**Heads.** The pooler is a bare linear layer (`albert.pooler`). The masked-LM head maps *H* "
    "down to *E* before the tied decoder, so its transform costs *H*·*E* + 3*E* rather than "
    "*H*² + 3*H*. Pre-training replaces next-sentence prediction with sentence-order prediction, "
    "a linear layer sized by `num_labels` (2 unless the config says otherwise).",
)


FAMILY = Family(
    name="albert",
    title="ALBERT",
    symbols=SYMBOLS,
    heads=(Head.BASE, Head.PRETRAINING, Head.MASKED_LM, Head.SEQUENCE_CLASSIFICATION),
    declare=declare,
    flag_keys=("tie_word_embeddings",),
    differences=DIFFERENCES,
    checks=(_heads_divide_hidden, common.padding_in_vocabulary),
    switches=(common.tied("mlm-head"),),
)
