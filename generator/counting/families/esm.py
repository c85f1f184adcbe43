"""ESM (transformers ``model_type`` "esm"): modeling_esm.py in transformers 5.23, the ESM-2 protein models.

Registration order follows EsmModel (``embeddings``, ``encoder``, ``pooler`` for the bare model,
``contact_head``), EsmEmbeddings (``word_embeddings``, ``layer_norm`` with emb_layer_norm_before,
``position_embeddings`` with absolute positions), EsmLayer (``attention``: query, key, value,
output dense, then its pre-attention ``LayerNorm``; ``intermediate``, ``output``, then the
pre-feed-forward ``LayerNorm``), EsmEncoder (the layers, then ``emb_layer_norm_after``) and
the heads. The rotary embedding holds a buffer only.

What the forward adds: rotary tables made once a step, shared by every layer; ESM's own gelu,
``x · 0.5 · (1 + erf(x / √2))``, which keeps three tensors where nn.GELU keeps one; and token
dropout, a rescaling of the embeddings by the share of masked tokens. EsmEmbeddings builds a
dropout that its forward never calls. The contact head reads attention maps that a training
step does not ask for: its parameters count, and it computes nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import const, eq, is_null
from generator.counting.families import bert, common, dropouts, heads, step_rules
from generator.counting.families.blocks import prenorm, rotary
from generator.counting.families.symbols import symbols
from generator.counting.flow import own, param
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import TOKENS, b, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule, Switch

V, P, H, I, A, L = (Poly.symbol(name) for name in "VPHIAL")

SYMBOLS = symbols("VPHILAC")

BACKBONE = "esm."  # the attribute every head class stores the encoder under
ROTARY = eq("position_embedding_type", const("rotary"))
# EsmConfig takes null for these flags, as false: compared with true, they are no flags the card check types.
TOKEN_DROPOUT = eq("token_dropout", const(True))
# q·cos keeps cos only when q needs a gradient: the tables are kept where the query or key needs one.
COS, SIN = (replace(table, needs=(own(0), own(1))) for table in rotary.tables(when=ROTARY))
# What each of a layer's norms writes: the attention's input, and the feed-forward network's.
NORM_WRITES = {"attention.LayerNorm": "attention norm output", "LayerNorm": "intermediate.dense input"}


def _norm(path: str, key: str) -> arch.Module:
    return layer_norm(path, key, H)


def _layer_norm(path: str, key: str) -> arch.Module:
    """A layer's norm, writing what its sub-layer reads."""
    return layer_norm(path, key, H, writes=NORM_WRITES[path])


def esm_gelu(path: str, label: str, shape: tuple[Poly, ...], reads: str, writes: str) -> arch.Op:
    """ESM's gelu, x · 0.5 · (1 + erf(x / √2)): erf keeps x / √2, and the last product both its factors."""
    return arch.Op(
        path,
        label,
        saved=(
            arch.Saved(f"{path} scaled input", shape),
            arch.Saved(f"{path} half input", shape),
            arch.Saved(f"{path} erf plus one", shape),
        ),
        reads=(reads,),
        writes=writes,
    )


def _embeddings(on: Mapping[str, bool], prefix: str) -> arch.Block:
    words = common.token_table(H)
    modules: tuple[arch.Module, ...] = (words,)
    summed = "layer_norm input" if on["embedding_norm"] else "embeddings output"
    if on["embedding_norm"]:
        modules += (layer_norm("layer_norm", "embedding-layernorm", H, writes="embeddings output"),)
    if on["absolute"]:
        # create_position_ids_from_input_ids numbers the tokens from the padding index: new (b, s) ids.
        modules += (common.position_table(H, ids=arch.Saved("position ids", (b, s), arch.Dtype.INT64)),)
    # Token dropout zeroes the masked tokens (masked_fill keeps the mask) and divides by one minus
    # their share, an fp32 (b, 1, 1) tensor the division keeps. It runs on input_ids only: peft's
    # prompt tuning passes embeddings and skips it. So it keeps them when the token table trains,
    # which is when its input needs a gradient under every other method.
    trains = (param(f"{words.path}.weight"),)
    token_dropout = arch.Op(
        "token_dropout",
        "token-dropout",
        saved=(
            arch.Saved("masked tokens", (b, s), arch.Dtype.BOOL, when=TOKEN_DROPOUT, needs=trains),
            arch.Saved("unmasked share", (b,), arch.Dtype.FLOAT32, when=TOKEN_DROPOUT, needs=trains),
        ),
        reads=(words.writes,),
        writes="token_dropout output",
    )
    positions = tuple(m.writes for m in modules if m.key.startswith("position"))
    return arch.Block(
        "embeddings",
        arch.Kind.EMBEDDINGS,
        f"{prefix}embeddings.",
        modules,
        ops=(token_dropout,),
        joins=(arch.Join((token_dropout.writes, *positions), summed),),
        outputs=(("embeddings output", common.HIDDEN),),
    )


