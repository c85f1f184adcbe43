"""MPNet (transformers ``model_type`` "mpnet"): modeling_mpnet.py in transformers 5.23.

Registration order follows the ``__init__`` of MPNetEmbeddings (word, position, LayerNorm: no
segment table), MPNetLayer (``attention.attn`` with q, k, v and o, the attention LayerNorm,
intermediate and output), then MPNetEncoder's ``relative_attention_bias`` after its layers,
MPNetPooler and the heads. The heads are RoBERTa's under the attribute ``mpnet``.

The relative position bias is one table of B buckets by A heads, registered once in the
encoder. The encoder looks it up once per step, at the (s, s) bucket of each pair of tokens,
and adds the same (b, A, s, s) bias to every layer's scores. The lookup is no product, and
the addition keeps nothing: the step keeps only the bucket indices.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import Key, const, le, lt
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.symbols import symbols
from generator.counting.flow import own
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import b, embedding, layer_norm, s
from generator.counting.poly import Poly
from generator.counting.switches import FirstOf, Rule

B, H, A = (Poly.symbol(name) for name in "BHA")

SYMBOLS = symbols("VPHIL", arch.Symbol("B", "relative_attention_num_buckets", minimum=0), "AC")

BACKBONE = "mpnet."  # the attribute every head class stores the encoder under
PADDING_INDEX = 1  # MPNetEmbeddings fixes padding_idx at 1, whatever pad_token_id says
# The model-wide name of the bias every layer's scores add (``flow.py``).
BIAS = "relative position bias"
BUCKETS_COMPUTED = 32  # MPNetEncoder.compute_position_bias's default num_buckets, which forward never overrides


def _embeddings(prefix: str) -> arch.Block:
    # create_position_ids_from_input_ids makes new (b, s) ids, numbered from the padding index; the table keeps them.
    positions = common.position_table(H, ids=arch.Saved("position ids", (b, s), arch.Dtype.INT64))
    return common.embeddings_block(prefix, (common.token_table(H), positions, common.embedding_norm(H)))


def _encoder_layer(prefix: str) -> arch.Block:
    """MPNetLayer: BERT's layer tensor for tensor, with the attention's projections under ``attention.attn``."""
    modules = (
        *common.query_key_value(("attention.attn.q", "attention.attn.k", "attention.attn.v")),
        common.attention_output("attention.attn.o"),
        layer_norm("attention.LayerNorm", "attention-layernorm", H, writes="intermediate.dense input"),
        *common.feed_forward("intermediate.dense", "output.dense"),
        layer_norm("output.LayerNorm", "output-layernorm", H, writes="layer output"),
    )
    # BERT's steps; adding the shared position bias to the scores (in place) keeps nothing more.
    layer_ops = (
        _biased(ops.attention("attention.attn", H, A, "attention_probs_dropout_prob", writes="attention.attn.o input")),
        ops.dropout(
            "attention.dropout",
            "attention-output-dropout",
            (b, s, H),
            common.HIDDEN_DROPOUT,
            reads="attention.attn.o output",
        ),
        common.feed_forward_activation("intermediate.intermediate_act_fn"),
        ops.dropout("output.dropout", "output-dropout", (b, s, H), common.HIDDEN_DROPOUT, reads="output.dense output"),
    )
    joins = (
        common.residual("attention.dropout output", "attention.LayerNorm"),
        arch.Join(("output.dropout output", "intermediate.dense input"), "output.LayerNorm input"),
    )
    layer = common.layers(f"{prefix}encoder.layer.{{0}}.", modules, layer_ops, joins, "layer output")
    return dataclasses.replace(layer, inputs=(*layer.inputs, (BIAS, BIAS)))


def _biased(attention: arch.Op) -> arch.Op:
    """The attention with the shared bias added to its scores, a fourth read: the scores need a gradient
    when the query, the key or the bias does, and so keep what the softmax and the values' product need.
    The product QKᵀ itself needs only its own two operands."""
    scores = (own(0), own(1))

    def joined(names: tuple[str, ...]) -> tuple[str, ...]:
        return (*names, own(3)) if all(n in names for n in scores) else names

    saved = tuple(dataclasses.replace(t, needs=joined(t.needs)) for t in attention.saved)
    products = tuple(dataclasses.replace(p, operands=tuple(joined(g) for g in p.operands)) for p in attention.products)
    return dataclasses.replace(attention, products=products, saved=saved, reads=(*attention.reads, BIAS))


def _relative_bias(prefix: str) -> arch.Block:
    """MPNetEncoder.relative_attention_bias: B × A, after the layers, looked up once for all of them.

    The lookup keeps its (s, s) int64 bucket indices; the bias it expands to (b, A, s, s) is a copy
    that nothing keeps, and the buckets' arithmetic is on integers and no product."""
    buckets = arch.Saved("relative buckets", (s, s), arch.Dtype.INT64)
    part = arch.Part.ATTENTION
    table = embedding("relative_attention_bias", "relative-attention-bias", B, A, part=part, ids=buckets, lookups=s * s)
    outputs = ((table.writes, BIAS),)  # every layer's scores read it
    return arch.Block("relative", arch.Kind.ENCODER, f"{prefix}encoder.", (table,), read_by="layer", outputs=outputs)


