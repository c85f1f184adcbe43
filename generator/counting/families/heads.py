"""The heads several families put on their backbones: masked-LM heads, classifiers, next-sentence
prediction, and the losses they end in.

BERT's heads (``cls.predictions``, ``cls.seq_relationship``, the pooled classifier) are copied by
most families under their own names; ELECTRA's and RoBERTa's classifier on token 0 is another
shape, shared by those two; DeBERTa v1 and v2 share a pooler of their own, and its loss. The
backbones' pieces are in common.py. This module declares no family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import Condition, const, eq, given, head_is, is_kind, is_null, lt, ne
from generator.counting.families.blocks import factorized
from generator.counting.families.common import ENCODER_OUTPUT, HIDDEN, POOLED_OUTPUT, POOLER_OUTPUT, C, E, H, OnTop, V
from generator.counting.flow import own, param
from generator.counting.layouts import TOKENS, b, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule, per_setting_read


def bert_heads(mlm: Callable[[], arch.Block], pretraining: Callable[[], arch.Block]) -> OnTop:
    """BERT's heads on its backbone: pre-training adds a second head to the masked LM's; a classifier."""
    return {
        arch.Head.PRETRAINING: lambda: (mlm(), pretraining()),
        arch.Head.MASKED_LM: lambda: (mlm(),),
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (classifier_head(),),
    }


def mlm_decoder(tied_to: bool, word_embeddings: str, output_bias: str, width: Poly) -> arch.Module:
    """The masked-LM decoder: the token table and output bias again when tied, its own Linear when not.

    Either way one b·s × width by width × V product, the largest of most models at short lengths.
    """
    if tied_to:
        decoder = linear("decoder", "decoder-tied", width, V, bias=False, tied_to=word_embeddings, writes="logits")
        return replace(
            decoder, params=(*decoder.params, arch.Tie("bias", output_bias, "output-bias", arch.Layer.LINEAR))
        )
    return linear("decoder", "decoder-untied", width, V, writes="logits")


def mlm_transform(dense: str, norm: str, width: Poly = H, *, bias: bool = True) -> tuple[arch.Module, ...]:
    """A masked-LM head's own output bias over the vocabulary (registered first), then its
    transform: a Linear from H to ``width`` and a LayerNorm, under the class's own names.

    The Linear reads the encoder's output; the LayerNorm the activation's (``mlm_ops``)."""
    own_bias = (output_bias(),) if bias else ()
    return (
        *own_bias,
        linear(dense, "transform-dense", H, width, saves=ENCODER_OUTPUT, writes="transform hidden"),
        layer_norm(norm, "transform-layernorm", width, saves="transform activated", writes="decoder input"),
    )


def mlm_ops(
    activation: str,
    width: Poly = H,
    *,
    key: str = "hidden_act",
    fixed: bool = False,
    loss_dtype: arch.Dtype = arch.Dtype.ACTIVATION,
) -> tuple[arch.Op, ...]:
    """A masked-LM head's transform activation (the config's ``key``, or the function ``key`` when
    ``fixed``) and its loss over the vocabulary at every token."""
    return (
        ops.activation(
            activation,
            "transform-activation",
            key,
            (b, s, width),
            before="transform hidden",
            after="transform activated",
            fixed=fixed,
        ),
        ops.cross_entropy("loss", "masked-lm-loss", TOKENS, V, ops.LABELS, dtype=loss_dtype),
    )


def classifier_dropout(key: str = "classifier_dropout", fallback: str = "hidden_dropout_prob") -> Condition:
    """BERT's classifier dropout acts: ``classifier_dropout`` when given, else the hidden dropout."""
    return (given(key) & ops.probability(key)) | (is_null(key) & ops.probability(fallback))


