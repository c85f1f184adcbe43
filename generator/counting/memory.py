"""How many bytes a model's parameters take: stored at three precisions, and trained with Adam.

Exact integers from the inventory's totals; nothing here formats (the ``binary`` filter writes
MiB and GiB). Only parameters are counted: activations, buffers such as position ids, the
framework's own overhead and any file-format header are not, and a tied tensor is stored once.
"""

from __future__ import annotations

from dataclasses import dataclass

# Mixed-precision training with Adam, per parameter (the accounting of Rajbhandari et al. 2020,
# "ZeRO", section 3.1): fp16 weights and gradients, and an fp32 master copy with Adam's two moments.
# The flag says whether a parameter nothing trains needs it too: a frozen table is still read in
# the forward pass (its fp16 copy), but has no gradient, no master copy and no optimizer state.
# How the parameters alone may be held: a precision's name and its bytes per parameter.
HELD_AS = (("fp32", 4), ("fp16 or bf16", 2), ("int8", 1))
TRAINING_STATE = (
    ("fp16 weights", 2, True),
    ("fp16 gradients", 2, False),
    ("fp32 master weights", 4, False),
    # Kingma & Ba 2015, Algorithm 1: m is a running mean of the gradients, v of their squares.
    ("fp32 first moment", 4, False),
    ("fp32 second moment", 4, False),
)


@dataclass(frozen=True)
class Footprint:
    """Bytes for one way of holding the parameters; ``parameters`` is how many it applies to."""

    name: str
    bytes_per_parameter: int
    parameters: int
    bytes: int


@dataclass(frozen=True)
class Memory:
    """A model's parameter memory at fp32, fp16/bf16 and int8, and its training state."""

    parameters: int
    trainable: int
    fp32: Footprint
    half: Footprint
    int8: Footprint
    training: Footprint  # bytes_per_parameter is per trained parameter; a frozen one takes 2
    training_state: tuple[Footprint, ...]  # what the training footprint is made of

    @property
    def weights(self) -> tuple[Footprint, ...]:
        return (self.fp32, self.half, self.int8)

    @property
    def frozen(self) -> int:
        """Parameters nothing trains (requires_grad False), such as fixed sinusoid tables."""
        return self.parameters - self.trainable


def memory_of(parameters: int, trainable: int | None = None) -> Memory:
    """Every footprint of a model with this many parameters, ``trainable`` of them trained (default: all)."""
    trained = parameters if trainable is None else trainable

    def footprint(name: str, size: int, count: int = parameters) -> Footprint:
        return Footprint(name, size, count, size * count)

    state = tuple(footprint(name, size, parameters if all_ else trained) for name, size, all_ in TRAINING_STATE)
    per_trained = sum(f.bytes_per_parameter for f in state)
    return Memory(
        parameters=parameters,
        trainable=trained,
        fp32=footprint(*HELD_AS[0]),
        half=footprint(*HELD_AS[1]),
        int8=footprint(*HELD_AS[2]),
        training=Footprint("training, Adam in mixed precision", per_trained, trained, sum(f.bytes for f in state)),
        training_state=state,
    )
