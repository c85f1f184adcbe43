"""DistilBERT (transformers ``model_type`` "distilbert"): modeling_distilbert.py in transformers 5.23.

Registration order follows ``Embeddings`` (word, position, LayerNorm: no token types),
``TransformerBlock`` (DistilBertSelfAttention's q_lin, k_lin, v_lin, out_lin, then
sa_layer_norm, FFN's lin1 and lin2, output_layer_norm) and the heads, which the head classes
create after the ``distilbert`` backbone. There is no pooler.

The config keys are DistilBERT's own: ``dim``, ``n_layers``, ``n_heads`` and ``hidden_dim``
(the feed-forward size, not the hidden size).
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.counting import ops
from generator.counting.architecture import (
    Architecture,
    Block,
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
from generator.counting.conditions import mod, ne
from generator.counting.families import common
from generator.counting.families.symbols import shared, symbols
from generator.counting.layouts import TOKENS, b, embedding, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule

V, P, H, I, C, A = (Poly.symbol(name) for name in "VPHICA")
DROPOUT = ops.probability("dropout")

SYMBOLS = symbols(
    "VP",
    shared("H", key="dim"),
    shared("I", key="hidden_dim"),
    shared("L", key="n_layers"),
    shared("A", key="n_heads"),
    "C",
)

WORD_EMBEDDINGS = "distilbert.embeddings.word_embeddings.weight"


def _backbone(prefix: str) -> tuple[Block, ...]:
    embeddings = Block(
        "embeddings",
        "embeddings",
        Kind.EMBEDDINGS,
        f"{prefix}embeddings.",
        (
            embedding("word_embeddings", "token embeddings", V, H),
            embedding("position_embeddings", "position embeddings", P, H, ids=None),  # a view of position_ids
            layer_norm("LayerNorm", "embedding LayerNorm", H),
        ),
        ops=(ops.dropout("dropout", "embedding dropout", (b, s, H), DROPOUT),),
    )
    layer = Block(
        "layer",
        "transformer block",
        Kind.ENCODER,
        f"{prefix}transformer.layer.{{0}}.",
        (
            linear("attention.q_lin", "query", H, H, heads="A", part=Part.ATTENTION, saves="layer input"),
            linear("attention.k_lin", "key", H, H, heads="A", part=Part.ATTENTION, saves="layer input"),
            linear("attention.v_lin", "value", H, H, heads="A", part=Part.ATTENTION, saves="layer input"),
            linear("attention.out_lin", "attention output", H, H, part=Part.ATTENTION),
            layer_norm("sa_layer_norm", "attention LayerNorm", H),
            linear("ffn.lin1", "feed-forward in", H, I, part=Part.FEED_FORWARD),
            linear("ffn.lin2", "feed-forward out", I, H, part=Part.FEED_FORWARD, saves="feed-forward activated"),
            layer_norm("output_layer_norm", "output LayerNorm", H),
        ),
        repeat=("L",),
        # No dropout between out_lin and sa_layer_norm (DistilBertSelfAttention returns out_lin's output).
        ops=(
            ops.attention("attention", H, A, "attention_dropout"),
            ops.activation(
                "ffn.activation",
                "feed-forward activation",
                "activation",
                (b, s, I),
                before="feed-forward hidden",
                after="feed-forward activated",
            ),
            ops.dropout("ffn.dropout", "feed-forward dropout", (b, s, H), DROPOUT),
        ),
    )
    return (embeddings, layer)


def _mlm_head(on: Mapping[str, bool]) -> Block:
    # Only the projector's weight is tied (DistilBertForMaskedLM._tied_weights_keys); its bias is its own.
    if on["tied"]:
        projector: tuple[Module, ...] = (
            Module(
                "vocab_projector",
                "vocabulary projector weight (tied)",
                (Tie("weight", WORD_EMBEDDINGS, "reuses the token embeddings"),),
                products=(Product("vocabulary projector (tied)", TOKENS, V, H),),
                saved=(Saved("vocab_projector input", (TOKENS, H)),),
            ),
            Module("vocab_projector", "vocabulary projector bias", (Param("bias", (V,), "bias"),)),
        )
    else:
        projector = (linear("vocab_projector", "vocabulary projector (untied)", H, V),)
    modules = (
        *common.mlm_transform("vocab_transform", "vocab_layer_norm", bias=False),
        *projector,
    )
    mlm_ops = common.mlm_ops("activation", key="activation")
    return Block("mlm-head", "masked-LM head", Kind.HEAD, "", modules, ops=mlm_ops)


def _classifier() -> Block:
    """pre_classifier on token 0 (a view that keeps the encoder's output), ReLU, dropout, classifier."""
    acts = ops.probability("seq_classif_dropout")
    pre = linear("pre_classifier", "pre-classifier dense", H, H, rows=b, saves=common.ENCODER_OUTPUT)
    kept = ops.either(acts, Saved("dropped", (b, H)), Saved("activated", (b, H)))
    return Block(
        "classifier",
        "classification head",
        Kind.HEAD,
        "",
        (pre, linear("classifier", "classifier", H, C, rows=b, saves=kept)),
        ops=(
            ops.activation("relu", "ReLU", "relu", (b, H), before="hidden", after="activated", fixed=True),
            ops.dropout("dropout", "classifier dropout", (b, H), acts),
            *common.class_loss(),
        ),
    )


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers DistilBERT class for this head."""
    if head is Head.BASE:
        return Architecture("DistilBertModel", _backbone(""))
    if head is Head.MASKED_LM:
        return Architecture("DistilBertForMaskedLM", (*_backbone("distilbert."), _mlm_head(on)))
    classifier = _classifier()
    return Architecture("DistilBertForSequenceClassification", (*_backbone("distilbert."), classifier))


# TransformerBlock.__init__ raises the same error.
_heads_divide_dim = Rule(
    ne(mod("dim", "n_heads"), 0),
    "n_heads ({n_heads}) does not divide dim ({dim}) evenly; transformers refuses this",
    ("n_heads", "dim"),
)

# word_embeddings is nn.Embedding(vocab_size, dim, padding_idx=pad_token_id), which asserts the index is a row.
_padding_fits_vocabulary = common.padding_fits("vocab_size")


DIFFERENCES = (
    "**Half the layers.** DistilBERT keeps BERT-Base's width (H = 768, I = 3,072, 12 heads) and takes "
    "L = 6 instead of 12 (the student was initialised from layers of its BERT teacher). Each layer "
    "holds exactly the tensors of a BERT layer under other names (`q_lin`, `k_lin`, `v_lin`, `out_lin`, "
    "`sa_layer_norm`, `ffn.lin1`, `ffn.lin2`, `output_layer_norm`), so the per-layer formula is BERT's. "
    "Halving L halves the encoder, but the embedding tables stay whole, so the total shrinks by well under "
    "half.",
    "**No token types and no pooler.** There is no `token_type_embeddings` table (BERT's T·H is gone, and "
    "the embeddings are (V + P + 2)H) and `DistilBertModel` has no pooler (BERT's H² + H is gone).",
    "**Different key names.** The config uses `dim` for the hidden size H, `n_layers` for L, `n_heads` for "
    "A and `hidden_dim` for the feed-forward size I. Beware: `hidden_dim` is the feed-forward width, not "
    "the hidden size.",
    "**Its own heads.** The masked-LM head is `vocab_transform` (H × H), `vocab_layer_norm` and "
    "`vocab_projector`; with `tie_word_embeddings` (the default) the projector's weight is the token "
    "table, counted once, but its bias (V) is its own tensor. The classification head is `pre_classifier` "
    "(H × H, where BERT's classifier would read the pooler) followed by `classifier` (C × H).",
    "**`sinusoidal_pos_embds` does not change the count.** In transformers 5.23 it only decides how the "
    "position table starts out (sines and cosines instead of random values): the table is still a "
    "registered, trainable `nn.Embedding` parameter of P × H, listed and counted like a learned one.",
)

FAMILY = Family(
    name="distilbert",
    title="DistilBERT",
    symbols=SYMBOLS,
    heads=(Head.BASE, Head.MASKED_LM, Head.SEQUENCE_CLASSIFICATION),
    declare=declare,
    flag_keys=("tie_word_embeddings",),
    differences=DIFFERENCES,
    checks=(common.in_every_layer(_heads_divide_dim, "n_layers"), _padding_fits_vocabulary),
    switches=(common.tied("mlm-head"),),
)
