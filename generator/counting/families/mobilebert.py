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

import functools
from collections.abc import Mapping
from dataclasses import replace

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import Key, const, eq, given, gt, head_is, mod, ne, truthy
from generator.counting.families import activations, common, dropouts, heads, step_rules
from generator.counting.families.blocks import factorized
from generator.counting.families.symbols import shared, symbols
from generator.counting.flow import HIDDEN, own, param
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import TOKENS, b, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import FirstOf, Rule, Switch, per_setting_read

V, H, E, B, I, F, A = (Poly.symbol(name) for name in "VHEBIFA")
TRANSFORMED = truthy("trigram_input") | ne("embedding_size", "hidden_size")
TOKEN_TYPES = arch.Saved("token types", (b, s), arch.Dtype.INT64)  # torch.zeros(input_shape): a new (b, s) tensor

SYMBOLS = symbols(
    "VPT",
    shared("H", minimum=0),
    arch.Symbol("E", "embedding_size", minimum=0),
    arch.Symbol("B", "intra_bottleneck_size"),
    "I",
    shared("L", minimum=1),
    "A",
    arch.Symbol("F", "num_feedforward_networks"),
    "C",
)


def _norm(path: str, key: str, dim: Poly, on: Mapping[str, bool], *, saves: str = "", writes: str = "") -> arch.Module:
    """NoNorm (an elementwise scale and shift, no statistics) or LayerNorm, as normalization_type says.

    NoNorm's input times its weight keeps the input for the weight's gradient, and nothing else: with
    a frozen weight it keeps the weight, a model tensor. It reads ``saves`` and writes ``writes``.
    """
    if on["layer_norm"]:
        return layer_norm(path, f"{key}-layernorm", dim, saves=saves, writes=writes)
    stored = saves or f"{path} input"
    return arch.Module(
        path,
        f"{key}-nonorm",
        (arch.Param("bias", (dim,), "elementwise-shift"), arch.Param("weight", (dim,), "elementwise-scale")),
        part=arch.Part.NORMS,
        saved=(arch.Saved(stored, (TOKENS, dim), needs=(param(f"{path}.weight"),)),),
        reads=(stored,),
        writes=writes or f"{path} output",
    )


def _norm_params(prefix: str, dim: Poly, on: Mapping[str, bool]) -> tuple[arch.Param, ...]:
    """The same norm's parameters, named below an enclosing module (the stacked FFNs)."""
    norm = _norm(prefix, "", dim, on)
    return tuple(
        arch.Param(f"{prefix}.{p.name}", p.shape, p.role, arch.Part.NORMS, layer=p.layer)
        for p in norm.params
        if isinstance(p, arch.Param)
    )


def _width(on: Mapping[str, bool]) -> Poly:
    """The "true hidden size" that attention and the feed-forward networks work at."""
    return B if on["bottleneck"] else H


@per_setting_read
def _embeddings(on: Mapping[str, bool], prefix: str) -> arch.Block:
    n_in = 3 * E if on["trigram"] else E
    key = "trigram-projection" if on["trigram"] else "embedding-projection"
    token, position, segment = (common.token_table(E), common.position_table(H), common.segment_table(H, TOKEN_TYPES))
    # Applied only with the trigram input or when E differs from H (MobileBertEmbeddings.forward); it
    # reads the token vectors (the trigram's concatenation of them keeps nothing).
    projection = ops.gated(factorized.projection("embedding_transformation", key, n_in=n_in), TRANSFORMED)
    projection = replace(projection, reads=(token.writes,))
    norm = _norm("LayerNorm", "embedding", H, on)
    dropout = ops.dropout("dropout", "embedding-dropout", (b, s, H), common.HIDDEN_DROPOUT, reads=norm.writes)
    return arch.Block(
        "embeddings",
        arch.Kind.EMBEDDINGS,
        f"{prefix}embeddings.",
        (token, position, segment, projection, norm),
        ops=(dropout,),
        joins=(arch.Join((projection.writes, position.writes, segment.writes), norm.reads[0]),),
        outputs=((dropout.writes, HIDDEN),),
    )


