"""Longformer (transformers ``model_type`` "longformer"): modeling_longformer.py in transformers 5.23.

RoBERTa's classes under ``longformer.``, with one more set of projections. LongformerSelfAttention
registers ``query``, ``key`` and ``value``, then ``query_global``, ``key_global`` and
``value_global``, each H × H with a bias: six projections in every layer, not three. The layer
has no cross-attention. The embeddings, the masked-LM head and the classifier on the first
token are RoBERTa's, tensor for tensor.

``attention_window`` (an int, or one value per layer) sizes no tensor. It changes the step:
the model pads the sequence to a multiple of the widest window and attends within sliding
chunks. The classifier class puts global attention on the first token, so its global
projections run; the masked LM gives no global mask, so its do not.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import (
    div,
    eq,
    ge,
    gt,
    largest,
    le,
    length,
    minimum,
    mod,
    mul,
    ne,
    neg,
    smallest,
    sub,
)
from generator.counting.families import activations, common, dropouts, roberta
from generator.counting.families.blocks.padded import padded, substitute
from generator.counting.families.symbols import symbols
from generator.counting.flow import own, param
from generator.counting.ground_truth import ABSENT, GroundTruth, Pinned
from generator.counting.layouts import b, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule

H = common.H

SYMBOLS = symbols("VPTHILAC")

BACKBONE = "longformer."  # the attribute every head class stores the encoder under


# The step's symbols: w, half the (widest) window, and N, the windows the padded sequence holds.
W_HALF = arch.Symbol("w", "attention_window / 2", value=div(largest("attention_window"), 2))
WINDOWS_HELD = neg(div(neg("seq"), largest("attention_window")))
WINDOWS = arch.Symbol("N", "⌈s / attention_window⌉", value=WINDOWS_HELD)
# Two pieces, each 1 or 0: whether b > 1, and whether b > 1 and s > 1. A copy is made only then.
MANY = arch.Symbol("c", "1 if b > 1, else 0", value=minimum(1, sub("batch", 1)))
CUT = arch.Symbol("k", "1 if b > 1 and s > 1, else 0", value=minimum(1, mul(sub("batch", 1), sub("seq", 1))))
# Whether A = 1, for a card: with one sequence of one head, the chunks are views, not copies.
ONE_HEAD = arch.Symbol("o", "1 if A = 1, else 0", value=sub(1, minimum(1, sub("num_attention_heads", 1))))
# Whether the padded sequence holds more than one window.
WINDOWS_MORE = arch.Symbol("m", "1 if N > 1, else 0", value=minimum(1, sub(WINDOWS_HELD, 1)))
w, N, c, k, o, m = (Poly.symbol(name) for name in "wNckom")
PADDED = w * N * 2  # the length the model pads s to: N windows of 2w tokens
VIEWS = o * (Poly.constant(1) + c * -1)  # 1 when one sequence of one head reads its chunks as views


def _attention(path: str, global_token: bool) -> tuple[arch.Module, ...]:
    """LongformerAttention: the local query, key and value, their global copies, then the output.

    The local projections read the layer's input transposed to (s, b, H): each copies it first, and
    keeps its own copy. The global key and value read it the same way, for the global token only.
    The global query reads the global token's b rows alone.
    """
    self_path = f"{path}.self."
    # With one sequence the transposed input is laid out as before: the three read the layer's input itself.
    once = arch.Saved("layer input", (Poly.constant(1) + c * -1, b, s, H))
    local = tuple(
        linear(
            f"{self_path}{name}",
            name,
            H,
            H,
            heads="A",
            part=arch.Part.ATTENTION,
            saves=(once, _copy(name)),
            writes=name,
        )
        for name in ("query", "key", "value")
    )
    if global_token:
        global_projections = (
            linear(
                f"{self_path}query_global",
                "query-global",
                H,
                H,
                heads="A",
                part=arch.Part.ATTENTION,
                rows=b,
                reads=common.LAYER_INPUT,
                writes="global query",
            ),
            *(
                linear(
                    f"{self_path}{name}_global",
                    f"{name}-global",
                    H,
                    H,
                    heads="A",
                    part=arch.Part.ATTENTION,
                    saves=(once, _copy(f"{name} global")),
                    writes=f"global {name} projection",
                )
                for name in ("key", "value")
            ),
        )
    else:
        global_projections = tuple(
            arch.Module(f"{self_path}{name}_global", f"{name}-global", m.params, "A", part=arch.Part.ATTENTION)
            for name, m in zip(("query", "key", "value"), local, strict=True)
        )
    return (
        *local,
        *global_projections,
        common.attention_output(f"{path}.output.dense"),
        layer_norm(f"{path}.output.LayerNorm", "attention-layernorm", H, writes="intermediate.dense input"),
    )


def _copy(name: str) -> arch.Saved:
    return arch.Saved(f"{name} input copy", (c, b, s, H))


def sliding_attention(path: str, global_token: bool = False) -> arch.Op:
    """Sliding-chunk attention over the padded length 2wN, with no global token.

    Scores: the query and key cut into 2N − 1 overlapping chunks of 2w rows, each chunk's rows times
    its columns. Output: 2N chunks of w rows, each over 3w values. Each operand is a copy it keeps.
    With one sequence of one head, the batched products read the chunks as views instead: they keep
    the query, the key, and the value padded by w on both ends. The softmax keeps 2w + 1 scores a
    token; the two edge windows keep their masks; the model's mask of padded tokens is kept once
    for all layers. Each product keeps an operand's copy when the other operand needs a gradient.
    """
    heads = common.A
    views, copied = VIEWS, Poly.constant(1) + VIEWS * -1
    chunked = (copied, b, N * 2 + -1, w * 2, H)
    grid = (b, PADDED, heads, w * 2 + 1 + int(global_token))
    dropout = ops.probability("attention_probs_dropout_prob")
    query, key, value = own(0), own(1), own(2)
    scores = (query, key)
    op = arch.Op(
        path,
        "attention",
        products=(
            arch.Product("scores QKᵀ", b * (N * 2 + -1) * w * 2, w * 2, H, operands=((query,), (key,))),
            arch.Product("probabilities × V", b * N * w * 2, w * 3, H, operands=(scores, (value,))),
        ),
        saved=(
            arch.Saved("query chunks", chunked, needs=(key,)),
            arch.Saved("key chunks", chunked, needs=(query,)),
            arch.Saved("query", (views, b, PADDED, H), needs=(key,)),
            arch.Saved("key", (views, b, PADDED, H), needs=(query,)),
            arch.Saved("first window mask", (b, w, heads, w + 1), arch.Dtype.BOOL, needs=scores),
            arch.Saved("last window mask", (b, w, heads, w + 1), arch.Dtype.BOOL, needs=scores),
            arch.Saved("probabilities", grid, arch.Dtype.FLOAT32, needs=scores),
            arch.Saved("padded tokens", (b, PADDED), arch.Dtype.BOOL, shared=True, needs=scores),
            arch.Saved("attention dropout mask", grid, when=dropout, needs=scores),
            arch.Saved("value chunks", (copied, b, N * 2, w * 3, H), needs=scores),
            arch.Saved("padded value", (views, b, PADDED + w * 2, H), needs=scores),
            arch.Saved("diagonal probabilities", (b, heads, N * 2, w, w * 3 + 2), needs=(value,)),
        ),
        reads=("query", "key", "value"),
        writes="attention.output.dense input",
    )
    return _with_global_token(op) if global_token else op


def _with_global_token(op: arch.Op) -> arch.Op:
    """The classifier's first token, global: each token also scores it, and it scores every token.

    Four more products, each b·s′·H: the scores against the global key, the global value's share of
    each output, then the global query's scores and output over all s′ tokens.
    """
    heads = common.A
    dropout = ops.probability("attention_probs_dropout_prob")
    query, key, value, global_query, global_key, global_value = (own(n) for n in range(6))
    scores, global_scores = (query, key), (global_query, global_key)
    products = (
        arch.Product("scores against the global key", b * PADDED, Poly.constant(1), H, operands=((query,), (key,))),
        arch.Product("global probabilities × global V", b * PADDED, H, Poly.constant(1), operands=(scores, (value,))),
        arch.Product("global scores", b, PADDED, H, operands=((global_query,), (global_key,))),
        arch.Product("global probabilities × V", b, H, PADDED, operands=(global_scores, (global_value,))),
    )
    saved = (
        arch.Saved("global token index", (b, Poly.constant(2)), arch.Dtype.INT64, needs=(key, value)),
        arch.Saved("global token batch index", (b, Poly.constant(2)), arch.Dtype.INT64, needs=(key, value)),
        arch.Saved("global key", (b, H), needs=(query,)),
        # The query is copied again for its scores against the global key, unless one window holds it all.
        arch.Saved("query for the global key", (m * (Poly.constant(1) + VIEWS * -1), b, PADDED, H), needs=(key,)),
        arch.Saved("global value", (b, H), needs=scores),
        arch.Saved("global query", (b, H), needs=(global_key,)),
        arch.Saved("probabilities of the global key", (b, PADDED, heads), needs=(value,)),
        arch.Saved("global key projection", (b, PADDED, H), needs=(global_query,)),
        arch.Saved("global value projection", (b, PADDED, H), needs=global_scores),
        arch.Saved("global probabilities", (b, heads, PADDED), arch.Dtype.FLOAT32, needs=global_scores),
        arch.Saved("global dropout mask", (b, heads, PADDED), when=dropout, needs=global_scores),
        *ops.either(
            dropout,
            arch.Saved("dropped global probabilities", (b, heads, PADDED), needs=(global_value,)),
            arch.Saved("global probabilities, cast", (b, heads, PADDED), arch.Dtype.CAST, needs=(global_value,)),
        ),
    )
    reads = (*op.reads, "global query", "global key projection", "global value projection")
    return dataclasses.replace(op, products=(*op.products, *products), saved=(*op.saved, *saved), reads=reads)


def _layer(prefix: str, global_token: bool) -> arch.Block:
    """LongformerLayer, repeated L times: the attention above, then BERT's feed-forward, on the padded length."""
    modules = (
        *_attention("attention", global_token),
        *common.feed_forward("intermediate.dense", "output.dense"),
        layer_norm("output.LayerNorm", "output-layernorm", H, writes="layer output"),
    )
    layer_ops = (sliding_attention("attention.self", global_token), *common.bert_layer_ops()[1:])
    layer = common.layers(f"{prefix}encoder.layer.{{0}}.", modules, layer_ops, common.BERT_JOINS, "layer output")
    return padded(layer, PADDED)


