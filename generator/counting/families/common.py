"""Pieces several families share: BERT's embeddings and encoder layer, and transformers' rules.

BERT, RoBERTa, XLM-RoBERTa and ELECTRA register exactly the same encoder layer (their modeling
files copy BertLayer); BERT, ALBERT and ELECTRA the same embeddings, each at its own width;
DeBERTa and ModernBERT check their head counts with BERT's words. They are written once here.
This module declares no family.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from generator.counting import ops
from generator.counting.architecture import Block, Dtype, Kind, Module, Op, Param, Part, Product, Saved, Tie
from generator.counting.conditions import Condition, eq, ge, given, gt, is_null, is_whole, lt, mod, ne, neg, truthy
from generator.counting.layouts import TOKENS, b, embedding, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule, Switch

V, P, T, H, I, C, A = (Poly.symbol(name) for name in "VPTHICA")

# Storages several blocks read: the encoder's output (the pooler reads token 0 of it, a view that
# keeps the whole tensor) and the pooled output (the heads' input), each kept once.
ENCODER_OUTPUT = Saved("encoder output", (b, s, H), shared=True)
POOLED = Saved("pooled output", (b, H), shared=True)
HIDDEN_DROPOUT = ops.probability("hidden_dropout_prob")
# BertEmbeddings gathers the token types from its zero buffer at the position ids: a new (1, s)
# tensor of ids, kept by the segment table (modeling_bert.py, BertEmbeddings.forward).
GATHERED_TOKEN_TYPES = Saved("token type ids", (s,), Dtype.INT64)


def bert_embeddings(prefix: str, width: Poly) -> Block:
    """BertEmbeddings: token, position and segment tables ``width`` wide, then a LayerNorm.

    The position ids are a view of a buffer (nothing new is kept for them); the sum of the three
    lookups goes through the LayerNorm and a dropout.
    """
    return Block(
        "embeddings",
        "embeddings",
        Kind.EMBEDDINGS,
        f"{prefix}embeddings.",
        (
            embedding("word_embeddings", "token embeddings", V, width),
            embedding("position_embeddings", "position embeddings", P, width, ids=None),
            embedding("token_type_embeddings", "segment embeddings", T, width, ids=GATHERED_TOKEN_TYPES),
            layer_norm("LayerNorm", "embedding LayerNorm", width),
        ),
        ops=(ops.dropout("dropout", "embedding dropout", (b, s, width), HIDDEN_DROPOUT),),
    )


def bert_attention(path: str) -> tuple[Module, ...]:
    """BertAttention: query, key, value (each split into A heads), output dense, LayerNorm."""
    # The three projections read the same input, the layer's: one storage, kept once.
    return (
        linear(f"{path}.self.query", "query", H, H, heads="A", part=Part.ATTENTION, saves="layer input"),
        linear(f"{path}.self.key", "key", H, H, heads="A", part=Part.ATTENTION, saves="layer input"),
        linear(f"{path}.self.value", "value", H, H, heads="A", part=Part.ATTENTION, saves="layer input"),
        linear(f"{path}.output.dense", "attention output", H, H, part=Part.ATTENTION),
        layer_norm(f"{path}.output.LayerNorm", "attention LayerNorm", H),
    )


def bert_layer_ops() -> tuple[Op, ...]:
    """What BertLayer computes between its modules: attention, dropouts, the feed-forward activation."""
    return (
        ops.attention("attention.self", H, A, "attention_probs_dropout_prob"),
        ops.dropout("attention.output.dropout", "attention output dropout", (b, s, H), HIDDEN_DROPOUT),
        ops.activation(
            "intermediate.intermediate_act_fn",
            "feed-forward activation",
            "hidden_act",
            (b, s, I),
            before="feed-forward hidden",
            after="feed-forward activated",
        ),
        ops.dropout("output.dropout", "output dropout", (b, s, H), HIDDEN_DROPOUT),
    )


def bert_encoder_layer(on: Mapping[str, bool], prefix: str) -> Block:
    """BertLayer, repeated L times: attention, cross-attention for a decoder, feed-forward.

    Cross-attention runs only on an encoder's states, which a step with ``input_ids`` alone does
    not give: its modules hold parameters but compute nothing.
    """
    modules = bert_attention("attention")
    if on["cross_attention"]:
        cross = bert_attention("crossattention")
        modules += tuple(Module(m.path, f"cross-attention {m.label}", m.params, m.heads, part=m.part) for m in cross)
    modules += (
        linear("intermediate.dense", "feed-forward in", H, I, part=Part.FEED_FORWARD),
        linear("output.dense", "feed-forward out", I, H, part=Part.FEED_FORWARD, saves="feed-forward activated"),
        layer_norm("output.LayerNorm", "output LayerNorm", H),
    )
    return Block(
        "layer",
        "encoder layer",
        Kind.ENCODER,
        f"{prefix}encoder.layer.{{0}}.",
        modules,
        repeat=("L",),
        ops=bert_layer_ops(),
    )


# The rules transformers enforces, as data (switches.Rule): the card check and the calculator read them.

# BertSelfAttention.__init__ (and its copies), in its words.
heads_divide_hidden = Rule(
    ne(mod("hidden_size", "num_attention_heads"), 0),
    "the hidden size ({hidden_size}) is not a multiple of the number of attention heads ({num_attention_heads})",
    ("hidden_size", "num_attention_heads"),
)

# BertLayer.__init__ (and its copies) refuse cross-attention in an encoder.
cross_attention_needs_decoder = Rule(
    truthy("add_cross_attention") & ~truthy("is_decoder"),
    "add_cross_attention is true but is_decoder is false; transformers refuses this",
    ("add_cross_attention",),
)


def in_every_layer(rule: Rule, layers: str = "num_hidden_layers") -> Rule:
    """A rule about a module every encoder layer builds: moot without layers, as range(0) builds none."""
    return replace(rule, fails=gt(layers, 0) & rule.fails)


# BertLayer's own refusals, which a config without layers never meets.
LAYER_RULES = (in_every_layer(heads_divide_hidden), in_every_layer(cross_attention_needs_decoder))

# nn.Embedding(vocab_size, ..., padding_idx=pad_token_id) asserts that the index is a row.
padding_in_vocabulary = Rule(
    is_whole("pad_token_id") & (lt("pad_token_id", neg("vocab_size")) | ge("pad_token_id", "vocab_size")),
    "pad_token_id ({pad_token_id}) is not a row of the {vocab_size}-row token embedding table; nn.Embedding refuses it",
    ("pad_token_id", "vocab_size"),
)

# The switch every family with BertLayer's cross-attention declares.
CROSS_ATTENTION = Switch(
    "cross_attention", truthy("add_cross_attention"), "every layer adds cross-attention (a decoder's)", ("layer",)
)


def tied(*blocks: str) -> Switch:
    """tie_word_embeddings: the output layer reuses the token table instead of holding its own."""
    return Switch("tied", truthy("tie_word_embeddings"), "the output layer reuses the token embedding table", blocks)


def padding_fits(key: str) -> Rule:
    """A table built with padding_idx=pad_token_id must have that row (DistilBERT's and RoBERTa's words)."""
    return Rule(
        is_whole("pad_token_id") & (lt("pad_token_id", neg(key)) | ge("pad_token_id", key)),
        f"{key} ({{{key}}}) leaves no row for pad_token_id ({{pad_token_id}}); "
        "nn.Embedding refuses a padding index outside its table",
        (key, "pad_token_id"),
    )


def mlm_decoder(tied_to: bool, word_embeddings: str, output_bias: str, width: Poly) -> Module:
    """The masked-LM decoder: the token table and output bias again when tied, its own Linear when not.

    Either way one b·s × width by width × V product, the largest of most models at short lengths.
    """
    if tied_to:
        return Module(
            "decoder",
            "decoder (tied)",
            (
                Tie("weight", word_embeddings, "reuses the token embeddings"),
                Tie("bias", output_bias, "is the output bias"),
            ),
            products=(Product("decoder (tied)", TOKENS, V, width),),
            saved=(Saved("decoder input", (TOKENS, width)),),
        )
    return linear("decoder", "decoder (untied)", width, V)


def bert_pooler(prefix: str) -> Block:
    """BertPooler (and its copies): one H × H Linear on the first token, then tanh.

    Token 0 is a view of the encoder's output, so the Linear keeps that whole tensor alive.
    """
    return Block(
        "pooler",
        "pooler",
        Kind.POOLER,
        f"{prefix}pooler.",
        (linear("dense", "pooler dense", H, H, rows=b, saves=ENCODER_OUTPUT),),
        ops=(ops.tanh("activation", "pooler tanh", (b, H), POOLED.key),),
    )


def mlm_transform(dense: str, norm: str, width: Poly = H, *, bias: bool = True) -> tuple[Module, ...]:
    """A masked-LM head's own output bias over the vocabulary (registered first), then its
    transform: a Linear from H to ``width`` and a LayerNorm, under the class's own names.

    The Linear reads the encoder's output; the LayerNorm the activation's (``mlm_ops``)."""
    own_bias = (Module("", "output bias", (Param("bias", (V,), "bias"),)),) if bias else ()
    return (
        *own_bias,
        linear(dense, "transform dense", H, width, saves=ENCODER_OUTPUT),
        layer_norm(norm, "transform LayerNorm", width, saves="transform activated"),
    )


def mlm_ops(activation: str, width: Poly = H, *, key: str = "hidden_act", fixed: bool = False) -> tuple[Op, ...]:
    """A masked-LM head's transform activation (the config's ``key``, or the function ``key`` when
    ``fixed``) and its loss over the vocabulary at every token."""
    return (
        ops.activation(
            activation,
            "transform activation",
            key,
            (b, s, width),
            before="transform hidden",
            after="transform activated",
            fixed=fixed,
        ),
        ops.cross_entropy("loss", "masked-LM loss", TOKENS, V, ops.LABELS),
    )


def classifier_dropout(key: str = "classifier_dropout", fallback: str = "hidden_dropout_prob") -> Condition:
    """BERT's classifier dropout acts: ``classifier_dropout`` when given, else the hidden dropout."""
    return (given(key) & ops.probability(key)) | (is_null(key) & ops.probability(fallback))