def _bottleneck(
    on: Mapping[str, bool], path: str, key: str, widths: str, part: arch.Part, saves: str = "", writes: str = ""
) -> tuple[arch.Module, arch.Module]:
    """A Linear between the wide and the narrow stream ("HB": H to B), then its norm, which writes ``writes``."""
    n_in, n_out = (Poly.symbol(w) for w in widths)
    norm = _norm(f"{path}.LayerNorm", key, n_out, on, writes=writes)
    key = f"{key}-{widths[0]}-to-{widths[1]}".lower()
    return (linear(f"{path}.dense", key, n_in, n_out, part=part, saves=saves, writes=norm.reads[0]), norm)


@per_setting_read
def _encoder_layer(on: Mapping[str, bool], prefix: str) -> arch.Block:
    width = _width(on)
    value_in = width if on["bottleneck_attention"] else H
    query_key_value = ("attention.self.query", "attention.self.key", "attention.self.value")
    # MobileBertLayer.forward: the stacked FFNs run on the attention's output, before the last FFN.
    attended = "attention output" if on["stacked_ffn"] else FFN_INPUT
    modules: tuple[arch.Module, ...] = (
        *common.query_key_value(query_key_value, width, width, value_in=value_in, reads=_attention_inputs(on)),
        common.attention_output("attention.output.dense", width),
        _norm("attention.output.LayerNorm", "attention", width, on, writes=attended),
        *common.feed_forward("intermediate.dense", "output.dense", width),
        _norm("output.LayerNorm", "feed-forward", width, on, writes=OUT_BOTTLENECK if on["bottleneck"] else OUTPUT),
    )
    if on["bottleneck"]:
        out = "output.bottleneck"
        dense, norm = _bottleneck(on, out, "bottleneck-out", "BH", arch.Part.FEED_FORWARD, writes=OUTPUT)
        modules += (
            replace(dense, writes="output.bottleneck.dense output"),  # OutputBottleneck: dropout, residual, norm
            norm,
            *_bottleneck(
                on, "bottleneck.input", "bottleneck-in", "HB", arch.Part.FEED_FORWARD, "layer input", BOTTLENECKED
            ),
        )
        if on["shared_bottleneck"]:
            shared = _bottleneck(
                on, "bottleneck.attention", "query-key-bottleneck", "HB", arch.Part.ATTENTION, "layer input", SHARED
            )
            # With use_bottleneck_attention the shared bottleneck is built but never called.
            idle = tuple(replace(ops.idle(m), writes="") for m in shared)
            modules += idle if on["bottleneck_attention"] else shared
    if on["stacked_ffn"]:
        ffn = (
            arch.Param("intermediate.dense.weight", (I, width), "weight-in", layer=arch.Layer.LINEAR),
            arch.Param("intermediate.dense.bias", (I,), "bias-in", layer=arch.Layer.LINEAR),
            arch.Param("output.dense.weight", (width, I), "weight-out", layer=arch.Layer.LINEAR),
            arch.Param("output.dense.bias", (width,), "bias-out", layer=arch.Layer.LINEAR),
            *_norm_params("output.LayerNorm", width, on),
        )
        stacked = arch.Module(
            "ffn.{n}",
            "extra-feed-forward-network",
            ffn,
            repeat=F + (-1),
            part=arch.Part.FEED_FORWARD,
            products=(
                arch.Product("feed-forward-in", TOKENS, I, width),
                arch.Product("feed-forward-out", TOKENS, width, I),
            ),
            saved=(
                arch.Saved("stacked input", (TOKENS, width)),
                arch.Saved("stacked activated", (TOKENS, I)),
                *_renamed(_norm("ffn", "", width, on).saved, "stacked norm input"),
            ),
            reads=(attended,),
            writes=FFN_INPUT,
            chain=_stacked_copy(on, width),
        )
        modules += (stacked,)
    return common.layers(f"{prefix}encoder.layer.{{0}}.", modules, _layer_ops(on, width), _joins(on), OUTPUT)


# The names the layer's flow passes between its steps (flow.py).
ATTENDED = "attention.output.dense input"  # the heads' outputs
FFN_INPUT = "intermediate.dense input"  # the last feed-forward network's input
OUTPUT = "layer output"
OUT_BOTTLENECK = "output.bottleneck.dense input"
BOTTLENECKED = "bottleneck in output"  # the input bottleneck's output: the attention's residual
SHARED = "query-key bottleneck output"


