"""Pieces several families share: BERT's embeddings and encoder layer, and transformers' rules.

BERT, RoBERTa, XLM-RoBERTa and ELECTRA register exactly the same encoder layer (their modeling
files copy BertLayer); BERT, ALBERT and ELECTRA the same embeddings, each at its own width;
DeBERTa and ModernBERT check their head counts with BERT's words. They are written once here.
This module declares no family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import (
    Condition,
    Key,
    const,
    div,
    eq,
    ge,
    given,
    gt,
    is_whole,
    lt,
    mod,
    mul,
    ne,
    neg,
    truthy,
)
from generator.counting.families import dropouts
from generator.counting.flow import HIDDEN as HIDDEN
from generator.counting.layouts import b, embedding, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule, Switch

V, P, T, E, H, I, C, A = (Poly.symbol(name) for name in "VPTEHICA")

# Storages several blocks read: the encoder's output (the pooler reads token 0 of it, a view that
# keeps the whole tensor) and the pooled output (the heads' input), each saved once.
ENCODER_OUTPUT = arch.Saved("encoder output", (b, s, H), shared=True)
POOLED_OUTPUT = arch.Saved("pooled output", (b, H), shared=True)
HIDDEN_DROPOUT = ops.probability("hidden_dropout_prob")
# BertEmbeddings gathers the token types from its zero buffer at the position ids: a new (1, s)
# tensor of ids, kept by the segment table (modeling_bert.py, BertEmbeddings.forward).
GATHERED_TOKEN_TYPES = arch.Saved("token type ids", (s,), arch.Dtype.INT64)


# The class names transformers gives a family's heads, after the family's stem ("Bert").
CLASS_SUFFIXES = {
    arch.Head.BASE: "Model",
    arch.Head.PRETRAINING: "ForPreTraining",
    arch.Head.MASKED_LM: "ForMaskedLM",
    arch.Head.SEQUENCE_CLASSIFICATION: "ForSequenceClassification",
}

# The heads whose class keeps BERT's pooler: every one but the masked LM (BertForMaskedLM drops it).
POOLED = frozenset({arch.Head.BASE, arch.Head.PRETRAINING, arch.Head.SEQUENCE_CLASSIFICATION})

# A family's backbone for a prefix ("" for the bare model, else the attribute) and whether it is pooled.
Backbone = Callable[[str, bool], tuple[arch.Block, ...]]

# What each head class adds to the backbone, built only for the head asked for: a builder that
# reads a switch only another head depends on would tie its blocks to that switch.
OnTop = Mapping[arch.Head, Callable[[], tuple[arch.Block, ...]]]


def assemble(
    stem: str,
    attribute: str,
    head: arch.Head,
    backbone: Backbone,
    on_top: OnTop,
    *,
    pooled: frozenset[arch.Head] = POOLED,
    heads_first: bool = False,
) -> arch.Architecture:
    """A head class: the backbone under ``attribute`` (bare for the base model) and the head's blocks.

    ``heads_first`` when the class creates its head before the backbone (XLM-RoBERTa's), which
    puts the head first in ``named_parameters()``.
    """
    blocks = backbone("" if head is arch.Head.BASE else attribute, head in pooled)
    top = on_top[head]() if head in on_top else ()
    ordered = (*top, *blocks) if heads_first else (*blocks, *top)
    return arch.Architecture(f"{stem}{CLASS_SUFFIXES[head]}", ordered, "" if head is arch.Head.BASE else attribute)


def token_table(width: Poly, path: str = "word_embeddings") -> arch.Module:
    """The token embedding table: V rows ``width`` wide."""
    return embedding(path, "token-embeddings", V, width)


def position_table(width: Poly, key: str = "position-embeddings", ids: arch.Saved | None = None) -> arch.Module:
    """The learned absolute position table: P rows ``width`` wide. Its ids are a view of the
    ``position_ids`` buffer (nothing new is saved), one row of s for the whole batch, unless the
    class makes them (``ids``, b·s of them)."""
    return embedding("position_embeddings", key, P, width, ids=ids, lookups=s if ids is None else b * s)


def segment_table(width: Poly, ids: arch.Saved = GATHERED_TOKEN_TYPES) -> arch.Module:
    """The token type (segment) table: T rows ``width`` wide, keeping the token type ids it was given."""
    return embedding("token_type_embeddings", "segment-embeddings", T, width, ids=ids)


def embedding_norm(width: Poly) -> arch.Module:
    """The LayerNorm over the summed embeddings."""
    return layer_norm("LayerNorm", "embedding-layernorm", width)


# The model-wide name of the pooled output, which the heads read (the hidden states': flow.HIDDEN).
POOLER_OUTPUT = "pooler output"


def embeddings_block(
    prefix: str, modules: tuple[arch.Module, ...], width: Poly = H, dropout: Condition = HIDDEN_DROPOUT
) -> arch.Block:
    """The embeddings module of a backbone stored under ``prefix``; the sum goes through a dropout.

    The tables' outputs add up to the LayerNorm's input, where there is one, whose output the dropout reads.
    """
    norms = [m for m in modules if m.reads]
    summed = norms[0].reads[0] if norms else "embeddings sum"
    dropped = ops.dropout(
        "dropout", "embedding-dropout", (b, s, width), dropout, reads=norms[0].writes if norms else summed
    )
    tables = tuple(m.writes for m in modules if not m.reads and m.writes)
    return arch.Block(
        "embeddings",
        arch.Kind.EMBEDDINGS,
        f"{prefix}embeddings.",
        modules,
        ops=(dropped,),
        joins=(arch.Join(tables, summed),),
        outputs=((dropped.writes, HIDDEN),),
    )


def bert_embeddings(prefix: str, width: Poly) -> arch.Block:
    """BertEmbeddings: token, position and segment tables ``width`` wide, then a LayerNorm."""
    return embeddings_block(
        prefix, (token_table(width), position_table(width), segment_table(width), embedding_norm(width)), width
    )


def query_key_value(
    paths: tuple[str, str, str],
    n_in: Poly = H,
    width: Poly = H,
    *,
    value_in: Poly | None = None,
    heads: str | None = "A",
    reads: tuple[str, str] = ("layer input", "layer input"),
) -> tuple[arch.Module, ...]:
    """The query, key and value projections, each ``n_in`` to ``width`` and split into heads.

    ``reads`` names the storages the query and key, and the value, read: the layer's input for
    all three in most classes, one storage saved once.
    """
    query, key, value = paths
    query_key, value_input = reads
    value_width = n_in if value_in is None else value_in
    return (
        linear(query, "query", n_in, width, heads=heads, part=arch.Part.ATTENTION, saves=query_key, writes="query"),
        linear(key, "key", n_in, width, heads=heads, part=arch.Part.ATTENTION, saves=query_key, writes="key"),
        linear(
            value, "value", value_width, width, heads=heads, part=arch.Part.ATTENTION, saves=value_input, writes="value"
        ),
    )


def attention_output(path: str, width: Poly = H) -> arch.Module:
    """The projection that mixes the heads' outputs back together."""
    return linear(path, "attention-output", width, width, part=arch.Part.ATTENTION)


def feed_forward(into: str, out: str, width: Poly = H) -> tuple[arch.Module, ...]:
    """The feed-forward pair: ``width`` up to I, then back down; the second reads the activation's output."""
    return (
        linear(into, "feed-forward-in", width, I, part=arch.Part.FEED_FORWARD, writes="feed-forward hidden"),
        linear(out, "feed-forward-out", I, width, part=arch.Part.FEED_FORWARD, saves="feed-forward activated"),
    )


def feed_forward_activation(path: str, key: str = "hidden_act") -> arch.Op:
    """The activation between the feed-forward pair, the config's ``key``: what it keeps depends on it."""
    return ops.activation(
        path, "feed-forward-activation", key, (b, s, I), before="feed-forward hidden", after="feed-forward activated"
    )


def layers(
    path: str,
    modules: tuple[arch.Module, ...],
    layer_ops: tuple[arch.Op, ...] = (),
    joins: tuple[arch.Join, ...] = (),
    output: str = "",
) -> arch.Block:
    """The encoder layer, repeated L times under ``path`` ("{0}" for the layer's index).

    Its data flow, where declared: ``joins`` and the name of its ``output``; it reads "layer input".
    """
    flow = {"joins": joins, "inputs": ((LAYER_INPUT, HIDDEN),), "outputs": ((output, HIDDEN),)} if output else {}
    return arch.Block("layer", arch.Kind.ENCODER, path, modules, repeat=("L",), ops=layer_ops, **flow)  # type: ignore[arg-type]


LAYER_INPUT = "layer input"


def residual(branch: str, norm: str) -> arch.Join:
    """A post-norm residual connection: the branch's output plus the sublayer's input, into ``norm``'s input."""
    return arch.Join((branch, LAYER_INPUT), f"{norm} input")


def bert_attention(path: str) -> tuple[arch.Module, ...]:
    """BertAttention: query, key, value (each split into A heads), output dense, LayerNorm."""
    return (
        *query_key_value((f"{path}.self.query", f"{path}.self.key", f"{path}.self.value")),
        attention_output(f"{path}.output.dense"),
        layer_norm(f"{path}.output.LayerNorm", "attention-layernorm", H, writes="intermediate.dense input"),
    )


def bert_encoder_layer(on: Mapping[str, bool], prefix: str) -> arch.Block:
    """BertLayer, repeated L times: attention, cross-attention for a decoder, feed-forward."""
    modules = bert_attention("attention")
    if on["cross_attention"]:
        cross = bert_attention("crossattention")
        modules += tuple(arch.Module(m.path, f"cross-attention-{m.key}", m.params, m.heads, part=m.part) for m in cross)
    modules += (
        *feed_forward("intermediate.dense", "output.dense"),
        layer_norm("output.LayerNorm", "output-layernorm", H, writes="layer output"),
    )
    return layers(f"{prefix}encoder.layer.{{0}}.", modules, bert_layer_ops(), BERT_JOINS, "layer output")


def bert_layer_ops() -> tuple[arch.Op, ...]:
    """What BertLayer computes between its modules: attention, dropouts, the feed-forward activation.

    Cross-attention runs only on an encoder's states, which a step with ``input_ids`` alone does not
    give: its modules hold parameters but compute nothing.
    """
    attention = ops.attention(
        "attention.self", H, A, "attention_probs_dropout_prob", writes="attention.output.dense input"
    )
    return (
        attention,
        attention_output_dropout(),
        feed_forward_activation("intermediate.intermediate_act_fn"),
        ops.dropout("output.dropout", "output-dropout", (b, s, H), HIDDEN_DROPOUT, reads="output.dense output"),
    )


def attention_output_dropout(path: str = "attention.output.dropout", dense: str = "attention.output.dense") -> arch.Op:
    """The hidden dropout on the attention's output projection (``dense``), before its residual sum."""
    return ops.dropout(path, "attention-output-dropout", (b, s, H), HIDDEN_DROPOUT, reads=f"{dense} output")


# BertLayer's residual connections: attention's output onto the layer's input, and the feed-forward's
# onto the attention's (the input of the feed-forward's first Linear, which that LayerNorm writes).
BERT_JOINS = (
    arch.Join(("attention.output.dropout output", LAYER_INPUT), "attention.output.LayerNorm input"),
    arch.Join(("output.dropout output", "intermediate.dense input"), "output.LayerNorm input"),
)


# The rules transformers enforces, as data (switches.Rule): the card check and the calculator read them.

# BertSelfAttention.__init__ (and its copies), in its words.
heads_divide_hidden = Rule(
    "heads-divide-hidden",
    ne(mod("hidden_size", "num_attention_heads"), 0),
    ("hidden_size", "num_attention_heads"),
)

# The same check in the copies ALBERT and ELECTRA made of it never fires: it is skipped when the config has
# embedding_size, which AlbertConfig and ElectraConfig always have. transformers builds A·⌊H/A⌋-wide query,
# key and value that the forward pass cannot use; the words say so (content/en/families.yaml).
heads_divide_hidden_unchecked = replace(
    heads_divide_hidden,
    name="heads-divide-hidden-unchecked",
    values=(("built", mul("num_attention_heads", div("hidden_size", "num_attention_heads"))),),
)

# BertLayer.__init__ (and its copies) refuse cross-attention in an encoder.
cross_attention_needs_decoder = Rule(
    "cross-attention-needs-decoder",
    truthy("add_cross_attention") & ~truthy("is_decoder"),
    ("add_cross_attention",),
)


def in_every_layer(rule: Rule, layers: str = "num_hidden_layers") -> Rule:
    """A rule about a module every encoder layer builds: moot without layers, as range(0) builds none."""
    return replace(rule, fails=gt(layers, 0) & rule.fails)


# BertLayer's own refusals, which a config without layers never meets.
LAYER_RULES = (in_every_layer(heads_divide_hidden), in_every_layer(cross_attention_needs_decoder))

# nn.Embedding(vocab_size, ..., padding_idx=pad_token_id) asserts that the index is a row.
padding_in_vocabulary = Rule(
    "padding-in-vocabulary",
    is_whole("pad_token_id") & (lt("pad_token_id", neg("vocab_size")) | ge("pad_token_id", "vocab_size")),
    ("pad_token_id", "vocab_size"),
)

# PretrainedConfig.__init__ refuses a single-label classification with one label (every family's config).
single_label_needs_labels = Rule(
    "single-label-needs-labels",
    eq("problem_type", const("single_label_classification")) & eq("num_labels", 1),
    ("num_labels",),  # the calculator's one-click fixes: a number of labels (a problem_type of 1 would pass too)
)

# PretrainedConfig declares problem_type as one of three names, or null; the classification loss
# raises on any other (ForSequenceClassificationLoss: "Invalid problem type"), so no step of it runs.
PROBLEM_TYPES = ("regression", "single_label_classification", "multi_label_classification")
known_problem_type = Rule(
    "known-problem-type",
    given("problem_type")
    & ne("problem_type", const(PROBLEM_TYPES[0]))
    & ne("problem_type", const(PROBLEM_TYPES[1]))
    & ne("problem_type", const(PROBLEM_TYPES[2])),
    ("problem_type",),
)

# Every family's config class checks the problem type the same way.
PROBLEM_TYPE_RULES = (single_label_needs_labels, known_problem_type)

# The rules of a class with a token table, a problem type and the encoder's dropouts (dropouts.ENCODER).
EMBEDDING_AND_CONFIG_RULES = (padding_in_vocabulary, *PROBLEM_TYPE_RULES, *dropouts.ranges(dropouts.ENCODER))

# The heads of the families that have no pre-training class in transformers.
WITHOUT_PRETRAINING = (arch.Head.BASE, arch.Head.MASKED_LM, arch.Head.SEQUENCE_CLASSIFICATION)

# The switch every family with BertLayer's cross-attention declares.
CROSS_ATTENTION = Switch("cross_attention", truthy("add_cross_attention"), ("layer",))


def tied(*blocks: str) -> Switch:
    """tie_word_embeddings: the output layer reuses the token table instead of holding its own."""
    return Switch("tied", truthy("tie_word_embeddings"), blocks)


def padding_fits(key: str) -> Rule:
    """A table built with padding_idx=pad_token_id must have that row (DistilBERT's and RoBERTa's words)."""
    return Rule(
        "padding-fits",
        is_whole("pad_token_id") & (lt("pad_token_id", neg(key)) | ge("pad_token_id", key)),
        (key, "pad_token_id"),
        values=(("table", const(key)), ("rows", Key(key))),  # the message names the table's key and size
    )


def bert_pooler(prefix: str) -> arch.Block:
    """BertPooler (and its copies): one H × H Linear on the first token, then tanh.

    Token 0 is a view of the encoder's output, so the Linear keeps that whole tensor alive.
    """
    return arch.Block(
        "pooler",
        arch.Kind.POOLER,
        f"{prefix}pooler.",
        (linear("dense", "pooler-dense", H, H, rows=b, saves=ENCODER_OUTPUT),),
        ops=(ops.tanh("activation", "pooler-tanh", (b, H), POOLED_OUTPUT.key, reads="dense output"),),
        inputs=((ENCODER_OUTPUT.key, HIDDEN),),
        outputs=((POOLED_OUTPUT.key, POOLER_OUTPUT),),
    )


def unread(block: arch.Block) -> arch.Block:
    """The same block, run in the forward but read by no loss: the backward skips its products."""
    modules = tuple(replace(m, products=tuple(replace(p, backward=0) for p in m.products)) for m in block.modules)
    return replace(block, modules=modules)