def class_loss(rows: Poly = b) -> tuple[Op, ...]:
    """The classification loss: cross-entropy over C labels, or mean squared error with one label
    (transformers' problem_type: regression when num_labels is 1 and the labels are floats)."""
    entropy = ops.cross_entropy("loss", "classification loss", rows, C, ops.CLASS_LABELS)
    squared = ops.mse("loss", "regression loss", rows)
    return (ops.only(entropy, ne("num_labels", 1)), ops.only(squared, eq("num_labels", 1)))


def classifier_head(dropout: Condition | None = None, pooled: Saved = POOLED) -> Block:
    """The sequence-classification head on the pooled output: a dropout, then one Linear, H to C labels.

    ``pooled`` is the storage the pooled output lives in (the encoder's output when the pooler only
    takes token 0, as MobileBERT's does without classifier_activation).
    """
    acts = dropout if dropout is not None else classifier_dropout()
    kept = replace(pooled, when=~acts)
    return Block(
        "classifier",
        "classification head",
        Kind.HEAD,
        "",
        (linear("classifier", "classifier", H, C, rows=b, saves=kept),),
        ops=(ops.dropout("dropout", "classifier dropout", (b, H), acts, output="classifier input"), *class_loss()),
    )


def token_classifier(prefix: str, function: str) -> Block:
    """RoBERTa's and ELECTRA's classification head on token 0: dropout, an H × H dense, ``function``
    (tanh; gelu), dropout again, and the output projection to C labels.

    Token 0 is a view of the encoder's output: without dropout the dense keeps that whole tensor.
    """
    acts = classifier_dropout()
    return Block(
        "classifier",
        "classification head",
        Kind.HEAD,
        prefix,
        (
            linear(
                "dense",
                "classifier dense",
                H,
                H,
                rows=b,
                saves=ops.either(acts, Saved("dropped", (b, H)), ENCODER_OUTPUT),
            ),
            linear(
                "out_proj",
                "classifier output",
                H,
                C,
                rows=b,
                saves=ops.either(acts, Saved("dropped again", (b, H)), Saved("activated", (b, H))),
            ),
        ),
        ops=(
            ops.dropout("dropout", "classifier dropout", (b, H), acts),
            ops.activation(
                "activation", "classifier activation", function, (b, H), before="hidden", after="activated", fixed=True
            ),
            ops.dropout("dropout again", "classifier dropout", (b, H), acts),
            *class_loss(),
        ),
    )


def next_sentence_head(pooled: Saved = POOLED) -> Block:
    """BERT's next-sentence prediction head (``cls.seq_relationship``): H to 2, on the pooled output."""
    return Block(
        "nsp-head",
        "next-sentence head",
        Kind.HEAD,
        "cls.",
        (linear("seq_relationship", "next-sentence classifier", H, Poly.constant(2), rows=b, saves=pooled),),
        ops=(ops.cross_entropy("loss", "next-sentence loss", b, Poly.constant(2), ops.SENTENCE_LABELS),),
    )
