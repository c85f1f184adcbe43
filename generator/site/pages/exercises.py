"""The exercises page: textbook questions on a model's size, each answered by a model page.

Each exercise is a card in models/ (``exercise-*``); its model page holds the full worked answer
(derivation, subtotals, every tensor). This page asks the question in its own words, states the
answer read from that card's inventory, and adds the few lines a page of one model cannot show:
the comparison with the released vocabulary, the head count that does not matter, the classifier
alone, and a Keras implementation's layers mapped onto transformers' tensors. Which card each
exercise works, and which released card it is set beside, are choices (content/choices.yaml).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from generator.analysis.choices import load_choices
from generator.analysis.erratum_methods import Candidate, candidates
from generator.analysis.lora_slips import lora_slips
from generator.cards.problems import InputError, Location, Problem
from generator.counting.architecture import Kind
from generator.counting.expr import Add, Expr, Mul, Num, Paren, Var, poly_expr
from generator.counting.methods import Method, Tuning, groups
from generator.counting.poly import Poly
from generator.site import content, typography
from generator.site.content import Text
from generator.site.erratum import erratum_id, printed_figures, titles
from generator.site.page import LANGUAGE, Page, guide_page
from generator.site.pages import errata
from generator.site.views import Details, Model, Summary

ORDER = ("V", "P", "T", "H", "I", "L", "A", "C")


@dataclass(frozen=True)
class Line:
    """One extra worked line: what, the formula, the same with numbers, and the count."""

    label: str
    formula: Expr | None
    count: int
    anchor: str | None = None  # a derivation line on the exercise's model page


@dataclass(frozen=True)
class KerasLayer:
    """A layer of the Keras implementation's model.summary(), the transformers tensors it holds, and their count."""

    layer: str
    tensors: tuple[str, ...]
    count: int


@dataclass(frozen=True)
class Exercise:
    id: str
    title: str
    question: str
    answer_label: str
    answer: int
    model: Model
    lines: tuple[Line, ...] = ()
    note: str = ""
    keras: tuple[KerasLayer, ...] = ()
    keras_repeat: int = 0
    compare: tuple[Line, ...] = ()  # beside another card (the released vocabulary)
    compare_caption: str = ""
    keras_words: Mapping[str, str] = dataclasses.field(default_factory=dict)  # the layers table's words
    part: tuple[str, int] | None = None  # a figure the question asks for on the way, and what it is
    check: str = "{}"  # what the "check your answer" box compares a number with, as JSON (static/check.js)
    slips: tuple[Line, ...] = ()  # the usual slips and their figures, where the errata's methods do not apply


PATH = "exercises/index.html"


def pages(models: Sequence[Summary], language: str = LANGUAGE) -> list[Page]:
    """The exercises page; its sentences are content, in content/<language>/exercises.yaml by exercise id."""
    text = content.load("exercises", language)
    ids = {model.id for model in models}
    if not any(need in ids for _, need in BUILDERS):
        return []

    def context() -> dict[str, object]:  # worked where the page is rendered: it counts its cards again
        named, printed = titles(errata.BUILDERS, models, language), printed_figures(errata.BUILDERS, models)
        return {
            "exercises": tuple(
                dataclasses.replace(x, check=check_data(x, named, printed)) for x in worked(models, language)
            ),
            "check": check_texts(text.section("check")),
            "check_hint": text.section("check")("close"),
            "heading": text.section("page").html("heading"),
            "lede": text.section("page").html("lede"),
        }

    return [guide_page(PATH, "exercises.html", text.section("page"), context, shows=shown())]


def worked(models: Sequence[Summary], language: str = LANGUAGE) -> tuple[Exercise, ...]:
    """Every exercise whose card is in ``models``, worked, without the numbers its answer box checks against
    (the page adds them: ``check_data``; the model pages link to the exercises by their titles alone)."""
    text = content.load("exercises", language)
    by_id = Details(models)
    return tuple(build(text, by_id[need], by_id) for build, need in BUILDERS if need in by_id)


def shown() -> tuple[str, ...]:
    """The cards the exercises page reads (for the build cache; tests/test_cache.py holds it to what
    a rendering reads): each exercise's card, the released models they are set beside, and the
    errata's cards, whose published figures the answer box knows."""
    own = (need for _, need in BUILDERS)
    return tuple(dict.fromkeys([*own, *COMPARED, *errata.shown()]))


