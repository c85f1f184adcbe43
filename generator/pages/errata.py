"""The errata page: derivations people publish, worked beside the exact count, step by step.

Each erratum evaluates the published method as a formula in the config's symbols on a card's
own numbers (the 40,000-token, 8-layer, 8-head BERT of an assignment; BERT-Base; ...) and puts
every step beside the exact step of the same card's derivation. Nothing is typed: their numbers
come from their formula and the card's values, the exact ones from the inventory, and a figure
as printed in a source is read from the claim the card carries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from generator.architecture import Head
from generator.derivation import BlockDerivation
from generator.expr import Add, Expr, Mul, Num, Paren, Var, grouped_expr, poly_expr
from generator.figures import parse_figure
from generator.inventory import count_parameters
from generator.poly import Poly
from generator.site import SITE_TITLE, Page
from generator.views import Details, Model, Summary

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
class Row:
    """One step: the published formula and number beside the exact formula and number."""

    label: str
    theirs: Expr | None  # None: the step is not in the published derivation at all
    theirs_value: int
    exact: Expr
    exact_value: int
    anchor: str | None = None  # the model page's derivation step, e.g. "d-layer-query"
    subtotal: bool = False

    @property
    def difference(self) -> int:
        return self.theirs_value - self.exact_value


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
    symbols: tuple[tuple[str, int], ...]  # the config values the rows use
    rows: tuple[Row, ...]
    their_total: int | None
    printed: str | None = None  # the figure as the source prints it, from the card's claims
    variants: tuple[Variant, ...] = ()

    @property
    def printed_value(self) -> int | None:
        """The printed figure as a number, when it is exact ("218,671,424"); None otherwise."""
        if self.printed is None:
            return None
        parts = parse_figure(self.printed)
        return parts[0].value if len(parts) == 1 and parts[0].exact else None

    @property
    def diverging(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.difference and not r.subtotal)


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


def _row(model: Model, label: str, theirs: Poly | None, exact: tuple[Poly, int], anchor: str | None = None) -> Row:
    values = model.inventory.values
    their_value = theirs.evaluate(values) if theirs is not None else 0
    return Row(
        label,
        poly_expr(theirs, ORDER) if theirs is not None else None,
        their_value,
        poly_expr(exact[0], ORDER),
        exact[1],
        anchor,
    )


def _subtotal(
    model: Model,
    label: str,
    theirs: Poly,
    exact: tuple[Poly, int],
    anchor: str | None = None,
    shown: tuple[Expr | None, Expr | None] = (None, None),
) -> Row:
    """A subtotal row; ``shown`` writes either formula grouped, (V + P + T)H + L(...), instead of expanded."""
    row = dataclasses.replace(_row(model, label, theirs, exact, anchor), subtotal=True)
    return dataclasses.replace(row, theirs=shown[0] or row.theirs, exact=shown[1] or row.exact)


def _grouped(poly: Poly) -> Expr:
    return grouped_expr(poly, ORDER) or poly_expr(poly, ORDER)


def _per_layer(poly: Poly) -> Expr:
    return Mul((Var("L"), Paren(poly_expr(poly, ORDER))))


def _closed(model: Model) -> Expr:
    """The model's closed-form total, as its page writes it."""
    return model.derivation.closed_form


def _symbols(model: Model, names: str) -> tuple[tuple[str, int], ...]:
    return tuple((n, model.inventory.values[n]) for n in names)


def _printed(model: Model, source_words: str) -> str | None:
    """The figure a source printed, as the card's claim from that source records it."""
    return next((c.figure for c in model.card.claims if source_words in c.source), None)


def _layer(model: Model) -> tuple[Poly, int]:
    block = _block(model, "layer")
    return block.formula, block.value


def _total(model: Model) -> tuple[Poly, int]:
    return model.derivation.formula, model.total


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
HF_PR = Source(
    "pull request",
    "huggingface/transformers pull request 7575, correcting the documented sizes",
    "https://github.com/huggingface/transformers/pull/7575",
)


