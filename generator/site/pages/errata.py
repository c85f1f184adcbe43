"""The errata page: derivations people publish, worked beside the exact count, step by step.

Each erratum evaluates the published method as a formula in the config's symbols on a card's
own numbers (the 40,000-token, 8-layer, 8-head BERT of an assignment; BERT-Base; ...) and puts
every step beside the exact step of the same card's derivation. Their numbers come from their
formula and the card's values, the exact ones from the inventory. What a source printed is kept
apart: a total as the card's claim records it, and a step's figure as the source writes it (each
with a comment saying where it stands), so that a slip of arithmetic shows where it was made.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from generator.cards.published import parse_figure
from generator.counting.architecture import Head
from generator.counting.derivation import BlockDerivation
from generator.counting.expr import Add, Expr, Mul, Num, Paren, Pow, Var, grouped_expr, poly_expr
from generator.counting.inventory import count_parameters
from generator.counting.poly import Poly
from generator.site.page import SITE_TITLE, Page
from generator.site.views import Details, Model, Summary

V, P, T, H, I, L, A = (Poly.symbol(s) for s in "VPTHILA")
ORDER = ("V", "U", "P", "T", "H", "I", "L", "A")
ZERO = Poly()


@dataclass(frozen=True)
class Source:
    """Where a derivation was published: the kind of source, what it is, and a link when public."""

    kind: str
    title: str
    url: str | None = None


@dataclass(frozen=True)
class Symbol:
    """A symbol the rows use: its name, the card's value and what it stands for."""

    name: str
    value: int
    meaning: str


@dataclass(frozen=True)
class Link:
    """A page of the site that bears on an erratum; ``path`` is relative to the site root."""

    text: str
    path: str


def _exact_figure(text: str | None) -> int | None:
    """A figure as a number when every digit is written out ("14,155,008"), else None ("110M")."""
    if text is None:
        return None
    parts = parse_figure(text)
    return parts[0].value if len(parts) == 1 and parts[0].exact else None


@dataclass(frozen=True)
class Row:
    """One step: the published formula and number beside the exact formula and number."""

    label: str
    theirs: Expr | None  # None: the step is not in the published derivation at all
    theirs_value: int  # the published formula evaluated on the card's values
    exact: Expr
    exact_value: int
    anchor: str | None = None  # the model page's derivation step, e.g. "d-layer-query"
    subtotal: bool = False
    printed: str | None = None  # the step's figure as the source prints it, when it prints one
    carried: int = 0  # how far off the printed figures are that this step's printed figure adds up

    @property
    def difference(self) -> int:
        return self.theirs_value - self.exact_value

    @property
    def printed_value(self) -> int | None:
        """The printed figure as a number, when it is written out in full ("14,155,008")."""
        return _exact_figure(self.printed)

    @property
    def off(self) -> int:
        """How far the printed figure is from the method's own value; 0 when nothing is printed."""
        printed = self.printed_value
        return 0 if printed is None else printed - self.theirs_value

    @property
    def slip(self) -> int:
        """The part of ``off`` made at this step, not carried from the figures it adds up."""
        return self.off - self.carried


@dataclass(frozen=True)
class Variant:
    """One way of counting the same checkpoint (for the pooler and heads erratum)."""

    label: str
    class_name: str
    count: int
    difference: int  # from the bare encoder with its pooler


@dataclass(frozen=True)
class Erratum:
    """A published derivation, worked beside the exact one."""

    id: str
    title: str
    claim: str  # what the derivation says, in this site's words
    diverges: str  # where it goes wrong, in words; the numbers are in the rows
    sources: tuple[Source, ...]
    model: Model  # the card whose page has the right count
    symbols: tuple[Symbol, ...]  # the config values the rows use, each with what it means
    rows: tuple[Row, ...]
    their_total: int | None
    printed: str | None = None  # the figure as the source prints it, from the card's claims
    variants: tuple[Variant, ...] = ()
    see_also: tuple[Link, ...] = ()
    method: str = "Published method, recomputed"  # what their_total is, as the verdict names it

    @property
    def printed_value(self) -> int | None:
        """The printed figure as a number, when it is exact ("218,671,424"); None otherwise."""
        return _exact_figure(self.printed)


def pages(models: Sequence[Summary]) -> list[Page]:
    """The errata page, with every erratum whose card is in the catalog."""
    by_id = Details(models)
    errata = []
    for build, needs in BUILDERS:
        if all(n in by_id for n in needs):
            errata.append(build(*(by_id[n] for n in needs)))
    if not errata:
        return []
    return [
        Page(
            "errata/index.html",
            "errata.html",
            f"Errata: common derivations checked · {SITE_TITLE}",
            "Parameter-count derivations people publish for BERT, worked step by step beside the exact count.",
            {"errata": tuple(errata)},
            guide="the derivations people publish and get wrong, worked step by step beside the exact count.",
        )
    ]