def check_data(exercise: Exercise, titles: Mapping[str, str], printed: Sequence[tuple[str, Summary, int]]) -> str:
    """The numbers a reader's answer is checked against: the answer, and what each published mistake gives.

    Every mistake of ``generator/analysis/erratum_methods.py`` is evaluated on the exercise's card here, at
    build time; an erratum worked on this very card adds its figure as the source printed it.
    The script only compares numbers (static/check.js). An exercise with slips of its own (LoRA's)
    is checked against those alone: the errata's methods count a whole model, not what a method trains.
    """
    if exercise.slips:
        mistakes = [{"value": str(s.count), "said": s.label} for s in exercise.slips]
        return json.dumps(
            {"answer": str(exercise.answer), "whole": None, "part": None, "mistakes": mistakes},
            ensure_ascii=False,
            separators=(",", ":"),
        )
    found = list(candidates(exercise.model.inventory))
    found += [Candidate(e, figure, printed=True) for e, card, figure in printed if card.id == exercise.model.id]
    return json.dumps(
        {
            "answer": str(exercise.answer),
            "whole": str(exercise.model.total) if exercise.model.total != exercise.answer else None,
            "part": {"value": str(exercise.part[1]), "what": exercise.part[0]} if exercise.part else None,
            "mistakes": [
                {"value": str(c.value), "erratum": c.erratum, "title": titles[c.erratum], "printed": c.printed}
                for c in found
                if c.erratum in titles and c.value != exercise.answer
            ],
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


def check_texts(t: Text) -> str:
    """The check box's sentences for the script, as JSON; {value} and the like are filled in there."""
    keys = (*CHECK_TEXTS, *SLIP_TEXTS)
    return json.dumps({key: t.template(key) for key in keys}, ensure_ascii=False, separators=(",", ":"))


# The sentences static/check.js shows, keyed as in content/<language>/exercises.yaml: check.
CHECK_TEXTS = ("empty", "unreadable", "exact", "rounded", "whole", "part", "mistake", "printed", "none")
# The sentence for an exercise's own slips (LoRA's), which only this page's boxes show.
SLIP_TEXTS = ("slip",)


def _exercise(
    text: Text,
    t: Text,
    model: Model,
    answer: int,
    lines: tuple[Line, ...],
    values: Mapping[str, object],
    exercise_id: str | None = None,
    answer_label: str | None = None,
    **more: Any,
) -> Exercise:
    """An exercise with its title, question and note from the content, ``values`` filled into them."""
    return Exercise(
        exercise_id or t.key,
        t("title", **values),
        t("question", **values),
        answer_label or text.section("page")("answer"),
        answer,
        model,
        lines,
        t("note", **values),
        **more,
    )


def _line(model: Model, block: str, key: str) -> Line:
    derivation = next(b for b in model.derivation.blocks if b.block.key == block)
    line = next(s for s in derivation.lines if s.key == key)  # by key: the label is the build language's
    label = derivation.block.title + typography.mark(model.card.family.language, "colon") + line.label
    return Line(label, line.symbolic, line.value, f"d-{block}-{key}")


def _block(model: Model, block: str) -> Line:
    derivation = next(b for b in model.derivation.blocks if b.block.key == block)
    if derivation.block.repeat:
        formula: Expr = derivation.subtotal_expression or derivation.expression
        return Line(f"{derivation.block.title} × {derivation.repeat}", formula, derivation.subtotal, f"d-{block}")
    return Line(derivation.block.title, derivation.expression, derivation.subtotal, f"d-{block}")


def vocabulary_30000(text: Text, model: Model, by_id: Mapping[str, Model], base: str) -> Exercise:
    """A textbook's round vocabulary, set beside the released one of ``base`` (a card id)."""
    values = model.inventory.values
    t = text.section("exercises").section(erratum_id(vocabulary_30000))
    compare: tuple[Line, ...] = ()
    released = by_id.get(base)
    if released is not None:
        v = released.inventory.values["V"]
        label = t.section("compare")
        table = _line(released, "embeddings", "token-embeddings")
        compare = (
            Line(label("table", released=v), table.formula, table.count),
            Line(label("total", released=v), released.derivation.closed_form, released.total),
            Line(
                label("difference", released=v, **values),
                Mul((Num(v - values["V"]), Var("H")), "×"),
                released.total - model.total,
            ),
        )
    lines = (
        _line(model, "embeddings", "token-embeddings"),
        _block(model, "embeddings"),
        _block(model, "layer"),
        _block(model, "pooler"),
    )
    caption = t.section("compare")("caption")
    return _exercise(text, t, model, model.total, lines, values, compare=compare, compare_caption=caption)


def forty_k_eight_layers(text: Text, model: Model, by_id: Mapping[str, Model]) -> Exercise:
    values = model.inventory.values
    t = text.section("exercises").section(erratum_id(forty_k_eight_layers))
    heads, width = values["A"], values["H"]
    head_size = width // heads
    split = Line(
        t.section("steps")("split", head_size=head_size, **values),
        Mul((Var("A"), Var("H"), Paren(Mul((Var("H"), Var("A")), "/"))), "·"),
        heads * width * head_size,
        "d-layer-heads",
    )
    lines = (
        _block(model, "embeddings"),
        _line(model, "layer", "query"),
        split,
        _block(model, "layer"),
        _block(model, "pooler"),
    )
    return _exercise(text, t, model, model.total, lines, values)


def classifier(text: Text, model: Model, by_id: Mapping[str, Model], base: str) -> Exercise:
    """A classifier on a released encoder (``base``, a card id); the content names it and the task."""
    values = model.inventory.values
    labels = values["C"]
    shared, own = (
        text.section("exercises").section("classifier"),
        text.section("exercises").section(f"classifier-{labels}"),
    )
    words = {"labels": labels, "encoder": own("encoder"), "task": own("task"), "kind": own("kind")}
    head = model.subtotals[Kind.HEAD]
    released = by_id.get(base)
    if released is not None and released.total != model.total - head:
        # The exercise's words name the released encoder; an edited base card makes them untrue.
        found = f"{model.total - head:,} parameters under the classifier, and {base} has {released.total:,}"
        raise InputError([Problem(Location(model.card.path), "config", f"expected {base}'s encoder, found {found}")])
    lines = (
        _line(model, "classifier", "classifier"),
        Line(shared.section("steps")("below", **words), None, model.total - head, "d-embeddings"),
    )
    return _exercise(text, shared, model, head, lines, words, exercise_id=own.key, answer_label=shared("answer"))


# A pre-training head's backbone tensors sit under the base model's prefix (transformers' base_model_prefix).
BACKBONE = r"[a-z_]+\."
KERAS_LAYERS = (
    ("Embedding-Token", (rf"{BACKBONE}embeddings\.word_embeddings\.weight",)),
    ("Embedding-Segment", (rf"{BACKBONE}embeddings\.token_type_embeddings\.weight",)),
    ("Embedding-Position", (rf"{BACKBONE}embeddings\.position_embeddings\.weight",)),
    ("Embedding-Norm", (rf"{BACKBONE}embeddings\.LayerNorm\.(weight|bias)",)),
    (
        "Encoder-1-MultiHeadSelfAttention",
        (rf"{BACKBONE}encoder\.layer\.0\.attention\.(self\.(query|key|value)|output\.dense)\.(weight|bias)",),
    ),
    (
        "Encoder-1-MultiHeadSelfAttention-Norm",
        (rf"{BACKBONE}encoder\.layer\.0\.attention\.output\.LayerNorm\.(weight|bias)",),
    ),
    ("Encoder-1-FeedForward", (rf"{BACKBONE}encoder\.layer\.0\.(intermediate|output)\.dense\.(weight|bias)",)),
    ("Encoder-1-FeedForward-Norm", (rf"{BACKBONE}encoder\.layer\.0\.output\.LayerNorm\.(weight|bias)",)),
    ("MLM-Dense", (r"cls\.predictions\.transform\.dense\.(weight|bias)",)),
    ("MLM-Norm", (r"cls\.predictions\.transform\.LayerNorm\.(weight|bias)",)),
    ("MLM-Sim", (r"cls\.predictions\.bias",)),
    ("NSP-Dense", (rf"{BACKBONE}pooler\.dense\.(weight|bias)",)),
    ("NSP", (r"cls\.seq_relationship\.(weight|bias)",)),
)


def keras_layers(model: Model) -> tuple[tuple[KerasLayer, ...], int]:
    """The Keras implementation's layers (encoder layer 1 standing for all) with the transformers tensors each holds.

    Every counted tensor of the model must belong to exactly one keras layer once the encoder
    layer is repeated: if the mapping missed one or took one twice, the build stops.
    """
    layers = []
    claimed: list[str] = []
    for name, patterns in KERAS_LAYERS:
        tensors = tuple(t for t in model.inventory.tensors if any(re.fullmatch(p, t.name) for p in patterns))
        layers.append(KerasLayer(name, tuple(t.name for t in tensors), sum(t.count for t in tensors)))
        claimed.extend(t.name for t in tensors)
    repeat = next(b.repeat for b in model.derivation.blocks if b.block.key == "layer")
    per_layer = sum(k.count for k in layers if k.layer.startswith("Encoder-"))
    total = sum(k.count for k in layers) + (repeat - 1) * per_layer
    first_layer = sum(1 for t in model.inventory.tensors if ".layer.0." in t.name)
    if (
        total != model.total
        or len(set(claimed)) != len(claimed)
        or len(claimed) != len(model.inventory.tensors) - (repeat - 1) * first_layer
    ):
        raise ValueError(f"the Keras layers' mapping does not cover {model.id}'s tensors exactly once")
    return tuple(layers), repeat


def keras_bert(text: Text, model: Model, by_id: Mapping[str, Model]) -> Exercise:
    values = model.inventory.values
    t = text.section("exercises").section(erratum_id(keras_bert))
    label = t.section("steps")
    layers, repeat = keras_layers(model)
    attention = next(k for k in layers if k.layer == "Encoder-1-MultiHeadSelfAttention")
    h = Poly.symbol("H")
    lines = (
        Line(
            label("attention"),
            Mul((Num(4), Paren(poly_expr(h * h + h, ORDER)))),
            attention.count,
            "d-layer-query",
        ),
        dataclasses.replace(
            _line(model, "layer", "attention-layernorm"),
            label=label("norm"),
        ),
    )
    part = (t("part"), attention.count)  # the question's first half: the attention layer's figure
    table = t.section("table")
    words = {
        "label": table("label"),
        "caption": table.html("caption", class_name=model.inventory.class_name, repeat=repeat),
        "layer": table("layer"),
    }
    more = {"keras": layers, "keras_repeat": repeat, "keras_words": words, "part": part}
    return _exercise(text, t, model, model.total, lines, values, None, None, **more)


# The LoRA exercise's question: the rank and the targets of Hu et al. 2021, table 2.
LORA = Tuning(Method.LORA, rank=8, targets=("query", "value"))


def lora_query_value(text: Text, model: Model, by_id: Mapping[str, Model]) -> Exercise:
    """What LoRA trains on a classifier: r·(in + out) for each adapted layer, and the classifier's copy."""
    t = text.section("exercises").section(erratum_id(lora_query_value))
    tuned, slipped = lora_slips(model.inventory, LORA)
    step = t.section("steps")
    lines = [
        Line(
            step("target", target=g.target, layers=len(g.modules)),
            Mul((Num(len(g.modules)), Num(LORA.rank), Paren(Add((Num(g.shape[1]), Num(g.shape[0]))))), "·"),
            g.added,
            "fine-tuning-lora-worked",
        )
        for g in groups(tuned)
    ]
    for name in tuned.saved:
        own = {x.name: x for x in model.inventory.tensors if x.name.startswith(f"{name}.")}
        weight, bias = own[f"{name}.weight"], own.get(f"{name}.bias")  # a saved classifier is a Linear layer
        out, n_in = weight.shape
        product = Mul((Num(n_in), Num(out)), "·")
        formula: Expr = Add((product, Num(out))) if bias is not None else product
        count = weight.count + (bias.count if bias is not None else 0)
        lines.append(Line(step("classifier", name=name), formula, count, "fine-tuning-lora-worked"))
    slips = tuple(Line(t.section("slips")(s.slip.value), None, s.value) for s in slipped)
    values = {**model.inventory.values, "rank": LORA.rank, "labels": model.inventory.values["C"]}
    more = {"slips": slips, "compare_caption": t.section("slips")("caption")}
    return _exercise(text, t, model, tuned.trainable, tuple(lines), values, None, t("answer"), **more)


# Each exercise's builder by its name, dashed: the key content/choices.yaml and exercises.yaml know it by.
BUILDS: dict[str, Callable[..., Exercise]] = {
    erratum_id(build): build
    for build in (vocabulary_30000, forty_k_eight_layers, classifier, keras_bert, lora_query_value)
}


def _builders() -> tuple[tuple[Callable[..., Exercise], str], ...]:
    """(builder, card) for each exercise the choices list, its released card bound as ``base``."""
    found: list[tuple[Callable[..., Exercise], str]] = []
    for choice in load_choices().exercises:
        if choice.builder not in BUILDS:
            known, name = ", ".join(BUILDS), choice.builder
            raise ValueError(f"content/choices.yaml: exercises: expected a builder of {known}, found {name!r}")
        build: Callable[..., Exercise] = BUILDS[choice.builder]
        found.append((functools.partial(build, base=choice.base) if choice.base else build, choice.card))
    return tuple(found)


BUILDERS = _builders()
# The released models the exercises set their cards beside.
COMPARED = tuple(dict.fromkeys(c.base for c in load_choices().exercises if c.base))