def _backbone(prefix: str, pooler: bool, global_token: bool = False) -> tuple[arch.Block, ...]:
    blocks = (padded(roberta.embeddings(prefix), PADDED), _layer(prefix, global_token))
    # The pooler reads the first token of the unpadded output, a view of the padded one.
    return (*blocks, padded(common.bert_pooler(prefix), PADDED)) if pooler else blocks


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers Longformer class for this head."""
    found = roberta.roberta_like(
        on,
        head,
        stem="Longformer",
        heads_first=False,
        attribute=BACKBONE,
        backbone=functools.partial(_backbone, global_token=head is arch.Head.SEQUENCE_CLASSIFICATION),
        classifier_dropout=ops.probability("hidden_dropout_prob"),
    )
    return dataclasses.replace(found, blocks=tuple(_unpadded_input(block) for block in found.blocks))


def _unpadded_input(block: arch.Block) -> arch.Block:
    """The masked-LM head reads the first s tokens of the padded output. With b > 1 and s > 1 its dense
    layer copies them, and keeps the copy; otherwise the tokens are a view, which keeps the padded output."""
    modules = tuple(
        dataclasses.replace(m, saved=_unpadded_kept(m.path))
        if m.key == "transform-dense"
        else dataclasses.replace(m, saved=tuple(_padded_output(t) for t in m.saved))
        for m in block.modules
    )
    return dataclasses.replace(block, modules=modules)


def _unpadded_kept(dense: str) -> tuple[arch.Saved, ...]:
    """What the masked-LM head's dense layer keeps for its weight's gradient."""
    weight = (param(f"{dense}.weight"),)
    return (
        arch.Saved("encoder output", (Poly.constant(1) + k * -1, b, PADDED, H), shared=True, needs=weight),
        arch.Saved("transform input copy", (k, b, s, H), needs=weight),
    )


def _padded_output(saved: arch.Saved) -> arch.Saved:
    """The classifier's token 0 is a view of the padded output: without dropout, its dense keeps all of it."""
    if saved.key != common.ENCODER_OUTPUT.key:
        return saved
    return dataclasses.replace(saved, shape=tuple(substitute(size, PADDED) for size in saved.shape))


