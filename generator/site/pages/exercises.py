"""The exercises page: textbook questions on BERT's size, each answered by a model page.

Each exercise is a card in models/ (``exercise-*``); its model page holds the full worked answer
(derivation, subtotals, every tensor). This page asks the question in its own words, states the
answer read from that card's inventory, and adds the few steps a page of one model cannot show:
the comparison with the released vocabulary, the head count that does not matter, the classifier
alone, and keras-bert's layers mapped onto transformers' tensors.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from generator.counting.architecture import Kind
from generator.counting.expr import Expr, Mul, Num, Paren, Var, poly_expr
from generator.counting.poly import Poly
from generator.site.page import SITE_TITLE, Page
from generator.site.views import Details, Model, Summary

ORDER = ("V", "P", "T", "H", "I", "L", "A", "C")


@dataclass(frozen=True)
class Step:
    """One extra worked step: what, the formula, the same with numbers, and the count."""

    label: str
    formula: Expr | None
    count: int
    anchor: str | None = None  # a derivation step on the exercise's model page


@dataclass(frozen=True)
class KerasLayer:
    """A keras-bert layer of model.summary(), the transformers tensors it holds, and their count."""

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
    steps: tuple[Step, ...] = ()
    note: str = ""
    keras: tuple[KerasLayer, ...] = ()
    keras_repeat: int = 0
    compare: tuple[Step, ...] = ()  # beside another card (the released vocabulary)


def pages(models: Sequence[Summary]) -> list[Page]:
    by_id = Details(models)
    exercises = [build(by_id[need], by_id) for build, need in BUILDERS if need in by_id]
    if not exercises:
        return []
    return [
        Page(
            "exercises/index.html",
            "exercises.html",
            f"Exercises: BERT's size, worked · {SITE_TITLE}",
            "Textbook questions on BERT's parameter count, each with the full worked answer.",
            {"exercises": tuple(exercises)},
            guide="textbook questions on BERT's size (a round vocabulary, an 8-layer 8-head BERT, classifiers on "
            "[CLS], keras-bert's summary), each with its full worked answer.",
        )
    ]


def _step(model: Model, block: str, label: str) -> Step:
    derivation = next(b for b in model.derivation.blocks if b.block.key == block)
    step = next(s for s in derivation.steps if s.label == label)
    return Step(f"{derivation.block.title}: {label}", step.symbolic, step.value, f"d-{block}-{_slug(label)}")


def _block(model: Model, block: str) -> Step:
    derivation = next(b for b in model.derivation.blocks if b.block.key == block)
    if derivation.block.repeat:
        formula: Expr = derivation.subtotal_expression or derivation.expression
        return Step(f"{derivation.block.title} × {derivation.repeat}", formula, derivation.subtotal, f"d-{block}")
    return Step(derivation.block.title, derivation.expression, derivation.subtotal, f"d-{block}")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def vocabulary(model: Model, by_id: Mapping[str, Model]) -> Exercise:
    values = model.inventory.values
    compare: tuple[Step, ...] = ()
    released = by_id.get("bert-base-uncased")
    if released is not None:
        v = released.inventory.values["V"]
        table = _step(released, "embeddings", "token embeddings")
        compare = (
            Step(f"Released BERT-Base (V = {v:,}): token embeddings", table.formula, table.count),
            Step(f"Released BERT-Base (V = {v:,}): total", released.derivation.closed_form, released.total),
            Step(
                f"Difference: ({v:,} − {values['V']:,}) × H",
                Mul((Num(v - values["V"]), Var("H")), "×"),
                released.total - model.total,
            ),
        )
    steps = (
        _step(model, "embeddings", "token embeddings"),
        _block(model, "embeddings"),
        _block(model, "layer"),
        _block(model, "pooler"),
    )
    return Exercise(
        "vocabulary-30000",
        f"BERT-Base with a vocabulary of {values['V']:,}",
        f"Take BERT-Base (L = {values['L']}, H = {values['H']:,}, A = {values['A']}, a feed-forward size of "
        f"{values['I']:,}, {values['P']} positions, {values['T']} segments) but give it a vocabulary of "
        f"{values['V']:,} tokens. How many parameters does the bare encoder with its pooler have?",
        "Parameters",
        model.total,
        model,
        steps,
        "Only the token table depends on the vocabulary; every other step is BERT-Base's, so the "
        "difference from the released model is the missing rows of the token table.",
        compare=compare,
    )


def forty_k(model: Model, by_id: Mapping[str, Model]) -> Exercise:
    values = model.inventory.values
    heads, width = values["A"], values["H"]
    head_size = width // heads
    split = Step(
        f"One projection split into A = {heads} heads of H/A = {head_size}",
        Mul((Var("A"), Var("H"), Paren(Mul((Var("H"), Var("A")), "/"))), "·"),
        heads * width * head_size,
        "d-layer-heads",
    )
    steps = (
        _block(model, "embeddings"),
        _step(model, "layer", "query"),
        split,
        _block(model, "layer"),
        _block(model, "pooler"),
    )
    return Exercise(
        "forty-k-eight-layers",
        f"A {values['V']:,}-token, {values['L']}-layer, {heads}-head BERT",
        f"A BERT has a vocabulary of {values['V']:,} tokens, {values['L']} encoder layers and {heads} attention "
        f"heads, hidden size {width:,}, feed-forward size {values['I']:,}, {values['P']} positions and "
        f"{values['T']} segments. How many parameters does it have?",
        "Parameters",
        model.total,
        model,
        steps,
        "The number of heads does not enter the count: the heads of a projection together hold one "
        "H × H matrix, whatever A is. A published answer that multiplies by the heads is worked "
        "through on the errata page.",
    )


def classifier(model: Model, by_id: Mapping[str, Model], base: str, encoder: str) -> Exercise:
    """A classifier on a released encoder (``base``, a card id), which ``encoder`` names in the text."""
    values = model.inventory.values
    labels = values["C"]
    head = model.subtotals[Kind.HEAD]
    released = by_id.get(base)
    if released is not None and released.total != model.total - head:
        raise ValueError(f"{model.id}: the encoder under the classifier is not {base} tensor for tensor")
    steps = (
        _step(model, "classifier", "classifier"),
        Step(f"Everything below the classifier ({encoder} with its pooler)", None, model.total - head, "d-embeddings"),
    )
    task, kind = ("topics", "topic classifier") if labels > 2 else ("languages", "language identifier")
    return Exercise(
        f"classifier-{labels}",
        f"A {labels}-class {kind} on {encoder}'s [CLS]",
        f"Fine-tune {encoder} to tell {labels} {task} apart from its [CLS] representation. How many "
        "task-specific parameters does the classifier add, and how many does the whole model have?",
        "Task-specific parameters",
        head,
        model,
        steps,
        "The classifier is one linear layer from the pooled [CLS] vector to one score per class: "
        "H × C weights and C biases. The pooler under it was pre-trained with BERT, so it is not new.",
    )


KERAS_LAYERS = (
    ("Embedding-Token", (r"bert\.embeddings\.word_embeddings\.weight",)),
    ("Embedding-Segment", (r"bert\.embeddings\.token_type_embeddings\.weight",)),
    ("Embedding-Position", (r"bert\.embeddings\.position_embeddings\.weight",)),
    ("Embedding-Norm", (r"bert\.embeddings\.LayerNorm\.(weight|bias)",)),
    (
        "Encoder-1-MultiHeadSelfAttention",
        (r"bert\.encoder\.layer\.0\.attention\.(self\.(query|key|value)|output\.dense)\.(weight|bias)",),
    ),
    (
        "Encoder-1-MultiHeadSelfAttention-Norm",
        (r"bert\.encoder\.layer\.0\.attention\.output\.LayerNorm\.(weight|bias)",),
    ),
    ("Encoder-1-FeedForward", (r"bert\.encoder\.layer\.0\.(intermediate|output)\.dense\.(weight|bias)",)),
    ("Encoder-1-FeedForward-Norm", (r"bert\.encoder\.layer\.0\.output\.LayerNorm\.(weight|bias)",)),
    ("MLM-Dense", (r"cls\.predictions\.transform\.dense\.(weight|bias)",)),
    ("MLM-Norm", (r"cls\.predictions\.transform\.LayerNorm\.(weight|bias)",)),
    ("MLM-Sim", (r"cls\.predictions\.bias",)),
    ("NSP-Dense", (r"bert\.pooler\.dense\.(weight|bias)",)),
    ("NSP", (r"cls\.seq_relationship\.(weight|bias)",)),
)


def keras_layers(model: Model) -> tuple[tuple[KerasLayer, ...], int]:
    """keras-bert's layers (encoder layer 1 standing for all) with the transformers tensors each holds.

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
        raise ValueError(f"the keras-bert mapping does not cover {model.id}'s tensors exactly once")
    return tuple(layers), repeat