# Helpers: the card's own steps, as formula and value ------------------------------------------


def _block(model: Model, key: str) -> BlockDerivation:
    return next(b for b in model.derivation.blocks if b.block.key == key)


def _steps(model: Model, key: str, *labels: str) -> tuple[Poly, int]:
    """The summed formula and count of some steps of one block (one instance of a repeated block)."""
    steps = [s for s in _block(model, key).steps if s.label in labels]
    assert len(steps) == len(labels), (model.id, key, labels)
    formula = ZERO
    for step in steps:
        formula = formula + step.formula
    return formula, sum(s.value for s in steps)


def _row(
    model: Model,
    label: str,
    theirs: Poly | None,
    exact: tuple[Poly, int],
    anchor: str | None = None,
    printed: str | None = None,
) -> Row:
    values = model.inventory.values
    their_value = theirs.evaluate(values) if theirs is not None else 0
    return Row(
        label,
        poly_expr(theirs, ORDER) if theirs is not None else None,
        their_value,
        poly_expr(exact[0], ORDER),
        exact[1],
        anchor,
        printed=printed,
    )


def _subtotal(
    model: Model,
    label: str,
    theirs: Poly,
    exact: tuple[Poly, int],
    anchor: str | None = None,
    shown: tuple[Expr | None, Expr | None] = (None, None),
    printed: tuple[str | None, int] = (None, 0),
) -> Row:
    """A subtotal row; ``shown`` writes either formula grouped, (V + P + T)H + L(...), instead of expanded.

    ``printed`` is the source's figure for the subtotal and how far off the printed figures it adds up are.
    """
    row = dataclasses.replace(_row(model, label, theirs, exact, anchor, printed[0]), subtotal=True, carried=printed[1])
    return dataclasses.replace(row, theirs=shown[0] or row.theirs, exact=shown[1] or row.exact)


def _grouped(poly: Poly) -> Expr:
    return grouped_expr(poly, ORDER) or poly_expr(poly, ORDER)


def _per_layer(poly: Poly) -> Expr:
    return Mul((Var("L"), Paren(poly_expr(poly, ORDER))))


def _closed(model: Model) -> Expr:
    """The model's closed-form total, as its page writes it."""
    return model.derivation.closed_form


def _symbols(model: Model, names: str) -> tuple[Symbol, ...]:
    """The card's values of some of its family's symbols, with the meanings the family declares."""
    meanings = {s.name: s.meaning for s in model.card.family.symbols}
    return tuple(Symbol(n, model.inventory.values[n], meanings[n]) for n in names)


def _names(expr: Expr | None) -> set[str]:
    """The symbols a formula uses."""
    if expr is None or isinstance(expr, Num):
        return set()
    if isinstance(expr, Var):
        return {expr.name}
    if isinstance(expr, Pow):
        return _names(expr.base)
    if isinstance(expr, Paren):
        return _names(expr.inner)
    factors = expr.factors if isinstance(expr, Mul) else expr.terms
    return set().union(*(_names(f) for f in factors))


def _used_symbols(model: Model, rows: Sequence[Row], leave_out: str = "") -> tuple[Symbol, ...]:
    """Every symbol the rows' formulas use, in the family's order, so that none is left undefined."""
    used = set().union(*(_names(r.theirs) | _names(r.exact) for r in rows))
    order = "".join(s.name for s in model.card.family.symbols if s.name in used and s.name not in leave_out)
    return _symbols(model, order)


def _printed(model: Model, source_words: str) -> str | None:
    """The figure a source printed, as the card's claim from that source records it."""
    return next((c.figure for c in model.card.claims if source_words in c.source), None)


def _layer(model: Model) -> tuple[Poly, int]:
    block = _block(model, "layer")
    return block.formula, block.value


def _total(model: Model) -> tuple[Poly, int]:
    return model.derivation.formula, model.total


def _layers(model: Model, their_layer: Poly, printed: tuple[str, int]) -> Row:
    """All L encoder layers, as the source multiplies its per-layer figure out."""
    block = _block(model, "layer")
    row = _subtotal(
        model,
        f"All {model.inventory.values['L']} encoder layers",
        L * their_layer,
        (L * block.formula, block.subtotal),
        "d-layer",
        printed=printed,
    )
    return dataclasses.replace(row, theirs=_per_layer(their_layer), exact=_per_layer(block.formula))


# The errata --------------------------------------------------------------------------------------

