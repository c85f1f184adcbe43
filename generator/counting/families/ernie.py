"""ERNIE (transformers ``model_type`` "ernie"): modeling_ernie.py in transformers 5.23.

BERT's classes under ``ernie.``, with one more table. With ``use_task_id`` on, ErnieEmbeddings
registers ``task_type_embeddings`` after its LayerNorm: K rows (``task_type_vocab_size``), H wide.
Its forward adds a task type's row to every token. A step without ``task_type_ids`` makes a
(b, s) tensor of zeros for them, which the table's lookup keeps. The rest is BERT's, tensor for
tensor: the layer, the pooler and the three heads (ErnieForPreTraining keeps next-sentence prediction).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from generator.counting import architecture as arch
from generator.counting.conditions import eq, truthy
from generator.counting.families import activations, bert, common, dropouts, heads, step_rules
from generator.counting.families.symbols import symbols
from generator.counting.ground_truth import ABSENT, GroundTruth
from generator.counting.layouts import b, embedding, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule, Switch

K, H = Poly.symbol("K"), common.H

SYMBOLS = symbols("VPT", arch.Symbol("K", "task_type_vocab_size", minimum=0), "HILAC")

# ErnieEmbeddings.forward: torch.zeros(input_shape) when no task_type_ids are given, a new (b, s) tensor.
TASK_TYPE_IDS = arch.Saved("task type ids", (b, s), arch.Dtype.INT64)


def _embeddings(on: Mapping[str, bool], prefix: str) -> arch.Block:
    """BERT's tables and LayerNorm, then the task type table when ``use_task_id`` is on."""
    modules: tuple[arch.Module, ...] = (
        common.token_table(H),
        common.position_table(H),
        common.segment_table(H),
        common.embedding_norm(H),
    )
    if on["task_types"]:
        modules += (embedding("task_type_embeddings", "task-type-embeddings", K, H, ids=TASK_TYPE_IDS),)
    return common.embeddings_block(prefix, modules)


def _backbone(on: Mapping[str, bool], prefix: str, pooler: bool) -> tuple[arch.Block, ...]:
    blocks = (_embeddings(on, prefix), common.bert_encoder_layer(on, prefix))
    return (*blocks, common.bert_pooler(prefix)) if pooler else blocks


def declare(on: Mapping[str, bool], head: arch.Head) -> arch.Architecture:
    """Declare the tensors of the transformers ERNIE class for this head."""
    on_top = heads.bert_heads(functools.partial(heads.bert_mlm_head, on, "ernie."), heads.next_sentence_head)
    return common.assemble("Ernie", "ernie.", head, functools.partial(_backbone, on), on_top)


# A task type table of 0 rows: a step without task_type_ids looks up task type 0, which is no row.
# A CPU raises IndexError; the meta device checks no index (GroundTruth.meta_blind).
no_task_type_row = Rule(
    "ernie-no-task-type-row",
    truthy("use_task_id") & eq("task_type_vocab_size", 0),
    ("task_type_vocab_size", "use_task_id"),
)

FAMILY = arch.Family(
    name="ernie",
    symbols=SYMBOLS,
    declare=declare,
    build_rules=(*common.LAYER_RULES, *common.EMBEDDING_AND_CONFIG_RULES, *activations.rules("ernie")),
    step_rules=(
        *step_rules.COMMON,
        step_rules.no_token_type_row,
        no_task_type_row,
        *dropouts.in_step(dropouts.ENCODER),
    ),
    switches=(
        Switch("task_types", truthy("use_task_id"), ("embeddings",)),
        common.tied("mlm-head"),
        common.CROSS_ATTENTION,
    ),
    ground_truth=GroundTruth(
        # BERT's keys, and the task types: on and off, with a table of a few rows or none.
        draws={**bert.DRAWS, "use_task_id": ((True, False), (ABSENT,)), "task_type_vocab_size": ((1, 3), (0,))},
        meta_blind=(no_task_type_row.name,),
        sentence_label="next_sentence_label",
    ),
)
