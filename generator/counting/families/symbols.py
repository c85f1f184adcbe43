"""The symbols families share, each declared once with its usual config key.

Most families of the catalog read the same numbers under the same names (V, P, T, H, I, L, A, C):
they list them by name, and declare in full only their own symbols (ALBERT's groups, DeBERTa's
buckets) and the shared ones whose key or range differs for them (DistilBERT's ``dim``,
ModernBERT's L of at least 1). The order of the list is the order the family's formulas use.
What a symbol means is content (``content/en/families.yaml``: the shared meanings, and a
family's own where it differs, as ALBERT's L, which counts steps over shared layers). This
module declares no family.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from generator.counting.architecture import Symbol

SHARED: dict[str, Symbol] = {
    s.name: s
    for s in (
        Symbol("V", "vocab_size", minimum=0),  # 0 with pad_token_id null: an empty table
        Symbol("P", "max_position_embeddings", minimum=0),
        Symbol("T", "type_vocab_size", minimum=0),  # 0: an empty table, built all the same
        Symbol("H", "hidden_size"),
        Symbol("I", "intermediate_size", minimum=0),
        Symbol("L", "num_hidden_layers", minimum=0),
        Symbol("A", "num_attention_heads"),
        Symbol("C", "num_labels", minimum=0),
    )
}


def shared(name: str, **differs: Any) -> Symbol:
    """A shared symbol with what differs for one family (its key, minimum...) changed."""
    return replace(SHARED[name], **differs)


def symbols(*entries: str | Symbol) -> tuple[Symbol, ...]:
    """A family's symbols in formula order: a string names shared symbols as they are ("VPTHI")."""
    return tuple(s for e in entries for s in ((SHARED[name] for name in e) if isinstance(e, str) else (e,)))
