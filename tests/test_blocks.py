"""The building blocks families compose, each checked against what transformers 5.23 registers and keeps.

The families that use a block today pin it to exact figures in their own tests; these check the
parameters a block offers for the families that will use it next (DeBERTa v1, MPNet, RoFormer,
EuroBERT, GTE, XLM-RoBERTa-XL), with names and shapes read from a meta-device model of each.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

from generator.counting import architecture as arch
from generator.counting import families
from generator.counting.families.blocks import factorized, gated, prenorm, relative, rmsnorm, rotary
from generator.counting.layouts import layer_norm, linear
from generator.counting.poly import Poly
from generator.counting.switches import Switches

# A small model: H = 16 hidden, A = 2 heads of d = 8, I = 24, E = 8, P = 32 positions, 2 layers.
VALUES = {"H": 16, "A": 2, "d": 8, "I": 24, "E": 8, "P": 32, "R": 32, "B": 32, "L": 2, "b": 3, "s": 5}
H, A, D = (Poly.symbol(name) for name in "HAd")


def tensors(modules: tuple[arch.Module, ...]) -> list[tuple[str, tuple[int, ...]]]:
    """Every parameter of the modules, in order, as (path.name, shape) at VALUES."""
    return [
        (f"{m.path}.{p.name}", tuple(dim.evaluate(VALUES) for dim in p.shape))
        for m in modules
        for p in m.params
        if isinstance(p, arch.Param)
    ]


def keys(saved: tuple[arch.Saved, ...]) -> list[str]:
    return [t.key for t in saved]


def test_the_blocks_package_imports_and_declares_no_family() -> None:
    found = {info.name: info.ispkg for info in pkgutil.iter_modules(families.__path__)}
    assert found["blocks"] is True  # the registry walks it like any module, and finds no FAMILY in it
    package = importlib.import_module("generator.counting.families.blocks")
    inside = [info.name for info in pkgutil.iter_modules(package.__path__)]
    # The package's docstring is the index of its blocks: it lists every module, one line each.
    assert sorted(re.findall(r"^- ``(\w+)``:", package.__doc__ or "", re.M)) == inside
    for name in inside:
        assert not hasattr(importlib.import_module(f"generator.counting.families.blocks.{name}"), "FAMILY")
    assert "blocks" not in families.families()


@pytest.mark.parametrize(
    ("on", "rows"),
    [
        ({"buckets": True}, "B"),  # the span is not read: it decides nothing then
        ({"buckets": False, "max_relative": True}, "R"),
        ({"buckets": False, "max_relative": False}, "P"),  # max_relative_positions < 1: the positions
    ],
)
def test_table_rows_read_buckets_then_span(on: dict[str, bool], rows: str) -> None:
    assert relative.table_rows(Switches(on)) == 2 * Poly.symbol(rows)


def test_deberta_v1_table_rows_have_no_buckets() -> None:
    assert relative.table_rows(Switches({"max_relative": True}), buckets=None) == 2 * Poly.symbol("R")


def test_deberta_v1_position_projections() -> None:
    # DisentangledSelfAttention in modeling_deberta.py: pos_proj without a bias, pos_q_proj with one.
    width = A * D
    declared = relative.position_projections(
        width, key="attention.self.pos_proj", query="attention.self.pos_q_proj", key_bias=False
    )
    assert tensors(declared) == [
        ("attention.self.pos_proj.weight", (16, 16)),
        ("attention.self.pos_q_proj.weight", (16, 16)),
        ("attention.self.pos_q_proj.bias", (16,)),
    ]
    assert all(not m.products and not m.saved for m in declared)  # their work is the relative op's
    assert relative.position_projections(width, key=None, query=None) == ()


def test_disentangled_attention_projects_what_it_reads() -> None:
    rows = 2 * Poly.symbol("R")
    dropout = families.common.HIDDEN_DROPOUT
    c2p = relative.disentangled_attention("a", rows, H, c2p=True, p2c=False, shared_projections=False, dropout=dropout)
    assert [p.what for p in c2p.products] == ["position-key-projection", "c2p-scores"]
    assert "key layer" not in keys(c2p.saved)  # only p2c multiplies the key itself
    both = relative.disentangled_attention("a", rows, H, c2p=True, p2c=True, shared_projections=True, dropout=dropout)
    assert [p.what for p in both.products] == [
        "position-query-projection",
        "position-key-projection",
        "c2p-scores",
        "p2c-scores",
    ]
    assert keys(both.saved)[-1] == "key layer"
    assert both.repeat == Poly.symbol("L")
    # The table's projection does not depend on b or s: 2·(2R)·H·H each at any batch.
    assert both.products[0].flops.evaluate(VALUES) == 2 * 64 * 16 * 16


def test_relative_table_and_its_norm() -> None:
    rows = 2 * Poly.symbol("B")
    table = relative.table(rows)
    assert tensors((table,)) == [("rel_embeddings.weight", (64, 16))]
    assert table.saved == ()  # read whole: no ids kept
    read = relative.table_norm(rows, read=True)
    assert keys(read.saved) == ["LayerNorm mean", "LayerNorm reciprocal deviation"]  # its input is a parameter
    assert relative.table_norm(rows, read=False).saved == ()


def test_mpnet_bucket_bias() -> None:
    # MPNetEncoder.relative_attention_bias: nn.Embedding(relative_attention_num_buckets, num_attention_heads).
    bias = relative.bucket_bias(Poly.symbol("B"))
    assert tensors((bias,)) == [("relative_attention_bias.weight", (32, 2))]
    assert [(t.key, t.dtype, tuple(d.evaluate(VALUES) for d in t.shape)) for t in bias.saved] == [
        ("relative position buckets", arch.Dtype.INT64, (5, 5))
    ]
    block = relative.block("encoder.", (bias,))
    assert (block.key, block.kind, block.repeat) == ("relative", arch.Kind.ENCODER, ())


def test_rotary_tables_shared_or_per_layer() -> None:
    # GTE, NomicBERT, EuroBERT, ESM and ModernBERT make one cos and one sin a step (two storages in
    # all); RoFormer makes them in every layer (two per layer): saved_tensors_hooks, transformers 5.23.
    shared = rotary.tables()
    assert [(t.key, t.shared) for t in shared] == [("rotary cos", True), ("rotary sin", True)]
    assert [tuple(d.evaluate(VALUES) for d in t.shape) for t in shared] == [(5, 8), (5, 8)]
    per_layer = rotary.tables(shared=False)
    assert [t.shared for t in per_layer] == [False, False]
    attention = arch.Op("attn", "attention", saved=(arch.Saved("query", (H,)),))
    assert keys(rotary.rotated(attention, shared, rotary.tables("local")).saved) == [
        "query",
        "rotary cos",
        "rotary sin",
        "local cos",
        "local sin",
    ]


def test_rotary_interior_lengths_lie_between_three_and_the_longest() -> None:
    # NomicBERT and GTE make their tables afresh each step: these lengths show no piece begins there.
    assert rotary.interior_lengths({"max_position_embeddings": 16}) == (4, 5, 9)
    assert rotary.interior_lengths({"max_position_embeddings": 8192}) == (4, 5, 4097)


def test_roformer_sinusoid_table_is_counted_and_frozen() -> None:
    # RoFormerEncoder.embed_positions: nn.Embedding(max_position_embeddings, H / A, _freeze=True).
    table = rotary.sinusoid_table()
    assert tensors((table,)) == [("embed_positions.weight", (32, 8))]
    assert [p.frozen for p in table.params if isinstance(p, arch.Param)] == [True]
    assert table.saved == ()


def test_fused_gate_reads_one_wide_storage() -> None:
    modules = gated.fused("mlp.Wi", "mlp.Wo", bias=False)
    assert tensors(modules) == [("mlp.Wi.weight", (48, 16)), ("mlp.Wo.weight", (16, 24))]
    activation, gate = gated.fused_ops("mlp.act", "mlp.gate")
    assert keys(activation.saved) == ["Wi output", "activated"]
    assert keys(gate.saved) == ["activated", "Wi output"]
    assert (
        activation.saved[0].shape == gate.saved[1].shape == (Poly.symbol("b"), Poly.symbol("s"), 2 * Poly.symbol("I"))
    )


@pytest.mark.parametrize(
    ("biases", "expected"),
    [
        # GteMLP: gate_proj and up_proj without a bias, down_proj with one.
        (
            (False, False, True),
            [
                ("mlp.gate_proj.weight", (24, 16)),
                ("mlp.up_proj.weight", (24, 16)),
                ("mlp.down_proj.weight", (16, 24)),
                ("mlp.down_proj.bias", (16,)),
            ],
        ),
        # NomicBertMLP, and EuroBertMLP with mlp_bias false (its default): no bias at all.
        (
            (False, False, False),
            [("mlp.gate_proj.weight", (24, 16)), ("mlp.up_proj.weight", (24, 16)), ("mlp.down_proj.weight", (16, 24))],
        ),
    ],
)
def test_split_gate(biases: tuple[bool, bool, bool], expected: list[tuple[str, tuple[int, ...]]]) -> None:
    modules = gated.split("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", biases=biases)
    assert tensors(modules) == expected
    gate, up, down = modules
    assert keys(gate.saved) == keys(up.saved) == ["feed-forward input"]  # both read one storage, kept once
    assert keys(down.saved) == ["mlp.down_proj input"]
    activation, product = gated.split_ops("mlp.act_fn", "mlp", gate="mlp.gate_proj", up="mlp.up_proj")
    # GTE keeps three (b, s, I) tensors a layer: the gate's output, the activation's and the up projection's.
    assert keys(activation.saved) + keys(product.saved) == [
        "mlp.gate_proj output",
        "activated",
        "activated",
        "mlp.up_proj output",
    ]


def _norm(path: str, key: str) -> arch.Module:
    return layer_norm(path, key, H)


@pytest.mark.parametrize(
    ("order", "attention_norm", "paths"),
    [
        (prenorm.NORMS_FIRST, "attn_norm", ["attn_norm", "attn.q", "mlp_norm", "mlp.in"]),
        (prenorm.NORMS_FIRST, None, ["attn.q", "mlp_norm", "mlp.in"]),
        # XLMRobertaXLLayer and EsmLayer: each norm after its sub-layer.
        (prenorm.NORMS_AFTER, "attn_norm", ["attn.q", "attn_norm", "mlp.in", "mlp_norm"]),
        # EuroBertDecoderLayer: self_attn, mlp, input_layernorm, post_attention_layernorm.
        (prenorm.NORMS_LAST, "attn_norm", ["attn.q", "mlp.in", "attn_norm", "mlp_norm"]),
    ],
)
def test_prenorm_layer_order(order: tuple[str, str, str, str], attention_norm: str | None, paths: list[str]) -> None:
    attention = (linear("attn.q", "query", H, H),)
    feed_forward = (linear("mlp.in", "feed-forward-in", H, Poly.symbol("I")),)
    modules = prenorm.layer(
        _norm, attention, feed_forward, attention_norm=attention_norm, feed_forward_norm="mlp_norm", order=order
    )
    assert [m.path for m in modules] == paths
    assert [m.key for m in modules if m.part is arch.Part.NORMS] == (
        ["attention-norm", "feed-forward-norm"] if attention_norm else ["feed-forward-norm"]
    )


@pytest.mark.parametrize("later", [False, True])
def test_first_layer_apart(later: bool) -> None:
    blocks = prenorm.first_apart(
        "model.layers.{0}.",
        lambda normed: (_norm("attn_norm", "attention-norm"),) if normed else (),
        (),
        later=lambda: later,
    )
    assert [(b.key, b.prefix, len(b.modules)) for b in blocks] == [("layer-0", "model.layers.0.", 0)] + (
        [("layer", "model.layers.{0}.", 1)] if later else []
    )
    if later:
        assert blocks[1].copies().evaluate(VALUES) == VALUES["L"] - 1  # layers 1 to L − 1
        assert blocks[1].instances(VALUES) == [(1,)]
    final = prenorm.final_norm("encoder.", _norm("LayerNorm", "final-norm"))
    assert (final.key, final.kind, [m.path for m in final.modules]) == ("final-norm", arch.Kind.ENCODER, ["LayerNorm"])


def test_rms_norm_is_a_scale_and_keeps_three_storages() -> None:
    # EuroBertRMSNorm: one weight; saved_tensors_hooks keeps the fp32 input, the fp32 reciprocal root
    # mean square per row, and the normalized rows in the model's type (torch 2.13, transformers 5.23).
    norm = rmsnorm.rms_norm("input_layernorm", "attention-norm", H)
    assert tensors((norm,)) == [("input_layernorm.weight", (16,))]
    assert norm.part is arch.Part.NORMS
    assert [(t.key, t.dtype, tuple(d.evaluate(VALUES) for d in t.shape)) for t in norm.saved] == [
        ("input_layernorm input", arch.Dtype.FLOAT32, (15, 16)),
        ("input_layernorm reciprocal root mean square", arch.Dtype.FLOAT32, (15,)),
        ("input_layernorm normalized", arch.Dtype.ACTIVATION, (15, 16)),
    ]
    assert norm.products == ()


def test_factorized_projection() -> None:
    # RoFormerModel.embeddings_project: nn.Linear(embedding_size, hidden_size), registered by the model.
    projection = factorized.projection("embeddings_project")
    assert tensors((projection,)) == [("embeddings_project.weight", (16, 8)), ("embeddings_project.bias", (16,))]
    assert projection.part is arch.Part.EMBEDDINGS
    # DeBERTa's embed_proj has no bias; MobileBERT's trigram input projects 3E.
    assert tensors((factorized.projection("embed_proj", bias=False),)) == [("embed_proj.weight", (16, 8))]
    trigram = factorized.projection("embedding_transformation", n_in=3 * Poly.symbol("E"))
    assert tensors((trigram,))[0] == ("embedding_transformation.weight", (16, 24))
    assert (factorized.width(True), factorized.width(False)) == (Poly.symbol("E"), H)
    block = factorized.block("", projection)
    assert (block.key, block.kind) == ("embedding-projection", arch.Kind.EMBEDDINGS)


def test_deberta_v1_fused_projection() -> None:
    # DisentangledSelfAttention in modeling_deberta.py: its own q_bias and v_bias, then in_proj (no bias).
    fused = relative.fused_query_key_value(width=A * D)
    assert tensors((fused,)) == [
        ("attention.self.q_bias", (16,)),
        ("attention.self.v_bias", (16,)),
        ("attention.self.in_proj.weight", (48, 16)),
    ]
    assert [p.flops.evaluate(VALUES) for p in fused.products] == [2 * 15 * 48 * 16]
    assert keys(fused.saved) == ["layer input"]


def test_an_unread_block_keeps_its_forward_and_drops_its_backward() -> None:
    """``common.unread``: a pooler no loss reads has the same products, each with no backward."""
    from generator.counting.families import common

    pooler = common.bert_pooler("")
    products = [p for m in common.unread(pooler).modules for p in m.products]
    assert [(p.what, p.backward) for p in products] == [("pooler-dense", 0)]
    assert [m.saved for m in common.unread(pooler).modules] == [m.saved for m in pooler.modules]
    assert [p.backward for m in pooler.modules for p in m.products] == [2]
