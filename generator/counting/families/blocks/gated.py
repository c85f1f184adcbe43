"""Gated feed-forward layers: act(x·W_gate) ⊙ (x·W_up), then a projection back to the hidden size.

Two layouts exist in transformers' encoders.

* Fused (ModernBERT's GeGLU): one Linear makes both halves side by side, H to 2I
  (``mlp.Wi``), then ``input, gate = Wi(x).chunk(2)``; ``Wo`` maps I back to H. Both halves are
  views of one 2I-wide storage, which the activation and the product keep.
* Split (the Llama-style MLP of NomicBERT, GTE and EuroBERT): ``gate_proj`` and ``up_proj``,
  H to I each, read the same input; ``down_proj`` maps I back to H. The activation keeps the
  gate's output, the product keeps the activation's and the up projection's.

What varies is a parameter: the paths, the widths, each bias, the activation's config key. A
dropout on the product (GTE's ``mlp.dropout``) and the sub-layer's own dropouts are the family's.
What each family sets:

* ModernBERT: ``fused("mlp.Wi", "mlp.Wo", bias=mlp_bias)`` and ``fused_ops("mlp.act", "mlp.gate",
  activation_key="hidden_activation")``.
* NomicBERT, GTE, EuroBERT: ``split("mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", biases=...)``
  and ``split_ops("mlp.act_fn", "mlp", gate=..., up=...)``; the biases are (False, False, False),
  (False, False, True) and mlp_bias for all three.
"""

from __future__ import annotations

from dataclasses import replace

from generator.counting import architecture as arch
from generator.counting.flow import own
from generator.counting.layouts import b, linear, s
from generator.counting.poly import Poly

H, I = (Poly.symbol(name) for name in "HI")


def fused(
    value_and_gate: str, out: str, *, width: Poly = H, inner: Poly = I, bias: bool = True
) -> tuple[arch.Module, arch.Module]:
    """The fused pair: ``value_and_gate`` from ``width`` to 2·``inner``, ``out`` from ``inner`` back."""
    return (
        linear(
            value_and_gate,
            "gated-feed-forward-in-value-and-gate",
            width,
            2 * inner,
            bias=bias,
            part=arch.Part.FEED_FORWARD,
        ),
        linear(out, "feed-forward-out", inner, width, bias=bias, part=arch.Part.FEED_FORWARD),
    )


def fused_ops(
    activation: str,
    gate: str,
    *,
    activation_key: str = "hidden_act",
    stored_as: str = "Wi output",
    inner: Poly = I,
    reads: str = "",
    writes: str = "",
) -> tuple[arch.Op, arch.Op]:
    """The activation of the first half and its product with the second, both reading the 2I-wide
    storage ``stored_as`` (the chunks are views of it); ``activation_key`` names the function.
    Both read ``reads`` (else ``stored_as``); the product writes ``writes`` (else "<gate> output")."""
    wide = arch.Saved(stored_as, (b, s, 2 * inner))
    activated = arch.Saved("activated", (b, s, inner))
    source = reads or stored_as
    return (
        arch.Op(
            activation,
            "feed-forward-activation",
            saved=(wide, activated),
            activation=activation_key,
            reads=(source,),
            writes=activated.key,
        ),
        arch.Op(
            gate, "gate", saved=(activated, wide), reads=(activated.key, source), writes=writes or f"{gate} output"
        ),
    )


def split(
    gate: str,
    up: str,
    down: str,
    *,
    width: Poly = H,
    inner: Poly = I,
    biases: tuple[bool, bool, bool] = (False, False, False),
    reads: str = "feed-forward input",
) -> tuple[arch.Module, arch.Module, arch.Module]:
    """The split triple in registration order: ``gate`` and ``up`` from ``width`` to ``inner``, both
    reading one storage (``reads``), then ``down`` back; ``biases`` for each, in that order (NomicBERT
    has none, GTE only on ``down``, EuroBERT all three with ``mlp_bias``)."""
    gate_bias, up_bias, down_bias = biases
    part = arch.Part.FEED_FORWARD
    return (
        linear(gate, "gated-feed-forward-gate", width, inner, bias=gate_bias, part=part, saves=reads),
        linear(up, "gated-feed-forward-up", width, inner, bias=up_bias, part=part, saves=reads),
        linear(down, "feed-forward-out", inner, width, bias=down_bias, part=part),
    )


def split_ops(
    activation: str,
    product: str,
    *,
    gate: str,
    up: str,
    activation_key: str = "hidden_act",
    inner: Poly = I,
    writes: str = "",
) -> tuple[arch.Op, arch.Op]:
    """The activation of ``gate``'s output, then at ``product`` its product with ``up``'s, which
    writes ``writes`` (else "<product> output"). Each factor is kept when the other needs a gradient."""
    activated = arch.Saved("activated", (b, s, inner))
    up_output = arch.Saved(f"{up} output", (b, s, inner))
    return (
        arch.Op(
            activation,
            "feed-forward-activation",
            saved=(arch.Saved(f"{gate} output", (b, s, inner)), activated),
            activation=activation_key,
            reads=(f"{gate} output",),
            writes=activated.key,
        ),
        arch.Op(
            product,
            "gate",
            saved=(replace(activated, needs=(own(1),)), replace(up_output, needs=(own(0),))),
            reads=(activated.key, up_output.key),
            writes=writes or f"{product} output",
        ),
    )
