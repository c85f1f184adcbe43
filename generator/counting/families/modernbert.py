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

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from generator.counting import ops
from generator.counting.architecture import (
    Architecture,
    Block,
    Dtype,
    Family,
    Head,
    Kind,
    Module,
    Op,
    Param,
    Part,
    Product,
    Saved,
    Symbol,
    Tie,
)
from generator.counting.conditions import const, div, eq, gt, ne, truthy
from generator.counting.families import common
from generator.counting.families.symbols import shared, symbols
from generator.counting.layouts import TOKENS, b, embedding, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Switch

V, H, I, C, A = (Poly.symbol(name) for name in "VHICA")

SYMBOLS = symbols(
    "V",
    shared("H", minimum=0),
    shared("I", meaning="feed-forward size (each half of the gated input projection)"),
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


def _norm(on: Mapping[str, bool], path: str, label: str, *, rows: Poly = TOKENS, saves: str = "") -> Module:
    """nn.LayerNorm(H, bias=norm_bias): the scale γ always, the shift β only with norm_bias.

    With or without its shift it keeps the same: its input and two statistics per row.
    """
    params: tuple[Param | Tie, ...] = (Param("weight", (H,), "scale γ"),)
    if on["norm_bias"]:
        params += (Param("bias", (H,), "shift β"),)
    saved = layer_norm(path, label, H, rows=rows, saves=saves).saved
    return Module(path, label, params, part=Part.NORMS, saved=saved)


# Rotary embeddings: every layer multiplies its query and key by a cos and a sin table of (s, d),
# d = H / A, made once per step for the global layers and once for the local (sliding-window)
# ones, and kept by every layer of that kind: one storage each for the model.
D = Poly.symbol("d")
ROTARY_GLOBAL = (Saved("global rotary cos", (s, D), shared=True), Saved("global rotary sin", (s, D), shared=True))
LOCAL_LAYERS = gt("num_hidden_layers", 1) & ne("global_attn_every_n_layers", 1)
ROTARY_LOCAL = tuple(Saved(f"local rotary {f}", (s, D), shared=True, when=LOCAL_LAYERS) for f in ("cos", "sin"))


def _layer_ops() -> tuple[Op, ...]:
    """Attention with rotary tables, the gated GELU (act(input) · gate, both halves of Wi's output)
    and the dropouts after attention and feed-forward."""
    # The values are a (b, A, s, d) view of Wqkv's (b, s, 3H) output, which the product with the
    # probabilities folds to (b·A, s, d): without a copy when b = 1 (it then keeps all of Wqkv's
    # output, 3·s·H), as a b·s·H copy otherwise. The softmax runs in fp32 (eager_attention_forward).
    rest = Saved("rest of Wqkv output", (s, 2 * H), batch_one=True)
    attention = ops.attention("attn", H, A, "attention_dropout", float_softmax=True)
    attention = replace(attention, saved=(*attention.saved, rest))
    wide = (b, s, 2 * I)
    act = Saved("activated", (b, s, I))
    return (
        replace(attention, saved=(*attention.saved, *ROTARY_GLOBAL, *ROTARY_LOCAL)),
        Op("mlp.act", "feed-forward activation", saved=(Saved("Wi output", wide), act), activation="hidden_activation"),
        Op("mlp.gate", "gate", saved=(act, Saved("Wi output", wide))),
        ops.dropout("attn.out_drop", "attention dropout", (b, s, H), ops.probability("attention_dropout")),
        ops.dropout("mlp.drop", "feed-forward dropout", (b, s, H), ops.probability("mlp_dropout")),
    )


def _layer_modules(on: Mapping[str, bool], *, attn_norm: bool) -> tuple[Module, ...]:
    attention_bias, mlp_bias = on["attention_bias"], on["mlp_bias"]
    modules: tuple[Module, ...] = (_norm(on, "attn_norm", "attention norm"),) if attn_norm else ()
    return (
        *modules,
        # One fused projection for query, key and value of all heads: 3H rows.
        linear(
            "attn.Wqkv",
            "fused query, key, value",
            H,
            3 * H,
            bias=attention_bias,
            part=Part.ATTENTION,
            saves="layer input",
        ),
        linear("attn.Wo", "attention output", H, H, bias=attention_bias, part=Part.ATTENTION),
        _norm(on, "mlp_norm", "feed-forward norm"),
        # GeGLU: Wi produces the value and the gate side by side, 2I rows; Wo maps I back to H.
        linear("mlp.Wi", "gated feed-forward in (value and gate)", H, 2 * I, bias=mlp_bias, part=Part.FEED_FORWARD),
        linear("mlp.Wo", "feed-forward out", I, H, bias=mlp_bias, part=Part.FEED_FORWARD),
    )


def _backbone(on: Mapping[str, bool], prefix: str) -> tuple[Block, ...]:
    embeddings = Block(
        "embeddings",
        "embeddings",
        Kind.EMBEDDINGS,
        f"{prefix}embeddings.",
        (embedding("tok_embeddings", "token embeddings", V, H), _norm(on, "norm", "embedding norm")),
        ops=(ops.dropout("drop", "embedding dropout", (b, s, H), ops.probability("embedding_dropout")),),
    )
    first = Block(
        "layer-0",
        "first encoder layer",
        Kind.ENCODER,
        f"{prefix}layers.0.",
        _layer_modules(on, attn_norm=False),
        ops=_layer_ops(),
    )
    blocks: tuple[Block, ...] = (embeddings, first)
    if on["later_layers"]:
        blocks += (
            Block(
                "layer",
                "later encoder layer",
                Kind.ENCODER,
                f"{prefix}layers.{{0}}.",
                _layer_modules(on, attn_norm=True),
                repeat=("L",),
                start=1,
                ops=_layer_ops(),
            ),
        )
    final = Block("final-norm", "final norm", Kind.ENCODER, prefix, (_norm(on, "final_norm", "final norm"),))
    return (*blocks, final)


def _prediction_head(
    on: Mapping[str, bool], rows: Poly = TOKENS, saves: Saved | tuple[Saved, ...] = common.ENCODER_OUTPUT
) -> tuple[Module, ...]:
    """ModernBertPredictionHead: dense (bias only with classifier_bias), activation, norm."""
    return (
        linear("head.dense", "head dense", H, H, bias=on["classifier_bias"], rows=rows, saves=saves),
        _norm(on, "head.norm", "head norm", rows=rows, saves="head activated"),
    )


def _head_ops(rows: tuple[Poly, ...]) -> tuple[Op, ...]:
    shape = (*rows, H)
    return (
        ops.activation(
            "head.act", "head activation", "hidden_activation", shape, before="head hidden", after="head activated"
        ),
    )


# classifier_pooling "mean" multiplies by a (b, s, 1) mask of ones and divides by its (b, 1) sum,
# keeping both; "cls" takes token 0, a view of the encoder's output.
MEAN = eq("classifier_pooling", const("mean"))
MASK = (Saved("pooling mask", (b, s), Dtype.BOOL, when=MEAN), Saved("token counts", (b,), Dtype.INT64, when=MEAN))


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers ModernBERT class for this head."""
    if head is Head.BASE:
        return Architecture("ModernBertModel", _backbone(on, ""))
    if head is Head.MASKED_LM:
        params: tuple[Param | Tie, ...]
        if on["tied"]:
            params = (Tie("weight", f"{BACKBONE}embeddings.tok_embeddings.weight", "reuses the token embeddings"),)
            label = "decoder (tied)"
        else:
            params = (Param("weight", (V, H), "weight"),)
            label = "decoder (untied)"
        if on["decoder_bias"]:
            params += (Param("bias", (V,), "bias"),)
        decoder = Module(
            "decoder",
            label,
            params,
            products=(Product(label, TOKENS, V, H),),
            saved=(Saved("decoder input", (TOKENS, H)),),
        )
        modules = (*_prediction_head(on), decoder)
        # ModernBertForMaskedLM's loss_function (ForMaskedLMLoss) upcasts the logits to fp32.
        loss = ops.cross_entropy("loss", "masked-LM loss", TOKENS, V, ops.LABELS, dtype=Dtype.FLOAT32)
        mlm = Block("mlm-head", "masked-LM head", Kind.HEAD, "", modules, ops=(*_head_ops((b, s)), loss))
        return Architecture("ModernBertForMaskedLM", (*_backbone(on, BACKBONE), mlm))
    pooled = ops.either(MEAN, Saved("mean pooled", (b, H)), common.ENCODER_OUTPUT)
    acts = ops.probability("classifier_dropout")
    kept = ops.either(acts, Saved("dropped", (b, H)), Saved("head output", (b, H)))
    modules = (*_prediction_head(on, b, pooled), linear("classifier", "classifier", H, C, rows=b, saves=kept))
    classifier_ops = (
        Op("pooling", "mean over tokens", saved=MASK),
        *_head_ops((b,)),
        ops.dropout("drop", "classifier dropout", (b, H), acts),
        *common.class_loss(),
    )
    classifier = Block("classifier", "classification head", Kind.HEAD, "", modules, ops=classifier_ops)
    return Architecture("ModernBertForSequenceClassification", (*_backbone(on, BACKBONE), classifier))


FAMILY = Family(
    name="modernbert",
    title="ModernBERT",
    symbols=SYMBOLS,
    heads=(Head.BASE, Head.MASKED_LM, Head.SEQUENCE_CLASSIFICATION),
    declare=declare,
    flag_keys=("attention_bias", "mlp_bias", "norm_bias", "classifier_bias", "decoder_bias", "tie_word_embeddings"),
    differences=(
        "**No biases.** By default no linear layer of the backbone has a bias and no LayerNorm has a "
        "shift β: each norm is *H* scale weights, and every projection is a bare weight matrix. Of BERT's "
        "9*H* + *I* small terms per layer only the two norms' 2*H* scales remain; the 7*H* + *I* biases "
        "and shifts are gone. `attention_bias`, `mlp_bias`, `norm_bias` and `classifier_bias` bring them "
        "back one group at a time.",
        "**A gated feed-forward network.** `mlp.Wi` is 2*I* × *H*: it produces a value half and a gate "
        "half (GeGLU), multiplied together before `mlp.Wo` (*H* × *I*) maps back. The feed-forward block "
        "therefore holds 3*HI* weights where BERT's holds 2*HI*; ModernBERT picks a smaller *I* "
        "(1,152 for a 768-wide model) to pay for it.",
        "**Fused attention projections.** `attn.Wqkv` is one 3*H* × *H* matrix holding query, key and "
        "value for all heads, followed by `attn.Wo` (*H* × *H*): the same 4*H*² as BERT, in two tensors "
        "instead of four.",
        "**Rotary positions: no position table.** Positions enter by rotating queries and keys inside "
        "attention, which needs only fixed frequency buffers, so there is no *P* × *H* table and "
        "`max_position_embeddings` (8,192) does not change the count. There are no token types either.",
        "**Pre-norm, with a final norm.** Each layer normalizes its input before attention and before "
        "the feed-forward network, except that layer 0 has no attention norm (it is an identity: the "
        "embedding norm has just run). After the last layer, `final_norm` adds *H* more. The masked-LM "
        "head is a dense layer and a norm (`head`), then a `decoder` whose weight is the token embedding "
        "table (tied) and whose bias (`decoder_bias`) is its own *V*. Classification uses the same "
        "`head` and a classifier, with no pooler.",
    ),
    extra_config=EXTRA_CONFIG,
    compute_symbols=(
        Symbol("d", "hidden_size / num_attention_heads", "head size", value=div("hidden_size", "num_attention_heads")),
    ),
    checks=(common.heads_divide_hidden, common.padding_in_vocabulary),
    switches=(
        *(
            Switch(key, truthy(key), meaning, blocks)
            for key, meaning, blocks in (
                ("attention_bias", "the attention projections have biases", ("layer-0", "layer")),
                ("mlp_bias", "the feed-forward projections have biases", ("layer-0", "layer")),
                (
                    "norm_bias",
                    "every norm has a shift β",
                    ("embeddings", "layer-0", "layer", "final-norm", "mlm-head", "classifier"),
                ),
                ("classifier_bias", "the head's dense layer has a bias", ("mlm-head", "classifier")),
                ("decoder_bias", "the decoder has its own bias", ("mlm-head",)),
            )
        ),
        common.tied("mlm-head"),
        Switch("later_layers", gt("num_hidden_layers", 1), "layers after layer 0 exist", ("layer",)),
    ),
)
