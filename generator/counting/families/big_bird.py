"""BigBird (transformers ``model_type`` "big_bird"): modeling_big_bird.py in transformers 5.23.

BERT's tensors under ``bert.``, with three differences in the parameters:

* the query, key and value have biases only with ``use_bias`` (the default);
* the pooler is one Linear, ``pooler`` itself, not BertPooler's ``pooler.dense``;
* the classifier is RoBERTa's shape (dense, then ``out_proj``, on token 0), with ``hidden_act``.

Every head class builds the pooler and runs it. Only the pre-training head reads its output, so
under the masked LM and the classifier its product has no backward. BigBirdEmbeddings drops out
before its LayerNorm, not after; that keeps as many tensors as BERT's order.

``attention_type`` picks the attention. "original_full" is BERT's eager attention. "block_sparse"
attends in blocks of ``block_size`` tokens (global, sliding and ``num_random_blocks`` random ones),
and pads s up to a multiple of the block. Both hold the same query, key and value tensors. For
s ≤ (5 + 2·num_random_blocks)·block_size, BigBirdModel switches itself to full attention (for good:
the model keeps that type for every later step).

The step is declared on both pieces at once: the full attention times 1 − f, the block-sparse
attention times f, every block on the length m (s, or s padded to whole blocks once f = 1). The
step symbols f, n, m and q are worked out at each (b, s) (step_symbols.py).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from generator.counting import architecture as arch
from generator.counting import flow, ops
from generator.counting.conditions import const, div, eq, gt, maximum, minimum, mod, mul, neg, sub, truthy, value
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.blocks.padded import padded
from generator.counting.families.symbols import symbols
from generator.counting.ground_truth import ABSENT, GroundTruth, Pinned
from generator.counting.layouts import b, embedding, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule, Switch

H = common.H

SYMBOLS = symbols("VPTHILAC")

BACKBONE = "bert."  # the attribute every head class stores the encoder under

# The step's symbols. Past F = (5 + 2r)·k tokens (f = 1) the model pads s to n whole blocks of k and
# attends block-sparse; up to F (f = 0) it runs full attention on s. m is the length the layers run on.
FALLBACK = mul(sub(5, mul(-2, "num_random_blocks")), "block_size")
SPARSE_NOW = minimum(1, maximum(0, sub("seq", FALLBACK)))
BLOCKS_NOW = neg(div(neg("seq"), "block_size"))
LENGTH_NOW = sub("seq", mul(SPARSE_NOW, sub("seq", mul(BLOCKS_NOW, "block_size"))))
PADS_NOW = minimum(1, sub(LENGTH_NOW, "seq"))
STEP_SYMBOLS = (
    arch.Symbol("k", "block_size", value=value("block_size")),
    arch.Symbol("r", "num_random_blocks", value=value("num_random_blocks"), minimum=0),
    arch.Symbol("f", "1 if s > (5 + 2r)·k, else 0", value=SPARSE_NOW),
    arch.Symbol("n", "⌈s / k⌉", value=BLOCKS_NOW),
    arch.Symbol("m", "s, or nk past (5 + 2r)·k", value=LENGTH_NOW),
    arch.Symbol("q", "1 if the model pads s, else 0", value=PADS_NOW),
    arch.Symbol("c", "1 if q = 1 and b > 1, else 0", value=mul(PADS_NOW, minimum(1, sub("batch", 1)))),
)
k, r, f, n, m, q, c = (Poly.symbol(name) for name in "krfnmqc")
FULL_NOW = Poly.constant(1) + f * -1


def _embeddings(prefix: str, sparse: bool) -> arch.Block:
    """BertEmbeddings' tables and LayerNorm. The position and token type ids are views of buffers:
    BigBirdModel expands the zero buffer itself, so the segment table keeps nothing new. When it pads
    (q = 1), the padded token types are a new tensor, which the segment table keeps."""
    types = arch.Saved("padded token types", (q, b, s), arch.Dtype.INT64) if sparse else None
    modules = (
        common.token_table(H),
        common.position_table(H),
        embedding("token_type_embeddings", "segment-embeddings", common.T, H, ids=types),
        common.embedding_norm(H),
    )
    block = common.embeddings_block(prefix, modules)
    # The dropout reads the tables' sum and writes the LayerNorm's input; the LayerNorm gives the layers theirs.
    norm = modules[-1]
    dropped = dataclasses.replace(block.ops[0], reads=("embeddings sum",), writes=norm.reads[0])
    joins = (arch.Join(block.joins[0].reads, "embeddings sum"),)
    return dataclasses.replace(block, ops=(dropped,), joins=joins, outputs=((norm.writes, common.HIDDEN),))


def _attention(path: str, bias: bool) -> tuple[arch.Module, ...]:
    """BigBirdAttention: query, key and value (with biases when ``use_bias``), output dense, LayerNorm."""
    projections = tuple(
        linear(
            f"{path}.self.{name}",
            name,
            H,
            H,
            bias=bias,
            heads="A",
            part=arch.Part.ATTENTION,
            saves="layer input",
            writes=name,
        )
        for name in ("query", "key", "value")
    )
    return (
        *projections,
        common.attention_output(f"{path}.output.dense"),
        layer_norm(f"{path}.output.LayerNorm", "attention-layernorm", H, writes="intermediate.dense input"),
    )


def _scaled(op: arch.Op, factor: Poly) -> arch.Op:
    """The op on one piece of the lengths: its products and saved tensors times ``factor`` (1 or 0)."""
    products = tuple(dataclasses.replace(p, m=p.m * factor) for p in op.products)
    saved = tuple(dataclasses.replace(t, shape=(factor, *t.shape)) for t in op.saved)
    return dataclasses.replace(op, products=products, saved=saved)


def block_sparse_attention(full: arch.Op) -> arch.Op:
    """BigBirdBlockSparseAttention on m = nk tokens, with A heads and r random blocks.

    The first and last query blocks attend to all m keys; the second and second-last to 4 + r blocks;
    the n − 4 middle ones to 5 + r (3 sliding, r random, 2 global). Each part keeps its own keys,
    values and probabilities. With b > 1 the batched products copy the query, key and value blocks
    they read; with one sequence they read views, which keep the query itself.

    It reads what the full attention ``full`` reads and writes what it writes. Each product keeps a
    key when the query needs a gradient, a query when the key does, and a value when the scores do;
    the probabilities are kept when anything does, for the softmax and for the product by V.
    """
    query, key, value = (flow.own(i) for i in range(3))
    scores, anything = (query, key), (query, key, value)
    heads = common.A
    TWO, FOUR = (Poly.constant(c) for c in (2, 4))
    middle = m + k * -4  # the middle query blocks' tokens, (n − 4)·k
    second = k * (r + 4)
    kept = (
        arch.Saved("random blocks", (b, heads, n + -2, r), arch.Dtype.INT64, needs=anything),
        # The gathers of random blocks keep the key and the value; a batch of one keeps them as views too.
        arch.Saved("blocked key", (b, m, H), needs=(key,)),
        arch.Saved("blocked key", (b, m, H), batch_one=True, needs=(query,)),
        arch.Saved("blocked value", (b, m, H), needs=(value,)),
        arch.Saved("blocked value", (b, m, H), batch_one=True, needs=scores),
        arch.Saved("blocked query", (b, m, H), batch_one=True, needs=(key,)),
        arch.Saved("global rows' probabilities", (b, heads, k * 2, m), needs=anything),
        arch.Saved("second rows' keys", (b, TWO, second, H), needs=(query,)),
        arch.Saved("second rows' values", (b, TWO, second, H), needs=scores),
        arch.Saved("second rows' probabilities", (b, heads, k * 2, second), needs=anything),
        arch.Saved("middle rows' sliding keys", (b, middle, Poly.constant(3), H), needs=(query,)),
        arch.Saved("middle rows' sliding values", (b, middle, Poly.constant(3), H), needs=scores),
        arch.Saved("middle queries, copied", (b, TWO, middle, H), needs=(key,)),
        arch.Saved("middle rows' random keys", (b, middle, r, H), needs=(query,)),
        arch.Saved("middle rows' random values", (b, middle, r, H), needs=scores),
        arch.Saved("middle rows' probabilities", (b, heads, middle, k * (r + 5)), needs=anything),
        arch.Saved("sliding block positions", (n + -4, Poly.constant(3)), arch.Dtype.INT64, needs=scores),
        # The padded mask, fp32: each layer casts it to the model's type (a new copy in bf16 only).
        arch.Saved("attention mask", (b, m), arch.Dtype.UNCAST, shared=True, needs=anything),
        arch.Saved("attention mask, cast", (b, m), arch.Dtype.CAST, needs=anything),
        arch.Saved("keys, copied for the global rows", (b, TWO, m, H), batch_above_one=True, needs=(query,)),
        arch.Saved("values, copied for the global rows", (b, TWO, m, H), batch_above_one=True, needs=scores),
        arch.Saved("query blocks, copied", (b, FOUR, k, H), batch_above_one=True, needs=(key,)),
        arch.Saved("global key blocks, copied", (b, TWO, k, H), batch_above_one=True, needs=(query,)),
        arch.Saved("global value blocks, copied", (b, TWO, k, H), batch_above_one=True, needs=scores),
        arch.Saved(
            "middle queries, copied for the global keys", (b, TWO, middle, H), batch_above_one=True, needs=(key,)
        ),
    )
    rows = (("global", b * k * 2, m), ("second", b * k * 2, second), ("middle", b * middle, k * (r + 5)))
    products = tuple(
        arch.Product(f"{name} rows QKᵀ", queries, keys, H, operands=((query,), (key,))) for name, queries, keys in rows
    )
    products += tuple(
        arch.Product(f"{name} rows' probabilities × V", queries, H, keys, operands=(scores, (value,)))
        for name, queries, keys in rows
    )
    op = arch.Op(full.path, "block-sparse-attention", products=products, saved=kept, reads=full.reads)
    op = dataclasses.replace(op, writes=full.writes)
    return _scaled(op, f)


def _layer(on: Mapping[str, bool], prefix: str) -> arch.Block:
    """BigBirdLayer, repeated L times: attention, cross-attention for a decoder, feed-forward."""
    modules = _attention("attention", on["qkv_bias"])
    if on["cross_attention"]:
        cross = _attention("crossattention", on["qkv_bias"])
        modules += tuple(arch.Module(x.path, f"cross-attention-{x.key}", x.params, x.heads, part=x.part) for x in cross)
    modules += (
        *common.feed_forward("intermediate.dense", "output.dense"),
        layer_norm("output.LayerNorm", "output-layernorm", H, writes="layer output"),
    )
    path = f"{prefix}encoder.layer.{{0}}."
    if not on["block_sparse"]:
        return common.layers(path, modules, common.bert_layer_ops(), common.BERT_JOINS, "layer output")
    full, *rest = common.bert_layer_ops()
    pieces = (_scaled(full, FULL_NOW), block_sparse_attention(full))
    return common.layers(path, modules, (*pieces, *rest), common.BERT_JOINS, "layer output")


def _pooler(prefix: str, read: bool) -> arch.Block:
    """BigBirdModel's pooler: one H × H Linear on token 0, then tanh. Unless ``read``, no loss reads it."""
    block = arch.Block(
        "pooler",
        arch.Kind.POOLER,
        prefix,
        (linear("pooler", "pooler-dense", H, H, rows=b, saves=common.ENCODER_OUTPUT),),
        ops=(ops.tanh("activation", "pooler-tanh", (b, H), common.POOLED_OUTPUT.key, reads="pooler output"),),
        inputs=((common.ENCODER_OUTPUT.key, common.HIDDEN),),
        outputs=((common.POOLED_OUTPUT.key, common.POOLER_OUTPUT),),
    )
    return block if read else common.unread(block)