def class_loss(rows: Poly = b) -> tuple[arch.Op, ...]:
    """The classification loss transformers picks by ``problem_type``: cross-entropy over C labels
    (single-label), mean squared error on the C outputs (regression), or binary cross-entropy on
    each of the C logits (multi-label). Without a problem_type it is regression with one label and
    single-label classification with more, since the step's labels are then integers
    (``ForSequenceClassificationLoss``, loss_utils.py)."""

    def problem(name: str) -> Condition:
        return eq("problem_type", const(name))

    unnamed = is_null("problem_type")
    single = problem("single_label_classification") | (unnamed & ne("num_labels", 1))
    regression = problem("regression") | (unnamed & eq("num_labels", 1))
    entropy = ops.cross_entropy("loss", "classification-loss", rows, C, ops.CLASS_LABELS)
    squared = ops.float_target_loss("loss", "regression-loss", (rows, C))
    binary = ops.float_target_loss("loss", "multi-label-loss", (rows, C))
    multi_label = problem("multi_label_classification")
    return (ops.only(entropy, single), ops.only(squared, regression), ops.only(binary, multi_label))


def output_bias() -> arch.Module:
    """A masked-LM head's own bias over the vocabulary, registered by the head itself."""
    return arch.Module("", "output-bias", (arch.Param("bias", (V,), "bias"),))


def classifier_head(
    dropout: Condition | None = None, pooled: arch.Saved = POOLED_OUTPUT, loss: tuple[arch.Op, ...] | None = None
) -> arch.Block:
    """The sequence-classification head on the pooled output: a dropout, then one Linear, H to C labels.

    ``pooled`` is the storage the pooled output lives in (the encoder's output when the pooler only
    takes token 0, as MobileBERT's does without classifier_activation); ``loss`` the class's own loss
    steps, when it does not use transformers' usual one (``class_loss``).
    """
    acts = dropout if dropout is not None else classifier_dropout()
    saved = replace(pooled, when=~acts)
    dropped = ops.dropout(
        "dropout",
        "classifier-dropout",
        (b, H),
        acts,
        output="classifier input",
        reads=pooled.key,
        read_by="classifier.weight",
    )
    return arch.Block(
        "classifier",
        arch.Kind.HEAD,
        "",
        (linear("classifier", "classifier", H, C, rows=b, saves=saved, reads=dropped.writes, writes="logits"),),
        ops=(dropped, *(loss if loss is not None else class_loss())),
        inputs=((pooled.key, POOLER_OUTPUT if pooled.key == POOLED_OUTPUT.key else HIDDEN),),
    )


def next_sentence_head(pooled: arch.Saved = POOLED_OUTPUT) -> arch.Block:
    """BERT's next-sentence prediction head (``cls.seq_relationship``): H to 2, on the pooled output."""
    return arch.Block(
        "nsp-head",
        arch.Kind.HEAD,
        "cls.",
        (
            linear(
                "seq_relationship",
                "next-sentence-classifier",
                H,
                Poly.constant(2),
                rows=b,
                saves=pooled,
                writes="logits",
            ),
        ),
        ops=(ops.cross_entropy("loss", "next-sentence-loss", b, Poly.constant(2), ops.SENTENCE_LABELS),),
        inputs=((pooled.key, POOLER_OUTPUT if pooled.key == POOLED_OUTPUT.key else HIDDEN),),
    )


def mlm_head(prefix: str, modules: tuple[arch.Module, ...], head_ops: tuple[arch.Op, ...] = ()) -> arch.Block:
    """The masked-LM head block, whatever its modules: it reads the encoder's output."""
    inputs = ((ENCODER_OUTPUT.key, HIDDEN),)
    return arch.Block("mlm-head", arch.Kind.HEAD, prefix, modules, ops=head_ops, inputs=inputs)


def bert_mlm_head(
    on: Mapping[str, bool],
    attribute: str,
    width: Poly = H,
    decoder_width: Poly = H,
    extra: tuple[arch.Module, ...] = (),
    *,
    idle_decoder: bool = False,
) -> arch.Block:
    """BertOnlyMLMHead and its copies (``cls.predictions``): bias, transform, ``extra``, the decoder.

    ``idle_decoder`` when an ``extra`` module does the decoder's product (MobileBERT's).
    """
    word_embeddings = f"{attribute}embeddings.word_embeddings.weight"
    decoder = mlm_decoder(on["tied"], word_embeddings, "cls.predictions.bias", decoder_width)
    if idle_decoder:
        decoder = ops.idle(decoder)
    modules = (*mlm_transform("transform.dense", "transform.LayerNorm", width), *extra, decoder)
    return mlm_head("cls.predictions.", modules, mlm_ops("transform.transform_act_fn", width))


