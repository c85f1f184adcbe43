"""RMSNorm: a learned scale over the input divided by its root mean square; no mean, no shift.

Llama's norm (T5's LayerNorm), which EuroBERT registers as ``EuroBertRMSNorm``: one weight of
``dim``. The forward upcasts its input to fp32, multiplies it by the reciprocal root mean square
of each row, casts the product back and multiplies it by the weight. Autograd keeps three tensors:

* the fp32 input, which the square and the product read (the input itself in an fp32 model, a
  new fp32 copy in bf16);
* the reciprocal root mean square, one fp32 number per row;
* the normalized rows in the model's type, which the product with the weight reads.

Its output is a new tensor, which the sub-layer's first projections keep (the family names it).
What each family sets: EuroBERT, ``rms_norm(path, key, H)`` for both norms of each layer and the
final ``norm``.
"""

from __future__ import annotations

from generator.counting import architecture as arch
from generator.counting.flow import own, param
from generator.counting.layouts import TOKENS
from generator.counting.poly import Poly


def rms_norm(path: str, key: str, dim: Poly, *, rows: Poly = TOKENS, writes: str = "") -> arch.Module:
    """An RMSNorm of ``dim`` at ``path``: its scale, and the three storages its backward reads.

    It reads "<path> input" and writes ``writes`` (else "<path> output"). The input and the
    reciprocal are kept when the input needs a gradient; the normalized rows when the scale trains.
    """
    source = arch.Saved(f"{path} input", (rows, dim), arch.Dtype.FLOAT32, needs=(own(0),))
    return arch.Module(
        path,
        key,
        (arch.Param("weight", (dim,), "scale"),),
        part=arch.Part.NORMS,
        saved=(
            source,
            arch.Saved(f"{path} reciprocal root mean square", (rows,), arch.Dtype.FLOAT32, needs=(own(0),)),
            arch.Saved(f"{path} normalized", (rows, dim), needs=(param(f"{path}.weight"),)),
        ),
        reads=(source.key,),
        writes=writes or f"{path} output",
    )