def _backbone(on: Mapping[str, bool], head: arch.Head, prefix: str, _pooled: bool) -> tuple[arch.Block, ...]:
    # Every head class builds BigBirdModel with its pooler; only the pre-training head reads it.
    read = head in (arch.Head.BASE, arch.Head.PRETRAINING)
    blocks = (_embeddings(prefix, on["block_sparse"]), _layer(on, prefix), _pooler(prefix, read))
    # Block-sparse attention pads s to m before the embeddings; the pooler reads the padded output.
    return tuple(padded(block, m) for block in blocks) if on["block_sparse"] else blocks


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers BigBird class for this head."""
    mlm = functools.partial(heads.bert_mlm_head, on, BACKBONE)
    on_top = {
        arch.Head.PRETRAINING: lambda: (mlm(), heads.next_sentence_head()),
        arch.Head.MASKED_LM: lambda: (mlm(),),
        # BigBirdClassificationHead: RoBERTa's shape, with the config's hidden_act instead of tanh.
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.dense_classifier("hidden_act", configured=True),),
    }
    found = common.assemble("BigBird", BACKBONE, head, functools.partial(_backbone, on, head), on_top)
    if not on["block_sparse"]:
        return found
    return dataclasses.replace(found, blocks=tuple(_unpadded_input(block) for block in found.blocks))


def _unpadded_input(block: arch.Block) -> arch.Block:
    """The masked-LM head reads the first s of m tokens. When the model padded (q = 1) and b > 1, its
    dense layer copies them, and keeps the copy (c = 1); otherwise it keeps a view of the padded output,
    whose storage holds all m. Either is the Linear's input: kept only when its weight trains."""
    modules = tuple(_reads_unpadded(x) if x.key == "transform-dense" else x for x in block.modules)
    return dataclasses.replace(block, modules=modules)


