"""DistilBERT (transformers ``model_type`` "distilbert"): modeling_distilbert.py in transformers 5.23.

Registration order follows ``Embeddings`` (word, position, LayerNorm: no token types),
``TransformerBlock`` (DistilBertSelfAttention's q_lin, k_lin, v_lin, out_lin, then
sa_layer_norm, FFN's lin1 and lin2, output_layer_norm) and the heads, which the head classes
create after the ``distilbert`` backbone. There is no pooler.

The config keys are DistilBERT's own: ``dim``, ``n_layers``, ``n_heads`` and ``hidden_dim``
(the feed-forward size, not the hidden size).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import eq, head_is, mod, ne, truthy
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.symbols import shared, symbols
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import b, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule

V, H, C, A = (Poly.symbol(name) for name in "VHCA")
DROPOUT = ops.probability("dropout")

SYMBOLS = symbols(
    "VP",
    shared("H", key="dim"),
    shared("I", key="hidden_dim"),
    shared("L", key="n_layers"),
    shared("A", key="n_heads"),
    "C",
)

WORD_EMBEDDINGS = "distilbert.embeddings.word_embeddings.weight"


# Embeddings slices its position_ids buffer to the sequence: with no position row the slice is
# empty, and adding it broadcasts the sum to an empty tensor. Only the token ids are then kept.
HAS_POSITIONS = ne("max_position_embeddings", 0)


def _with_positions(saved: tuple[arch.Saved, ...]) -> tuple[arch.Saved, ...]:
    return tuple(
        dataclasses.replace(item, when=HAS_POSITIONS if item.when is None else item.when & HAS_POSITIONS)
        for item in saved
    )


def _embeddings(prefix: str) -> arch.Block:
    block = common.embeddings_block(
        prefix, (common.token_table(H), common.position_table(H), common.embedding_norm(H)), H, DROPOUT
    )
    token, *after = block.modules
    return dataclasses.replace(
        block,
        modules=(token, *(dataclasses.replace(m, saved=_with_positions(m.saved)) for m in after)),
        ops=tuple(dataclasses.replace(op, saved=_with_positions(op.saved)) for op in block.ops),
    )


def _backbone(prefix: str, _pooler: bool) -> tuple[arch.Block, ...]:
    embeddings = _embeddings(prefix)
    modules = (
        *common.query_key_value(("attention.q_lin", "attention.k_lin", "attention.v_lin")),
        common.attention_output("attention.out_lin"),
        layer_norm("sa_layer_norm", "attention-layernorm", H, writes="ffn.lin1 input"),
        *common.feed_forward("ffn.lin1", "ffn.lin2"),
        layer_norm("output_layer_norm", "output-layernorm", H, writes="layer output"),
    )
    # No dropout between out_lin and sa_layer_norm (DistilBertSelfAttention returns out_lin's output).
    layer_ops = (
        ops.attention("attention", H, A, "attention_dropout", writes="attention.out_lin input"),
        common.feed_forward_activation("ffn.activation", "activation"),
        ops.dropout("ffn.dropout", "feed-forward-dropout", (b, s, H), DROPOUT, reads="ffn.lin2 output"),
    )
    joins = (
        arch.Join(("attention.out_lin output", common.LAYER_INPUT), "sa_layer_norm input"),
        arch.Join(("ffn.dropout output", "ffn.lin1 input"), "output_layer_norm input"),
    )
    layer = common.layers(f"{prefix}transformer.layer.{{0}}.", modules, layer_ops, joins, "layer output")
    return (embeddings, layer)


def _mlm_head(on: Mapping[str, bool]) -> arch.Block:
    # Only the projector's weight is tied (DistilBertForMaskedLM._tied_weights_keys); its bias is its own.
    if on["tied"]:
        projector: tuple[arch.Module, ...] = (
            linear(
                "vocab_projector",
                "vocabulary-projector-weight-tied",
                H,
                V,
                bias=False,
                tied_to=WORD_EMBEDDINGS,
                reads="decoder input",
                writes="logits",
            ),
            arch.Module(
                "vocab_projector",
                "vocabulary-projector-bias",
                (arch.Param("bias", (V,), "bias", layer=arch.Layer.LINEAR),),
            ),
        )
    else:
        projector = (
            linear("vocab_projector", "vocabulary-projector-untied", H, V, reads="decoder input", writes="logits"),
        )
    modules = (*heads.mlm_transform("vocab_transform", "vocab_layer_norm", bias=False), *projector)
    return heads.mlm_head("", modules, heads.mlm_ops("activation", key="activation"))


def _classifier() -> arch.Block:
    """pre_classifier on token 0 (a view that keeps the encoder's output), ReLU, dropout, classifier."""
    acts = ops.probability("seq_classif_dropout")
    pre = linear("pre_classifier", "pre-classifier-dense", H, H, rows=b, saves=common.ENCODER_OUTPUT, writes="hidden")
    saved = ops.either(acts, arch.Saved("dropped", (b, H)), arch.Saved("activated", (b, H)))
    return arch.Block(
        "classifier",
        arch.Kind.HEAD,
        "",
        (pre, linear("classifier", "classifier", H, C, rows=b, saves=saved, writes="logits")),
        ops=(
            ops.activation("relu", "relu", "relu", (b, H), before="hidden", after="activated", fixed=True),
            ops.dropout("dropout", "classifier-dropout", (b, H), acts, reads="activated", writes="dropped"),
            *heads.class_loss(),
        ),
        inputs=((common.ENCODER_OUTPUT.key, common.HIDDEN),),
    )


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers DistilBERT class for this head (it has no pooler)."""
    on_top = {
        arch.Head.MASKED_LM: lambda: (_mlm_head(on),),
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (_classifier(),),
    }
    return common.assemble("DistilBert", "distilbert.", head, _backbone, on_top)


# TransformerBlock.__init__ raises the same error.
_heads_divide_dim = Rule(
    "heads-divide-dim",
    ne(mod("dim", "n_heads"), 0),
    ("n_heads", "dim"),
)

# With no position row, every sum of the embeddings is empty: a layer's view(b, s, -1, d) of it cannot
# reshape, and neither head's loss takes an empty input.
_no_position = Rule(
    "distilbert-no-position",
    eq("max_position_embeddings", 0)
    & (ne("n_layers", 0) | ~head_is(arch.Head.BASE.value) | truthy("sinusoidal_pos_embds")),
    ("max_position_embeddings", "n_layers", "sinusoidal_pos_embds"),
)

# word_embeddings is nn.Embedding(vocab_size, dim, padding_idx=pad_token_id), which asserts the index is a row.
_padding_fits_vocabulary = common.padding_fits("vocab_size")


DROPOUTS: dropouts.Dropouts = (
    ("dropout", None),
    ("attention_dropout", dropouts.with_layers("n_layers")),
    ("seq_classif_dropout", dropouts.CLASSIFIER),
)

FAMILY = arch.Family(
    name="distilbert",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    build_rules=(
        common.in_every_layer(_heads_divide_dim, "n_layers"),
        _padding_fits_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(DROPOUTS),
        *activations.rules("distilbert", layers="n_layers"),
    ),
    # No segment table. With no position row, only the base model without layers runs a step (on empty
    # tensors, ``_embeddings``); a CPU cannot even build the sinusoidal table of 0 rows.
    step_rules=(_no_position, *step_rules.COMMON[1:], *dropouts.in_step(DROPOUTS)),
    switches=(common.tied("mlm-head"),),
    ground_truth=GroundTruth(
        draws={
            "sinusoidal_pos_embds": ((False, True), (ABSENT,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "pad_token_id": ((0, 3), (None, 40)),
        },
        # DistilBertConfig's own names for the sizes.
        size_keys={
            "hidden_size": "dim",
            "num_attention_heads": "n_heads",
            "num_hidden_layers": "n_layers",
            "intermediate_size": "hidden_dim",
        },
    ),
)