def _joins(on: Mapping[str, bool]) -> tuple[arch.Join, ...]:
    """The residual sums: the attention's output onto its residual (the layer's input, or the bottleneck's),
    the feed-forward's onto its input, and, with the bottleneck, its output onto the layer's input."""
    if not on["bottleneck"]:
        return (
            arch.Join(("attention.output.dropout output", common.LAYER_INPUT), "attention.output.LayerNorm input"),
            arch.Join(("output.dropout output", FFN_INPUT), "output.LayerNorm input"),
        )
    return (
        arch.Join(("attention.output.dense output", BOTTLENECKED), "attention.output.LayerNorm input"),
        arch.Join(("output.dense output", FFN_INPUT), "output.LayerNorm input"),
        arch.Join(("output.dropout output", common.LAYER_INPUT), "output.bottleneck.LayerNorm input"),
    )


def _stacked_copy(on: Mapping[str, bool], width: Poly) -> arch.Block:
    """One stacked FFN (FFNLayer), as its module's chain: the pair of Linears with the activation between,
    then the norm of their output plus the copy's input. No dropout."""
    into, out = common.feed_forward("intermediate.dense", "output.dense", width)
    into = replace(into, saved=(replace(into.saved[0], key="stacked input"),), reads=("stacked input",))
    norm = _norm("output.LayerNorm", "feed-forward", width, on, saves="stacked norm input", writes="stacked output")
    return arch.Block(
        "ffn",
        arch.Kind.ENCODER,
        "ffn.{n}.",
        (into, out, norm),
        ops=(common.feed_forward_activation("intermediate.intermediate_act_fn"),),
        joins=(arch.Join(("output.dense output", "stacked input"), norm.reads[0]),),
        inputs=(("stacked input", "attention output"),),
        outputs=(("stacked output", FFN_INPUT),),
    )


def _attention_inputs(on: Mapping[str, bool]) -> tuple[str, str]:
    """The storages the query and key, and the value, read (Bottleneck.forward): the layer's input,
    the input bottleneck's output (use_bottleneck_attention), or the shared query-key bottleneck's."""
    if not on["bottleneck"]:
        return "layer input", "layer input"
    if on["bottleneck_attention"]:
        return BOTTLENECKED, BOTTLENECKED
    if on["shared_bottleneck"]:
        return SHARED, "layer input"
    return "layer input", "layer input"


def _renamed(saved: tuple[arch.Saved, ...], key: str) -> tuple[arch.Saved, ...]:
    """A norm's saved tensors with its input under ``key`` (its statistics keep their own keys)."""
    return (replace(saved[0], key=key), *saved[1:])


def _layer_ops(on: Mapping[str, bool], width: Poly) -> tuple[arch.Op, ...]:
    """Attention, the activations of every feed-forward network, and the dropouts MobileBertLayer applies:
    after the attention output only without the bottleneck, after the feed-forward output always (the
    output bottleneck's, with the bottleneck). The stacked FFNs' activation runs in their chain."""
    stacked = ops.activation(
        "ffn.{n}.intermediate.intermediate_act_fn",
        "feed-forward-activation",
        "hidden_act",
        (b, s, I),
        before="stacked hidden",
        after="stacked activated",
    )
    dropped = "output.bottleneck.dense output" if on["bottleneck"] else "output.dense output"
    layer_ops = [
        ops.attention("attention.self", width, A, "attention_probs_dropout_prob", writes=ATTENDED),
        common.feed_forward_activation("intermediate.intermediate_act_fn"),
        ops.dropout("output.dropout", "output-dropout", (b, s, H), common.HIDDEN_DROPOUT, reads=dropped),
    ]
    if not on["bottleneck"]:
        dense = "attention.output.dense output"
        layer_ops.append(
            ops.dropout("attention.output.dropout", "attention-dropout", (b, s, H), common.HIDDEN_DROPOUT, reads=dense)
        )
    if on["stacked_ffn"]:
        layer_ops.append(replace(stacked, repeat=F + (-1), writes=""))
    return tuple(layer_ops)


