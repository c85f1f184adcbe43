"""ELECTRA (transformers ``model_type`` "electra"): modeling_electra.py in transformers 5.23.

Registration order follows the ``__init__`` of ElectraEmbeddings, ElectraModel (the
projection ``embeddings_project`` exists only when ``embedding_size`` differs from
``hidden_size``), ElectraLayer (the same modules and names as BertLayer) and the heads. There
is no pooler. The discriminator checkpoints are ElectraForPreTraining (replaced-token
detection), the generator checkpoints ElectraForMaskedLM.
"""

from __future__ import annotations

import functools
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
from generator.counting.layouts import TOKENS, b, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Switch

V, E, H = (Poly.symbol(s) for s in "VEH")

SYMBOLS = symbols(
    "VPT",
    Symbol("E", "embedding_size", minimum=0),
    "HILAC",
)


def _backbone(on: Mapping[str, bool], prefix: str, _pooler: bool) -> tuple[Block, ...]:
    blocks: tuple[Block, ...] = (common.bert_embeddings(prefix, E),)
    if on["projected"]:
        blocks += (
            Block(
                "embedding-projection",
                Kind.EMBEDDINGS,
                prefix,
                (linear("embeddings_project", "e-to-h-projection", E, H, part=Part.EMBEDDINGS),),
            ),
        )
    return (*blocks, common.bert_encoder_layer(on, prefix))


def _generator_head(on: Mapping[str, bool]) -> Block:
    if on["tied"]:
        lm_head = Module(
            "generator_lm_head",
            "output-projection-tied-and-bias",
            (
                Tie("weight", "electra.embeddings.word_embeddings.weight", "reuses the token embeddings"),
                Param("bias", (V,), "bias"),
            ),
            products=(Product("output-projection-tied-and-bias", TOKENS, V, E),),
            saved=(Saved("generator_lm_head input", (TOKENS, E)),),
        )
    else:
        lm_head = linear("generator_lm_head", "output-projection-untied", E, V)
    modules = (*common.narrow_transform("generator_predictions.LayerNorm", "generator_predictions.dense"), lm_head)
    # ElectraGeneratorPredictions applies gelu whatever hidden_act says.
    head_ops = common.mlm_ops("generator_predictions.activation", E, key="gelu", fixed=True)
    return Block("generator-head", Kind.HEAD, "", modules, ops=head_ops)


def _discriminator_head() -> Block:
    return Block(
        "discriminator-head",
        Kind.HEAD,
        "discriminator_predictions.",
        (
            linear("dense", "discriminator-dense", H, H, saves=common.ENCODER_OUTPUT),
            linear("dense_prediction", "replaced-token-score", H, Poly.constant(1), saves="activated"),
        ),
        ops=_discriminator_ops(),
    )


def _discriminator_ops() -> tuple[Op, ...]:
    """The discriminator's activation, and BCEWithLogitsLoss on the scores and labels.float(), which keeps both."""
    scores = (Saved("scores", (b, s)), Saved("labels", (b, s), Dtype.FLOAT32))
    activation = ops.activation(
        "activation", "discriminator-activation", "hidden_act", (b, s, H), before="hidden", after="activated"
    )
    return (activation, Op("loss", "replaced-token-loss", saved=scores))


def declare(on: Mapping[str, bool], head: Head) -> Architecture:
    """Declare the tensors of the transformers ELECTRA class for this head (it has no pooler)."""
    on_top = {
        Head.PRETRAINING: lambda: (_discriminator_head(),),  # the discriminator; the generator is the masked LM
        Head.MASKED_LM: lambda: (_generator_head(on),),
        # ElectraClassificationHead: RoBERTa's, with gelu for tanh.
        Head.SEQUENCE_CLASSIFICATION: lambda: (common.dense_classifier("gelu"),),
    }
    return common.assemble("Electra", "electra.", head, functools.partial(_backbone, on), on_top)


FAMILY = Family(
    name="electra",
    symbols=SYMBOLS,
    declare=declare,
    checks=common.BERT_RULES,
    switches=(
        common.tied("generator-head"),
        common.CROSS_ATTENTION,
        Switch("projected", ne("embedding_size", "hidden_size"), ("embedding-projection",)),
    ),
)
