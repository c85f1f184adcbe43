"""MobileBERT (transformers ``model_type`` "mobilebert"): modeling_mobilebert.py in transformers 5.23.

Registration order follows the ``__init__`` of MobileBertEmbeddings, MobileBertLayer
(attention, intermediate, output with its output bottleneck, the input bottleneck, then the
stacked FFNs), MobileBertPooler and the heads. Three details decide the names and shapes:

* the attention and feed-forward run at the "true hidden size": ``intra_bottleneck_size`` when
  ``use_bottleneck`` is true, else ``hidden_size`` (MobileBertConfig.__post_init__);
* NoNorm registers ``bias`` before ``weight`` (LayerNorm the other way round), and the masked-LM
  transform always uses a real LayerNorm whatever ``normalization_type`` says;
* MobileBertLMPredictionHead registers ``dense`` as ``nn.Linear(V, H - E, bias=False)``, so its
  weight is stored [H - E, V]; the decoder reuses the E-wide embedding table for the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from generator.counting import ops
from generator.counting.architecture import (
    Architecture,
    Block,
    Dtype,
    Family,
    Head,
    Kind,
    Module,
    Op,
    Param,
    Part,
    Product,
    Saved,
    Symbol,
)
from generator.counting.conditions import const, eq, given, gt, head_is, mod, ne, truthy
from generator.counting.families import common
from generator.counting.families.symbols import shared, symbols
from generator.counting.layouts import TOKENS, b, embedding, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import FirstOf, Rule, Switch

V, P, T, H, E, B, I, F, C, A = (Poly.symbol(name) for name in "VPTHEBIFCA")
TRANSFORMED = truthy("trigram_input") | ne("embedding_size", "hidden_size")

SYMBOLS = symbols(
    "VPT",
    shared("H", meaning="inter-block hidden size (the width between layers)", minimum=0),
    Symbol("E", "embedding_size", "token embedding width", minimum=0),
    Symbol("B", "intra_bottleneck_size", "bottleneck width inside each layer"),
    "I",
    shared("L", minimum=1),
    "A",
    Symbol("F", "num_feedforward_networks", "feed-forward networks per layer"),
    "C",
)


def _norm(path: str, label: str, dim: Poly, on: Mapping[str, bool]) -> Module:
    """NoNorm (an elementwise scale and shift, no statistics) or LayerNorm, as normalization_type says.

    NoNorm's input times its weight keeps the input for the weight's gradient, and nothing else.
    """
    if on["layer_norm"]:
        return layer_norm(path, f"{label} LayerNorm", dim)
    return Module(
        path,
        f"{label} NoNorm",
        (Param("bias", (dim,), "elementwise shift"), Param("weight", (dim,), "elementwise scale")),
        part=Part.NORMS,
        saved=(Saved(f"{path} input", (TOKENS, dim)),),
    )


def _norm_params(prefix: str, dim: Poly, on: Mapping[str, bool]) -> tuple[Param, ...]:
    """The same norm's parameters, named below an enclosing module (the stacked FFNs)."""
    norm = _norm(prefix, "", dim, on)
    return tuple(Param(f"{prefix}.{p.name}", p.shape, p.role, Part.NORMS) for p in norm.params if isinstance(p, Param))


def _width(on: Mapping[str, bool]) -> Poly:
    """The "true hidden size" that attention and the feed-forward networks work at."""
    return B if on["bottleneck"] else H


def _embeddings(on: Mapping[str, bool], prefix: str) -> Block:
    n_in = 3 * E if on["trigram"] else E
    label = "trigram projection" if on["trigram"] else "embedding projection"
    return Block(
        "embeddings",
        "embeddings",
        Kind.EMBEDDINGS,
        f"{prefix}embeddings.",
        (
            embedding("word_embeddings", "token embeddings", V, E),
            embedding("position_embeddings", "position embeddings", P, H, ids=None),  # a view of position_ids
            embedding(
                "token_type_embeddings", "segment embeddings", T, H, ids=Saved("token types", (b, s), Dtype.INT64)
            ),
            # Applied only with the trigram input or when E differs from H (MobileBertEmbeddings.forward).
            ops.gated(linear("embedding_transformation", label, n_in, H, part=Part.EMBEDDINGS), TRANSFORMED),
            _norm("LayerNorm", "embedding", H, on),
        ),
        ops=(ops.dropout("dropout", "embedding dropout", (b, s, H), common.HIDDEN_DROPOUT),),
    )


