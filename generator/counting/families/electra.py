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

from generator.counting import architecture as arch
from generator.counting import ops
from generator.counting.conditions import ne
from generator.counting.families import activations, bert, common, dropouts, heads, step_rules
from generator.counting.families.blocks import factorized
from generator.counting.families.symbols import symbols
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import b, linear, s
from generator.counting.poly import Poly
from generator.counting.switches import Switch

V, E, H = (Poly.symbol(s) for s in "VEH")

SYMBOLS = symbols(
    "VPT",
    arch.Symbol("E", "embedding_size", minimum=0),
    "HILAC",
)


def _backbone(on: Mapping[str, bool], prefix: str, _pooler: bool) -> tuple[arch.Block, ...]:
    blocks: tuple[arch.Block, ...] = (common.bert_embeddings(prefix, E),)
    if on["projected"]:
        blocks += (factorized.block(prefix, factorized.projection("embeddings_project")),)
    return (*blocks, common.bert_encoder_layer(on, prefix))


def _generator_head(on: Mapping[str, bool]) -> arch.Block:
    if on["tied"]:
        words = "electra.embeddings.word_embeddings.weight"
        lm_head = linear(
            "generator_lm_head",
            "output-projection-tied-and-bias",
            E,
            V,
            tied_to=words,
            reads="decoder input",
            writes="logits",
        )
    else:
        lm_head = linear("generator_lm_head", "output-projection-untied", E, V, reads="decoder input", writes="logits")
    modules = (*heads.narrow_transform("generator_predictions.LayerNorm", "generator_predictions.dense"), lm_head)
    # ElectraGeneratorPredictions applies gelu whatever hidden_act says.
    head_ops = heads.mlm_ops("generator_predictions.activation", E, key="gelu", fixed=True)
    inputs = ((common.ENCODER_OUTPUT.key, common.HIDDEN),)
    return arch.Block("generator-head", arch.Kind.HEAD, "", modules, ops=head_ops, inputs=inputs)


def _discriminator_head() -> arch.Block:
    return arch.Block(
        "discriminator-head",
        arch.Kind.HEAD,
        "discriminator_predictions.",
        (
            linear("dense", "discriminator-dense", H, H, saves=common.ENCODER_OUTPUT, writes="hidden"),
            linear("dense_prediction", "replaced-token-score", H, Poly.constant(1), saves="activated", writes="scores"),
        ),
        ops=_discriminator_ops(),
        inputs=((common.ENCODER_OUTPUT.key, common.HIDDEN),),
    )


def _discriminator_ops() -> tuple[arch.Op, ...]:
    """The discriminator's activation, and BCEWithLogitsLoss on the scores and labels.float(), which keeps both."""
    scores = (arch.Saved("scores", (b, s)), arch.Saved("labels", (b, s), arch.Dtype.FLOAT32))
    activation = ops.activation(
        "activation", "discriminator-activation", "hidden_act", (b, s, H), before="hidden", after="activated"
    )
    return (activation, arch.Op("loss", "replaced-token-loss", saved=scores, reads=("scores",), writes="loss output"))


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers ELECTRA class for this head (it has no pooler)."""
    on_top = {
        arch.Head.PRETRAINING: lambda: (_discriminator_head(),),  # the discriminator; the generator is the masked LM
        arch.Head.MASKED_LM: lambda: (_generator_head(on),),
        # ElectraClassificationHead: RoBERTa's, with gelu for tanh.
        arch.Head.SEQUENCE_CLASSIFICATION: lambda: (heads.dense_classifier("gelu"),),
    }
    return common.assemble("Electra", "electra.", head, functools.partial(_backbone, on), on_top)


FAMILY = arch.Family(
    name="electra",
    symbols=SYMBOLS,
    declare=declare,
    # BERT's layer and embeddings, copied: their head check never fires.
    build_rules=(
        common.in_every_layer(common.heads_divide_hidden_unchecked),
        common.in_every_layer(common.cross_attention_needs_decoder),
        *common.EMBEDDING_AND_CONFIG_RULES,
        *activations.rules("electra"),
    ),
    # The discriminator's pre-training loss reads one logit per token, never the vocabulary.
    step_rules=(
        step_rules.no_position,
        step_rules.empty_vocabulary(arch.Head.MASKED_LM),
        step_rules.no_label,
        step_rules.no_token_type_row,
        *dropouts.in_step(dropouts.ENCODER),
    ),
    switches=(
        common.tied("generator-head"),
        common.CROSS_ATTENTION,
        Switch("projected", ne("embedding_size", "hidden_size"), ("embedding-projection",)),
    ),
    ground_truth=GroundTruth(draws={**bert.DRAWS, "embedding_size": ((6, 8), (ABSENT, 0))}),
    peft=arch.PeftDefaults(lora=("query", "value")),  # peft has no IA³ default for it
)
