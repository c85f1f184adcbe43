"""Pre-LayerNorm layers: each sub-layer reads its own norm's output, and the residual stream skips the norm.

BERT normalizes after each residual sum (post-LN). A pre-LN layer normalizes before attention and
before the feed-forward network, and the encoder adds a final norm after its last layer
(ModernBERT's ``final_norm``, XLM-RoBERTa-XL's and ESM's ``encoder.LayerNorm`` and
``emb_layer_norm_after``, EuroBERT's ``norm``). Where each norm is registered differs by class,
so ``layer`` takes the order; what a norm is (LayerNorm with or without its shift, RMSNorm) is
the family's ``norm``.

A sub-layer's first projections read the norm's output: the family names that storage in their
``saves`` (one storage, saved once, for a query, key and value that all read it). What each sets:

* ModernBERT: ``NORMS_FIRST``, ``attn_norm`` and ``mlp_norm``, layer 0 apart (``first_apart``),
  ``final_norm`` at ``final_norm``; its norm is LayerNorm with an optional shift (``norm_bias``).
* XLM-RoBERTa-XL: ``NORMS_AFTER``, ``attention.self_attn_layer_norm`` and ``LayerNorm``, and
  ``final_norm("encoder.", ...)`` at ``LayerNorm``.
* ESM: ``NORMS_AFTER``, ``attention.LayerNorm`` and ``LayerNorm``, final ``emb_layer_norm_after``.
* EuroBERT: ``NORMS_LAST``, ``input_layernorm`` and ``post_attention_layernorm``, final ``norm``.
  Its norm is ``rmsnorm.rms_norm``, a scale alone.
"""

from __future__ import annotations

from collections.abc import Callable

from generator.counting import architecture as arch
from generator.counting.flow import HIDDEN

# Makes a norm from its path and key: layouts.layer_norm, with or without its shift, or the family's own.
Norm = Callable[[str, str], arch.Module]

# ModernBERT's order; XLM-RoBERTa-XL and ESM register each norm after its sub-layer,
# EuroBERT both norms after both sub-layers.
NORMS_FIRST = ("attention-norm", "attention", "feed-forward-norm", "feed-forward")
NORMS_AFTER = ("attention", "attention-norm", "feed-forward", "feed-forward-norm")
NORMS_LAST = ("attention", "feed-forward", "attention-norm", "feed-forward-norm")


def layer(
    norm: Norm,
    attention: tuple[arch.Module, ...],
    feed_forward: tuple[arch.Module, ...],
    *,
    attention_norm: str | None,
    feed_forward_norm: str,
    order: tuple[str, str, str, str] = NORMS_FIRST,
) -> tuple[arch.Module, ...]:
    """A pre-LN layer's modules in registration ``order``: the norm before attention (at the path
    ``attention_norm``, None where the layer has none), attention, the norm before the feed-forward
    network, the feed-forward network. The norms are keyed "attention-norm" and "feed-forward-norm"."""
    parts = {
        "attention-norm": (norm(attention_norm, "attention-norm"),) if attention_norm is not None else (),
        "attention": attention,
        "feed-forward-norm": (norm(feed_forward_norm, "feed-forward-norm"),),
        "feed-forward": feed_forward,
    }
    return tuple(module for name in order for module in parts[name])


def first_apart(
    path: str,
    modules: Callable[[bool], tuple[arch.Module, ...]],
    layer_ops: tuple[arch.Op, ...],
    *,
    later: Callable[[], bool],
    flow: Callable[[bool], dict[str, object]] | None = None,
) -> tuple[arch.Block, ...]:
    """Layer 0 without its attention norm, then layers 1 to L − 1 with it, when ``later()`` (L > 1).

    ModernBERT's layer 0 holds an nn.Identity where the others hold ``attn_norm``: the embedding
    norm already normalizes its input. ``path`` holds "{0}" for the index; ``modules(normed)``
    builds a layer's modules with or without that norm. ``later`` is asked after layer 0 is built,
    so that a builder reads its switches in the order it always has (the calculator's paths).
    ``flow(normed)`` gives a layer's data flow (``Block`` keywords), where the family declares it.
    """
    first_flow, rest_flow = (flow(False), flow(True)) if flow is not None else ({}, {})
    first = arch.Block("layer-0", arch.Kind.ENCODER, path.format(0), modules(False), ops=layer_ops, **first_flow)  # type: ignore[arg-type]
    if not later():
        return (first,)
    rest = arch.Block(
        "layer",
        arch.Kind.ENCODER,
        path,
        modules(True),
        repeat=("L",),
        start=1,
        ops=layer_ops,
        **rest_flow,  # type: ignore[arg-type]
    )
    return (first, rest)


def final_norm(path: str, norm: arch.Module) -> arch.Block:
    """The norm the encoder applies after its last layer, a block of its own under ``path``.

    Where the norm names what it reads, the block's flow reads the last layer's output and gives
    the heads theirs; a norm without a flow leaves the block's undeclared."""
    flow = {"inputs": ((norm.reads[0], HIDDEN),), "outputs": ((norm.writes, HIDDEN),)} if norm.reads else {}
    return arch.Block("final-norm", arch.Kind.ENCODER, path, (norm,), **flow)  # type: ignore[arg-type]
