"""The steps of a forward that hold no parameter, as declared ops: attention, dropout, activations, losses.

Each says, in the config's symbols and the batch size b and sequence length s, the matrix
products it performs and the tensors autograd keeps for its backward (torch's derivative
formulas: softmax keeps its output, dropout its mask, a product both operands). Families string
them into their blocks (``Block.ops``); ``compute.py`` counts them.
"""

from __future__ import annotations

from dataclasses import replace

from generator.counting.architecture import Dtype, Module, Op, Product, Saved
from generator.counting.conditions import Condition, ne
from generator.counting.flow import own, param
from generator.counting.layouts import TOKENS, b, s
from generator.counting.poly import Poly


def is_mask(path: str, key: str) -> bool:
    """Whether a storage of the step at ``path`` is a dropout's mask (``dropout`` names it "<path> mask";
    attention's is "attention dropout mask")."""
    return key.endswith("dropout mask") or key == f"{path} mask"


def dropout(
    path: str,
    label: str,
    shape: tuple[Poly, ...],
    when: Condition,
    *,
    output: str | None = None,
    reads: str = "",
    read_by: str = "",
    writes: str = "",
) -> Op:
    """nn.Dropout in training: on CPU torch multiplies by a scaled random mask of the input's type
    and keeps that mask (at::dropout's _dropout_impl); with p = 0 it returns its input and keeps nothing.

    ``output`` names the dropped tensor when a later step keeps it (a classifier's input), which
    it does when ``read_by``, the path of that step's weight, trains. It writes ``writes``, else
    ``output``, else "<path> output".
    """
    saved: tuple[Saved, ...] = (Saved(f"{path} mask", shape, when=when),)
    if output is not None:
        saved += (Saved(output, shape, when=when, needs=(param(read_by),) if read_by else ()),)
    return Op(path, label, saved=saved, reads=(reads or f"{path} input",), writes=writes or output or f"{path} output")


def probability(key: str) -> Condition:
    """A dropout that acts: its probability in the config is not 0 (an equality, which holds for 0.0 too;
    the ordering comparisons of ``conditions`` are for whole numbers)."""
    return ne(key, 0)


def attention(
    path: str,
    width: Poly,
    heads: Poly,
    dropout_key: str,
    *,
    keys: Poly = s,
    value: Saved | None = None,
    float_softmax: bool = False,
    reads: tuple[str, str, str] = ("query", "key", "value"),
    writes: str = "",
) -> Op:
    """Eager scaled dot-product attention over ``heads`` heads of a ``width``-wide projection.

    Scores QKᵀ: b·A products of s × d by d × s (d = width / A), 2·b·s²·width FLOPs; the weighted
    sum of values the same again. It keeps the query, key and value for the two products (``value``
    when the values are a view of a larger storage), the softmax's output (b·A·s² values, where s²
    enters the memory), and with attention dropout its mask and the dropped probabilities, b·A·s²
    each again. ``float_softmax``: the softmax runs in fp32 and is cast back. The product with the
    values keeps that cast copy, a second storage in bf16, unless a dropout acts: it then keeps the
    dropped probabilities instead, and the dropout keeps only its mask.

    It reads the query, key and value (``reads``) and writes the heads' outputs (``writes``). Each
    product keeps an operand when the other one needs a gradient; the softmax keeps its output when
    the scores need one, which is when the query or the key does.
    """
    when = probability(dropout_key)
    tokens = (b, s, width)
    grid = (b, heads, s, keys)
    query, key, value_ = own(0), own(1), own(2)
    scores = (query, key)
    if float_softmax:
        # The fp32 softmax keeps its output when the scores need a gradient. Without a dropout the product
        # with the values keeps it too, in fp32, where the cast back is no copy: the same storage, fp32
        # only (UNCAST), kept when the values need one; in bf16 it keeps the cast copy instead.
        probabilities: tuple[Saved, ...] = (
            Saved("probabilities", grid, Dtype.FLOAT32, needs=scores),
            Saved("probabilities", grid, Dtype.UNCAST, when=~when, needs=(value_,)),
            Saved("probabilities, cast", grid, Dtype.CAST, when=~when, needs=(value_,)),
        )
    else:  # one storage for the softmax and, without a dropout, for the product with the values
        probabilities = (
            Saved("probabilities", grid, when=when, needs=scores),
            Saved("probabilities", grid, when=~when, needs=(*scores, value_)),
        )
    return Op(
        path,
        "attention",
        products=(
            Product("scores QKᵀ", b * s, keys, width, operands=((query,), (key,))),
            Product("probabilities × V", b * s, width, keys, operands=(scores, (value_,))),
        ),
        saved=(
            Saved("query", tokens, needs=(key,)),
            Saved("key", (b, keys, width), needs=(query,)),
            replace(value or Saved("value", (b, keys, width)), needs=scores),
            *probabilities,
            Saved("attention dropout mask", grid, when=when, needs=scores),
            Saved("dropped probabilities", grid, when=when, needs=(value_,)),
        ),
        reads=reads,
        writes=writes or f"{path} output",
    )