def narrow_transform(norm: str, dense: str) -> tuple[arch.Module, ...]:
    """A head's transform down to the embedding width E, its LayerNorm registered first (ALBERT, ELECTRA).

    The Linear reads the encoder's output; the LayerNorm the activation's."""
    return (
        layer_norm(norm, "transform-layernorm", E, saves="transform activated", writes="decoder input"),
        linear(dense, "transform-dense-h-to-e", H, E, saves=ENCODER_OUTPUT, writes="transform hidden"),
    )


def dense_classifier(function: str, dropout: Condition | None = None, *, configured: bool = False) -> arch.Block:
    """A classification head of its own on token 0 (ELECTRA, RoBERTa, RoFormer): dropout, an H × H
    dense, ``function`` (tanh; gelu; the config key it names when ``configured``), dropout again,
    and out_proj to C labels.

    Token 0 is a view of the encoder's output: without dropout the dense keeps that whole tensor.
    ``dropout`` when the class's dropout is not BERT's classifier dropout (MPNet's is the hidden one).
    """
    acts = dropout if dropout is not None else classifier_dropout()
    dense_input = ops.either(acts, arch.Saved("dropped", (b, H)), ENCODER_OUTPUT)
    out_input = ops.either(acts, arch.Saved("dropped again", (b, H)), arch.Saved("activated", (b, H)))
    modules = (
        linear("dense", "classifier-dense", H, H, rows=b, saves=dense_input, reads="dropped", writes="hidden"),
        linear("out_proj", "classifier-output", H, C, rows=b, saves=out_input, reads="dropped again", writes="logits"),
    )
    activation = ops.activation(
        "activation",
        "classifier-activation",
        function,
        (b, H),
        before="hidden",
        after="activated",
        fixed=not configured,
    )
    classifier_ops = (
        ops.dropout("dropout", "classifier-dropout", (b, H), acts, reads=ENCODER_OUTPUT.key, writes="dropped"),
        activation,
        ops.dropout(
            "dropout again", "classifier-dropout-again", (b, H), acts, reads="activated", writes="dropped again"
        ),
        *class_loss(),
    )
    inputs = ((ENCODER_OUTPUT.key, HIDDEN),)
    return arch.Block("classifier", arch.Kind.HEAD, "classifier.", modules, ops=classifier_ops, inputs=inputs)


def deberta_mlm_head(backbone: str) -> arch.Block:
    """DebertaLMPredictionHead (v1 and v2 without ``legacy``): a transform, then a product by the word
    embeddings in forward. It registers no decoder, so the product is an op: it reads the table of
    the model under ``backbone``, which the head's own flow names from the model's root."""
    table = param(f"/{backbone}embeddings.word_embeddings.weight")
    decoder = arch.Op(
        "decoder",
        "decoder-tied",
        (arch.Product("decoder-tied", TOKENS, V, H, operands=((own(0),), (table,))),),
        (arch.Saved("decoder input", (TOKENS, H), needs=(table,)),),
        reads=("decoder input",),
        writes="logits",
    )
    head_ops = (*mlm_ops("transform_act_fn"), decoder)
    return mlm_head("lm_predictions.lm_head.", mlm_transform("dense", "LayerNorm"), head_ops)