WINDOW = "attention_window"

# LongformerModel.__init__ and LongformerSelfAttention.__init__ assert that each window is even and
# positive, and that a list has one window per layer. The conditions read a list's two ends: a list
# whose inner values alone are odd passes here, and transformers refuses it.
WINDOW_RULES = (
    Rule("longformer-window-even", gt(mod(smallest(WINDOW), 2), 0) | gt(mod(largest(WINDOW), 2), 0), (WINDOW,)),
    Rule("longformer-window-positive", le(smallest(WINDOW), 0), (WINDOW,)),
    Rule(
        "longformer-window-per-layer",
        ge(length(WINDOW), 0) & ne(length(WINDOW), "num_hidden_layers"),
        (WINDOW, "num_hidden_layers"),
    ),
)

# With no layers, LongformerModel's window list is empty, and padding to its largest raises.
no_layers = Rule("longformer-no-layers", eq("num_hidden_layers", 0), ("num_hidden_layers",))

# With a window of 2 (w = 1), the scores' first chunk takes an empty slice, which raises.
window_of_two = Rule("longformer-window-of-two", gt("num_hidden_layers", 0) & eq(smallest(WINDOW), 2), (WINDOW,))

# Layers of different windows attend over different spans: their sum is not L times one layer's.
INEXACT_STEPS = (
    Rule(
        "longformer-windows-differ",
        gt("num_hidden_layers", 0) & ne(smallest(WINDOW), largest(WINDOW)),
        (WINDOW,),
    ),
)


