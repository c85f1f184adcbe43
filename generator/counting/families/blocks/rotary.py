"""Rotary positions: attention multiplies its query and key by cos and sin tables of (s, d), d the head size.

The tables hold no parameter, and neither does the module that makes them (``inv_freq`` is a
buffer). What a training step keeps of them is the tables themselves: each product q·cos and
rotate_half(q)·sin keeps its table, which needs no gradient, and not q.

* Made once a step by the model, as ModernBERT, ESM, NomicBERT, GTE and EuroBERT do
  (``rotary_emb(hidden_states, position_ids)``): every layer keeps the same two storages,
  ``shared`` across the model. ModernBERT makes a second pair for its local layers.
* Made by every layer from one sinusoid table, as RoFormer does (``sinusoidal_pos.chunk``, then
  ``torch.stack``): two storages per layer, not shared. RoFormer's table is a frozen
  nn.Embedding the encoder registers (``sinusoid_table``), so it is counted, and never trained.

A family adds the tables to its attention op (``rotated``). What each family sets:

* ModernBERT: ``tables("global rotary")`` and ``tables("local rotary", when=...)``.
* ESM, NomicBERT, GTE, EuroBERT: ``tables()``, once, and ``rotated(attention, tables())``.
  NomicBERT and GTE measure at ``interior_lengths`` too: their tables are made afresh each step.
* RoFormer: ``sinusoid_table()`` in its encoder block, ``tables(shared=False)`` in its layer.
  With ``rotary_value`` it rotates the value too, by the same two tables.

Every family declares the compute symbol d the tables use: ``HEAD_SIZE_SYMBOL``, or its own where
``head_dim`` may set it. ``odd_head_size`` is the rule that refuses an odd d.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from generator.counting import architecture as arch
from generator.counting.conditions import Condition, div, eq, gt, mod
from generator.counting.layouts import embedding, s
from generator.counting.poly import Poly
from generator.counting.switches import Rule

P = Poly.symbol("P")
HEAD_SIZE = Poly.symbol("d")  # a compute symbol: the family declares d (hidden_size / num_attention_heads)
HEAD_SIZE_SYMBOL = arch.Symbol(
    "d", "hidden_size / num_attention_heads", value=div("hidden_size", "num_attention_heads")
)


def odd_head_size(when: Condition | None = None) -> Rule:
    """Refuses a config whose heads have an odd size: its rotation of queries and keys raises.

    ``when`` narrows it to configs that rotate at all (ESM's position_embedding_type).
    """
    layers, odd = gt("num_hidden_layers", 0), eq(mod(div("hidden_size", "num_attention_heads"), 2), 1)
    fails = layers & odd if when is None else when & layers & odd
    return Rule("odd-head-size", fails, ("hidden_size", "num_attention_heads"))


def tables(
    name: str = "rotary", width: Poly = HEAD_SIZE, *, shared: bool = True, when: Condition | None = None
) -> tuple[arch.Saved, arch.Saved]:
    """The cos and sin tables, (s, ``width``) each, named "<name> cos" and "<name> sin".

    ``shared``: one storage for the whole model, made once a step; false for tables each layer makes.
    ``when``: a condition on the config for tables only some configs make (ModernBERT's local ones).
    """
    return (
        arch.Saved(f"{name} cos", (s, width), shared=shared, when=when),
        arch.Saved(f"{name} sin", (s, width), shared=shared, when=when),
    )


def rotated(attention: arch.Op, *pairs: tuple[arch.Saved, arch.Saved]) -> arch.Op:
    """The attention op, also keeping each pair of tables its query and key are multiplied by."""
    return replace(attention, saved=(*attention.saved, *(table for pair in pairs for table in pair)))


def sinusoid_table(path: str = "embed_positions", rows: Poly = P, width: Poly = HEAD_SIZE) -> arch.Module:
    """RoFormer's sinusoid table: nn.Embedding(``rows``, ``width``, _freeze=True), a parameter nothing trains.

    Its forward takes the ids' shape, not ids: peft's LoRA adapter of it, which looks ids up, raises."""
    return embedding(path, "rotary-sinusoid-table-frozen", rows, width, frozen=True, lookups=None)


def interior_lengths(config: Mapping[str, Any]) -> tuple[int, ...]:
    """Sequence lengths to measure between 3 and the longest (``GroundTruth.lengths``).

    A model that makes its tables each step, from the positions it is given, makes them for s
    positions whatever the longest is: no cache by length, so no length where a figure bends.
    These points show it, where a cache grown past some length would add a piece.
    """
    return (4, 5, config["max_position_embeddings"] // 2 + 1)
