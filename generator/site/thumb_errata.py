"""Rules of thumb for training compute and memory, worked beside the exact step.

Three published rules: 16 bytes per parameter for training with Adam, 6N FLOPs per training token,
and Korthikanti et al.'s activation bytes per layer. Each is evaluated on the cards content/choices.yaml
names (``compute-errata``) at b = 32, s = 512, and set beside the exact step of ``counting.compute``
(checked against torch in tests/test_compute.py), and every difference is taken apart from the
declarations themselves: the products a module or an op declares, the tensors it keeps and their
element types. Words are content (``content/<language>/errata.yaml``, section ``compute``); the
errata page lists these after the parameter errata (``generator/site/pages/errata.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from generator.analysis import thumb_rules
from generator.analysis.choices import load_choices
from generator.analysis.thumb_rules import ADAM_BYTES, FORWARD_FLOPS, TRAINING_FLOPS
from generator.counting.compute import BlockCompute, Compute
from generator.counting.expr import Add, Expr, Mul, Num, Pow, Var
from generator.counting.poly import Poly, total
from generator.counting.step_totals import StepTotals
from generator.site import content
from generator.site.comparison_step import BATCH, SEQ, compute_of
from generator.site.content import Text
from generator.site.erratum import Source, source_of
from generator.site.formats import percent, times
from generator.site.page import LANGUAGE
from generator.site.views import Summary

MODELS = load_choices().compute_errata
N, s, b, H, A = (Var(n) for n in ("N", "s", "b", "H", "A"))
# The published formulas (analysis/thumb_rules.py), as their sources write them.
SIXTEEN_N = Mul((Num(ADAM_BYTES), N), "·")
SIX_N = Mul((Num(TRAINING_FLOPS), N), "·")
TWO_N = Mul((Num(FORWARD_FLOPS), N), "·")
KORTHIKANTI_LINEAR = Mul((Num(thumb_rules.LINEAR_BYTES), s, b, H), "·")
KORTHIKANTI_SQUARE = Mul((Num(thumb_rules.SQUARE_BYTES), A, Pow(s, 2), b), "·")


@dataclass(frozen=True)
class ComputeRow:
    """One line of a worked rule: its label, its formula when it has one, and its figure for each model."""

    key: str  # the row's anchor on the page is <erratum>-<key>
    label: str
    formula: Expr | None
    values: tuple[Fraction, ...]
    kind: str = "part"  # "published", "part" (a term of the difference) or "exact"


@dataclass(frozen=True)
class ThumbErratum:
    """A rule of thumb for compute or memory, worked on some models at one (b, s)."""

    id: str
    title: str
    claim: str
    diverges: str
    sources: tuple[Source, ...]
    models: tuple[Summary, ...]
    unit: str  # "bytes" or "flops": how the page writes the numbers
    rows: tuple[ComputeRow, ...]
    verdict: str
    batch: int = BATCH
    seq: int = SEQ


@dataclass(frozen=True)
class ThumbSection:
    """The errata page's part on compute and memory: its words and its errata."""

    heading: str
    lede: str
    step_column: str
    errata: tuple[ThumbErratum, ...]


def work_thumb_errata(models: Sequence[Summary], language: str = LANGUAGE) -> ThumbSection | None:
    """The compute errata, when their models are in the catalog."""
    by_id = {m.id: m for m in models}
    if not all(key in by_id for key in MODELS):
        return None
    chosen = tuple(by_id[key] for key in MODELS)
    found = [compute_of(m.card) for m in chosen]
    computes = tuple(c for c in found if c is not None)
    if len(computes) < len(chosen):
        return None
    text = content.load("errata", language).section("compute")
    titles = {"base": chosen[0].card.title, "large": chosen[1].card.title, "batch": BATCH, "seq": SEQ}
    columns = text.section("columns")
    return ThumbSection(
        text("heading"),
        text("lede", **titles),
        columns("step"),
        tuple(build(text.section(key), chosen, computes) for key, build in BUILDERS),
    )