def _embedding_rows(model: Model) -> tuple[Row, Row]:
    """The three tables, as both the published methods count them, then the LayerNorm they leave out."""
    return (
        _row(
            model,
            "Token, position and segment tables",
            (V + P + T) * H,
            _steps(model, "embeddings", "token embeddings", "position embeddings", "segment embeddings"),
            "d-embeddings",
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
    their_layer = 3 * A * H * H + A * H * H + 2 * H * I
    their_total = (V + P + T) * H + L * their_layer
    rows = (
        *_embedding_rows(model),
        _row(
            model,
            "Query, key and value (one layer)",
            3 * A * H * H,
            _steps(model, "layer", "query", "key", "value"),
            "d-layer-query",
        ),
        _row(
            model,
            "Attention output (one layer)",
            A * H * H,
            _steps(model, "layer", "attention output"),
            "d-layer-attention-output",
        ),
        _row(
            model,
            "Feed-forward (one layer)",
            2 * H * I,
            _steps(model, "layer", "feed-forward in", "feed-forward out"),
            "d-layer-feed-forward-in",
        ),
        _row(
            model,
            "Two LayerNorms (one layer)",
            None,
            _steps(model, "layer", "attention LayerNorm", "output LayerNorm"),
            "d-layer-attention-layernorm",
        ),
        _subtotal(model, "One encoder layer", their_layer, _layer(model), "d-layer"),
        _row(model, "Pooler", None, _steps(model, "pooler", "pooler dense"), "d-pooler"),
        _subtotal(
            model,
            "Total",
            their_total,
            _total(model),
            "d-total",
            (Add((_grouped((V + P + T) * H), _per_layer(their_layer))), _closed(model)),
        ),
    )
    return Erratum(
        "per-head-projections",
        "Projections counted once per head",
        "Each attention head is given its own full-size query, key, value and output matrix, so "
        "every projection is multiplied by the number of heads; biases and LayerNorm are left out.",
        "A head projects the hidden vector to a slice of size H/A, not to a full H. The A slices of "
        "a projection together make one H × H matrix, so the number of heads never multiplies the "
        "count. The same slip appears in the question of a Q&A thread, which multiplies three "
        "H × H matrices by twelve heads.",
        (ASSIGNMENT, QA_THREAD),
        model,
        _symbols(model, "VPTHILA"),
        rows,
        their_total.evaluate(model.inventory.values),
        _printed(model, "assignment"),
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
        f"product of the three numbers is about {model.total // product:,} times too small.",
        (ISSUE_656,),
        model,
        _symbols(model, "LHA"),
        rows,
        product,
    )


def textbook_formula(model: Model) -> Erratum:
    """A worked solution that leaves out every bias and counts LayerNorm as 2H per layer."""
    their_layer = 3 * H * H + H * H + 2 * H * I + 2 * H
    their_total = (V + P + T) * H + L * their_layer + H * H
    rows = (
        *_embedding_rows(model),
        _row(
            model,
            "Query, key and value (one layer)",
            3 * H * H,
            _steps(model, "layer", "query", "key", "value"),
            "d-layer-query",
        ),
        _row(
            model,
            "Attention output (one layer)",
            H * H,
            _steps(model, "layer", "attention output"),
            "d-layer-attention-output",
        ),
        _row(
            model,
            "Feed-forward (one layer)",
            2 * H * I,
            _steps(model, "layer", "feed-forward in", "feed-forward out"),
            "d-layer-feed-forward-in",
        ),
        _row(
            model,
            "LayerNorms (one layer)",
            2 * H,
            _steps(model, "layer", "attention LayerNorm", "output LayerNorm"),
            "d-layer-attention-layernorm",
        ),
        _subtotal(model, "One encoder layer", their_layer, _layer(model), "d-layer"),
        _row(model, "Pooler", H * H, _steps(model, "pooler", "pooler dense"), "d-pooler"),
        _subtotal(
            model,
            "Total",
            their_total,
            _total(model),
            "d-total",
            (Add((_grouped((V + P + T) * H), _per_layer(their_layer), poly_expr(H * H, ORDER))), _closed(model)),
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
        "not 2H. The printed total also differs from its own formula, because two of its sums "
        "slipped.",
        (TEXTBOOK,),
        model,
        _symbols(model, "VPTHIL"),
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
        _symbols(model, "HL"),
        rows,
        None,
    )


def mean_and_variance(model: Model) -> Erratum:
    """LayerNorm's parameters called mean and variance (two numbers per LayerNorm)."""
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
        "LayerNorm's parameters called mean and variance",
        "A LayerNorm has two learnable parameters, a mean and a variance, so it can be ignored.",
        "The mean and the variance are computed from each token's vector every time the layer "
        "runs; nothing about them is stored. What a LayerNorm learns is a scale γ and a shift β, "
        "one entry per hidden unit each: 2H numbers, stored as weight and bias. They are small "
        "next to the matrices, but they are not two numbers.",
        (INTERVIEW,),
        model,
        _symbols(model, "HL"),
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
        (("V, as published", theirs), ("V, as released", released), ("H", model.inventory.values["H"])),
        rows,
        rounded.total,
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
        "8H² + 5H when I = 4H. (The interview notes are right about the per-head split of the "
        "query, key and value matrices.)",
        (INTERVIEW,),
        model,
        _symbols(model, "HI"),
        rows,
        None,
    )


def intermediate_bias(model: Model) -> Erratum:
    """The bert-large table of issue 656: a per-layer sum without the intermediate bias."""
    embeddings = _block(model, "embeddings")
    pooler = _block(model, "pooler")
    their_layer = 4 * H * H + 2 * H * I + 9 * H
    their_total = embeddings.formula + L * their_layer + pooler.formula
    rows = (
        _row(
            model,
            "Intermediate bias (one layer)",
            None,
            (I, model.inventory.tensor("encoder.layer.0.intermediate.dense.bias").count),
            "d-layer-feed-forward-in",
        ),
        _subtotal(model, "One encoder layer", their_layer, _layer(model), "d-layer"),
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
        _symbols(model, "HIL"),
        rows,
        their_total.evaluate(model.inventory.values),
        _printed(model, "issue 656"),
    )


def tied_twice(model: Model) -> Erratum:
    """The one-layer Transformer listing: one shared table printed, and added, three times."""
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
            )
        )
    listed = sum(r.theirs_value for r in rows) + model.total
    again = ZERO
    for entry in inventory.tied:
        again = again + inventory.tensor(entry.tied_to).formula
    shown = Add((_closed(model), poly_expr(again, ORDER)))
    rows.append(Row("All rows of the listing", shown, listed, _closed(model), model.total, "d-total", True))
    return Erratum(
        "tied-twice",
        "Tied weights counted twice",
        "Adding up every row of a model's parameter listing gives its parameter count.",
        "The source embedding, the target embedding and the output projection of this model are "
        "one tensor under three names. A listing that prints every name shows it three times; the "
        "model stores it once, and the listing's own total counts it once. The row sum counts it "
        "three times.",
        (ISSUE_656,),
        model,
        _symbols(model, "VH"),
        tuple(rows),
        listed,
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
    (lha_product, ("bert-base-uncased",)),
    (textbook_formula, ("exercise-bert-base-v30000",)),
    (layernorm_half, ("bert-base-uncased",)),
    (mean_and_variance, ("bert-base-uncased",)),
    (vocabulary_30000, ("bert-base-uncased", "exercise-bert-base-v30000")),
    (feed_forward_8h2, ("bert-base-uncased",)),
    (intermediate_bias, ("bert-large-uncased",)),
    (tied_twice, ("transformer-seed-one-layer",)),
    (pooler_and_heads, ("bert-base-uncased",)),
)