def context_pooler_heads(width: Poly) -> tuple[arch.Block, ...]:
    """DeBERTa's ContextPooler (v1 and v2), ``width`` wide both ways, then the classifier on what it pools.

    The pooler drops out token 0 (pooler_dropout), then dense, then pooler_hidden_act. The classifier
    drops out with cls_dropout when it is given, else with the hidden dropout.
    """
    acts = ops.probability("pooler_dropout")
    dense_input = ops.either(acts, arch.Saved("dropped", (b, width)), ENCODER_OUTPUT)
    activated = arch.Saved("pooled output", (b, width), shared=True)
    activation = arch.Op(
        "activation",
        "pooler-activation",
        saved=(arch.Saved("pooler hidden", (b, width)), activated),
        activation="pooler_hidden_act",
        reads=("pooler hidden",),
        writes=activated.key,
    )
    dense = linear("dense", "pooler-dense", width, width, rows=b, saves=dense_input, writes="pooler hidden")
    dropout = ops.dropout("dropout", "pooler-dropout", (b, width), acts, reads=ENCODER_OUTPUT.key, writes="dropped")
    pooler = arch.Block(
        "pooler",
        arch.Kind.POOLER,
        "pooler.",
        (dense,),
        ops=(dropout, activation),
        inputs=((ENCODER_OUTPUT.key, HIDDEN),),
        outputs=((activated.key, POOLER_OUTPUT),),
    )
    return (pooler, classifier_head(classifier_dropout("cls_dropout"), activated, _context_pooler_loss()))


def _context_pooler_loss() -> tuple[arch.Op, ...]:
    """DeBERTa's classification loss: its own without a problem_type, else transformers' usual one.

    Its own, with several labels, gathers the rows whose label is 0 or more (``(labels >= 0).nonzero()``,
    every row here) and keeps the row indices and the logits for that gather; the cross-entropy on
    the gathered logits cast to fp32 keeps its fp32 log-probabilities, the gathered labels and an fp32
    total weight. With one label it casts the logits to the labels' type (fp32) and the mean squared
    error keeps both. With a problem_type (a fine-tuned config.json often names one) it is BERT's
    (``class_loss``).
    """
    own = is_null("problem_type")
    labels = arch.Saved("gathered labels", (b,), arch.Dtype.INT64)
    gathered = ops.cross_entropy("loss", "classification-loss", b, C, labels, dtype=arch.Dtype.FLOAT32)
    gather = (arch.Saved("label rows", (b,), arch.Dtype.INT64), arch.Saved("logits", (b, C)))
    cast = (arch.Saved("loss input", (b,), arch.Dtype.FLOAT32), arch.Saved("loss labels", (b,), arch.Dtype.FLOAT32))
    entropy, squared, binary = class_loss()  # binary: a named problem_type only, never its own
    own_entropy = ops.only(replace(gathered, saved=(*gather, *gathered.saved)), ne("num_labels", 1) & own)
    own_squared = ops.only(replace(squared, saved=cast), eq("num_labels", 1) & own)
    return (
        replace(entropy, saved=(*own_entropy.saved, *ops.only(entropy, ~own).saved)),
        replace(squared, saved=(*own_squared.saved, *ops.only(squared, ~own).saved)),
        binary,
    )


@per_setting_read
def _deberta_mlm_head(on: Mapping[str, bool], backbone: str) -> arch.Block:
    if on["legacy"]:
        width = factorized.width(on["projected"])
        return bert_mlm_head(on, backbone, width, width)
    return deberta_mlm_head(backbone)


@per_setting_read
def _deberta_classification(on: Mapping[str, bool], pooler_width: Poly) -> tuple[arch.Block, ...]:
    return context_pooler_heads(pooler_width if on["wide_pooler"] else H)


# The value checks of DeBERTa's pooler width. Only ContextPooler, in the classification head, reads
# pooler_hidden_size (nn.Linear(W, W)); a family puts these among its value rules.
CONTEXT_POOLER_RULES = (
    Rule(
        "whole-pooler-hidden-size",
        given("pooler_hidden_size") & ~is_kind("pooler_hidden_size", "int"),
        ("pooler_hidden_size",),
    ),
    Rule(
        "pooler-not-negative", head_is("sequence-classification") & lt("pooler_hidden_size", 0), ("pooler_hidden_size",)
    ),
)


def deberta_heads(on: Mapping[str, bool], backbone: str, pooler_width: Poly) -> OnTop:
    """The heads DeBERTa v1 and v2 share: the masked LM (``legacy``: BERT's, else ``lm_predictions``)
    and the classifier on ContextPooler, ``pooler_width`` wide when the config gives it."""
    return {
        arch.Head.MASKED_LM: lambda: (_deberta_mlm_head(on, backbone),),
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: _deberta_classification(on, pooler_width),
    }
