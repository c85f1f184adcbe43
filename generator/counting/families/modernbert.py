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
from dataclasses import replace
from typing import Any

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import const, eq, gt, ne, truthy
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.blocks import gated, prenorm, rotary
from generator.counting.families.symbols import shared, symbols
from generator.counting.flow import own
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import TOKENS, b, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Switch, per_setting_read

V, H, I, C, A = (Poly.symbol(name) for name in "VHICA")

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


def _norm(on: Mapping[str, bool], path: str, key: str, *, rows: Poly = TOKENS, saves: str = "") -> arch.Module:
    """nn.LayerNorm(H, bias=norm_bias): the scale γ always, the shift β only with norm_bias."""
    return layer_norm(path, key, H, rows=rows, saves=saves, bias=on["norm_bias"])


# Rotary tables made once a step for the global layers, and once for the local (sliding-window) ones.
LOCAL_LAYERS = gt("num_hidden_layers", 1) & ne("global_attn_every_n_layers", 1)
# Wqkv's one output is the query, the key and the value: every table is kept when it needs a gradient.
ROTARY_GLOBAL, ROTARY_LOCAL = (
    (replace(cos, needs=(own(0),)), replace(sin, needs=(own(0),)))
    for cos, sin in (rotary.tables("global rotary"), rotary.tables("local rotary", when=LOCAL_LAYERS))
)
QKV = "attn.Wqkv output"


def _layer_ops() -> tuple[arch.Op, ...]:
    """Attention with rotary tables, the gated GELU (act(input) · gate, both halves of Wi's output)
    and the dropouts after attention and feed-forward."""
    # The values are a (b, A, s, d) view of Wqkv's (b, s, 3H) output, which the product with the
    # probabilities folds to (b·A, s, d): without a copy when b = 1 or A = 1 (it then keeps all of
    # Wqkv's output, 3·b·s·H), as a b·s·H copy otherwise. The softmax runs in fp32 (eager_attention_forward).
    one_head = eq("num_attention_heads", 1)
    rest = (
        arch.Saved("rest of Wqkv output", (s, 2 * H), batch_one=True, when=~one_head),
        arch.Saved("rest of Wqkv output", (b, s, 2 * H), when=one_head),
    )
    attention = ops.attention(
        "attn", H, A, "attention_dropout", float_softmax=True, reads=(QKV, QKV, QKV), writes="attn.Wo input"
    )
    return (
        rotary.rotated(replace(attention, saved=(*attention.saved, *rest)), ROTARY_GLOBAL, ROTARY_LOCAL),
        *gated.fused_ops(
            "mlp.act", "mlp.gate", activation_key="hidden_activation", reads="mlp.Wi output", writes="mlp.drop input"
        ),
        ops.dropout(
            "attn.out_drop",
            "attention-dropout",
            (b, s, H),
            ops.probability("attention_dropout"),
            reads="attn.Wo output",
        ),
        ops.dropout(
            "mlp.drop", "feed-forward-dropout", (b, s, I), ops.probability("mlp_dropout"), writes="mlp.Wo input"
        ),
    )


def _layer_flow(normed: bool) -> dict[str, object]:
    """A layer's flow: the attention reads its norm's output (layer 0 has none: the input itself), and
    each sub-layer's output adds to its input, the residual stream skipping the norms."""
    into_attention = arch.Join((common.LAYER_INPUT,), "attn_norm input" if normed else "attention input")
    return {
        "joins": (
            into_attention,
            arch.Join(("attn.out_drop output", common.LAYER_INPUT), "mlp_norm input"),
            arch.Join(("mlp.Wo output", "mlp_norm input"), "layer output"),
        ),
        "inputs": ((common.LAYER_INPUT, common.HIDDEN),),
        "outputs": (("layer output", common.HIDDEN),),
    }


# What each of a layer's norms writes: the attention's input, and the feed-forward network's.
NORM_WRITES = {"attn_norm": "attention input", "mlp_norm": "mlp.Wi input"}


