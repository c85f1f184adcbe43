"""A training step's numbers at one batch size and sequence length: what ``compute.Compute.at`` gives.

The closed forms in b and s are ``compute.py``'s; these are their values, the training memory with
Adam worked from them, and the record ``python -m generator count --json`` prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.counting.inventory import Counted


@dataclass(frozen=True)
class StepTotals:
    """A training step's numbers at one (b, s)."""

    batch: int
    seq: int
    parameters: int
    trainable: int
    forward: int
    backward: int
    activations: Mapping[str, int]  # bytes, by precision ("fp32", "bf16")

    @property
    def tokens(self) -> int:
        return self.batch * self.seq

    @property
    def training_memory(self) -> dict[str, int]:
        """Adam's lower bound: weights, gradients, two moments, and the activations.

        fp32: everything in 4 bytes. bf16 mixed: bf16 weights and gradients, an fp32 master copy
        and fp32 moments (Rajbhandari et al. 2020, ZeRO, section 3.1), bf16 activations. A frozen
        parameter has its weights only. Allocator overhead, temporaries and workspaces are not in it.
        """
        held = parameter_memory(self.parameters, self.trainable)
        return {
            "fp32": held["fp32"] + self.activations["fp32"],
            "bf16_mixed": held["bf16_mixed"] + self.activations["bf16"],
        }

    def to_json(self, card: Counted, class_name: str) -> dict[str, Any]:
        """The ``--json`` record of a training step: integers only."""
        return {
            **card_record(card, class_name, self.parameters),
            "batch": self.batch,
            "seq": self.seq,
            "flops": {"forward": self.forward, "backward": self.backward},
            "activations": dict(self.activations),
            "training_memory": self.training_memory,
        }


def parameter_memory(parameters: int, trainable: int) -> dict[str, int]:
    """What the parameters hold in training with Adam, activations aside (see ``StepTotals.training_memory``).

    A trained parameter has its weight, its gradient and two moments (and in bf16 mixed precision an
    fp32 master copy); a frozen one its weight alone.
    """
    frozen = parameters - trainable
    return {"fp32": 4 * frozen + (4 + 4 + 8) * trainable, "bf16_mixed": 2 * frozen + (2 + 2 + 4 + 8) * trainable}


def card_record(card: Counted, class_name: str, parameters: int) -> dict[str, Any]:
    """What a ``count --json`` record says of the card itself: id, family, head, class and parameters."""
    return {
        "id": card.id,
        "family": card.family.name,
        "head": card.head.value,
        "class": class_name,
        "parameters": parameters,
    }