def _backbone(on: Mapping[str, bool], prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    blocks = (_embeddings(on, prefix), _encoder_layer(on, prefix))
    # Without classifier_activation the pooler only picks the first token and holds no tensor.
    return (*blocks, common.bert_pooler(prefix)) if pooler and on["pooler_dense"] else blocks


def _pooled(on: Mapping[str, bool]) -> arch.Saved:
    """Without classifier_activation the pooled output is token 0, a view of the encoder's output."""
    return common.POOLED_OUTPUT if on["pooler_dense"] else common.ENCODER_OUTPUT


def _mlm_head(on: Mapping[str, bool]) -> arch.Block:
    # MobileBertLMPredictionHead multiplies by the concatenation [decoder.weightᵀ; dense.weight], an H × V
    # matrix made anew at every step and saved for the backward, with the transform's output. It calls
    # neither Linear: an adapter on one computes nothing. Then it adds the decoder's bias.
    weights = (param("dense.weight"), param("decoder.weight"))
    beyond = arch.Module(
        "dense",
        "output-rows-beyond-e",
        (arch.Param("weight", (H + (-1) * E, V), "weight", layer=arch.Layer.LINEAR),),
        products=(arch.Product("scores", TOKENS, V, H, operands=((own(0),), weights)),),
        saved=(
            arch.Saved("scores input", (TOKENS, H), needs=weights),
            arch.Saved("concatenated output weights", (H, V), needs=(own(0),)),
        ),
        reads=("decoder input",),
        writes="scores",
    )
    block = heads.bert_mlm_head(on, "mobilebert.", decoder_width=E, extra=(beyond,), idle_decoder=True)
    modules = tuple(replace(m, writes="") if m.path == "decoder" else m for m in block.modules)
    logits = arch.Join(("scores", param("decoder.weight"), param("decoder.bias")), "logits")
    return replace(block, modules=modules, joins=(logits,))


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers MobileBERT class for this head."""
    pooled = _pooled(on)
    on_top = {
        **heads.bert_heads(functools.partial(_mlm_head, on), lambda: heads.next_sentence_head(pooled)),
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.classifier_head(pooled=pooled),),
    }
    return common.assemble("MobileBert", "mobilebert.", head, functools.partial(_backbone, on), on_top)


# MobileBertSelfAttention rounds the head size down instead of refusing, which leaves a layer
# whose attention output no longer fits its output projection; refuse it as BERT does.
_heads_divide_width = FirstOf(
    (
        Rule(
            "heads-divide-bottleneck",
            truthy("use_bottleneck") & ne(mod("intra_bottleneck_size", "num_attention_heads"), 0),
            ("intra_bottleneck_size", "num_attention_heads"),
        ),
        # transformers builds it, A·⌊H/A⌋ wide: the words say so, as for ALBERT's and ELECTRA's copies.
        replace(
            common.heads_divide_hidden_unchecked,
            fails=~truthy("use_bottleneck") & ne(mod("hidden_size", "num_attention_heads"), 0),
        ),
    )
)

# MobileBertSelfAttention scales the scores by head size ** -0.5 when it is made: a head 0 wide raises
# (ZeroDivisionError), where the rule above passes, since 0 is a multiple of any head count.
_heads_zero_wide = Rule(
    "heads-zero-wide",
    gt("num_hidden_layers", 0)
    & (
        (truthy("use_bottleneck") & eq("intra_bottleneck_size", 0)) | (~truthy("use_bottleneck") & eq("hidden_size", 0))
    ),
    ("hidden_size", "intra_bottleneck_size", "use_bottleneck"),
)

# MobileBertLMPredictionHead (the masked-LM and pretraining heads only) builds nn.Linear(V, H - E):
# torch refuses a negative size.
# Bottleneck hands the query and key the layer's H-wide input unless they share a bottleneck (or
# the attention uses it); MobileBertSelfAttention projects them from true_hidden_size, B, all the same.
_query_key_read_hidden = Rule(
    "query-key-read-hidden",
    gt("num_hidden_layers", 0)
    & truthy("use_bottleneck")
    & ~truthy("use_bottleneck_attention")
    & ~truthy("key_query_shared_bottleneck")
    & ne("intra_bottleneck_size", "hidden_size"),
    ("intra_bottleneck_size", "hidden_size"),
)

_embedding_fits_hidden = Rule(
    "embedding-fits-hidden",
    gt("embedding_size", "hidden_size") & head_is("masked-lm", "pretraining"),
    ("embedding_size", "hidden_size"),
)

# MobileBertConfig derives true_hidden_size and writes it into config.json; a value given for it
# replaces the derived one in transformers 5.23. Published configs agree with the derivation, so
# a card may carry the key, but not a value that would silently resize every layer.
_true_hidden_size_agrees = FirstOf(
    tuple(
        Rule(
            "true-hidden-size-agrees",
            given("true_hidden_size")
            & (truthy("use_bottleneck") if bottleneck else ~truthy("use_bottleneck"))
            # ne tells a boolean from a number, so true_hidden_size: true disagrees too
            & ne("true_hidden_size", source),
            ("true_hidden_size",),
            values=(
                ("derived", Key(source)),
                ("source", const(source)),
                ("bottleneck", const(str(bottleneck).lower())),
            ),
        )
        for bottleneck, source in ((True, "intra_bottleneck_size"), (False, "hidden_size"))
    )
)

# NORM2FN in modeling_mobilebert.py knows these two; any other name is a KeyError there.
_known_normalization = Rule(
    "known-normalization",
    ne("normalization_type", const("no_norm")) & ne("normalization_type", const("layer_norm")),
    ("normalization_type",),
)


FAMILY = arch.Family(
    name="mobilebert",
    symbols=SYMBOLS,
    declare=declare,
    switches=(
        common.tied("mlm-head"),
        Switch("trigram", truthy("trigram_input"), ("embeddings",)),
        Switch("bottleneck", truthy("use_bottleneck"), ("layer",)),
        Switch("bottleneck_attention", truthy("use_bottleneck_attention"), ("layer",)),
        Switch("shared_bottleneck", truthy("key_query_shared_bottleneck"), ("layer",)),
        Switch("layer_norm", eq("normalization_type", const("layer_norm")), ("embeddings", "layer")),
        Switch("stacked_ffn", gt("num_feedforward_networks", 1), ("layer",)),
        # The heads read the pooled output, which is the encoder's when the pooler has no dense layer.
        Switch("pooler_dense", truthy("classifier_activation"), ("pooler", "nsp-head", "classifier")),
    ),
    # PretrainedConfig sets a given true_hidden_size after MobileBertConfig.__post_init__ derives it,
    # so a null written down reaches MobileBertSelfAttention, which divides it.
    null_refused=("true_hidden_size",),
    build_rules=(
        _known_normalization,
        _true_hidden_size_agrees,
        _heads_divide_width,
        _heads_zero_wide,
        _embedding_fits_hidden,
        common.padding_in_vocabulary,
        *common.PROBLEM_TYPE_RULES,
        *dropouts.ranges(dropouts.ENCODER),
        *activations.rules("mobilebert"),
    ),
    step_rules=(
        *step_rules.COMMON,
        step_rules.no_token_type_row,
        _query_key_read_hidden,
        *dropouts.in_step(dropouts.ENCODER),
    ),
    ground_truth=GroundTruth(
        draws={
            "type_vocab_size": ((1, 2), (0,)),
            "embedding_size": ((8, 16), (ABSENT, 0)),
            "intra_bottleneck_size": ((8, 4), (ABSENT,)),
            "num_feedforward_networks": ((1, 2), (ABSENT, 0, -1)),
            "use_bottleneck": ((True, False), (ABSENT,)),
            "use_bottleneck_attention": ((True, False), (ABSENT,)),
            "key_query_shared_bottleneck": ((True, False), (ABSENT,)),
            "normalization_type": (("no_norm", "layer_norm"), (ABSENT,)),
            "trigram_input": ((True, False), (ABSENT,)),
            "classifier_activation": ((True, False), (ABSENT,)),
            "tie_word_embeddings": ((True, False), (ABSENT,)),
            "true_hidden_size": ((8,), (ABSENT, None)),
        },
        rare=("num_feedforward_networks",),
        sentence_label="next_sentence_label",
    ),
)