def _reads_unpadded(dense: arch.Module) -> arch.Module:
    view, *rest = dense.saved
    view = dataclasses.replace(view, shape=(Poly.constant(1) + c * -1, b, m, H))
    copy = arch.Saved("transform input copy", (c, b, s, H), needs=view.needs)
    return dataclasses.replace(dense, saved=(view, *rest, copy))


def fallback_lengths(config: Mapping[str, Any]) -> tuple[int, ...]:
    """A block-sparse config's last length of full attention, the first past it, and one that pads."""
    if config.get("attention_type", "block_sparse") != "block_sparse":
        return ()
    block = config.get("block_size", 64)
    last = (5 + 2 * config.get("num_random_blocks", 3)) * block
    return (last, last + 1, last + block)


FULL = eq("attention_type", const("original_full"))
BLOCK_SPARSE = eq("attention_type", const("block_sparse"))
# Past F the model pads s to whole blocks. When P is no whole number of blocks, s = P pads past the
# position table, and the embeddings' sum raises: transformers cannot run the step at full length.
padding_past_positions = Rule(
    "big-bird-padding-past-positions",
    BLOCK_SPARSE
    & ~truthy("add_cross_attention")
    & gt("max_position_embeddings", FALLBACK)
    & gt(mod("max_position_embeddings", "block_size"), 0),
    ("max_position_embeddings", "block_size"),
)
# BigBirdAttention knows two types; BigBirdModel.forward raises on any other even without layers.
unknown_attention_type = Rule(
    "big-bird-attention-type",
    ~FULL & ~BLOCK_SPARSE,
    ("attention_type",),
)