ASSIGNMENT = Source("assignment answer", "a transformers course's model answer, question 1")
TEXTBOOK = Source("textbook-style worked solution", 'a course\'s "calculate the BERT parameters" challenge')
ISSUE_656 = Source(
    "GitHub issue",
    'google-research/bert issue 656, "How is the number of BERT model parameters calculated?"',
    "https://github.com/google-research/bert/issues/656",
)
QA_THREAD = Source(
    "Q&A thread",
    "Cross Validated question 435318, on the keras-bert attention layer",
    "https://stats.stackexchange.com/questions/435318/how-to-account-for-the-noof-parameters-in-the-multihead-self-attention-layer-of",
)
INTERVIEW = Source("interview notes", "a Chinese interview-preparation post on counting BERT's parameters")
# The exception to "heads never multiply the count": a head size set apart from H / A.
TRANSFORMER_HEADS = Link(
    "How the 2017 Transformer differs from BERT: heads of a fixed size",
    "models/transformer-base/index.html#differences",
)
HF_PR = Source(
    "pull request",
    "huggingface/transformers pull request 7575, correcting the documented sizes",
    "https://github.com/huggingface/transformers/pull/7575",
)


def _embedding_rows(model: Model, printed: str) -> tuple[Row, Row]:
    """The three tables, as both the published methods count them, then the LayerNorm they leave out."""
    return (
        _row(
            model,
            "Token, position and segment tables",
            (V + P + T) * H,
            _steps(model, "embeddings", "token embeddings", "position embeddings", "segment embeddings"),
            "d-embeddings",
            printed,
        ),
        _row(
            model,
            "Embedding LayerNorm",
            None,
            _steps(model, "embeddings", "embedding LayerNorm"),
            "d-embeddings-embedding-layernorm",
        ),
    )


def per_head_projections(model: Model) -> Erratum:
    """Query, key, value and output taken as H × H per head, times the number of heads."""
    their_attention = 3 * A * H * H + A * H * H
    their_layer = their_attention + 2 * H * I
    their_total = (V + P + T) * H + L * their_layer
    # The assignment's figures (question 1): "3 × (768 × 768) × 8 = 14,155,008", "768 × 768 × 8 =
    # 4,569,984", "Total Self-Attention Parameters: 18,725,992", "Total FFN Parameters: 4,718,592",
    # "23,444,584 × 8 = 187,556,672" and "≈ 31,114,752" for the three tables.
    tables, embedding_norm = _embedding_rows(model, printed="31,114,752")
    qkv = _row(
        model,
        "Query, key and value (one layer)",
        3 * A * H * H,
        _steps(model, "layer", "query", "key", "value"),
        "d-layer-query",
        "14,155,008",
    )
    output = _row(
        model,
        "Attention output (one layer)",
        A * H * H,
        _steps(model, "layer", "attention output"),
        "d-layer-attention-output",
        "4,569,984",
    )
    attention = _subtotal(
        model,
        "Attention block (one layer)",
        their_attention,
        _steps(model, "layer", "query", "key", "value", "attention output"),
        printed=("18,725,992", qkv.off + output.off),
    )
    feed_forward = _row(
        model,
        "Feed-forward (one layer)",
        2 * H * I,
        _steps(model, "layer", "feed-forward in", "feed-forward out"),
        "d-layer-feed-forward-in",
        "4,718,592",
    )
    layer = _subtotal(
        model,
        "One encoder layer",
        their_layer,
        _layer(model),
        "d-layer",
        printed=("23,444,584", attention.off + feed_forward.off),
    )
    layers = _layers(model, their_layer, ("187,556,672", model.inventory.values["L"] * layer.off))
    rows = (
        tables,
        embedding_norm,
        qkv,
        output,
        attention,
        feed_forward,
        _row(
            model,
            "Two LayerNorms (one layer)",
            None,
            _steps(model, "layer", "attention LayerNorm", "output LayerNorm"),
            "d-layer-attention-layernorm",
        ),
        layer,
        layers,
        _row(model, "Pooler", None, _steps(model, "pooler", "pooler dense"), "d-pooler"),
        _subtotal(
            model,
            "Total",
            their_total,
            _total(model),
            "d-total",
            (Add((_grouped((V + P + T) * H), _per_layer(their_layer))), _closed(model)),
            (_printed(model, "assignment"), tables.off + layers.off),
        ),
    )
    return Erratum(
        "per-head-projections",
        "Projections counted once per head",
        "Each attention head is given its own full-size query, key, value and output matrix, so "
        "every projection is multiplied by the number of heads; biases and LayerNorm are left out.",
        "A head projects the hidden vector to a slice of size H/A, not to a full H. The A slices of "
        "a projection together make one H × H matrix, so when each head is H/A wide, as in every "
        "BERT, the number of heads never multiplies the count. (Where the head size is set on its "
        "own, as in the 2017 Transformer's d_k, the heads do multiply it: see that model's page.) "
        "The printed answer also slips three times in its own arithmetic, as the rows show. The "
        "question of a Q&A thread makes the same per-head slip for query, key and value.",
        (ASSIGNMENT, QA_THREAD),
        model,
        _used_symbols(model, rows),
        rows,
        their_total.evaluate(model.inventory.values),
        _printed(model, "assignment"),
        see_also=(TRANSFORMER_HEADS,),
    )


