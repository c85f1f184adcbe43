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

from generator.counting.architecture import Architecture, Block, Family, Head, Kind, Part, Symbol
from generator.counting.conditions import div, mod, mul, ne
from generator.counting.families import common
from generator.counting.families.symbols import shared, symbols
from generator.counting.layouts import layer_norm, linear
from generator.counting.poly import Poly
from generator.counting.switches import Rule

E, H, C = (Poly.symbol(s) for s in "EHC")

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
        *common.query_key_value(("attention.query", "attention.key", "attention.value")),
        common.attention_output("attention.dense"),
        layer_norm("attention.LayerNorm", "attention LayerNorm", H),
        *common.feed_forward("ffn", "ffn_output"),
    )
    return Block(
        "layer",
        "shared encoder layer",
        Kind.ENCODER,
        f"{prefix}encoder.albert_layer_groups.{{0}}.albert_layers.{{1}}.",
        modules,
        repeat=("G", "K"),
        applied="L",
    )


def _backbone(prefix: str, pooler: bool) -> tuple[Block, ...]:
    blocks = (*_embeddings(prefix), _shared_layer(prefix))
    # AlbertModel.pooler is a bare nn.Linear, not a module holding a "dense".
    bare_pooler = Block("pooler", "pooler", Kind.POOLER, prefix, (linear("pooler", "pooler dense", H, H),))
    return (*blocks, bare_pooler) if pooler else blocks


def _mlm_head(on: Mapping[str, bool]) -> Block:
    decoder = common.mlm_decoder(on["tied"], "albert.embeddings.word_embeddings.weight", "predictions.bias", E)
    return common.mlm_head(
        "predictions.", (common.output_bias(), *common.narrow_transform("LayerNorm", "dense"), decoder)
    )


def _sentence_order_head() -> Block:
    return Block(
        "sop-head",
        "sentence-order head",
        Kind.HEAD,
        "sop_classifier.",
        (linear("classifier", "sentence-order classifier", H, C),),
    )


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers ALBERT class for this head."""
    on_top = common.bert_heads(functools.partial(_mlm_head, on), _sentence_order_head)
    return common.assemble("Albert", "albert.", head, _backbone, on_top)


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
