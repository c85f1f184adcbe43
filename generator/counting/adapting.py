"""What fine-tuning methods read in a declaration: the class of each layer, and peft's defaults.

peft adapts a module by its class and finds it by its name. A family's declaration says both,
so that what LoRA or IA³ would wrap is known without torch (``methods.py``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Layer(enum.Enum):
    """The torch class whose instance registers a parameter, where fine-tuning methods care.

    peft wraps a module by its class: LoRA adapts Linear, Embedding and Conv1d; IA³ Linear
    alone. Any other class (a LayerNorm, a family's own norm, a head that holds a bias itself)
    is declared as None and is never adapted.
    """

    LINEAR = "Linear"
    EMBEDDING = "Embedding"
    LAYER_NORM = "LayerNorm"
    CONV1D = "Conv1d"

    # One object, equal only to itself: hashed by identity, as architecture.Head explains.
    __hash__ = object.__hash__


@dataclass(frozen=True)
class PeftDefaults:
    """The modules peft 0.21 adapts in a family when a user names none (peft/utils/constants.py).

    None: peft has no default for the family, and asks for targets.
    """

    lora: tuple[str, ...] | None = None
    ia3: tuple[str, ...] | None = None
    feedforward: tuple[str, ...] | None = None  # IA³'s targets whose input it scales, not their output