def _sources(t: Text, keys: tuple[str, ...]) -> tuple[Source, ...]:
    source = t.root.section("sources")
    return tuple(source_of(source.section(k)) for k in keys)


def _erratum(
    t: Text,
    models: tuple[Summary, ...],
    unit: str,
    rows: tuple[ComputeRow, ...],
    sources: tuple[str, ...],
    **values: object,
) -> ThumbErratum:
    words = {"batch": BATCH, "seq": SEQ, "base": models[0].card.title, "large": models[1].card.title, **values}
    return ThumbErratum(
        t.key,
        t("title", **words),
        t("claim", **words),
        t("diverges", **words),
        _sources(t, sources),
        models,
        unit,
        rows,
        t("verdict", **words),
    )


def _row(t: Text, key: str, formula: Expr | None, values: Sequence[int | Fraction], kind: str = "part") -> ComputeRow:
    return ComputeRow(key, t.section("rows")(key), formula, tuple(Fraction(v) for v in values), kind)


def _rows(
    t: Text, rows: Mapping[str, Sequence[int | Fraction]], formulas: Mapping[str, Expr], kinds: Mapping[str, str]
) -> tuple[ComputeRow, ...]:
    """Rows in the order given, each with its published formula and its kind when it has them ("part" else)."""
    return tuple(_row(t, key, formulas.get(key), values, kinds.get(key, "part")) for key, values in rows.items())


def _step(compute: Compute) -> StepTotals:
    return compute.at(BATCH, SEQ)


def _point(compute: Compute) -> dict[str, int]:
    return {**compute.values, "b": BATCH, "s": SEQ}


def _square_part(poly: Poly) -> Poly:
    """The terms of a polynomial in which s enters squared: what attention's s × s grids keep."""
    return Poly(tuple((mono, coeff) for mono, coeff in poly.terms if dict(mono).get("s", 0) >= 2))


# 16 bytes per parameter ------------------------------------------------------------------------


def sixteen_bytes(t: Text, models: tuple[Summary, ...], computes: tuple[Compute, ...]) -> ThumbErratum:
    """Adam in mixed precision as 16 bytes per parameter: the model state, without the activations."""
    steps = [_step(c) for c in computes]
    published = [ADAM_BYTES * m.total for m in models]
    state = [f.training_memory["bf16_mixed"] - f.activations["bf16"] for f in steps]
    activations = [f.activations["bf16"] for f in steps]
    square = [_square_part(c.activations("bf16")).evaluate(_point(c)) for c in computes]
    memory = [f.training_memory["bf16_mixed"] for f in steps]
    rows = (
        _row(t, "published", SIXTEEN_N, published, "published"),
        _row(t, "state", None, state),
        _row(t, "activations", None, activations),
        _row(t, "square", None, square),
        _row(t, "memory", None, memory, "exact"),
        _row(t, "fp32", None, [f.training_memory["fp32"] for f in steps], "exact"),
    )
    return _erratum(
        t,
        models,
        "bytes",
        rows,
        ("zero", "site-memory"),
        base_times=times(Fraction(memory[0], published[0])),
        large_times=times(Fraction(memory[1], published[1])),
        large_share=percent(Fraction(activations[1], memory[1])),
    )


# 6N FLOPs per training token ----------------------------------------------------------------------


def _products(block: BlockCompute, modules: bool) -> tuple[Poly, Poly]:
    """Forward and backward FLOPs of one instance's modules (products with weights) or ops (between activations).

    ``compute._block_modules`` lists a block's modules first, then its ops."""
    count = len(block.block.modules)
    chosen = block.modules[:count] if modules else block.modules[count:]
    return total(st.forward for st in chosen), total(st.backward for st in chosen)


