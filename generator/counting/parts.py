"""Parameters by part (embeddings, attention, feed-forward, norms, pooler, heads), read off an inventory.

``Part`` is declared with each module (see ``architecture.part_of``); this module adds the
tensors up by part, and gives the shares the charts draw. A part's title is content
(``texts.part_titles(language)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from generator.counting.architecture import Part
from generator.counting.inventory import Inventory


def part_subtotals(inventory: Inventory) -> dict[Part, int]:
    """Every part's parameter count, in Part order (a part the model lacks has 0)."""
    totals = dict.fromkeys(Part, 0)
    for tensor in inventory.tensors:
        if tensor.part is None:
            raise ValueError(f"{inventory.card.id}: tensor {tensor.name} is declared without a part")
        totals[tensor.part] += tensor.count
    return totals


@dataclass(frozen=True)
class Share:
    """One part's slice of a model: its count and exact fraction (``formats.percent`` writes it)."""

    part: Part
    count: int
    fraction: Fraction


def shares(subtotals: dict[Part, int]) -> tuple[Share, ...]:
    """Each part's exact share of the total.

    Shares are not adjusted to add up to 100%: a table that did so would contradict the chart's
    own labels; each is rounded on its own where it is written.
    """
    total = sum(subtotals.values())
    return tuple(Share(part, count, Fraction(count, total)) for part, count in subtotals.items())
