"""ELECTRA (transformers ``model_type`` "electra"): modeling_electra.py in transformers 5.23.

Registration order follows the ``__init__`` of ElectraEmbeddings, ElectraModel (the
projection ``embeddings_project`` exists only when ``embedding_size`` differs from
``hidden_size``), ElectraLayer (the same modules and names as BertLayer) and the heads. There
is no pooler. The discriminator checkpoints are ElectraForPreTraining (replaced-token
detection), the generator checkpoints ElectraForMaskedLM.
"""

from __future__ import annotations

from collections.abc import Mapping

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
    Tie,
)
from generator.counting.conditions import ne
from generator.counting.families import common
from generator.counting.families.symbols import symbols
from generator.counting.layouts import TOKENS, b, layer_norm, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Switch

V, P, T, E, H, I, C = (Poly.symbol(s) for s in "VPTEHIC")

SYMBOLS = symbols(
    "VPT",
    Symbol("E", "embedding_size", "embedding width (projected to H when it differs)", minimum=0),
    "HILAC",
)


def _backbone(on: Mapping[str, bool], prefix: str) -> tuple[Block, ...]:
    blocks: tuple[Block, ...] = (common.bert_embeddings(prefix, E),)
    if on["projected"]:
        blocks += (
            Block(
                "embedding-projection",
                "embedding projection",
                Kind.EMBEDDINGS,
                prefix,
                (linear("embeddings_project", "E to H projection", E, H, part=Part.EMBEDDINGS),),
            ),
        )
    return (*blocks, common.bert_encoder_layer(on, prefix))


def _generator_head(on: Mapping[str, bool]) -> Block:
    if on["tied"]:
        lm_head = Module(
            "generator_lm_head",
            "output projection (tied) and bias",
            (
                Tie("weight", "electra.embeddings.word_embeddings.weight", "reuses the token embeddings"),
                Param("bias", (V,), "bias"),
            ),
            products=(Product("output projection (tied)", TOKENS, V, E),),
            saved=(Saved("generator_lm_head input", (TOKENS, E)),),
        )
    else:
        lm_head = linear("generator_lm_head", "output projection (untied)", E, V)
    modules = (
        layer_norm("generator_predictions.LayerNorm", "transform LayerNorm", E, saves="transform activated"),
        linear("generator_predictions.dense", "transform dense (H to E)", H, E, saves=common.ENCODER_OUTPUT),
        lm_head,
    )
    # ElectraGeneratorPredictions applies gelu whatever hidden_act says.
    mlm_ops = common.mlm_ops("generator_predictions.activation", E, key="gelu", fixed=True)
    return Block("generator-head", "generator head", Kind.HEAD, "", modules, ops=mlm_ops)


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers ELECTRA class for this head."""
    if head is Head.BASE:
        return Architecture("ElectraModel", _backbone(on, ""))
    if head is Head.PRETRAINING:
        discriminator = Block(
            "discriminator-head",
            "discriminator head",
            Kind.HEAD,
            "discriminator_predictions.",
            (
                linear("dense", "discriminator dense", H, H, saves=common.ENCODER_OUTPUT),
                linear("dense_prediction", "replaced-token score", H, Poly.constant(1), saves="activated"),
            ),
            ops=(
                ops.activation(
                    "activation",
                    "discriminator activation",
                    "hidden_act",
                    (b, s, H),
                    before="hidden",
                    after="activated",
                ),
                # BCEWithLogitsLoss on the scores and labels.float(): it keeps both.
                Op(
                    "loss",
                    "replaced-token loss",
                    saved=(Saved("scores", (b, s)), Saved("labels", (b, s), Dtype.FLOAT32)),
                ),
            ),
        )
        return Architecture("ElectraForPreTraining", (*_backbone(on, "electra."), discriminator))
    if head is Head.MASKED_LM:
        return Architecture("ElectraForMaskedLM", (*_backbone(on, "electra."), _generator_head(on)))
    # ElectraClassificationHead: RoBERTa's, with gelu for tanh.
    classifier = common.token_classifier("classifier.", "gelu")
    return Architecture("ElectraForSequenceClassification", (*_backbone(on, "electra."), classifier))


DIFFERENCES = (
    "**Embedding width.** The token, position and segment tables are *E* (`embedding_size`) wide. "
    "When *E* differs from *H*, ElectraModel adds one linear layer, `embeddings_project`, that maps "
    "*E* to *H* (*E*·*H* + *H* parameters); when they are equal that layer does not exist. The "
    "small models use *E* = 128 below *H* = 256; the base and large discriminators use *E* = *H*, "
    "so their backbone has the same tensors as BERT's, minus the pooler.",
    "**No pooler.** ElectraModel stops after the encoder. The classification head brings its own "
    "*H* × *H* dense layer before the output layer, so a classifier still costs about one pooler "
    "more than the bare encoder.",
    "**Discriminator and generator.** ELECTRA is pre-trained as a pair. The discriminator "
    "(ElectraForPreTraining) scores every token as original or replaced: a dense *H* × *H* layer, "
    "then `dense_prediction`, one output per token (*H* + 1 parameters). It is the model that is "
    "fine-tuned. The generator (ElectraForMaskedLM) is a smaller masked language model that "
    "proposes the replacements. Its encoder is narrower (*H*, *I* and *A* are a third of the "
    "discriminator's for base and a quarter for large; the released small generator is as wide as "
    "its discriminator), but it keeps the discriminator's *E*-wide embeddings, which the two "
    "networks share during pre-training. Its head maps *H* down to *E*, normalizes, and scores the "
    "vocabulary with the tied token embeddings plus a bias of *V*.",
)


FAMILY = Family(
    name="electra",
    title="ELECTRA",
    symbols=SYMBOLS,
    heads=(Head.BASE, Head.PRETRAINING, Head.MASKED_LM, Head.SEQUENCE_CLASSIFICATION),
    declare=declare,
    flag_keys=("tie_word_embeddings", "add_cross_attention", "is_decoder"),
    differences=DIFFERENCES,
    checks=(*common.LAYER_RULES, common.padding_in_vocabulary),
    switches=(
        common.tied("generator-head"),
        common.CROSS_ATTENTION,
        Switch(
            "projected",
            ne("embedding_size", "hidden_size"),
            "embeddings_project maps E up to H",
            ("embedding-projection",),
        ),
    ),
)