def _attention_inputs(on: Mapping[str, bool]) -> tuple[str, str]:
    """The storages the query and key, and the value, read (Bottleneck.forward): the layer's input,
    the input bottleneck's output (use_bottleneck_attention), or the shared query-key bottleneck's."""
    if not on["bottleneck"]:
        return "layer input", "layer input"
    if on["bottleneck_attention"]:
        return "bottleneck in output", "bottleneck in output"
    if on["shared_bottleneck"]:
        return "query-key bottleneck output", "layer input"
    return "layer input", "layer input"


def _encoder_layer(on: Mapping[str, bool], prefix: str) -> Block:
    width = _width(on)
    value_in = width if on["bottleneck_attention"] else H
    query_key, value = _attention_inputs(on)
    modules: tuple[Module, ...] = (
        linear("attention.self.query", "query", width, width, heads="A", part=Part.ATTENTION, saves=query_key),
        linear("attention.self.key", "key", width, width, heads="A", part=Part.ATTENTION, saves=query_key),
        linear("attention.self.value", "value", value_in, width, heads="A", part=Part.ATTENTION, saves=value),
        linear("attention.output.dense", "attention output", width, width, part=Part.ATTENTION),
        _norm("attention.output.LayerNorm", "attention", width, on),
        linear("intermediate.dense", "feed-forward in", width, I, part=Part.FEED_FORWARD),
        linear("output.dense", "feed-forward out", I, width, part=Part.FEED_FORWARD, saves="feed-forward activated"),
        _norm("output.LayerNorm", "feed-forward", width, on),
    )
    if on["bottleneck"]:
        bottleneck_in = _norm("bottleneck.input.LayerNorm", "bottleneck in", B, on)
        modules += (
            linear("output.bottleneck.dense", "bottleneck out (B to H)", B, H, part=Part.FEED_FORWARD),
            _norm("output.bottleneck.LayerNorm", "bottleneck out", H, on),
            linear(
                "bottleneck.input.dense", "bottleneck in (H to B)", H, B, part=Part.FEED_FORWARD, saves="layer input"
            ),
            bottleneck_in,
        )
        if on["shared_bottleneck"]:
            shared_modules = (
                linear(
                    "bottleneck.attention.dense",
                    "query-key bottleneck (H to B)",
                    H,
                    B,
                    part=Part.ATTENTION,
                    saves="layer input",
                ),
                _norm("bottleneck.attention.LayerNorm", "query-key bottleneck", B, on),
            )
            # With use_bottleneck_attention the shared bottleneck is built but never called.
            modules += tuple(ops.idle(m) for m in shared_modules) if on["bottleneck_attention"] else shared_modules
    if on["stacked_ffn"]:
        ffn = (
            Param("intermediate.dense.weight", (I, width), "weight in"),
            Param("intermediate.dense.bias", (I,), "bias in"),
            Param("output.dense.weight", (width, I), "weight out"),
            Param("output.dense.bias", (width,), "bias out"),
            *_norm_params("output.LayerNorm", width, on),
        )
        stacked = Module(
            "ffn.{n}",
            "extra feed-forward network",
            ffn,
            repeat=F + (-1),
            part=Part.FEED_FORWARD,
            products=(Product("feed-forward in", TOKENS, I, width), Product("feed-forward out", TOKENS, width, I)),
            saved=(
                Saved("stacked input", (TOKENS, width)),
                Saved("stacked activated", (TOKENS, I)),
                *_renamed(_norm("ffn", "", width, on).saved, "stacked norm input"),
            ),
        )
        modules += (stacked,)
    return Block(
        "layer",
        "encoder layer",
        Kind.ENCODER,
        f"{prefix}encoder.layer.{{0}}.",
        modules,
        repeat=("L",),
        ops=_layer_ops(on, width),
    )