def _layer_norm(on: Mapping[str, bool], path: str, key: str) -> arch.Module:
    return layer_norm(path, key, H, bias=on["norm_bias"], writes=NORM_WRITES[path])


def _layer_modules(on: Mapping[str, bool], attn_norm: bool) -> tuple[arch.Module, ...]:
    attention_bias = on["attention_bias"]
    attention = (
        # One fused projection for query, key and value of all heads: 3H rows.
        linear(
            "attn.Wqkv",
            "fused-query-key-value",
            H,
            3 * H,
            bias=attention_bias,
            part=arch.Part.ATTENTION,
            saves="layer input",
            reads="attention input",
        ),
        linear("attn.Wo", "attention-output", H, H, bias=attention_bias, part=arch.Part.ATTENTION),
    )
    return prenorm.layer(
        functools.partial(_layer_norm, on),
        attention,
        gated.fused("mlp.Wi", "mlp.Wo", bias=on["mlp_bias"]),
        attention_norm="attn_norm" if attn_norm else None,
        feed_forward_norm="mlp_norm",
    )


@per_setting_read
def _backbone(on: Mapping[str, bool], prefix: str, _pooler: bool) -> tuple[arch.Block, ...]:
    embeddings = common.embeddings_block(
        prefix,
        (common.token_table(H, "tok_embeddings"), _norm(on, "norm", "embedding-norm")),
        dropout=ops.probability("embedding_dropout"),
    )
    # Layer 0 has no attention norm: the embedding norm already normalizes its input.
    modules = functools.partial(_layer_modules, on)
    layers = prenorm.first_apart(
        f"{prefix}layers.{{0}}.", modules, _layer_ops(), later=lambda: on["later_layers"], flow=_layer_flow
    )
    return (embeddings, *layers, prenorm.final_norm(prefix, _norm(on, "final_norm", "final-norm")))


def _prediction_head(
    on: Mapping[str, bool],
    rows: Poly = TOKENS,
    saves: arch.Saved | tuple[arch.Saved, ...] = common.ENCODER_OUTPUT,
    *,
    reads: str = common.ENCODER_OUTPUT.key,
    writes: str = "decoder input",
) -> tuple[arch.Module, ...]:
    """ModernBertPredictionHead: dense (bias only with classifier_bias), activation, norm."""
    return (
        linear(
            "head.dense",
            "head-dense",
            H,
            H,
            bias=on["classifier_bias"],
            rows=rows,
            saves=saves,
            reads=reads,
            writes="head hidden",
        ),
        layer_norm("head.norm", "head-norm", H, rows=rows, saves="head activated", bias=on["norm_bias"], writes=writes),
    )


def _head_ops(rows: tuple[Poly, ...]) -> tuple[arch.Op, ...]:
    shape = (*rows, H)
    return (
        ops.activation(
            "head.act", "head-activation", "hidden_activation", shape, before="head hidden", after="head activated"
        ),
    )


# classifier_pooling "mean" multiplies by a (b, s, 1) mask of ones and divides by its (b, 1) sum,
# keeping both; "cls" takes token 0, a view of the encoder's output.
MEAN = eq("classifier_pooling", const("mean"))
MASK = (
    arch.Saved("pooling mask", (b, s), arch.Dtype.BOOL, when=MEAN),
    arch.Saved("token counts", (b,), arch.Dtype.INT64, when=MEAN),
)


def _classifier(on: Mapping[str, bool]) -> arch.Block:
    """Pooling (token 0 or the mean), the prediction head on b rows, a dropout, the classifier."""
    pooled = ops.either(MEAN, arch.Saved("mean pooled", (b, H)), common.ENCODER_OUTPUT)
    acts = ops.probability("classifier_dropout")
    saved = ops.either(acts, arch.Saved("dropped", (b, H)), arch.Saved("head output", (b, H)))
    classifier = linear("classifier", "classifier", H, C, rows=b, saves=saved, reads="dropped", writes="logits")
    modules = (*_prediction_head(on, b, pooled, reads="pooled", writes="head output"), classifier)
    classifier_ops = (
        arch.Op("pooling", "mean-pooling", saved=MASK, reads=(common.ENCODER_OUTPUT.key,), writes="pooled"),
        *_head_ops((b,)),
        ops.dropout("drop", "classifier-dropout", (b, H), acts, reads="head output", writes="dropped"),
        *heads.class_loss(),
    )
    inputs = ((common.ENCODER_OUTPUT.key, common.HIDDEN),)
    return arch.Block("classifier", arch.Kind.HEAD, "", modules, ops=classifier_ops, inputs=inputs)