def _attention(path: str) -> tuple[arch.Module, ...]:
    """EsmAttention: query, key, value and the output dense; its LayerNorm is the layer's pre-norm."""
    return (
        *common.query_key_value(
            (f"{path}.self.query", f"{path}.self.key", f"{path}.self.value"),
            reads=("attention norm output", "attention norm output"),
        ),
        common.attention_output(f"{path}.output.dense"),
    )


def _layer(on: Mapping[str, bool], prefix: str) -> arch.Block:
    modules = prenorm.layer(
        _layer_norm,
        _attention("attention"),
        common.feed_forward("intermediate.dense", "output.dense"),
        attention_norm="attention.LayerNorm",
        feed_forward_norm="LayerNorm",
        order=prenorm.NORMS_AFTER,
    )
    if on["cross_attention"]:
        # A decoder's EsmAttention over the encoder's states, after the attention's norm; a step with
        # input_ids alone never runs it.
        cross = (*_attention("crossattention"), _norm("crossattention.LayerNorm", "attention-norm"))
        idle = tuple(arch.Module(m.path, f"cross-attention-{m.key}", m.params, m.heads, part=m.part) for m in cross)
        modules = (*modules[:5], *idle, *modules[5:])
    attention = ops.attention(
        "attention.self", H, A, "attention_probs_dropout_prob", writes="attention.output.dense input"
    )
    layer_ops = (
        rotary.rotated(attention, (COS, SIN)),
        common.attention_output_dropout(),
        esm_gelu(
            "intermediate.gelu", "feed-forward-activation", (b, s, I), "feed-forward hidden", "feed-forward activated"
        ),
        ops.dropout("output.dropout", "output-dropout", (b, s, H), common.HIDDEN_DROPOUT, reads="output.dense output"),
    )
    return common.layers(f"{prefix}encoder.layer.{{0}}.", modules, layer_ops, JOINS, "layer output")


# The residual stream skips the norms: the attention's norm reads the layer's input as it is, and
# each sub-layer's output adds to its input.
JOINS = (
    arch.Join((common.LAYER_INPUT,), "attention.LayerNorm input"),
    arch.Join(("attention.output.dropout output", common.LAYER_INPUT), "LayerNorm input"),
    arch.Join(("output.dropout output", "LayerNorm input"), "layer output"),
)


def _contact_head(prefix: str) -> arch.Block:
    """EsmContactPredictionHead: a logistic regression over every layer's and head's attention map."""
    regression = replace(ops.idle(linear("regression", "contact-regression", L * A, Poly.constant(1))), writes="")
    # It computes nothing in a step; its flow only says that it runs after the encoder.
    inputs = ((common.ENCODER_OUTPUT.key, common.HIDDEN),)
    return arch.Block("contact-head", arch.Kind.HEAD, f"{prefix}contact_head.", (regression,), inputs=inputs)