def six_n(t: Text, models: tuple[Summary, ...], computes: tuple[Compute, ...]) -> ThumbErratum:
    """Training FLOPs per token as 6N: two per weight forward, four backward, for every parameter."""
    rows: dict[str, list[Fraction]] = {}
    for model, compute in zip(models, computes, strict=True):
        # The rows add up: 6N, less the parameters in no product, plus the two corrections, is the exact figure.
        point, tokens = _point(compute), BATCH * SEQ
        one = {**point, "b": 1, "s": 1}
        weights, modules, ops = Fraction(0), Fraction(0), Fraction(0)
        for block in compute.blocks:
            forward, backward = _products(block, modules=True)
            copies = block.copies.evaluate(point)
            # At b = s = 1 a product with a weight is 2·n·k: twice the weights it reads.
            weights += Fraction(forward.evaluate(one) * copies, 2)
            modules += Fraction((forward + backward).evaluate(point) * copies, tokens)
            op_forward, op_backward = _products(block, modules=False)
            ops += Fraction((op_forward + op_backward).evaluate(point) * copies, tokens)
        step = _step(compute)
        exact = Fraction(step.forward + step.backward, tokens)
        for key, value in (
            ("published", TRAINING_FLOPS * Fraction(model.total)),
            ("no-product", -TRAINING_FLOPS * (model.total - weights)),
            ("once-per-sequence", modules - TRAINING_FLOPS * weights),
            ("attention", ops),
            ("exact", exact),
            ("forward-published", FORWARD_FLOPS * Fraction(model.total)),
            ("forward", Fraction(step.forward, tokens)),
            ("skipped", Fraction(2 * step.forward - step.backward, tokens)),
        ):
            rows.setdefault(key, []).append(value)
    built = _rows(
        t,
        rows,
        {"published": SIX_N, "forward-published": TWO_N},
        {"published": "published", "forward-published": "published", "exact": "exact", "forward": "exact"},
    )
    base, large = (Fraction(rows["exact"][i]) / rows["published"][i] for i in (0, 1))
    return _erratum(
        t,
        models,
        "flops",
        built,
        ("kaplan",),
        base_ratio=times(base),
        large_ratio=times(large),
    )


# Korthikanti et al.'s activation bytes per layer ---------------------------------------------------


def korthikanti(t: Text, models: tuple[Summary, ...], computes: tuple[Compute, ...]) -> ThumbErratum:
    """34·s·b·h + 5·a·s²·b bytes per layer, against what one encoder layer of the model keeps in bf16."""
    rows: dict[str, list[int]] = {}
    for model, compute in zip(models, computes, strict=True):
        point = _point(compute)
        gap = thumb_rules.find_layer_gap(compute)
        if gap is None:
            raise ValueError(f"content/choices.yaml: compute-errata: {model.card.id} has no repeated encoder layer")
        exact, masks = gap.exact, gap.masks
        linear = thumb_rules.KORTHIKANTI_LINEAR.evaluate(point)
        square = thumb_rules.KORTHIKANTI_SQUARE.evaluate(point)
        exact_value = exact.evaluate(point)
        for key, value in (
            ("published", linear + square),
            ("published-square", square),
            ("exact", exact_value),
            ("exact-square", _square_part(exact).evaluate(point)),
            ("masks", masks.evaluate(point)),
            ("masks-square", _square_part(masks).evaluate(point)),
            ("statistics", gap.statistics.evaluate(point)),
            ("rest", gap.rest.evaluate(point)),
        ):
            rows.setdefault(key, []).append(value)
    built = _rows(
        t,
        rows,
        {"published": Add((KORTHIKANTI_LINEAR, KORTHIKANTI_SQUARE)), "published-square": KORTHIKANTI_SQUARE},
        {"published": "published", "exact": "exact"},
    )
    return _erratum(
        t,
        models,
        "bytes",
        built,
        ("korthikanti",),
        rest_base=rows["rest"][0],
        rest_large=rows["rest"][1],
    )


BUILDERS: Sequence[tuple[str, Callable[[Text, tuple[Summary, ...], tuple[Compute, ...]], ThumbErratum]]] = (
    ("sixteen-bytes-per-parameter", sixteen_bytes),
    ("six-n-flops-per-token", six_n),
    ("korthikanti-activations", korthikanti),
)