def keras_bert(model: Model, by_id: Mapping[str, Model]) -> Exercise:
    values = model.inventory.values
    layers, repeat = keras_layers(model)
    attention = next(k for k in layers if k.layer == "Encoder-1-MultiHeadSelfAttention")
    h = Poly.symbol("H")
    steps = (
        Step(
            "Encoder-1-MultiHeadSelfAttention: four H × H projections and their biases",
            Mul((Num(4), Paren(poly_expr(h * h + h, ORDER)))),
            attention.count,
            "d-layer-query",
        ),
        dataclasses.replace(
            _step(model, "layer", "attention LayerNorm"),
            label="Encoder-1-MultiHeadSelfAttention-Norm: the LayerNorm keras keeps apart",
        ),
    )
    return Exercise(
        "keras-bert",
        "keras-bert's model.summary(), layer by layer",
        f"keras-bert's get_model(token_num={values['V']}, head_num={values['A']}, transformer_num={values['L']}, "
        f"embed_dim={values['H']}, feed_forward_dim={values['I']}, pos_num={values['P']}) reports its figure for every "
        "multi-head self-attention layer. Where does that figure come from, and does the whole model count "
        f"the same as transformers' BertForPreTraining with a vocabulary of {values['V']:,}?",
        "Parameters",
        model.total,
        model,
        steps,
        "The attention layer holds query, key, value and output, each an H × H matrix with an "
        "H-vector of biases: 4(H² + H). keras-bert keeps the LayerNorm after it as a layer of its "
        "own, which transformers counts inside the attention block. Layer for layer the two models "
        "hold the same tensors, so the totals agree.",
        layers,
        repeat,
    )


BUILDERS = (
    (vocabulary, "exercise-bert-base-v30000"),
    (forty_k, "exercise-bert-40k-8l-8h"),
    (functools.partial(classifier, base="bert-base-uncased", encoder="BERT-Base"), "exercise-topic-classifier-5"),
    # Hindi needs a vocabulary that covers Devanagari and a cased tokenizer that keeps its marks (issue 10).
    (
        functools.partial(classifier, base="bert-base-multilingual-cased", encoder="multilingual cased BERT-Base"),
        "exercise-language-id-2",
    ),
    (keras_bert, "exercise-keras-bert-pretraining"),
)