def _backbone(on: Mapping[str, bool], prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    blocks: tuple[arch.Block, ...] = (
        _embeddings(on, prefix),
        _layer(on, prefix),
        prenorm.final_norm(f"{prefix}encoder.", _norm("emb_layer_norm_after", "final-norm")),
    )
    if pooler:
        blocks += (common.bert_pooler(prefix),)
    return (*blocks, _contact_head(prefix))


def _lm_head(on: Mapping[str, bool]) -> arch.Block:
    """EsmLMHead: its own bias, dense, ESM's gelu, layer_norm, and a decoder without a bias of its own."""
    if on["tied"]:
        words = f"{BACKBONE}embeddings.word_embeddings.weight"
        decoder = linear("decoder", "decoder-tied", H, V, bias=False, tied_to=words, writes="logits")
    else:
        decoder = linear("decoder", "decoder-untied", H, V, bias=False, writes="logits")
    head_ops = (
        esm_gelu("gelu", "transform-activation", (b, s, H), "transform hidden", "transform activated"),
        ops.cross_entropy("loss", "masked-lm-loss", TOKENS, V, ops.LABELS),
    )
    return heads.mlm_head("lm_head.", (*heads.mlm_transform("dense", "layer_norm"), decoder), head_ops)


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers ESM class for this head (only the bare model is pooled)."""
    on_top = {
        arch.Head.MASKED_LM: lambda: (_lm_head(on),),
        # EsmClassificationHead: on token 0, tanh, with the hidden dropout.
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.dense_classifier("tanh", dropout=common.HIDDEN_DROPOUT),),
    }
    return common.assemble(
        "Esm", BACKBONE, head, functools.partial(_backbone, on), on_top, pooled=frozenset({arch.Head.BASE})
    )


ABSOLUTE = eq("position_embedding_type", const("absolute"))
CROSS_ATTENTION = eq("add_cross_attention", const(True))
# EsmLayer refuses cross-attention in an encoder, in BERT's words; null is false for both keys.
cross_attention_needs_decoder = replace(
    common.cross_attention_needs_decoder, fails=CROSS_ATTENTION & ~eq("is_decoder", const(True))
)
# The attention's dropout is nn.functional.dropout in the forward: nothing checks it when the model is built.
# The embeddings' dropout is never called: the hidden dropout runs in the layers and in the classifier.
DROPOUTS: dropouts.Dropouts = (
    ("hidden_dropout_prob", dropouts.with_layers() | dropouts.CLASSIFIER),
    ("attention_probs_dropout_prob", dropouts.with_layers()),
)
padding_fits_positions = common.padding_fits("max_position_embeddings")

STEP_RULES = (
    *step_rules.COMMON,
    step_rules.zero_width_heads("hidden_size"),
    # inv_freq has ⌈d/2⌉ frequencies, so an odd d makes tables one wider than the heads.
    rotary.odd_head_size(when=ROTARY),
    # create_position_ids_from_input_ids compares the ids with the padding index, which must be a number.
    Rule("esm-null-padding", is_null("pad_token_id"), ("pad_token_id",)),
    # Token dropout compares the ids with mask_token_id, and a comparison with null is no tensor.
    Rule("esm-null-mask-token", TOKEN_DROPOUT & is_null("mask_token_id"), ("mask_token_id",)),
    dropouts.dropout_range("attention_probs_dropout_prob", dropouts.with_layers()),
    *dropouts.in_step(DROPOUTS),
)

FAMILY = arch.Family(
    name="esm",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    compute_symbols=(rotary.HEAD_SIZE_SYMBOL,),
    build_rules=(
        common.in_every_layer(common.heads_divide_hidden),
        common.in_every_layer(cross_attention_needs_decoder),
        common.padding_in_vocabulary,
        replace(padding_fits_positions, fails=ABSOLUTE & padding_fits_positions.fails),
        *common.PROBLEM_TYPE_RULES,
        dropouts.dropout_range("hidden_dropout_prob"),
    ),
    step_rules=STEP_RULES,
    null_refused=("hidden_dropout_prob",),  # nn.Dropout(None) compares None with 0
    switches=(
        common.tied("mlm-head"),
        Switch("cross_attention", CROSS_ATTENTION, ("layer",)),
        Switch("absolute", ABSOLUTE, ("embeddings",)),
        Switch("embedding_norm", eq("emb_layer_norm_before", const(True)), ("embeddings",)),
    ),
    ground_truth=GroundTruth(
        draws={
            **{key: bert.DRAWS[key] for key in ("tie_word_embeddings", "is_decoder", "add_cross_attention")},
            "position_embedding_type": (("rotary", "absolute"), (ABSENT, None)),
            "emb_layer_norm_before": ((True, False), (ABSENT, None)),
            "token_dropout": ((True, False), (ABSENT,)),
            "pad_token_id": ((1, 3), (None,)),
            "mask_token_id": ((4, 5), (None,)),
        },
        # EsmConfig has no vocabulary size, padding or mask token of its own.
        token_ids={"pad_token_id": 1, "mask_token_id": 4},
    ),
)