# LongformerClassificationHead drops out with the hidden dropout: the config has no classifier_dropout.
DROPOUTS: dropouts.Dropouts = dropouts.ENCODER[:2]
# The attention's dropout is nn.functional.dropout in the forward: nothing checks it when the model is built.
BUILT_DROPOUTS: dropouts.Dropouts = DROPOUTS[:1]
# RoBERTa's step rules, with Longformer's dropouts in place of RoBERTa's.
STEP_RULES = (
    *(rule for rule in roberta.STEP_RULES if rule not in dropouts.in_step(dropouts.ENCODER)),
    dropouts.dropout_range("attention_probs_dropout_prob", dropouts.with_layers()),
    *dropouts.in_step(DROPOUTS),
)


def _edges(window: object) -> tuple[int, ...]:
    widest = max(window) if isinstance(window, list) else window
    return (widest - 1, widest, widest + 1, 2 * widest, 2 * widest + 1) if isinstance(widest, int) else ()


FAMILY = arch.Family(
    name="longformer",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    build_rules=(
        common.in_every_layer(common.heads_divide_hidden),
        *WINDOW_RULES,
        roberta.padding_fits_tables,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(BUILT_DROPOUTS),
        *activations.rules("longformer"),
    ),
    step_rules=(*STEP_RULES, no_layers, window_of_two),
    switches=(common.tied("mlm-head"),),
    positions_after="pad_token_id",  # create_position_ids_from_input_ids: padding_idx + 1 onwards
    inexact_steps=INEXACT_STEPS,
    compute_symbols=(W_HALF, WINDOWS, MANY, CUT, ONE_HEAD, WINDOWS_MORE),
    ground_truth=GroundTruth(
        draws={
            "type_vocab_size": ((1, 2), (0,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "pad_token_id": ((0, 3), (None, -1, 40)),
            "attention_window": ((2, 4), (ABSENT,)),
        },
        # LongformerEncoder asks whether any token is global (.item()): no for a head given no global mask.
        # The classifier's global first token makes nonzero() size its tensors: a CPU runs it.
        meta_items={"base": False, "masked-lm": False},
        # Each piece of the padding: a window's edge, one past it, and a second window.
        lengths=lambda config: _edges(config.get("attention_window", 512)),
        cpu_heads=("sequence-classification",),
        pinned=(
            Pinned("sequence-classification", {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40}),
            # A window per layer, two of them different.
            Pinned("masked-lm", {"num_hidden_layers": 2, WINDOW: [2, 4], "vocab_size": 40}),
        ),
    ),
)