def lha_product(model: Model) -> Erratum:
    """ "12 × 768 × 12 = 110M": the three headline numbers multiplied together."""
    values = model.inventory.values
    product = (L * H * A).evaluate(values)
    rows = (
        _subtotal(
            model,
            "The whole model",
            L * H * A,
            _total(model),
            "d-total",
            (Mul((Var("L"), Var("H"), Var("A")), "·"), _closed(model)),
            ("110M", 0),  # the issue quotes "12 * 768 * 12 = 110M"
        ),
        _row(
            model,
            "Embeddings",
            None,
            (_block(model, "embeddings").formula, _block(model, "embeddings").value),
            "d-embeddings",
        ),
        dataclasses.replace(
            _row(
                model,
                "Encoder layers",
                None,
                (L * _block(model, "layer").formula, _block(model, "layer").subtotal),
                "d-layer",
            ),
            exact=_per_layer(_block(model, "layer").formula),
        ),
        _row(model, "Pooler", None, (_block(model, "pooler").formula, _block(model, "pooler").value), "d-pooler"),
    )
    return Erratum(
        "lha-product",
        "Layers × width × heads",
        "The size of BERT-Base is the product of its three headline numbers: layers, hidden size and heads.",
        "A count is a sum of matrix sizes, and a weight matrix of a layer is H × H or H × I, so "
        "the count grows with the square of the width; the number of heads does not enter it. The "
        f"product of the three numbers is {product:,}, about {round(model.total / product):,} times too "
        "small; written as 110M, it only looks like the right size.",
        (ISSUE_656,),
        model,
        _used_symbols(model, rows),
        rows,
        product,
    )


def textbook_formula(model: Model) -> Erratum:
    """A worked solution that leaves out every bias and counts LayerNorm as 2H per layer."""
    their_layer = 3 * H * H + H * H + 2 * H * I + 2 * H
    their_total = (V + P + T) * H + L * their_layer + H * H
    # The worked example's figures: "30,000 · 768 + 512 · 768 + 2 · 768 = 23,685,120", "= 1,769,472 +
    # 589,824 + 4,718,592 + 1,536 = 7,079,424", "12 · 7,079,424 = 84,952,608" and "768^2 = 589,824".
    tables, embedding_norm = _embedding_rows(model, printed="23,685,120")
    layer = _subtotal(model, "One encoder layer", their_layer, _layer(model), "d-layer", printed=("7,079,424", 0))
    layers = _layers(model, their_layer, ("84,952,608", model.inventory.values["L"] * layer.off))
    pooler = _row(model, "Pooler", H * H, _steps(model, "pooler", "pooler dense"), "d-pooler", "589,824")
    rows = (
        tables,
        embedding_norm,
        _row(
            model,
            "Query, key and value (one layer)",
            3 * H * H,
            _steps(model, "layer", "query", "key", "value"),
            "d-layer-query",
            "1,769,472",
        ),
        _row(
            model,
            "Attention output (one layer)",
            H * H,
            _steps(model, "layer", "attention output"),
            "d-layer-attention-output",
            "589,824",
        ),
        _row(
            model,
            "Feed-forward (one layer)",
            2 * H * I,
            _steps(model, "layer", "feed-forward in", "feed-forward out"),
            "d-layer-feed-forward-in",
            "4,718,592",
        ),
        _row(
            model,
            "LayerNorms (one layer)",
            2 * H,
            _steps(model, "layer", "attention LayerNorm", "output LayerNorm"),
            "d-layer-attention-layernorm",
            "1,536",
        ),
        layer,
        layers,
        pooler,
        _subtotal(
            model,
            "Total",
            their_total,
            _total(model),
            "d-total",
            (Add((_grouped((V + P + T) * H), _per_layer(their_layer), poly_expr(H * H, ORDER))), _closed(model)),
            (_printed(model, "challenge"), tables.off + layers.off + pooler.off),
        ),
    )
    return Erratum(
        "textbook-formula",
        "Biases left out, LayerNorm halved",
        "A worked solution for BERT-Base with a 30,000-token vocabulary counts each weight matrix "
        "(with the per-head split done right) but no bias, gives each layer one LayerNorm's worth "
        "of parameters, forgets the LayerNorm after the embeddings, and leaves the pooler's bias out.",
        "Every linear layer has a bias with one entry per output: three of H for query, key and "
        "value, H for the attention output, I for the first feed-forward layer and H for the "
        "second. Each layer has two LayerNorms, each with a scale and a shift of H entries, so 4H, "
        "not 2H. Two of the printed products also slip: the embedding sum and the twelve layers. "
        "Its descriptions of two tables are swapped: under the heading of the segment embeddings "
        "it describes the position table (a row per position), and under that of the position "
        "embeddings the segment table (two rows). Its formula adds both, so no number changes.",
        (TEXTBOOK,),
        model,
        _used_symbols(model, rows),
        rows,
        their_total.evaluate(model.inventory.values),
        _printed(model, "challenge"),
    )


