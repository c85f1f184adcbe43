"""The encoder-decoder Transformer of Vaswani et al. (2017), as attention-is-all-you-need-pytorch
(Yu-Hsiang Huang, 2018 version: ``transformer/Models.py``, ``SubLayers.py``) implements it.

This is BERT's ancestor, and the implementation behind the one-layer listing in the project's
seed documents. transformers has no such class, so the family declares its own config keys: the
arguments of that ``Transformer.__init__``. Its feed-forward layers are ``nn.Conv1d`` with kernel
size 1 (weights [out, in, 1]); its sinusoidal position tables are frozen ``nn.Embedding`` weights,
so they appear among the parameters although nothing trains them.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting.conditions import ne, truthy
from generator.counting.layouts import embedding, layer_norm, linear
from generator.counting.poly import Poly
from generator.counting.switches import Rule, Switch

V, U, S, H, I, A, K, M = (Poly.symbol(s) for s in "VUSHIAKM")
ONE = Poly.constant(1)

SYMBOLS = (
    arch.Symbol("V", "n_src_vocab"),
    arch.Symbol("U", "n_tgt_vocab"),
    arch.Symbol("S", "len_max_seq"),
    arch.Symbol("H", "d_model"),
    arch.Symbol("I", "d_inner"),
    arch.Symbol("L", "n_layers"),
    arch.Symbol("A", "n_head"),
    arch.Symbol("K", "d_k"),
    arch.Symbol("M", "d_v"),
)

# Transformer.__init__ defaults in transformer/Models.py; the vocabularies and length have none.
OWN_CONFIG = arch.OwnConfig(
    config_class="Transformer",
    source="attention-is-all-you-need-pytorch, transformer/Models.py",
    defaults={
        "n_src_vocab": None,
        "n_tgt_vocab": None,
        "len_max_seq": None,
        "d_word_vec": 512,
        "d_model": 512,
        "d_inner": 2048,
        "n_layers": 6,
        "n_head": 8,
        "d_k": 64,
        "d_v": 64,
        "dropout": 0.1,
        "tgt_emb_prj_weight_sharing": True,
        "emb_src_tgt_weight_sharing": True,
    },
    listed_card="transformer-seed-one-layer",  # the one-layer listing of the project's seed documents
)


def _attention(path: str, key: str) -> tuple[arch.Module, ...]:
    # MultiHeadAttention registers w_qs, w_ks, w_vs, then layer_norm, then fc.
    return (
        linear(f"{path}.w_qs", f"{key}-queries", H, A * K, part=arch.Part.ATTENTION),
        linear(f"{path}.w_ks", f"{key}-keys", H, A * K, part=arch.Part.ATTENTION),
        linear(f"{path}.w_vs", f"{key}-values", H, A * M, part=arch.Part.ATTENTION),
        layer_norm(f"{path}.layer_norm", f"{key}-layernorm", H),
        linear(f"{path}.fc", f"{key}-output", A * M, H, part=arch.Part.ATTENTION),
    )


def _feed_forward() -> tuple[arch.Module, ...]:
    conv_in = arch.Module(
        "pos_ffn.w_1",
        "feed-forward-in-conv-kernel-1",
        (arch.Param("weight", (I, H, ONE), "weight"), arch.Param("bias", (I,), "bias")),
        part=arch.Part.FEED_FORWARD,
    )
    conv_out = arch.Module(
        "pos_ffn.w_2",
        "feed-forward-out-conv-kernel-1",
        (arch.Param("weight", (H, I, ONE), "weight"), arch.Param("bias", (H,), "bias")),
        part=arch.Part.FEED_FORWARD,
    )
    return (conv_in, conv_out, layer_norm("pos_ffn.layer_norm", "feed-forward-layernorm", H))


def _tables(side: str, prefix: str, word: arch.Module) -> arch.Block:
    # Models.py sets requires_grad False on these tables: listed and counted, never trained.
    positions = embedding("position_enc", f"{side}-positions-frozen-sinusoids", S + 1, H, frozen=True)
    return arch.Block(f"{side}-embeddings", arch.Kind.EMBEDDINGS, prefix, (word, positions))


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the 2018 attention-is-all-you-need-pytorch Transformer."""
    source_words = "encoder.src_word_emb.weight"
    if on["shared_tables"]:
        target_word = arch.Module(
            "tgt_word_emb", "target-token-embeddings-shared", (arch.Tie("weight", source_words, "source-table"),)
        )
        target_words = source_words
    else:
        target_word = embedding("tgt_word_emb", "target-token-embeddings", U, H)
        target_words = "decoder.tgt_word_emb.weight"
    if on["shared_projection"]:
        projection = arch.Module(
            "tgt_word_prj", "output-projection-shared", (arch.Tie("weight", target_words, "target-table"),)
        )
    else:
        projection = arch.Module("tgt_word_prj", "output-projection", (arch.Param("weight", (U, H), "weight"),))
    return arch.Architecture(
        "Transformer",
        (
            _tables("source", "encoder.", embedding("src_word_emb", "source-token-embeddings", V, H)),
            arch.Block(
                "encoder-layer",
                arch.Kind.ENCODER,
                "encoder.layer_stack.{0}.",
                (*_attention("slf_attn", "self-attention"), *_feed_forward()),
                repeat=("L",),
            ),
            _tables("target", "decoder.", target_word),
            arch.Block(
                "decoder-layer",
                arch.Kind.ENCODER,
                "decoder.layer_stack.{0}.",
                (
                    *_attention("slf_attn", "self-attention"),
                    *_attention("enc_attn", "encoder-decoder-attention"),
                    *_feed_forward(),
                ),
                repeat=("L",),
            ),
            arch.Block("output-projection", arch.Kind.HEAD, "", (projection,)),
        ),
    )


# Transformer.__init__ asserts this, so that the residual connections add up.
_word_vectors_are_model_wide = Rule("word-vectors-model-wide", ne("d_word_vec", "d_model"), ("d_word_vec",))

_shared_tables_need_one_vocabulary = Rule(
    "shared-tables-one-vocabulary",
    truthy("emb_src_tgt_weight_sharing") & ne("n_src_vocab", "n_tgt_vocab"),
    ("n_tgt_vocab",),
)


FAMILY = arch.Family(
    name="transformer",
    symbols=SYMBOLS,
    heads=(arch.Head.BASE,),
    declare=declare,
    build_rules=(_word_vectors_are_model_wide, _shared_tables_need_one_vocabulary),
    own_config=OWN_CONFIG,
    switches=(
        Switch("shared_tables", truthy("emb_src_tgt_weight_sharing"), ("target-embeddings", "output-projection")),
        Switch("shared_projection", truthy("tgt_emb_prj_weight_sharing"), ("output-projection",)),
    ),
)