def _renamed(saved: tuple[Saved, ...], key: str) -> tuple[Saved, ...]:
    """A norm's saved tensors with its input under ``key`` (its statistics keep their own keys)."""
    return (replace(saved[0], key=key), *saved[1:])


def _layer_ops(on: Mapping[str, bool], width: Poly) -> tuple[Op, ...]:
    """Attention, the activations of every feed-forward network, and the dropouts MobileBertLayer applies:
    after the attention output and the feed-forward output only without the bottleneck, else after the
    output bottleneck."""

    def act(path: str, before: str, after: str, repeat: Poly | None = None) -> Op:
        op = ops.activation(path, "feed-forward activation", "hidden_act", (b, s, I), before=before, after=after)
        return replace(op, repeat=repeat)

    layer_ops = [
        ops.attention("attention.self", width, A, "attention_probs_dropout_prob"),
        act("intermediate.intermediate_act_fn", "feed-forward hidden", "feed-forward activated"),
        ops.dropout("output.dropout", "output dropout", (b, s, H), common.HIDDEN_DROPOUT),
    ]
    if not on["bottleneck"]:
        layer_ops.append(ops.dropout("attention.output.dropout", "attention dropout", (b, s, H), common.HIDDEN_DROPOUT))
    if on["stacked_ffn"]:
        layer_ops.append(
            act("ffn.{n}.intermediate.intermediate_act_fn", "stacked hidden", "stacked activated", F + (-1))
        )
    return tuple(layer_ops)


def _backbone(on: Mapping[str, bool], prefix: str, *, pooler: bool) -> tuple[Block, ...]:
    blocks: tuple[Block, ...] = (_embeddings(on, prefix), _encoder_layer(on, prefix))
    # Without classifier_activation the pooler only picks the first token and holds no tensor.
    if pooler and on["pooler_dense"]:
        blocks += (common.bert_pooler(prefix),)
    return blocks


def _pooled(on: Mapping[str, bool]) -> Saved:
    """Without classifier_activation the pooled output is token 0, a view of the encoder's output."""
    return common.POOLED if on["pooler_dense"] else common.ENCODER_OUTPUT