def layernorm_half(model: Model) -> Erratum:
    """LayerNorm as 2H per layer instead of 4H, and no LayerNorm after the embeddings."""
    exact_layer = _steps(model, "layer", "attention LayerNorm", "output LayerNorm")
    exact_embedding = _steps(model, "embeddings", "embedding LayerNorm")
    all_norms = (
        L * exact_layer[0] + exact_embedding[0],
        model.inventory.values["L"] * exact_layer[1] + exact_embedding[1],
    )
    rows = (
        _row(
            model,
            "Attention LayerNorm (one layer)",
            2 * H,
            _steps(model, "layer", "attention LayerNorm"),
            "d-layer-attention-layernorm",
        ),
        _row(
            model,
            "Output LayerNorm (one layer)",
            None,
            _steps(model, "layer", "output LayerNorm"),
            "d-layer-output-layernorm",
        ),
        _row(model, "Embedding LayerNorm", None, exact_embedding, "d-embeddings-embedding-layernorm"),
        _subtotal(model, "Every LayerNorm of the model", L * 2 * H, all_norms, shown=(None, _grouped(all_norms[0]))),
    )
    return Erratum(
        "layernorm-half",
        "LayerNorm counted as 2H per layer",
        "Each encoder layer has LayerNorm parameters of 2H, a scale and a shift, and that is all "
        "the LayerNorm in the model.",
        "A BERT layer normalizes twice: after the attention block and after the feed-forward "
        "block, each with its own scale and shift, so a layer holds 4H. One more LayerNorm follows "
        "the embeddings.",
        (TEXTBOOK,),
        model,
        _used_symbols(model, rows),
        rows,
        None,
    )


def mean_and_variance(model: Model) -> Erratum:
    """A LayerNorm taken as two numbers: a mean and a variance, or a scaling and an offset."""
    norms = 2 * L + 1  # two per layer and the embedding LayerNorm; checked against the steps below
    exact_layer = _steps(model, "layer", "attention LayerNorm", "output LayerNorm")
    exact_embedding = _steps(model, "embeddings", "embedding LayerNorm")
    values = model.inventory.values
    all_norms = (L * exact_layer[0] + exact_embedding[0], values["L"] * exact_layer[1] + exact_embedding[1])
    rows = (
        _row(
            model,
            "One LayerNorm",
            Poly.constant(2),
            _steps(model, "embeddings", "embedding LayerNorm"),
            "d-embeddings-embedding-layernorm",
        ),
        _subtotal(
            model,
            "Every LayerNorm of the model",
            2 * norms,
            all_norms,
            shown=(Mul((Num(2), Paren(poly_expr(norms, ORDER)))), _grouped(all_norms[0])),
        ),
    )
    return Erratum(
        "mean-and-variance",
        "A LayerNorm taken as two numbers",
        "A LayerNorm has two learnable parameters, so it can be ignored: a mean and a variance, say "
        "interview notes; a scaling and an offset, says a worked solution.",
        "The mean and the variance are computed from each token's vector every time the layer "
        "runs; nothing about them is stored. What a LayerNorm learns is a scale γ and a shift β, "
        "one entry per hidden unit each: 2H numbers, stored as weight and bias. The worked "
        "solution names the right two, but each is a vector of H numbers, not one number. They "
        "are small next to the matrices, but they are not two numbers.",
        (INTERVIEW, TEXTBOOK),
        model,
        _used_symbols(model, rows),
        rows,
        None,
    )


