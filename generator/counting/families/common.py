"""Pieces several families share: BERT's embeddings and encoder layer, and transformers' rules.

BERT, RoBERTa, XLM-RoBERTa and ELECTRA register exactly the same encoder layer (their modeling
files copy BertLayer); BERT, ALBERT and ELECTRA the same embeddings, each at its own width;
DeBERTa and ModernBERT check their head counts with BERT's words. They are written once here.
This module declares no family.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from generator.counting.architecture import Block, Kind, Module, Param, Part, Tie
from generator.counting.conditions import ge, gt, is_whole, lt, mod, ne, neg, truthy
from generator.counting.layouts import embedding, layer_norm, linear
from generator.counting.poly import Poly
from generator.counting.switches import Rule, Switch

V, P, T, H, I, C = (Poly.symbol(s) for s in "VPTHIC")


def bert_embeddings(prefix: str, width: Poly) -> Block:
    """BertEmbeddings: token, position and segment tables ``width`` wide, then a LayerNorm."""
    return Block(
        "embeddings",
        "embeddings",
        Kind.EMBEDDINGS,
        f"{prefix}embeddings.",
        (
            embedding("word_embeddings", "token embeddings", V, width),
            embedding("position_embeddings", "position embeddings", P, width),
            embedding("token_type_embeddings", "segment embeddings", T, width),
            layer_norm("LayerNorm", "embedding LayerNorm", width),
        ),
    )


def bert_attention(path: str) -> tuple[Module, ...]:
    """BertAttention: query, key, value (each split into A heads), output dense, LayerNorm."""
    return (
        linear(f"{path}.self.query", "query", H, H, heads="A", part=Part.ATTENTION),
        linear(f"{path}.self.key", "key", H, H, heads="A", part=Part.ATTENTION),
        linear(f"{path}.self.value", "value", H, H, heads="A", part=Part.ATTENTION),
        linear(f"{path}.output.dense", "attention output", H, H, part=Part.ATTENTION),
        layer_norm(f"{path}.output.LayerNorm", "attention LayerNorm", H),
    )


def bert_encoder_layer(on: Mapping[str, bool], prefix: str) -> Block:
    """BertLayer, repeated L times: attention, cross-attention for a decoder, feed-forward."""
    modules = bert_attention("attention")
    if on["cross_attention"]:
        cross = bert_attention("crossattention")
        modules += tuple(Module(m.path, f"cross-attention {m.label}", m.params, m.heads, part=m.part) for m in cross)
    modules += (
        linear("intermediate.dense", "feed-forward in", H, I, part=Part.FEED_FORWARD),
        linear("output.dense", "feed-forward out", I, H, part=Part.FEED_FORWARD),
        layer_norm("output.LayerNorm", "output LayerNorm", H),
    )
    return Block("layer", "encoder layer", Kind.ENCODER, f"{prefix}encoder.layer.{{0}}.", modules, repeat=("L",))


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
    """The masked-LM decoder: the token table and output bias again when tied, its own Linear when not."""
    if tied_to:
        return Module(
            "decoder",
            "decoder (tied)",
            (
                Tie("weight", word_embeddings, "reuses the token embeddings"),
                Tie("bias", output_bias, "is the output bias"),
            ),
        )
    return linear("decoder", "decoder (untied)", width, Poly.symbol("V"))


def bert_pooler(prefix: str) -> Block:
    """BertPooler (and its copies): one H × H Linear on the first token; its tanh holds nothing."""
    return Block("pooler", "pooler", Kind.POOLER, f"{prefix}pooler.", (linear("dense", "pooler dense", H, H),))


def mlm_transform(dense: str, norm: str, width: Poly = H, *, bias: bool = True) -> tuple[Module, ...]:
    """A masked-LM head's own output bias over the vocabulary (registered first), then its
    transform: a Linear from H to ``width`` and a LayerNorm, under the class's own names."""
    own_bias = (Module("", "output bias", (Param("bias", (V,), "bias"),)),) if bias else ()
    return (*own_bias, linear(dense, "transform dense", H, width), layer_norm(norm, "transform LayerNorm", width))


def classifier_head() -> Block:
    """The sequence-classification head on the pooled output: one Linear, H to C labels."""
    return Block("classifier", "classification head", Kind.HEAD, "", (linear("classifier", "classifier", H, C),))


def next_sentence_head() -> Block:
    """BERT's next-sentence prediction head (``cls.seq_relationship``): H to 2."""
    return Block(
        "nsp-head",
        "next-sentence head",
        Kind.HEAD,
        "cls.",
        (linear("seq_relationship", "next-sentence classifier", H, Poly.constant(2)),),
    )