def _mlm_head(on: Mapping[str, bool]) -> Block:
    decoder = common.mlm_decoder(on["tied"], "mobilebert.embeddings.word_embeddings.weight", "cls.predictions.bias", E)
    # MobileBertLMPredictionHead multiplies by the concatenation [decoder.weightᵀ; dense.weight], an H × V
    # matrix made anew at every step and kept for the backward, with the transform's output.
    scores = Module(
        "dense",
        "output rows beyond E",
        (Param("weight", (H + (-1) * E, V), "weight"),),
        products=(Product("scores against [decoderᵀ; dense]", TOKENS, V, H),),
        saved=(Saved("scores input", (TOKENS, H)), Saved("concatenated output weights", (H, V))),
    )
    modules = (*common.mlm_transform("transform.dense", "transform.LayerNorm"), scores, ops.idle(decoder))
    mlm_ops = common.mlm_ops("transform.transform_act_fn")
    return Block("mlm-head", "masked-LM head", Kind.HEAD, "cls.predictions.", modules, ops=mlm_ops)


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers MobileBERT class for this head."""
    if head is Head.BASE:
        return Architecture("MobileBertModel", _backbone(on, "", pooler=True))
    if head is Head.PRETRAINING:
        nsp = common.next_sentence_head(_pooled(on))
        blocks = (*_backbone(on, "mobilebert.", pooler=True), _mlm_head(on), nsp)
        return Architecture("MobileBertForPreTraining", blocks)
    if head is Head.MASKED_LM:
        return Architecture("MobileBertForMaskedLM", (*_backbone(on, "mobilebert.", pooler=False), _mlm_head(on)))
    classifier = common.classifier_head(pooled=_pooled(on))
    return Architecture("MobileBertForSequenceClassification", (*_backbone(on, "mobilebert.", pooler=True), classifier))


# MobileBertSelfAttention rounds the head size down instead of refusing, which leaves a layer
# whose attention output no longer fits its output projection; refuse it as BERT does.
_heads_divide_width = FirstOf(
    (
        Rule(
            truthy("use_bottleneck") & ne(mod("intra_bottleneck_size", "num_attention_heads"), 0),
            "the bottleneck size intra_bottleneck_size ({intra_bottleneck_size}) is not a multiple of the number "
            "of attention heads ({num_attention_heads}); attention runs at the bottleneck width when "
            "use_bottleneck is true",
            ("intra_bottleneck_size", "num_attention_heads"),
        ),
        Rule(
            ~truthy("use_bottleneck") & ne(mod("hidden_size", "num_attention_heads"), 0),
            common.heads_divide_hidden.message,
            common.heads_divide_hidden.keys,
        ),
    )
)

# MobileBertLMPredictionHead (the masked-LM and pretraining heads only) builds nn.Linear(V, H - E):
# torch refuses a negative size.
_embedding_fits_hidden = Rule(
    gt("embedding_size", "hidden_size") & head_is("masked-lm", "pretraining"),
    "the embedding size ({embedding_size}) is larger than the hidden size ({hidden_size}); the masked-LM "
    "head's extra output matrix would need H − E < 0 rows, and transformers cannot build it",
    ("embedding_size", "hidden_size"),
)

# MobileBertConfig derives true_hidden_size and writes it into config.json; a value given for it
# replaces the derived one in transformers 5.23. Published configs agree with the derivation, so
# a card may carry the key, but not a value that would silently resize every layer.
_true_hidden_size_agrees = FirstOf(
    tuple(
        Rule(
            given("true_hidden_size")
            & (truthy("use_bottleneck") if bottleneck else ~truthy("use_bottleneck"))
            # ne tells a boolean from a number, so true_hidden_size: true disagrees too
            & ne("true_hidden_size", source),
            "true_hidden_size ({true_hidden_size!r}) disagrees with the value MobileBertConfig derives "
            f"({{{source}}}, from {source}, as use_bottleneck is {str(bottleneck).lower()}); "
            "delete the key or make the two agree",
            ("true_hidden_size",),
        )
        for bottleneck, source in ((True, "intra_bottleneck_size"), (False, "hidden_size"))
    )
)

# NORM2FN in modeling_mobilebert.py knows these two; any other name is a KeyError there.
_known_normalization = Rule(
    ne("normalization_type", const("no_norm")) & ne("normalization_type", const("layer_norm")),
    "normalization_type must be 'no_norm' or 'layer_norm', found {normalization_type!r}",
    ("normalization_type",),
)


FAMILY = Family(
    name="mobilebert",
    title="MobileBERT",
    symbols=SYMBOLS,
    heads=(Head.BASE, Head.PRETRAINING, Head.MASKED_LM, Head.SEQUENCE_CLASSIFICATION),
    declare=declare,
    flag_keys=(
        "trigram_input",
        "use_bottleneck",
        "use_bottleneck_attention",
        "key_query_shared_bottleneck",
        "classifier_activation",
        "tie_word_embeddings",
    ),
    differences=(
        "**Bottleneck in and out.** Layers pass a wide stream of width H (`hidden_size`) to each "
        "other but do their work at a narrow width B (`intra_bottleneck_size`). Each layer starts with "
        "`bottleneck.input`, a Linear from H to B with its norm, and ends with `output.bottleneck`, a "
        "Linear from B back to H with its norm. In between, query, key, attention output and the "
        "feed-forward matrices are B wide, so a layer costs terms in B² and BI where BERT's cost H² "
        "and HI. The value projection still reads the wide input (B × H) unless "
        "`use_bottleneck_attention` feeds it the narrowed one (B × B). With "
        "`key_query_shared_bottleneck` a second H-to-B Linear, `bottleneck.attention`, makes the "
        "input that query and key share. With `use_bottleneck` false all of these go away and the "
        "layer works at H, as in BERT.",
        "**Stacked feed-forward networks.** A layer holds F (`num_feedforward_networks`) "
        "feed-forward networks instead of one: the usual `intermediate` and `output` pair, plus F − 1 "
        "more under `ffn.0`, `ffn.1`, ..., each with its own input and output matrices and its own "
        "norm. The derivation counts them as one step multiplied by F − 1. With F = 1 the `ffn` list "
        "is not created at all. Because the networks run at the narrow width, several of them still "
        "cost less than one of BERT's.",
        "**NoNorm.** With `normalization_type` `no_norm` (the published setting), every norm in "
        "the embeddings and the encoder is a plain elementwise scale and shift, with no mean or "
        "variance computed. It stores the same two vectors as a LayerNorm, so the count does not "
        "change; the tensors keep the name `LayerNorm` but are registered bias first. The masked-LM "
        "head's transform uses a real LayerNorm whatever the setting says.",
        "**Embedding trigram projection.** The token table is only E wide (`embedding_size`), while "
        "the position and segment tables are H wide. With `trigram_input`, each token's embedding is "
        "joined with its left and right neighbours' into a 3E vector, and `embedding_transformation`, "
        "a Linear from 3E to H, brings it to the hidden width; without it the same Linear runs from E "
        "to H. transformers creates this Linear even when E equals H and it goes unused, so it is "
        "always counted.",
        "**The masked-LM head's extra matrix.** The decoder reuses the token table, but that table is "
        "only E wide, so it scores just E of the H hidden dimensions. The other H − E come from "
        "`cls.predictions.dense`, a separate matrix stored as (H − E) × V. So a tied MobileBERT "
        "masked-LM head still adds a vocabulary-sized matrix, which BERT's does not, and it is larger "
        "than the token table it complements. Between them the two hold a full V × H output matrix, "
        "which is why the closed form of a tied model with this head shows VH, as BERT's does. "
        "Untying the decoder (`tie_word_embeddings` false) adds an E-wide decoder weight and its own "
        "bias on top.",
        "**Pooler.** The published config sets `classifier_activation` false: the pooler then only "
        "takes the first token's hidden state and holds no weights, and the classifier and the "
        "next-sentence head read that state directly.",
    ),
    switches=(
        common.tied("mlm-head"),
        Switch(
            "trigram",
            truthy("trigram_input"),
            "the embedding projection reads three neighbouring tokens (3E)",
            ("embeddings",),
        ),
        Switch("bottleneck", truthy("use_bottleneck"), "layers work at the bottleneck width B", ("layer",)),
        Switch(
            "bottleneck_attention",
            truthy("use_bottleneck_attention"),
            "the value projection reads the B-wide input",
            ("layer",),
        ),
        Switch(
            "shared_bottleneck",
            truthy("key_query_shared_bottleneck"),
            "query and key share their own H-to-B input",
            ("layer",),
        ),
        Switch(
            "layer_norm",
            eq("normalization_type", const("layer_norm")),
            "norms are LayerNorms, not NoNorms",
            ("embeddings", "layer"),
        ),
        Switch(
            "stacked_ffn",
            gt("num_feedforward_networks", 1),
            "each layer has F − 1 extra feed-forward networks",
            ("layer",),
        ),
        Switch("pooler_dense", truthy("classifier_activation"), "the pooler has a dense layer", ("pooler",)),
    ),
    # PretrainedConfig sets a given true_hidden_size after MobileBertConfig.__post_init__ derives it,
    # so a null written down reaches MobileBertSelfAttention, which divides it.
    null_refused=("true_hidden_size",),
    checks=(
        _known_normalization,
        _true_hidden_size_agrees,
        _heads_divide_width,
        _embedding_fits_hidden,
        common.padding_in_vocabulary,
    ),
)