def activation(
    path: str, label: str, key: str, shape: tuple[Poly, ...], *, before: str, after: str, fixed: bool = False
) -> Op:
    """An activation function named by the config key ``key`` (or, ``fixed``, the function ``key`` itself):
    what it keeps depends on the function (``compute.ACTIVATIONS``); ``before`` and ``after`` name its
    input and output storages, which it reads and writes."""
    saved = (Saved(before, shape), Saved(after, shape))
    if fixed:
        return Op(path, label, saved=saved, function=key, reads=(before,), writes=after)
    return Op(path, label, saved=saved, activation=key, reads=(before,), writes=after)


def either(when: Condition, then: Saved, otherwise: Saved) -> tuple[Saved, Saved]:
    """One storage or another, as a config decides (a dropout's output, or its input when it does not act)."""
    return (replace(then, when=when), replace(otherwise, when=~when))


def tanh(path: str, label: str, shape: tuple[Poly, ...], output: str, *, shared: bool = True, reads: str = "") -> Op:
    """torch.tanh keeps its output (its derivative is 1 − tanh²), which it writes under that name."""
    return Op(
        path, label, saved=(Saved(output, shape, shared=shared),), reads=(reads or f"{path} input",), writes=output
    )


def cross_entropy(
    path: str,
    label: str,
    rows: Poly,
    classes: Poly,
    labels: Saved,
    *,
    dtype: Dtype = Dtype.ACTIVATION,
    reads: str = "logits",
) -> Op:
    """nn.CrossEntropyLoss, mean over the rows: log_softmax keeps its output, nll_loss the labels
    and the total weight (a scalar of the logits' type; ``dtype`` FLOAT32 where the loss upcasts
    the logits first, as transformers' ForMaskedLMLoss does)."""
    return Op(
        path,
        label,
        saved=(
            Saved(f"{path} log-probabilities", (rows, classes), dtype),
            labels,
            Saved(f"{path} total weight", (), dtype),
        ),
        reads=(reads,),
        writes=f"{path} output",
    )


def float_target_loss(path: str, label: str, shape: tuple[Poly, ...], *, reads: str = "logits") -> Op:
    """nn.MSELoss or nn.BCEWithLogitsLoss against float labels of the outputs' shape: each keeps
    both (the outputs in the model's type, the labels as given, fp32)."""
    saved = (Saved(f"{path} input", shape), Saved(f"{path} labels", shape, Dtype.FLOAT32))
    return Op(path, label, saved=saved, reads=(reads,), writes=f"{path} output")


def gated(module: Module, when: Condition) -> Module:
    """The same module, computing and keeping anything only for configs where ``when`` holds
    (its parameters exist either way)."""
    products = tuple(replace(p, when=when if p.when is None else p.when & when) for p in module.products)
    saved = tuple(replace(t, when=when if t.when is None else t.when & when) for t in module.saved)
    return replace(module, products=products, saved=saved)


def idle(module: Module) -> Module:
    """The same module, with its parameters and nothing computed (a module the forward does not call)."""
    return replace(module, products=(), saved=())


def only(op: Op, when: Condition) -> Op:
    """The same op, keeping its tensors only for configs where ``when`` holds."""
    saved = tuple(replace(t, when=when if t.when is None else t.when & when) for t in op.saved)
    return replace(op, saved=saved)


LABELS = Saved("labels", (b, s), Dtype.INT64, shared=True)
SENTENCE_LABELS = Saved("sentence labels", (b,), Dtype.INT64, shared=True)
CLASS_LABELS = Saved("class labels", (b,), Dtype.INT64, shared=True)
TOKEN_ROWS = TOKENS