def _backbone(prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    blocks = (_embeddings(prefix), _encoder_layer(prefix), _relative_bias(prefix))
    return (*blocks, common.bert_pooler(prefix)) if pooler else blocks


def _lm_head(on: Mapping[str, bool]) -> arch.Block:
    """MPNetLMHead, RoBERTa's: its own ``bias`` first, then dense, layer_norm and the decoder.

    It applies gelu whatever hidden_act says."""
    decoder = heads.mlm_decoder(on["tied"], f"{BACKBONE}embeddings.word_embeddings.weight", "lm_head.bias", H)
    modules = (*heads.mlm_transform("dense", "layer_norm"), decoder)
    return heads.mlm_head("lm_head.", modules, heads.mlm_ops("gelu", key="gelu", fixed=True))


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers MPNet class for this head (only the bare model has a pooler)."""
    on_top = {
        arch.Head.MASKED_LM: lambda: (_lm_head(on),),
        # MPNetClassificationHead drops out with the hidden dropout: MPNetConfig has no classifier_dropout.
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.dense_classifier("tanh", common.HIDDEN_DROPOUT),),
    }
    return common.assemble("MPNet", BACKBONE, head, _backbone, on_top, pooled=frozenset({arch.Head.BASE}))


def _padding_row(key: str) -> Rule:
    """nn.Embedding(rows, ..., padding_idx=1) asserts that row 1 exists."""
    return Rule(
        "padding-row-one",
        le(key, PADDING_INDEX),
        (key,),
        values=(("table", const(key)), ("rows", Key(key))),
    )


_DROPOUTS: dropouts.Dropouts = (
    ("hidden_dropout_prob", None),  # the embeddings', every layer's twice, and the classifier's
    ("attention_probs_dropout_prob", dropouts.with_layers()),
)

# Configs transformers builds whose CPU step raises on real tokens, which the meta device cannot see.
STEP_RULES = (
    step_rules.no_label,
    # Positions start at padding_idx + 1 = 2, so a table of 2 rows or fewer holds no token.
    Rule("mpnet-no-token-position", le("max_position_embeddings", PADDING_INDEX + 1), ("max_position_embeddings",)),
    # The buckets are computed for 32 whatever the table holds: fewer rows are read past their end.
    Rule(
        "mpnet-few-buckets",
        lt("relative_attention_num_buckets", BUCKETS_COMPUTED),
        ("relative_attention_num_buckets",),
    ),
)

FAMILY = arch.Family(
    name="mpnet",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    build_rules=(
        common.in_every_layer(common.heads_divide_hidden),
        FirstOf((_padding_row("vocab_size"), _padding_row("max_position_embeddings"))),
        *common.PROBLEM_TYPE_RULES,
        *(dropouts.dropout_range(key, when) for key, when in _DROPOUTS),
        *activations.rules("mpnet"),
    ),
    step_rules=(*STEP_RULES, *(dropouts.nan_in_step(key, when) for key, when in _DROPOUTS)),
    switches=(common.tied("mlm-head"),),
    positions_after=PADDING_INDEX,
    ground_truth=GroundTruth(
        draws={
            # MPNet's tables fix padding_idx at 1, so 1 row builds neither; 2 position rows hold no token.
            "vocab_size": ((30, 50), (0, 1)),
            "max_position_embeddings": ((10, 16), (0, 1, 2)),
            "relative_attention_num_buckets": ((32, 40), (0, 18, ABSENT)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "pad_token_id": ((1, 3), (None, 40)),  # read by no module
        },
        # The buckets turn logarithmic at distance 8 and reach their last at 91.
        lengths=lambda config: (8, 9, 91, 92),
        meta_blind=tuple(rule.name for rule in STEP_RULES[1:]),
    ),
)
