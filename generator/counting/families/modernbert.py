"""ModernBERT (transformers ``model_type`` "modernbert"): modeling_modernbert.py in transformers 5.23.

Registration order follows ModernBertModel (``embeddings``, ``layers``, ``final_norm``; the rotary
embedding holds buffers only), ModernBertEncoderLayer (``attn_norm``, ``attn``, ``mlp_norm``,
``mlp``) and the heads (``head``, then ``decoder`` or ``classifier``). Layer 0's ``attn_norm`` is
an ``nn.Identity`` (the embedding norm already normalizes its input), so layer 0 is declared
apart and the other layers repeat from index 1.

Every bias is optional: ``attention_bias``, ``mlp_bias``, ``norm_bias`` and ``classifier_bias``
(the head's dense layer) default to false, ``decoder_bias`` to true; the classifier always has one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from generator.counting.architecture import Architecture, Block, Family, Head, Kind, Module, Param, Part, Tie
from generator.counting.conditions import gt, truthy
from generator.counting.families import common
from generator.counting.families.symbols import shared, symbols
from generator.counting.layouts import linear
from generator.counting.poly import Poly
from generator.counting.switches import Switch

V, H, I, C = (Poly.symbol(s) for s in "VHIC")

SYMBOLS = symbols(
    "V",
    shared("H", minimum=0),
    "I",  # each half of the gated input projection (its meaning is ModernBERT's own)
    shared("L", minimum=1),
    "AC",
)

# Read by ModernBertConfig.__post_init__ and its rotary set-up from the keyword arguments, not
# fields of the class; they decide the attention pattern and rotary frequencies, never a tensor.
EXTRA_CONFIG: Mapping[str, Any] = {
    "global_attn_every_n_layers": 3,
    "global_rope_theta": 160000.0,
    "local_rope_theta": 10000.0,
}

BACKBONE = "model."  # the attribute every head class stores the encoder under


def _norm(on: Mapping[str, bool], path: str, key: str) -> Module:
    """nn.LayerNorm(H, bias=norm_bias): the scale γ always, the shift β only with norm_bias."""
    params: tuple[Param | Tie, ...] = (Param("weight", (H,), "scale γ"),)
    if on["norm_bias"]:
        params += (Param("bias", (H,), "shift β"),)
    return Module(path, key, params, part=Part.NORMS)


def _layer_modules(on: Mapping[str, bool], *, attn_norm: bool) -> tuple[Module, ...]:
    attention_bias, mlp_bias = on["attention_bias"], on["mlp_bias"]
    modules: tuple[Module, ...] = (_norm(on, "attn_norm", "attention-norm"),) if attn_norm else ()
    return (
        *modules,
        # One fused projection for query, key and value of all heads: 3H rows.
        linear("attn.Wqkv", "fused-query-key-value", H, 3 * H, bias=attention_bias, part=Part.ATTENTION),
        linear("attn.Wo", "attention-output", H, H, bias=attention_bias, part=Part.ATTENTION),
        _norm(on, "mlp_norm", "feed-forward-norm"),
        # GeGLU: Wi produces the value and the gate side by side, 2I rows; Wo maps I back to H.
        linear("mlp.Wi", "gated-feed-forward-in-value-and-gate", H, 2 * I, bias=mlp_bias, part=Part.FEED_FORWARD),
        linear("mlp.Wo", "feed-forward-out", I, H, bias=mlp_bias, part=Part.FEED_FORWARD),
    )


def _backbone(on: Mapping[str, bool], prefix: str, _pooler: bool) -> tuple[Block, ...]:
    embeddings = common.embeddings_block(
        prefix, (common.token_table(H, "tok_embeddings"), _norm(on, "norm", "embedding-norm"))
    )
    first = Block(
        "layer-0",
        Kind.ENCODER,
        f"{prefix}layers.0.",
        _layer_modules(on, attn_norm=False),
    )
    blocks: tuple[Block, ...] = (embeddings, first)
    if on["later_layers"]:
        blocks += (
            Block(
                "layer",
                Kind.ENCODER,
                f"{prefix}layers.{{0}}.",
                _layer_modules(on, attn_norm=True),
                repeat=("L",),
                start=1,
            ),
        )
    final = Block("final-norm", Kind.ENCODER, prefix, (_norm(on, "final_norm", "final-norm"),))
    return (*blocks, final)


def _prediction_head(on: Mapping[str, bool]) -> tuple[Module, ...]:
    """ModernBertPredictionHead: dense (bias only with classifier_bias), activation, norm."""
    return (
        linear("head.dense", "head-dense", H, H, bias=on["classifier_bias"]),
        _norm(on, "head.norm", "head-norm"),
    )


def _decoder(on: Mapping[str, bool]) -> Module:
    """The masked-LM decoder: the token table again when tied, with a bias of its own by default."""
    params: tuple[Param | Tie, ...]
    if on["tied"]:
        params = (Tie("weight", f"{BACKBONE}embeddings.tok_embeddings.weight", "reuses the token embeddings"),)
    else:
        params = (Param("weight", (V, H), "weight"),)
    if on["decoder_bias"]:
        params += (Param("bias", (V,), "bias"),)
    return Module("decoder", "decoder-tied" if on["tied"] else "decoder-untied", params)


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers ModernBERT class for this head (it has no pooler)."""
    classifier = (linear("classifier", "classifier", H, C),)
    on_top = {
        Head.MASKED_LM: lambda: (common.mlm_head("", (*_prediction_head(on), _decoder(on))),),
        Head.SEQUENCE_CLASSIFICATION: lambda: (
            Block("classifier", Kind.HEAD, "", (*_prediction_head(on), *classifier)),
        ),
    }
    return common.assemble("ModernBert", BACKBONE, head, functools.partial(_backbone, on), on_top)


FAMILY = Family(
    name="modernbert",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    extra_config=EXTRA_CONFIG,
    checks=(common.heads_divide_hidden, common.padding_in_vocabulary),
    switches=(
        *(
            Switch(key, truthy(key), blocks)
            for key, blocks in (
                ("attention_bias", ("layer-0", "layer")),
                ("mlp_bias", ("layer-0", "layer")),
                ("norm_bias", ("embeddings", "layer-0", "layer", "final-norm", "mlm-head", "classifier")),
                ("classifier_bias", ("mlm-head", "classifier")),
                ("decoder_bias", ("mlm-head",)),
            )
        ),
        common.tied("mlm-head"),
        Switch("later_layers", gt("num_hidden_layers", 1), ("layer",)),
    ),
)