def vocabulary_30000(model: Model, rounded: Model) -> Erratum:
    """A round vocabulary (30,000) instead of the released one (30,522)."""
    theirs, released = rounded.inventory.values["V"], model.inventory.values["V"]
    rows = (
        Row(
            "Token embeddings",
            poly_expr(V * H, ORDER),
            _steps(rounded, "embeddings", "token embeddings")[1],
            poly_expr(V * H, ORDER),
            _steps(model, "embeddings", "token embeddings")[1],
            "d-embeddings-token-embeddings",
        ),
        Row("Total", _closed(rounded), rounded.total, _closed(model), model.total, "d-total", True),
    )
    return Erratum(
        "vocabulary-30000",
        f"A vocabulary of {theirs:,}",
        f"BERT-Base has a vocabulary of {theirs:,} tokens.",
        f"The released uncased English BERT-Base vocabulary has {released:,} entries; {theirs:,} is "
        "a round figure (and the size of ALBERT's vocabulary). Every entry is one row of H numbers "
        "in the token table, so the difference is the missing rows times H; with the masked-LM "
        "head the output bias adds one number per entry too.",
        (TEXTBOOK, QA_THREAD),
        model,
        (
            Symbol("V", theirs, "vocabulary size, as published"),
            Symbol("V", released, "vocabulary size, as released"),
            *_used_symbols(model, rows, leave_out="V"),
        ),
        rows,
        rounded.total,
    )


def _quotient(numerator: Expr, denominator: Expr) -> Expr:
    """A quotient as the sources write it, H / A; only displayed, since the counting never divides."""
    return Mul((numerator, denominator), "/")


