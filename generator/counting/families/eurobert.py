"""EuroBERT (transformers ``model_type`` "eurobert"): modeling_eurobert.py in transformers 5.23.

A Llama-style encoder. Registration order follows EuroBertModel (``embed_tokens``, ``layers``,
``norm``; the rotary embedding holds buffers only), EuroBertDecoderLayer (``self_attn``, ``mlp``,
then both norms, ``input_layernorm`` and ``post_attention_layernorm``) and the heads (``lm_head``;
``dense`` then ``classifier``). Against BERT: no position, segment or embedding-norm tables; RMSNorm
before each sub-layer and after the last; rotary tables made once a step; a SwiGLU feed-forward
network; and grouped-query attention, whose key and value have num_key_value_heads heads.

The forward repeats each key and value head for its group before the scores (``repeat_kv``): the
products and what they keep are as wide as the query, A heads of head_dim. The rotary tables are
made afresh for the s positions each step (no cache by length), so no formula bends with s. Every bias follows
``attention_bias`` or ``mlp_bias`` (both off by default), but the classifier's two always have one.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import const, div, eq, given, gt, head_is, mod, ne, truthy
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.blocks import gated, prenorm, rmsnorm, rotary
from generator.counting.families.symbols import shared, symbols
from generator.counting.flow import own
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import TOKENS, b, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule, Switch, per_setting_read

V, H, I, A, C = (Poly.symbol(name) for name in "VHIAC")
K, D, d = (Poly.symbol(name) for name in "KDd")

SYMBOLS = symbols(
    "V",
    shared("H", minimum=0),
    "ILA",
    # Null means A (one key and value head per query head), as EuroBertConfig.__post_init__ sets it.
    arch.Symbol("K", "num_key_value_heads", optional=True),
    # Null means H / A, as EuroBertConfig.__post_init__ sets it.
    arch.Symbol("D", "head_dim", optional=True, minimum=0),
    rotary.HEAD_SIZE_SYMBOL,
    "C",
)

BACKBONE = "model."  # the attribute every head class stores the encoder under
WITH_LAYERS = gt("num_hidden_layers", 0)


def _head_size(on: Mapping[str, bool]) -> Poly:
    """head_dim when the config gives it, else H / A."""
    return D if on["own_head_dim"] else d


def _widths(on: Mapping[str, bool]) -> tuple[Poly, Poly]:
    """The query's width (A heads) and the key's and value's (K heads): H and K·d by default."""
    query = A * D if on["own_head_dim"] else H
    if not on["grouped"]:
        return query, query
    return query, K * _head_size(on)


# What each norm writes: the attention's input, the feed-forward network's, the encoder's output.
NORM_WRITES = {
    "input_layernorm": "attention norm output",
    "post_attention_layernorm": "feed-forward norm output",
    "norm": "norm output",
}


def _norm(path: str, key: str) -> arch.Module:
    return rmsnorm.rms_norm(path, key, H, writes=NORM_WRITES[path])


def _layer_modules(on: Mapping[str, bool]) -> tuple[arch.Module, ...]:
    query, key_value = _widths(on)
    bias = on["attention_bias"]
    kv_heads = "K" if on["grouped"] else "A"
    part = arch.Part.ATTENTION
    normed = "attention norm output"  # one storage, which the query, key and value all read
    attention = (
        linear("self_attn.q_proj", "query", H, query, bias=bias, heads="A", part=part, saves=normed, writes="query"),
        linear(
            "self_attn.k_proj", "key", H, key_value, bias=bias, heads=kv_heads, part=part, saves=normed, writes="key"
        ),
        linear(
            "self_attn.v_proj",
            "value",
            H,
            key_value,
            bias=bias,
            heads=kv_heads,
            part=part,
            saves=normed,
            writes="value",
        ),
        linear("self_attn.o_proj", "attention-output", query, H, bias=bias, part=part),
    )
    feed_forward = gated.split(
        "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", biases=(on["mlp_bias"],) * 3, reads="feed-forward norm output"
    )
    return prenorm.layer(
        _norm,
        attention,
        feed_forward,
        attention_norm="input_layernorm",
        feed_forward_norm="post_attention_layernorm",
        order=prenorm.NORMS_LAST,
    )


def _layer_ops(on: Mapping[str, bool]) -> tuple[arch.Op, ...]:
    """Attention over A heads of the query's width, keeping the rotary tables; then SiLU and the gate.

    The key and value are kept at the query's width: repeat_kv copies each of K heads for its group
    (a new storage), and with one head per group the product copies the transposed view instead.
    One head for all is kept alone at b = 1 (``_one_head_kept``).
    """
    query, _ = _widths(on)
    attention = ops.attention(
        "self_attn", query, A, "attention_dropout", float_softmax=True, writes="self_attn.o_proj input"
    )
    if on["grouped"] and on["one_key_value_head"]:
        attention = dataclasses.replace(attention, saved=_one_head_kept(on, attention.saved))
    return (
        # Shared by every layer, so counted once whatever L: without layers nothing keeps them.
        # q·cos keeps cos only when q needs a gradient: the tables are kept where the query or key needs one.
        rotary.rotated(attention, _tables(on)),
        *gated.split_ops("mlp.act_fn", "mlp", gate="mlp.gate_proj", up="mlp.up_proj", writes="mlp.down_proj input"),
    )


