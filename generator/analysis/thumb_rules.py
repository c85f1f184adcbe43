"""The published rules of thumb for training, each stated once for every page that works them.

2N FLOPs per token for the forward and 6N for a training step; 16 bytes per parameter for Adam in
mixed precision; and Korthikanti et al. 2022's 34·s·b·H + 5·A·s²·b activation bytes per layer
(arXiv 2205.05198, section 4.1, equation 1: 16-bit numbers, 1-byte dropout masks). A model page
and the errata page both set these beside the exact step, so the gap to a layer's declared
storages is taken apart here too: both pages then tell a mask and a statistic apart the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.counting.architecture import Dtype, Kind
from generator.counting.compute import ELEMENT_BYTES, BlockCompute, Compute, elements, stored_bytes
from generator.counting.ops import is_mask
from generator.counting.poly import Poly

FORWARD_FLOPS = 2  # per parameter and token: 2N
TRAINING_FLOPS = 6  # per parameter and token, forward and backward: 6N
ADAM_BYTES = 16  # per parameter: bf16 weights and gradients, fp32 master weights and two moments
LINEAR_BYTES, SQUARE_BYTES = 34, 5  # Korthikanti et al.'s coefficients

b, s, H, A = (Poly.symbol(name) for name in ("b", "s", "H", "A"))
KORTHIKANTI_LINEAR = LINEAR_BYTES * s * b * H
KORTHIKANTI_SQUARE = SQUARE_BYTES * A * s * s * b
KORTHIKANTI = KORTHIKANTI_LINEAR + KORTHIKANTI_SQUARE


@dataclass(frozen=True)
class LayerGap:
    """One encoder layer's bf16 bytes saved per layer at any b, in symbols, and what sets them apart from
    the rule: 2-byte masks where it counts 1 byte, and fp32 storages it leaves out."""

    layer: BlockCompute
    exact: Poly
    masks: Poly  # what 2-byte masks add over 1-byte ones (a mask has the activation's type on CPU)
    statistics: Poly  # the fp32 storages: LayerNorm statistics, a softmax computed in fp32
    batch_one: Poly  # what the layer saves at b = 1 only: outside a rule for any b, shown apart

    @property
    def rest(self) -> Poly:
        """Whatever else the layer saves that the rule does not count, or the reverse."""
        return self.exact + self.masks * -1 + self.statistics * -1 + KORTHIKANTI * -1


def find_layer_gap(compute: Compute) -> LayerGap | None:
    """The gap for the first repeated encoder block, the layer the rule describes; None without one."""
    layer = next((x for x in compute.blocks if x.block.kind is Kind.ENCODER and x.block.repeat), None)
    if layer is None:
        return None
    exact, masks, statistics, batch_one = Poly(), Poly(), Poly(), Poly()
    for module in layer.modules:
        for tensor in module.saved:
            if tensor.shared:  # saved once for every layer, not per layer
                continue
            size = stored_bytes(tensor.shape, tensor.dtype, "bf16")
            if tensor.batch_one:
                batch_one = batch_one + size
                continue
            exact = exact + size
            if is_mask(module.path, tensor.key):
                masks = masks + elements(tensor.shape) * (ELEMENT_BYTES[tensor.dtype]["bf16"] - 1)
            elif tensor.dtype is Dtype.FLOAT32:
                statistics = statistics + size
    return LayerGap(layer, exact, masks, statistics, batch_one)