# Only full attention makes nn.Dropout(attention_probs_dropout_prob); block-sparse attention has no
# dropout. BigBirdModel builds a decoder with cross-attention as full attention whatever the config says.
BUILT_FULL = dropouts.with_layers() & (FULL | truthy("add_cross_attention"))
DROPOUTS: dropouts.Dropouts = (
    dropouts.ENCODER[0],
    ("attention_probs_dropout_prob", BUILT_FULL),
    dropouts.ENCODER[2],
)
# A block-sparse model makes that dropout in its first step: a short input switches it to full attention.
attention_dropout_in_step = dropouts.dropout_range(
    "attention_probs_dropout_prob", dropouts.with_layers() & BLOCK_SPARSE & ~truthy("add_cross_attention")
)


SPARSE_AT_20 = {
    "attention_type": "block_sparse",
    "block_size": 2,
    "num_random_blocks": 1,
    "max_position_embeddings": 20,
}
SPARSE_AT_19 = {**SPARSE_AT_20, "max_position_embeddings": 19}


FAMILY = arch.Family(
    name="big_bird",
    symbols=SYMBOLS,
    declare=declare,
    build_rules=(
        *common.LAYER_RULES,
        common.in_every_layer(unknown_attention_type),
        common.padding_in_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(DROPOUTS),
        *activations.rules("big_bird"),
    ),
    step_rules=(
        *step_rules.COMMON,
        step_rules.no_token_type_row,
        unknown_attention_type,
        padding_past_positions,
        attention_dropout_in_step,
        *dropouts.in_step(dropouts.ENCODER),
    ),
    compute_symbols=STEP_SYMBOLS,
    switches=(
        Switch("qkv_bias", truthy("use_bias"), ("layer",)),
        # BigBirdModel builds a decoder with cross-attention as full attention whatever the config says.
        Switch(
            "block_sparse", BLOCK_SPARSE & ~truthy("add_cross_attention"), ("embeddings", "layer", "pooler", "mlm-head")
        ),
        common.tied("mlm-head"),
        common.CROSS_ATTENTION,
    ),
    ground_truth=GroundTruth(
        draws={
            "type_vocab_size": ((1, 2), (ABSENT,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "is_decoder": ((False,), (True, ABSENT)),
            "add_cross_attention": ((False,), (True, ABSENT)),
            "pad_token_id": ((0, 3), (None, 40)),
            "use_bias": ((True, False), (ABSENT,)),
            "rescale_embeddings": ((True, False), (ABSENT,)),
            "attention_type": (("original_full", "block_sparse"), (ABSENT,)),
            "block_size": ((2, 4), (ABSENT,)),
            "num_random_blocks": ((1, 2), (ABSENT,)),
        },
        pinned=(
            Pinned("sequence-classification", {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40}),
            # At s = P = 19 the model pads to 20 positions, past its table: the step raises.
            Pinned("base", {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40, **SPARSE_AT_19}),
            # Block-sparse at (3, P): three sequences of 20 tokens under the masked LM.
            Pinned("masked-lm", {"hidden_size": 8, "num_attention_heads": 2, "vocab_size": 40, **SPARSE_AT_20}),
        ),
        sentence_label="next_sentence_label",
        lengths=fallback_lengths,
    ),
)
