"""The usual slips in counting what LoRA trains, each worked by the engine into the figure a reader gets.

A student asked how many parameters LoRA trains on a classifier tends to make one of a few
slips: the classifier's trained copy left out, a bias given to A and B, one factor of the
pair forgotten, one layer counted for all of them, the pooler taken for part of the head. Each
figure here comes from ``counting.methods.tune``, never from a formula of its own, so the
exercises page's answer box can name the slip behind a reader's number.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

from generator.cards.card import Card
from generator.counting.architecture import Head, Kind
from generator.counting.inventory import Inventory, count_parameters
from generator.counting.methods import Tuned, Tuning, groups, tune


class Slip(enum.Enum):
    """A way to get the count of what LoRA trains wrong; the value keys its sentence in the content."""

    HEAD_LEFT_OUT = "head-left-out"  # the classifier's copy (modules_to_save) not counted
    BIASES = "biases"  # A and B given a bias each, which peft's LoRA never adds
    ONE_FACTOR = "one-factor"  # r·in or r·out for a layer: A or B alone
    ONE_LAYER = "one-layer"  # the adapters of one encoder layer, not of all L
    POOLER = "pooler"  # the pooler trained with the classifier, as if it were part of the head
    FULL = "full"  # every parameter of the model: full fine-tuning's count
    ALL_PARAMS = "all-params"  # peft's second figure: every parameter of the wrapped model


@dataclass(frozen=True)
class Slipped:
    """A slip and the figure it gives."""

    slip: Slip
    value: int


def lora_slips(inventory: Inventory, tuning: Tuning) -> tuple[Tuned, tuple[Slipped, ...]]:
    """What ``tuning`` (LoRA) trains on ``inventory``'s classifier, and the figure each slip gives instead.

    A slip whose figure is the right answer, or another slip's, is left out: the answer box could
    not tell them apart. The order is the likeliest first.
    """
    tuned = tune(inventory, tuning)
    adapters = [a for a in tuned.added if a.module in tuned.adapted]
    copies = tuned.trainable - sum(a.count for a in adapters)
    card = inventory.card
    assert isinstance(card, Card)  # an exercise's card, read from models/
    bare = tune(count_parameters(dataclasses.replace(card, head=Head.BASE)), tuning)
    factors = ("lora_A", "lora_embedding_A"), ("lora_B", "lora_embedding_B")
    alone = [sum(a.count for a in adapters if any(f".{name}." in a.name for name in kind)) for kind in factors]
    found = [
        Slipped(Slip.HEAD_LEFT_OUT, bare.trainable),
        # A bias on each factor has as many entries as the factor has rows: r for A, out for B.
        Slipped(Slip.BIASES, tuned.trainable + sum(a.shape[0] for a in adapters)),
        *(Slipped(Slip.ONE_FACTOR, copies + count) for count in alone),
        Slipped(Slip.ONE_LAYER, copies + sum(g.each for g in groups(tuned))),
        Slipped(Slip.POOLER, tuned.trainable + inventory.count_of(kind=Kind.POOLER)),
        Slipped(Slip.FULL, inventory.total),
        Slipped(Slip.ALL_PARAMS, tuned.total),
    ]
    seen = {tuned.trainable}
    kept = []
    for slipped in found:
        if slipped.value not in seen:
            seen.add(slipped.value)
            kept.append(slipped)
    return tuned, tuple(kept)