def _decoder(on: Mapping[str, bool]) -> arch.Module:
    """The masked-LM decoder: the token table again when tied, with a bias of its own by default."""
    key = "decoder-tied" if on["tied"] else "decoder-untied"
    words = f"{BACKBONE}embeddings.tok_embeddings.weight" if on["tied"] else None
    return linear("decoder", key, H, V, bias=on["decoder_bias"], tied_to=words, writes="logits")


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers ModernBERT class for this head (it has no pooler)."""
    # ModernBertForMaskedLM's loss_function (ForMaskedLMLoss) upcasts the logits to fp32.
    loss = ops.cross_entropy("loss", "masked-lm-loss", TOKENS, V, ops.LABELS, dtype=arch.Dtype.FLOAT32)
    on_top = {
        arch.Head.MASKED_LM: lambda: (
            heads.mlm_head("", (*_prediction_head(on), _decoder(on)), (*_head_ops((b, s)), loss)),
        ),
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (_classifier(on),),
    }
    return common.assemble("ModernBert", BACKBONE, head, functools.partial(_backbone, on), on_top)


# ModernBertAttention makes its output's nn.Dropout only for a probability above 0 (else nn.Identity),
# so a negative one builds, and raises in the step, where the attention's nn.functional.dropout reads it.
DROPOUTS: dropouts.Dropouts = (
    ("embedding_dropout", None),
    ("mlp_dropout", dropouts.with_layers()),
    ("attention_dropout", dropouts.with_layers()),
    ("classifier_dropout", dropouts.CLASSIFIER),
)
DROPOUT_RANGES = tuple(
    dropouts.dropout_range(key, when, refused=gt(key, 1) if key == "attention_dropout" else None)
    for key, when in DROPOUTS
)
STEP_RULES = (
    *step_rules.COMMON,
    step_rules.zero_width_heads("hidden_size"),
    # The rotary tables are built for an even head size (an odd one is rounded up): the rotation
    # cannot broadcast over an odd-sized head.
    rotary.odd_head_size(),
    dropouts.dropout_range("attention_dropout", dropouts.with_layers()),
    *dropouts.in_step(DROPOUTS),
)

FAMILY = arch.Family(
    name="modernbert",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    extra_config=EXTRA_CONFIG,
    compute_symbols=(rotary.HEAD_SIZE_SYMBOL,),
    build_rules=(
        common.heads_divide_hidden,
        common.padding_in_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *DROPOUT_RANGES,
        *activations.rules("modernbert"),
    ),
    step_rules=STEP_RULES,
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
    ground_truth=GroundTruth(
        draws={
            "attention_bias": ((True, False), (ABSENT,)),
            "mlp_bias": ((True, False), (ABSENT,)),
            "norm_bias": ((True, False), (ABSENT,)),
            "classifier_bias": ((True, False), (ABSENT,)),
            "decoder_bias": ((True, False), (ABSENT,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "pad_token_id": ((0, 3), (None, 40)),
            # Its dropouts default to 0, so no catalog card runs their masks: the sample does.
            "attention_dropout": ((0.0, 0.1), (ABSENT,)),
            "mlp_dropout": ((0.0, 0.1), (ABSENT,)),
            "embedding_dropout": ((0.0, 0.1), (ABSENT,)),
        },
        # ModernBertConfig's special tokens default to ids of its 50,368-row vocabulary.
        token_ids={"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "cls_token_id": 1, "sep_token_id": 2},
    ),
)
