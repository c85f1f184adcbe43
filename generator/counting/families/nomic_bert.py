"""NomicBERT (transformers ``model_type`` "nomic_bert"): modeling_nomic_bert.py in transformers 5.23.

BERT's post-LayerNorm layer with rotary positions and a gated feed-forward, and no bias in any
layer's Linear. Registration order follows NomicBertModel (``embeddings``, ``pooler`` only when
the class asks for it, ``rotary_emb`` with buffers only, then ``layers``), NomicBertEmbeddings
(``word_embeddings``, ``token_type_embeddings``, ``LayerNorm``: no position table) and
NomicBertLayer (``post_attention_layernorm``, ``mlp``, ``self_attn``, ``post_mlp_layernorm``).

NomicBertModel has no pooler by default: only the classifier's class builds one, and it is
registered before the layers. The model makes the cos and sin tables once a step, and every
layer keeps the same two. GTE (``gte.py``) is the same layer with biases, and reuses this one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import replace

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import Condition, Key, Value, div, eq, given, gt, is_null, mod, mul, ne
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.blocks import gated, rotary
from generator.counting.families.symbols import symbols
from generator.counting.flow import own
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import b, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule, Switch

H, A, D = (Poly.symbol(name) for name in "HAD")
HEAD_SIZE = rotary.HEAD_SIZE  # d: ⌊H/A⌋

DERIVED_HEAD_SIZE = div("hidden_size", "num_attention_heads")
HEAD_SIZE_SYMBOL = arch.Symbol("d", "hidden_size / num_attention_heads", value=DERIVED_HEAD_SIZE)
SYMBOLS = symbols("VTHILA", arch.Symbol("D", "head_dim", optional=True), HEAD_SIZE_SYMBOL, "C")

BACKBONE = "nomic_bert."  # the attribute every head class stores the encoder under


def embeddings(prefix: str, *, segments: bool = True) -> arch.Block:
    """Token and segment tables and a LayerNorm; ``segments`` false drops the segment table (GTE's
    type_vocab_size 0). The model passes zeros of (b, s) as token types, which the table keeps."""
    types = common.segment_table(H, arch.Saved("token types", (b, s), arch.Dtype.INT64))
    tables = (common.token_table(H), types) if segments else (common.token_table(H),)
    return common.embeddings_block(prefix, (*tables, common.embedding_norm(H)))


def layer(
    prefix: str, width: Poly, table_width: Poly, *, bias: bool, mlp_dropout: bool, path: str = "layers"
) -> arch.Block:
    """NomicBertLayer and GteLayer: norms after each sub-layer, registered around the gated feed-forward
    and the attention. ``width`` is A times the head size; ``bias`` puts a bias on the attention's four
    Linears and on ``down_proj`` (GTE's); ``mlp_dropout`` drops out the gate's product (GTE's)."""
    attention = tuple(
        linear(
            f"self_attn.{name}_proj",
            key,
            H,
            width,
            bias=bias,
            heads="A",
            part=arch.Part.ATTENTION,
            saves=common.LAYER_INPUT,
            writes=key,
        )
        for name, key in (("q", "query"), ("k", "key"), ("v", "value"))
    )
    out = linear("self_attn.o_proj", "attention-output", width, H, bias=bias, part=arch.Part.ATTENTION)
    modules = (
        layer_norm("post_attention_layernorm", "attention-layernorm", H, writes="feed-forward input"),
        *gated.split("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", biases=(False, False, bias)),
        *attention,
        out,
        layer_norm("post_mlp_layernorm", "output-layernorm", H, writes="layer output"),
    )
    product_dropout = (
        (
            ops.dropout(
                "mlp.dropout",
                "feed-forward-dropout",
                (b, s, Poly.symbol("I")),
                common.HIDDEN_DROPOUT,
                reads="mlp output",
                writes="mlp.down_proj input",
            ),
        )
        if mlp_dropout
        else ()
    )
    product = "mlp output" if mlp_dropout else "mlp.down_proj input"
    # made even without layers, but unread; q·cos keeps cos only when q needs a gradient
    cos, sin = (
        replace(table, needs=(own(0), own(1)))
        for table in rotary.tables(width=table_width, when=dropouts.with_layers())
    )
    attention_op = ops.attention("self_attn", width, A, "attention_probs_dropout_prob", writes=f"{out.path} input")
    layer_ops = (
        rotary.rotated(attention_op, (cos, sin)),
        ops.dropout(
            "post_attention_dropout",
            "attention-output-dropout",
            (b, s, H),
            common.HIDDEN_DROPOUT,
            reads=f"{out.path} output",
        ),
        *gated.split_ops("mlp.act_fn", "mlp", gate="mlp.gate_proj", up="mlp.up_proj", writes=product),
        *product_dropout,
        ops.dropout(
            "post_mlp_dropout", "output-dropout", (b, s, H), common.HIDDEN_DROPOUT, reads="mlp.down_proj output"
        ),
    )
    return common.layers(f"{prefix}{path}.{{0}}.", modules, layer_ops, JOINS, "layer output")


# Norms after each sub-layer: the attention's output adds to the layer's input, the feed-forward's to its own.
JOINS = (
    arch.Join(("post_attention_dropout output", common.LAYER_INPUT), "post_attention_layernorm input"),
    arch.Join(("post_mlp_dropout output", "feed-forward input"), "post_mlp_layernorm input"),
)


def backbone(embedded: arch.Block, stack: arch.Block, prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    """The embeddings, the pooler when the class builds one (registered before the layers), the layers."""
    return (embedded, common.bert_pooler(prefix), stack) if pooler else (embedded, stack)


def _backbone(on: Mapping[str, bool], prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    table_width = D if on["own_head_size"] else HEAD_SIZE
    width = A * table_width if on["own_head_size"] or on["uneven_heads"] else H
    stack = layer(prefix, width, table_width, bias=False, mlp_dropout=False)
    return backbone(embeddings(prefix), stack, prefix, pooler)


def _mlm_head(on: Mapping[str, bool]) -> arch.Block:
    """NomicBertOnlyMLMHead (``cls.predictions``): BERT's, its norm named ``layer_norm``."""
    decoder = heads.mlm_decoder(on["tied"], f"{BACKBONE}embeddings.word_embeddings.weight", "cls.predictions.bias", H)
    modules = (*heads.mlm_transform("transform.dense", "transform.layer_norm"), decoder)
    return heads.mlm_head("cls.predictions.", modules, heads.mlm_ops("transform.transform_act_fn"))


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers NomicBERT class for this head (only the classifier is pooled)."""
    on_top = {
        arch.Head.MASKED_LM: lambda: (_mlm_head(on),),
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.classifier_head(),),
    }
    return common.assemble(
        "NomicBert",
        BACKBONE,
        head,
        functools.partial(_backbone, on),
        on_top,
        pooled=frozenset({arch.Head.SEQUENCE_CLASSIFICATION}),
    )


# The attention's dropout is nn.functional.dropout in the forward: nothing checks it when the model is built.
DROPOUTS: dropouts.Dropouts = (
    ("hidden_dropout_prob", None),
    ("attention_probs_dropout_prob", dropouts.with_layers()),
    ("classifier_dropout", dropouts.CLASSIFIER & given("classifier_dropout")),
)
BUILD_DROPOUTS = (
    dropouts.dropout_range("hidden_dropout_prob"),
    dropouts.dropout_range("classifier_dropout", DROPOUTS[2][1]),
)


def _odd(size: Value) -> Condition:
    return eq(mod(size, 2), 1)


def _head_size_is(test: Callable[[Value], Condition], *, own: bool) -> Condition:
    """A test of the head size: ⌊H/A⌋, or with ``own`` head_dim when given (NomicBertConfig fills a null one)."""
    if not own:
        return test(DERIVED_HEAD_SIZE)
    return (is_null("head_dim") & test(DERIVED_HEAD_SIZE)) | (given("head_dim") & test(Key("head_dim")))


# inv_freq has ⌈d/2⌉ frequencies: an odd head size makes tables one wider than the heads.
odd_head_size = Rule(
    "odd-head-size", gt("num_hidden_layers", 0) & _head_size_is(_odd, own=False), ("hidden_size", "num_attention_heads")
)
odd_own_head_size = Rule("odd-own-head-size", gt("num_hidden_layers", 0) & _head_size_is(_odd, own=True), ("head_dim",))
# NomicBertConfig's rope check (validate_rope) refuses an odd head_dim above 4 when the config is made.
rope_odd_head_size = Rule(
    "rope-odd-head-size", _head_size_is(lambda size: _odd(size) & gt(size, 4), own=True), ("head_dim",)
)


def zero_head_size(*, own: bool) -> Rule:
    """Heads 0 wide: each layer's attention scales by head_size ** -0.5, which raises when it is built."""
    keys = ("head_dim",) if own else ("hidden_size", "num_attention_heads")
    return common.in_every_layer(Rule("zero-head-size", _head_size_is(lambda size: eq(size, 0), own=own), keys))


def step_rules_for(odd: Rule) -> tuple[Rule, ...]:
    """The step rules NomicBERT and GTE share, with the rule on their head size."""
    return (
        *step_rules.COMMON,
        odd,
        dropouts.dropout_range("attention_probs_dropout_prob", dropouts.with_layers()),
        *dropouts.in_step(DROPOUTS),
    )


OWN_HEAD_SIZE = given("head_dim") & ne(mul("num_attention_heads", "head_dim"), "hidden_size")
# No head check: A heads of ⌊H/A⌋ make A·⌊H/A⌋-wide projections, which o_proj maps back to H.
UNEVEN_HEADS = ne(mod("hidden_size", "num_attention_heads"), 0)

FAMILY = arch.Family(
    name="nomic_bert",
    symbols=SYMBOLS,
    heads=common.WITHOUT_PRETRAINING,
    declare=declare,
    # A class attribute of NomicBertConfig, not a field: config.json holds it only when it is given.
    extra_config={"tie_word_embeddings": True},
    build_rules=(
        zero_head_size(own=True),
        rope_odd_head_size,
        common.padding_in_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *BUILD_DROPOUTS,
        *activations.rules("nomic_bert"),
    ),
    step_rules=(*step_rules_for(odd_own_head_size), step_rules.no_token_type_row),
    switches=(
        common.tied("mlm-head"),
        Switch("own_head_size", OWN_HEAD_SIZE, ("layer",)),
        Switch("uneven_heads", is_null("head_dim") & UNEVEN_HEADS, ("layer",)),
    ),
    ground_truth=GroundTruth(
        draws={
            "type_vocab_size": ((1, 2), (0,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "pad_token_id": ((0, 3), (None,)),
            "head_dim": ((4, 6), (ABSENT, None, 0, 3, 5)),  # 0, 3 and 5: the build and step rules on the head size
        },
        derived=("head_dim",),
        # The cos and sin tables are made afresh each step for s positions: no cache to outgrow.
        lengths=rotary.interior_lengths,
    ),
)