def _tables(on: Mapping[str, bool]) -> tuple[arch.Saved, arch.Saved]:
    cos, sin = rotary.tables(width=_head_size(on), when=WITH_LAYERS)
    return dataclasses.replace(cos, needs=(own(0), own(1))), dataclasses.replace(sin, needs=(own(0), own(1)))


# The residual stream skips the norms: each norm reads the sum before it, each sub-layer adds to it.
JOINS = (
    arch.Join((common.LAYER_INPUT,), "input_layernorm input"),
    arch.Join(("self_attn.o_proj output", common.LAYER_INPUT), "post_attention_layernorm input"),
    arch.Join(("mlp.down_proj output", "post_attention_layernorm input"), "layer output"),
)


def _one_head_kept(on: Mapping[str, bool], saved: tuple[arch.Saved, ...]) -> tuple[arch.Saved, ...]:
    """With one key and value head for all query heads, repeat_kv's reshape is a view of that head.
    The products fold it without a copy when b = 1 (they keep the head itself, s × d) and copy it
    for every query head otherwise (b × s × A·d, as with one head per query head)."""
    width = K * _head_size(on)
    repeated = tuple(
        dataclasses.replace(t, key=f"repeated {t.key}", batch_above_one=True)
        for t in saved
        if t.key in ("key", "value")
    )
    # The scores' product keeps the key head when the query needs a gradient, the values' when the scores do.
    heads = (
        arch.Saved("key head", (s, width), batch_one=True, needs=(own(0),)),
        arch.Saved("value head", (s, width), batch_one=True, needs=(own(0), own(1))),
    )
    return tuple(t for t in saved if t.key not in ("key", "value")) + repeated + heads


@per_setting_read
def _backbone(on: Mapping[str, bool], prefix: str, _pooler: bool) -> tuple[arch.Block, ...]:
    words = common.token_table(H, "embed_tokens")
    outputs = ((words.writes, common.HIDDEN),)
    embeddings = arch.Block("embeddings", arch.Kind.EMBEDDINGS, prefix, (words,), outputs=outputs)
    layer = common.layers(f"{prefix}layers.{{0}}.", _layer_modules(on), _layer_ops(on), JOINS, "layer output")
    return (embeddings, layer, prenorm.final_norm(prefix, _norm("norm", "final-norm")))


def _lm_head(on: Mapping[str, bool]) -> arch.Block:
    """lm_head: H to V, with a bias only with mlp_bias; the token table itself when tied."""
    key = "decoder-tied" if on["tied"] else "decoder-untied"
    words = f"{BACKBONE}embed_tokens.weight" if on["tied"] else None
    decoder = linear(
        "lm_head", key, H, V, bias=on["mlp_bias"], tied_to=words, saves=common.ENCODER_OUTPUT, writes="logits"
    )
    # ForMaskedLMLoss upcasts the logits to fp32.
    loss = ops.cross_entropy("loss", "masked-lm-loss", TOKENS, V, ops.LABELS, dtype=arch.Dtype.FLOAT32)
    return heads.mlm_head("", (decoder,), (loss,))


# classifier_pooling "mean" (no attention mask) averages over the tokens, which keeps nothing;
# "bos" reads token 0, a view that keeps the encoder's output.
MEAN = eq("classifier_pooling", const("mean"))
LATE = eq("classifier_pooling", const("late"))
POOLINGS = ("bos", "mean", "late")