def attention_over_heads(model: Model) -> Erratum:
    """The attention block as 3H²/A: a per-head sum divided by the heads twice, and W_O left out."""
    values = model.inventory.values
    heads = values["A"]
    weights = [model.inventory.tensor(f"encoder.layer.0.attention.self.{n}.weight") for n in ("query", "key", "value")]
    biases = [model.inventory.tensor(f"encoder.layer.0.attention.self.{n}.bias") for n in ("query", "key", "value")]
    weight_formula = weights[0].formula + weights[1].formula + weights[2].formula
    weight_count = sum(w.count for w in weights)
    one_head = Mul((Num(3), Paren(_quotient(Var("H"), Var("A"))), Var("H")), "·")
    simplified = _quotient(poly_expr(3 * H * H, ORDER), Var("A"))
    # The notes' simplification, evaluated: 3H² / A (exact here, since H is a multiple of A).
    their_value = 3 * values["H"] * values["H"] // heads
    block = _steps(model, "layer", "query", "key", "value", "attention output")
    rows = (
        Row("Query, key and value weights, one head", one_head, weight_count // heads, one_head, weight_count // heads),
        Row(
            "Query, key and value weights, all heads",
            simplified,
            their_value,
            poly_expr(weight_formula, ORDER),
            weight_count,
            "d-layer-query",
        ),
        Row(
            "Query, key and value biases",
            None,
            0,
            poly_expr(biases[0].formula + biases[1].formula + biases[2].formula, ORDER),
            sum(b.count for b in biases),
            "d-layer-query",
        ),
        _row(
            model, "Attention output W_O", None, _steps(model, "layer", "attention output"), "d-layer-attention-output"
        ),
        Row(
            "Attention block (one layer)", simplified, their_value, poly_expr(block[0], ORDER), block[1], subtotal=True
        ),
    )
    return Erratum(
        "attention-over-heads",
        "The attention block as 3H²/A",
        "Each head has query, key and value matrices of H × H/A; Q, K and V are the same, because "
        "BERT uses self-attention; so the heads together hold A × 3 × (H/A) × H, which simplifies "
        "to 3H²/A.",
        "The per-head shape is right, but A × 3 × (H/A) × H is 3H²: the A in front cancels the A "
        "under H, and dividing by A again leaves one head's share. Self-attention means that the "
        "queries, keys and values are all computed from the same input, not that one matrix serves "
        "for all three: they are three matrices, each with a bias of H. The output projection W_O, "
        "H² + H, is left out too; with it the block holds 4H² + 4H.",
        (INTERVIEW,),
        model,
        _used_symbols(model, rows),
        rows,
        None,
    )


def keras_bert_thread(model: Model) -> Erratum:
    """The keras-bert Q&A thread: per-head Q/K/V in the question, W_O per head and LayerNorm in an answer."""
    heads = Var("A")
    qkv = _steps(model, "layer", "query", "key", "value")
    rows = (
        dataclasses.replace(
            _row(
                model,
                "Query, key and value, in the question: full size, once per head",
                A * qkv[0],
                qkv,
                "d-layer-query",
            ),
            theirs=Mul((heads, Paren(poly_expr(qkv[0], ORDER)))),
        ),
        _row(
            model,
            "Attention output W_O, in the question: left out",
            None,
            _steps(model, "layer", "attention output"),
            "d-layer-attention-output",
        ),
        _row(
            model,
            "Attention output W_O, in the first answer: once per head",
            A * H * H + H,
            _steps(model, "layer", "attention output"),
            "d-layer-attention-output",
        ),
        _row(
            model,
            "LayerNorm, in the first answer: inside the attention layer",
            2 * H,
            (ZERO, 0),  # keras-bert's Encoder-1-MultiHeadSelfAttention-Norm is a layer of its own
            "d-layer-attention-layernorm",
        ),
        _subtotal(
            model,
            "keras-bert's attention layer, in the summary and the other two answers",
            4 * H * H + 4 * H,
            _steps(model, "layer", "query", "key", "value", "attention output"),
            printed=("2,362,368", 0),  # "there are 2,362,368 trainable parameters at each of the multi-head ..."
        ),
    )
    return Erratum(
        "keras-bert-attention",
        "keras-bert's attention layer: heads, W_O and LayerNorm",
        "The question gives each of the 12 heads full 768 × 768 query, key and value matrices, "
        "(768 × 768 × 3 + 768 × 3) × 12, and asks why keras-bert's summary shows 2,362,368. The first "
        "answer adds an output projection of 12 × 768 × 768 + 768 and a LayerNorm of 2 × 768.",
        "A head's query, key and value are H × H/A slices of three H × H matrices, so the heads do "
        "not multiply them, and the question leaves out the output projection W_O, H² + H, which the "
        "summary's figure includes. The first answer brings W_O in but multiplies it by the heads as "
        "well, and counts a LayerNorm that keras-bert keeps as a layer of its own "
        "(Encoder-1-MultiHeadSelfAttention-Norm). The second answer's sum is right, 4(H² + H), though "
        "it writes d_model = 786 where it computes with 768; the third answer is right.",
        (QA_THREAD,),
        model,
        _used_symbols(model, rows),
        rows,
        None,
        see_also=(
            Link("keras-bert's layers, each matched to transformers' tensors", "exercises/index.html#keras-bert"),
        ),
    )


def feed_forward_8h2(model: Model) -> Erratum:
    """The feed-forward block as 8H² + 2H: both biases taken as H."""
    rows = (
        _row(
            model,
            "First linear layer, H → I",
            4 * H * H + H,
            _steps(model, "layer", "feed-forward in"),
            "d-layer-feed-forward-in",
        ),
        _row(
            model,
            "Second linear layer, I → H",
            4 * H * H + H,
            _steps(model, "layer", "feed-forward out"),
            "d-layer-feed-forward-out",
        ),
        _subtotal(
            model,
            "Feed-forward block (one layer)",
            8 * H * H + 2 * H,
            _steps(model, "layer", "feed-forward in", "feed-forward out"),
        ),
    )
    return Erratum(
        "feed-forward-8h2",
        "The feed-forward block as 8H² + 2H",
        "The two feed-forward layers hold 2 × (4H × H + H) = 8H² + 2H parameters.",
        "Each linear layer's bias has one entry per output. The first layer outputs I = 4H "
        "values, so its bias has 4H entries, not H: the block holds 2HI + I + H, which is "
        "8H² + 5H when I = 4H.",
        (INTERVIEW,),
        model,
        _used_symbols(model, rows),
        rows,
        None,
    )


def intermediate_bias(model: Model) -> Erratum:
    """The bert-large table of issue 656: a per-layer sum without the intermediate bias."""
    embeddings = _block(model, "embeddings")
    pooler = _block(model, "pooler")
    their_layer = 4 * H * H + 2 * H * I + 9 * H
    their_total = embeddings.formula + L * their_layer + pooler.formula
    # The table prints "12,592,128 * 24 = 302,211,072" in its Transformer * 24 row.
    layer = _subtotal(model, "One encoder layer", their_layer, _layer(model), "d-layer", printed=("12,592,128", 0))
    layers = _layers(model, their_layer, ("302,211,072", model.inventory.values["L"] * layer.off))
    rows = (
        _row(
            model,
            "Intermediate bias (one layer)",
            None,
            (I, model.inventory.tensor("encoder.layer.0.intermediate.dense.bias").count),
            "d-layer-feed-forward-in",
        ),
        layer,
        layers,
        _subtotal(
            model,
            "Total",
            their_total,
            _total(model),
            "d-total",
            (
                Add((_grouped(embeddings.formula), _per_layer(their_layer), poly_expr(pooler.formula, ORDER))),
                _closed(model),
            ),
            (_printed(model, "issue 656"), layers.off),
        ),
    )
    return Erratum(
        "intermediate-bias",
        "A per-layer sum without the intermediate bias",
        "A table lists every tensor of bert-large-uncased with its count and then gives one "
        "subtotal per layer, times 24, and a total.",
        "The table's rows are right, but its per-layer subtotal is 4H² + 2HI + 9H: it leaves out "
        "the intermediate layer's bias, the one bias of size I. Multiplied by the number of layers, "
        "the missing numbers take the total below the exact count. The same reply's bert-base "
        "table is exact.",
        (ISSUE_656,),
        model,
        _used_symbols(model, rows),
        rows,
        their_total.evaluate(model.inventory.values),
        _printed(model, "issue 656"),
    )


def tied_twice(model: Model) -> Erratum:
    """The one-layer Transformer listing: one shared table printed under three names."""
    inventory = model.inventory
    rows = []
    for entry in inventory.tied:
        target = inventory.tensor(entry.tied_to)
        rows.append(
            Row(
                f"{entry.name} (the same tensor as {entry.tied_to})",
                poly_expr(target.formula, ORDER),
                target.count,
                poly_expr(ZERO, ORDER),
                0,
                printed="2762240",  # "[5395, 512] | count: | 2762240", as the listing writes both rows
            )
        )
    listed = sum(r.theirs_value for r in rows) + model.total
    again = ZERO
    for entry in inventory.tied:
        again = again + inventory.tensor(entry.tied_to).formula
    shown = Add((_closed(model), poly_expr(again, ORDER)))
    rows.append(Row("All rows of the listing, added up", shown, listed, _closed(model), model.total, "d-total", True))
    return Erratum(
        "tied-twice",
        "Tied weights counted twice",
        f"A reply in a GitHub issue lists the {len(inventory.entries)} parameter tensors of a one-layer "
        "encoder-decoder Transformer, each with its count, under the model's total. The listing does "
        "not add up its rows; a reader who checks the total that way arrives at a larger number.",
        "The source embedding, the target embedding and the output projection of this model are "
        "one tensor under three names. The listing prints every name, so it shows that tensor three "
        "times; the model stores it once, and the total the listing prints counts it once. Adding up "
        "the rows counts it three times.",
        (ISSUE_656,),
        model,
        _used_symbols(model, rows),
        tuple(rows),
        listed,
        _printed(model, "issue 656"),
        method="The listing's rows, added up",
    )


def pooler_and_heads(model: Model) -> Erratum:
    """The same checkpoint counted with and without its pooler and heads."""
    base = model.total
    variants = [Variant("The encoder with its pooler", model.inventory.class_name, base, 0)]
    pooler = _block(model, "pooler").value
    variants.append(
        Variant(
            "The encoder without its pooler", f"{model.inventory.class_name} (no pooling layer)", base - pooler, -pooler
        )
    )
    for head, label in (
        (Head.MASKED_LM, "With the masked-LM head, no pooler"),
        (Head.PRETRAINING, "With both pre-training heads"),
        (Head.SEQUENCE_CLASSIFICATION, "With a two-label classifier"),
    ):
        other = count_parameters(dataclasses.replace(model.card, head=head))
        variants.append(Variant(label, other.class_name, other.total, other.total - base))
    return Erratum(
        "pooler-and-heads",
        "The pooler or the heads, silently in or out",
        'A figure for "BERT-Base" without saying which parts it counts.',
        "The same checkpoint gives different counts depending on what is built on it. Google's "
        "TensorFlow release holds the pooler and both pre-training heads; transformers' "
        "BertModel keeps the pooler, BertForMaskedLM drops it and adds the masked-LM head. "
        "keras-bert's model summary counts the pre-training heads, a pull request correcting "
        "transformers' documentation counted with the masked-LM class, and worked solutions "
        "usually count the pooler and no head. None of them is wrong, but a figure means "
        "little until it says which.",
        (QA_THREAD, HF_PR, TEXTBOOK),
        model,
        _symbols(model, "VH"),
        (),
        None,
        variants=tuple(variants),
    )


BUILDERS: Sequence[tuple[Callable[..., Erratum], tuple[str, ...]]] = (
    (per_head_projections, ("exercise-bert-40k-8l-8h",)),
    (keras_bert_thread, ("exercise-keras-bert-pretraining",)),
    (lha_product, ("bert-base-uncased",)),
    (textbook_formula, ("exercise-bert-base-v30000",)),
    (layernorm_half, ("bert-base-uncased",)),
    (mean_and_variance, ("bert-base-uncased",)),
    (vocabulary_30000, ("bert-base-uncased", "exercise-bert-base-v30000")),
    (attention_over_heads, ("bert-base-uncased",)),
    (feed_forward_8h2, ("bert-base-uncased",)),
    (intermediate_bias, ("bert-large-uncased",)),
    (tied_twice, ("transformer-seed-one-layer",)),
    (pooler_and_heads, ("bert-base-uncased",)),
)