def _classifier(on: Mapping[str, bool]) -> arch.Block:
    """dense, nn.GELU and classifier: on b pooled rows, or with "late" on every token, whose logits it averages."""
    shape: tuple[Poly, ...]
    if on["late_pooling"]:
        rows, shape = TOKENS, (b, s, H)
        pooled: tuple[arch.Saved, ...] = (common.ENCODER_OUTPUT,)
    else:
        rows, shape = b, (b, H)
        pooled = ops.either(MEAN, arch.Saved("mean pooled", (b, H)), common.ENCODER_OUTPUT)
    modules = (
        linear("dense", "classifier-dense", H, H, rows=rows, saves=pooled, reads="pooled", writes="hidden"),
        linear(
            "classifier", "classifier-output", H, C, rows=rows, saves=arch.Saved("activated", shape), writes="logits"
        ),
    )
    activation = ops.activation(
        "activation", "classifier-activation", "gelu", shape, before="hidden", after="activated", fixed=True
    )
    # Token 0, the mean over the tokens, or every token: each keeps nothing of its own.
    flow = {
        "inputs": ((common.ENCODER_OUTPUT.key, common.HIDDEN),),
        "joins": (arch.Join((common.ENCODER_OUTPUT.key,), "pooled"),),
    }
    return arch.Block("classifier", arch.Kind.HEAD, "", modules, ops=(activation, *heads.class_loss()), **flow)  # type: ignore[arg-type]


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers EuroBERT class for this head (it has no pooler)."""
    on_top = {
        arch.Head.MASKED_LM: lambda: (_lm_head(on),),
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (_classifier(on),),
    }
    return common.assemble("EuroBert", BACKBONE, head, functools.partial(_backbone, on), on_top, pooled=frozenset())


OWN_HEAD_DIM = given("head_dim")
GROUPED = given("num_key_value_heads")

# EuroBertAttention scales by head_dim ** -0.5, which raises for a head size of 0.
zero_head_size = Rule(
    "zero-head-size",
    WITH_LAYERS & ((OWN_HEAD_DIM & eq("head_dim", 0)) | (~OWN_HEAD_DIM & eq("hidden_size", 0))),
    ("hidden_size", "head_dim"),
)

# The rotary tables have ⌈d/2⌉ frequencies, twice: with an odd head size they are one wider than the heads.
odd_head_size = Rule(
    "odd-head-size",
    WITH_LAYERS
    & (
        (OWN_HEAD_DIM & eq(mod("head_dim", 2), 1))
        | (~OWN_HEAD_DIM & eq(mod(div("hidden_size", "num_attention_heads"), 2), 1))
    ),
    ("hidden_size", "num_attention_heads", "head_dim"),
)

# repeat_kv makes K · ⌊A / K⌋ heads of keys and values, which the scores cannot pair with A query heads
# unless K divides A.
kv_heads_divide_heads = Rule(
    "kv-heads-divide-heads",
    WITH_LAYERS & GROUPED & ne(mod("num_attention_heads", "num_key_value_heads"), 0),
    ("num_attention_heads", "num_key_value_heads"),
)

# Any other pooling leaves the classifier's logits unset, and the forward raises.
unknown_pooling = Rule(
    "unknown-pooling",
    head_is(arch.Head.SEQUENCE_CLASSIFICATION.value)
    & ne("classifier_pooling", const("bos"))
    & ne("classifier_pooling", const("mean"))
    & ~LATE,
    ("classifier_pooling",),
)

# attention_dropout is read only by nn.functional.dropout, in the forward of each layer.
DROPOUTS: dropouts.Dropouts = (("attention_dropout", dropouts.with_layers()),)

STEP_RULES = (
    *step_rules.COMMON,
    odd_head_size,
    kv_heads_divide_heads,
    unknown_pooling,
    dropouts.dropout_range("attention_dropout", dropouts.with_layers()),
    *dropouts.in_step(DROPOUTS),
)

FAMILY = arch.Family(
    name="eurobert",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    build_rules=(
        common.heads_divide_hidden,
        common.padding_in_vocabulary,
        zero_head_size,
        *common.PROBLEM_TYPE_RULES,
        *activations.rules("eurobert"),
    ),
    step_rules=STEP_RULES,
    switches=(
        Switch("attention_bias", truthy("attention_bias"), ("layer",)),
        Switch("own_head_dim", OWN_HEAD_DIM, ("layer",)),
        Switch("grouped", GROUPED, ("layer",)),
        # One key and value head for several query heads (multi-query attention): see _one_head_kept.
        Switch(
            "one_key_value_head",
            GROUPED & eq("num_key_value_heads", 1) & gt("num_attention_heads", 1),
            ("layer",),
        ),
        Switch("mlp_bias", truthy("mlp_bias"), ("layer", "mlm-head")),
        common.tied("mlm-head"),
        Switch("late_pooling", LATE, ("classifier",)),
    ),
    ground_truth=GroundTruth(
        draws={
            "attention_bias": ((True, False), (ABSENT,)),
            "mlp_bias": ((True, False), (ABSENT,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "num_key_value_heads": ((1, 2), (ABSENT, None)),
            "head_dim": ((4, 6, 3), (ABSENT, None)),
            "classifier_pooling": (POOLINGS, (ABSENT,)),
            "pad_token_id": ((0, 3), (None, 40)),
            # Its attention dropout defaults to 0, so no catalog card runs its mask: the sample does.
            "attention_dropout": ((0.0, 0.1), (ABSENT,)),
        },
        derived=("num_key_value_heads", "head_dim"),
        # EuroBertConfig's special tokens default to ids of its 128,256-row vocabulary.
        token_ids={"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "mask_token_id": 3},
    ),
)
