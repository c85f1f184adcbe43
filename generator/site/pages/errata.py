"""The errata page: derivations people publish, worked beside the exact count, step by step.

Each erratum evaluates the published method as a formula in the config's symbols on a card's
own numbers (an assignment's 40,000-token, 8-layer, 8-head model; a released base model; ...) and puts
every step beside the exact step of the same card's derivation (``generator/site/erratum.py``).
Its sentences (the claim, where it diverges, the row labels) are content, in
``content/<language>/errata.yaml`` under the builder's name, dashed; the numbers are filled in here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from generator.analysis import erratum_methods
from generator.analysis.choices import load_choices
from generator.counting.architecture import Head
from generator.counting.expr import Add, Mul, Num, Paren, Var, poly_expr
from generator.counting.inventory import count_parameters
from generator.counting.poly import Poly
from generator.site import content
from generator.site.content import Text
from generator.site.erratum import (
    ORDER,
    PRINTED_BY,
    ZERO,
    A,
    Erratum,
    H,
    I,
    L,
    Row,
    Symbol,
    V,
    Variant,
    all_layers,
    block_of,
    closed_form,
    embedding_rows,
    erratum,
    erratum_id,
    grouped,
    layered_total,
    line_row,
    lines_of,
    one_layer,
    per_layer,
    printed_by,
    quotient,
    subtotal_row,
    symbols_of,
    total_of,
    used_symbols,
)
from generator.site.page import LANGUAGE, Page, guide_page
from generator.site.thumb_errata import MODELS as COMPUTE_MODELS
from generator.site.thumb_errata import work_thumb_errata
from generator.site.views import Details, Model, Summary

PATH = "errata/index.html"


def pages(models: Sequence[Summary], language: str = LANGUAGE) -> list[Page]:
    """The errata page, with every erratum whose card is in the catalog."""
    ids = {model.id for model in models}
    if not any(all(n in ids for n in needs) for _, needs in BUILDERS):
        return []

    def context() -> dict[str, object]:  # worked where the page is rendered: it counts its cards again
        return {"errata": worked(models, language), "compute": work_thumb_errata(models, language), "lede": lede}

    text = content.load("errata", language)
    lede = text.section("page").html("lede")
    return [guide_page(PATH, "errata.html", text.section("page"), context, shows=shown())]


def worked(models: Sequence[Summary], language: str = LANGUAGE) -> tuple[Erratum, ...]:
    """Every erratum whose cards are in ``models``, worked (the page's, and the titles model pages link to)."""
    section = content.load("errata", language).section("errata")
    by_id = Details(models)
    present = [(build, needs) for build, needs in BUILDERS if all(n in by_id for n in needs)]
    return tuple(build(section.section(erratum_id(build)), *(by_id[n] for n in needs)) for build, needs in present)


def shown() -> tuple[str, ...]:
    """The cards the page reads (its cache key; tests/test_cache.py checks it): each erratum's, the compute errata's."""
    return tuple(dict.fromkeys([*(card_id for _, needs in BUILDERS for card_id in needs), *COMPUTE_MODELS]))


# The errata --------------------------------------------------------------------------------------
# Each builder's name, dashed, is the erratum's id and the key of its texts in content/<language>/errata.yaml.


def per_head_projections(t: Text, model: Model) -> Erratum:
    """Query, key, value and output taken as H × H per head, times the number of heads."""
    label, common = t.section("rows"), t.root.section("rows")
    their_attention, their_layer = erratum_methods.PER_HEAD_ATTENTION, erratum_methods.PER_HEAD_LAYER
    their_total = erratum_methods.method_of("per-head-projections").theirs
    # The assignment's figures (question 1): "3 × (768 × 768) × 8 = 14,155,008", "768 × 768 × 8 =
    # 4,569,984", "Total Self-Attention Parameters: 18,725,992", "Total FFN Parameters: 4,718,592",
    # "23,444,584 × 8 = 187,556,672" and "≈ 31,114,752" for the three tables.
    tables, embedding_norm = embedding_rows(t, model, printed="31,114,752")
    qkv_steps = lines_of(model, "layer", "query", "key", "value")
    qkv = line_row(model, label("qkv"), 3 * A * H * H, qkv_steps, "d-layer-query", "14,155,008")
    output_steps = lines_of(model, "layer", "attention-output")
    output = line_row(model, label("output"), A * H * H, output_steps, "d-layer-attention-output", "4,569,984")
    attention = subtotal_row(
        model,
        label("attention"),
        their_attention,
        lines_of(model, "layer", "query", "key", "value", "attention-output"),
        printed=("18,725,992", qkv.off + output.off),
    )
    ffn_steps = lines_of(model, "layer", "feed-forward-in", "feed-forward-out")
    feed_forward = line_row(model, label("feed-forward"), 2 * H * I, ffn_steps, "d-layer-feed-forward-in", "4,718,592")
    printed_layer = ("23,444,584", attention.off + feed_forward.off)
    layer = subtotal_row(model, common("layer"), their_layer, one_layer(model), "d-layer", printed=printed_layer)
    layers = all_layers(t, model, their_layer, ("187,556,672", model.inventory.values["L"] * layer.off))
    norms = lines_of(model, "layer", "attention-layernorm", "output-layernorm")
    rows = (
        tables,
        embedding_norm,
        qkv,
        output,
        attention,
        feed_forward,
        line_row(model, label("norms"), None, norms, "d-layer-attention-layernorm"),
        layer,
        layers,
        line_row(model, common("pooler"), None, lines_of(model, "pooler", "pooler-dense"), "d-pooler"),
        layered_total(
            t, model, their_total, their_layer, (printed_by(model, PRINTED_BY[t.key]), tables.off + layers.off)
        ),
    )
    total, printed = their_total.evaluate(model.inventory.values), printed_by(model, PRINTED_BY[t.key])
    # The Q&A thread's question slips the same way for Q, K and V only (with their biases): linked, not a source.
    sources, see_also = ("assignment",), ("fixed-head-size", "keras-question")
    return erratum(t, model, used_symbols(model, rows), rows, total, printed, sources=sources, see_also=see_also)


def lha_product(t: Text, model: Model) -> Erratum:
    """ "12 × 768 × 12 = 110M": the three headline numbers multiplied together."""
    label, common = t.section("rows"), t.root.section("rows")
    product = erratum_methods.method_of("lha-product").theirs.evaluate(model.inventory.values)
    embeddings, layer, pooler = (block_of(model, key) for key in ("embeddings", "layer", "pooler"))
    rows = (
        subtotal_row(
            model,
            label("model"),
            L * H * A,
            total_of(model),
            "d-total",
            (Mul((Var("L"), Var("H"), Var("A")), "·"), closed_form(model)),
            ("110M", 0),  # the issue quotes "12 * 768 * 12 = 110M"
        ),
        line_row(model, label("embeddings"), None, (embeddings.formula, embeddings.value), "d-embeddings"),
        dataclasses.replace(
            line_row(model, label("layers"), None, (L * layer.formula, layer.subtotal), "d-layer"),
            exact=per_layer(layer.formula),
        ),
        line_row(model, common("pooler"), None, (pooler.formula, pooler.value), "d-pooler"),
    )
    symbols = used_symbols(model, rows)
    times = round(model.total / product)
    sources = ("issue-656", "zhihu")  # the thread is where it appears; the post is where it comes from
    return erratum(t, model, symbols, rows, product, sources=sources, product=product, times=times)


def textbook_formula(t: Text, model: Model) -> Erratum:
    """A worked solution that leaves out every bias and counts LayerNorm as 2H per layer."""
    label, common = t.section("rows"), t.root.section("rows")
    their_layer = erratum_methods.TEXTBOOK_LAYER
    their_total = erratum_methods.method_of("textbook-formula").theirs
    # The worked example's figures: "30,000 · 768 + 512 · 768 + 2 · 768 = 23,685,120", "= 1,769,472 +
    # 589,824 + 4,718,592 + 1,536 = 7,079,424", "12 · 7,079,424 = 84,952,608" and "768^2 = 589,824".
    tables, embedding_norm = embedding_rows(t, model, printed="23,685,120")
    layer = subtotal_row(model, common("layer"), their_layer, one_layer(model), "d-layer", printed=("7,079,424", 0))
    layers = all_layers(t, model, their_layer, ("84,952,608", model.inventory.values["L"] * layer.off))
    pooler = line_row(model, common("pooler"), H * H, lines_of(model, "pooler", "pooler-dense"), "d-pooler", "589,824")
    qkv = lines_of(model, "layer", "query", "key", "value")
    ffn = lines_of(model, "layer", "feed-forward-in", "feed-forward-out")
    norms = lines_of(model, "layer", "attention-layernorm", "output-layernorm")
    output = lines_of(model, "layer", "attention-output")
    rows = (
        tables,
        embedding_norm,
        line_row(model, label("qkv"), 3 * H * H, qkv, "d-layer-query", "1,769,472"),
        line_row(model, label("output"), H * H, output, "d-layer-attention-output", "589,824"),
        line_row(model, label("feed-forward"), 2 * H * I, ffn, "d-layer-feed-forward-in", "4,718,592"),
        line_row(model, label("norms"), 2 * H, norms, "d-layer-attention-layernorm", "1,536"),
        layer,
        layers,
        pooler,
        layered_total(
            t,
            model,
            their_total,
            their_layer,
            (printed_by(model, PRINTED_BY[t.key]), tables.off + layers.off + pooler.off),
            pooler=H * H,
        ),
    )
    total = their_total.evaluate(model.inventory.values)
    symbols = used_symbols(model, rows)
    return erratum(t, model, symbols, rows, total, printed_by(model, PRINTED_BY[t.key]), sources=("textbook",))


def layernorm_half(t: Text, model: Model) -> Erratum:
    """LayerNorm as 2H per layer instead of 4H, and no LayerNorm after the embeddings."""
    label, common = t.section("rows"), t.root.section("rows")
    exact_layer = lines_of(model, "layer", "attention-layernorm", "output-layernorm")
    exact_embedding = lines_of(model, "embeddings", "embedding-layernorm")
    all_norms = (
        L * exact_layer[0] + exact_embedding[0],
        model.inventory.values["L"] * exact_layer[1] + exact_embedding[1],
    )
    attention_norm = lines_of(model, "layer", "attention-layernorm")
    output_norm = lines_of(model, "layer", "output-layernorm")
    rows = (
        line_row(model, label("attention-norm"), 2 * H, attention_norm, "d-layer-attention-layernorm"),
        line_row(model, label("output-norm"), None, output_norm, "d-layer-output-layernorm"),
        line_row(model, common("embedding-norm"), None, exact_embedding, "d-embeddings-embedding-layernorm"),
        subtotal_row(model, label("all-norms"), L * 2 * H, all_norms, shown=(None, grouped(all_norms[0]))),
    )
    return erratum(t, model, used_symbols(model, rows), rows, None, sources=("textbook",))


def mean_and_variance(t: Text, model: Model) -> Erratum:
    """A LayerNorm taken as two numbers, a mean and a variance (the interview notes)."""
    label = t.section("rows")
    norms = 2 * L + 1  # two per layer and the embedding LayerNorm; checked against the steps below
    exact_layer = lines_of(model, "layer", "attention-layernorm", "output-layernorm")
    exact_embedding = lines_of(model, "embeddings", "embedding-layernorm")
    values = model.inventory.values
    all_norms = (L * exact_layer[0] + exact_embedding[0], values["L"] * exact_layer[1] + exact_embedding[1])
    rows = (
        line_row(model, label("one-norm"), Poly.constant(2), exact_embedding, "d-embeddings-embedding-layernorm"),
        subtotal_row(
            model,
            label("all-norms"),
            2 * norms,
            all_norms,
            shown=(Mul((Num(2), Paren(poly_expr(norms, ORDER)))), grouped(all_norms[0])),
        ),
    )
    return erratum(t, model, used_symbols(model, rows), rows, None, sources=("interview",))


def vocabulary_30000(t: Text, model: Model, rounded: Model) -> Erratum:
    """A round vocabulary (30,000) instead of the released one (30,522)."""
    label, common, meaning = t.section("rows"), t.root.section("rows"), t.section("symbols")
    theirs, released = rounded.inventory.values["V"], model.inventory.values["V"]
    table = poly_expr(V * H, ORDER)
    their_table, exact_table = (lines_of(m, "embeddings", "token-embeddings")[1] for m in (rounded, model))
    rows = (
        Row(label("token-table"), table, their_table, table, exact_table, "d-embeddings-token-embeddings"),
        Row(common("total"), closed_form(rounded), rounded.total, closed_form(model), model.total, "d-total", True),
    )
    symbols = (
        Symbol("V", theirs, meaning("published")),
        Symbol("V", released, meaning("released")),
        *used_symbols(model, rows, leave_out="V"),
    )
    sources = ("textbook", "qa-thread", "devlin")  # the paper itself gives the round figure
    return erratum(t, model, symbols, rows, rounded.total, sources=sources, theirs=theirs, released=released)


def attention_over_heads(t: Text, model: Model) -> Erratum:
    """The attention block as 3H²/A: a per-head sum divided by the heads twice, and W_O left out."""
    label = t.section("rows")
    values = model.inventory.values
    heads = values["A"]
    weights = [model.inventory.tensor(f"encoder.layer.0.attention.self.{n}.weight") for n in ("query", "key", "value")]
    biases = [model.inventory.tensor(f"encoder.layer.0.attention.self.{n}.bias") for n in ("query", "key", "value")]
    weight_formula = weights[0].formula + weights[1].formula + weights[2].formula
    weight_count = sum(w.count for w in weights)
    one_head = Mul((Num(3), Paren(quotient(Var("H"), Var("A"))), Var("H")), "·")
    simplified = quotient(poly_expr(3 * H * H, ORDER), Var("A"))
    # The notes' simplification, evaluated: 3H² / A (exact here, since H is a multiple of A).
    their_value = 3 * values["H"] * values["H"] // heads
    block = lines_of(model, "layer", "query", "key", "value", "attention-output")
    all_heads = poly_expr(weight_formula, ORDER)
    bias_formula = poly_expr(biases[0].formula + biases[1].formula + biases[2].formula, ORDER)
    output = lines_of(model, "layer", "attention-output")
    rows = (
        Row(label("one-head"), one_head, weight_count // heads, one_head, weight_count // heads),
        Row(label("all-heads"), simplified, their_value, all_heads, weight_count, "d-layer-query"),
        Row(label("biases"), None, 0, bias_formula, sum(b.count for b in biases), "d-layer-query"),
        line_row(model, label("output"), None, output, "d-layer-attention-output"),
        Row(label("attention"), simplified, their_value, poly_expr(block[0], ORDER), block[1], subtotal=True),
    )
    return erratum(t, model, used_symbols(model, rows), rows, None, sources=("interview",))


def keras_bert_attention(t: Text, model: Model) -> Erratum:
    """The Q&A thread on a Keras implementation: per-head Q/K/V in the question, W_O per head and LayerNorm
    in an answer."""
    label = t.section("rows")
    qkv = lines_of(model, "layer", "query", "key", "value")
    output = lines_of(model, "layer", "attention-output")
    rows = (
        dataclasses.replace(
            line_row(model, label("qkv"), A * qkv[0], qkv, "d-layer-query"),
            theirs=Mul((Var("A"), Paren(poly_expr(qkv[0], ORDER)))),
        ),
        line_row(model, label("output-left-out"), None, output, "d-layer-attention-output"),
        line_row(model, label("output-per-head"), A * H * H + H, output, "d-layer-attention-output"),
        line_row(
            model,
            label("norm"),
            2 * H,
            (ZERO, 0),  # the Keras implementation's Encoder-1-MultiHeadSelfAttention-Norm is a layer of its own
            "d-layer-attention-layernorm",
        ),
        subtotal_row(
            model,
            label("attention"),
            4 * H * H + 4 * H,
            lines_of(model, "layer", "query", "key", "value", "attention-output"),
            printed=("2,362,368", 0),  # "there are 2,362,368 trainable parameters at each of the multi-head ..."
        ),
    )
    symbols = used_symbols(model, rows)
    return erratum(t, model, symbols, rows, None, sources=("qa-thread",), see_also=("keras-layers",))


def feed_forward_8h2(t: Text, model: Model) -> Erratum:
    """The feed-forward block as 8H² + 2H: both biases taken as H."""
    label = t.section("rows")
    ffn_in = lines_of(model, "layer", "feed-forward-in")
    ffn_out = lines_of(model, "layer", "feed-forward-out")
    rows = (
        line_row(model, label("in"), 4 * H * H + H, ffn_in, "d-layer-feed-forward-in"),
        line_row(model, label("out"), 4 * H * H + H, ffn_out, "d-layer-feed-forward-out"),
        subtotal_row(
            model, label("block"), 8 * H * H + 2 * H, lines_of(model, "layer", "feed-forward-in", "feed-forward-out")
        ),
    )
    return erratum(t, model, used_symbols(model, rows), rows, None, sources=("interview",))


def intermediate_bias(t: Text, model: Model) -> Erratum:
    """The large model's table in the source's issue 656: a per-layer sum without the intermediate bias."""
    label, common = t.section("rows"), t.root.section("rows")
    embeddings = block_of(model, "embeddings")
    pooler = block_of(model, "pooler")
    their_layer = erratum_methods.LAYER_WITHOUT_INTERMEDIATE_BIAS
    their_total = embeddings.formula + L * their_layer + pooler.formula
    # The table prints "12,592,128 * 24 = 302,211,072" in its row for the 24 layers.
    layer = subtotal_row(model, common("layer"), their_layer, one_layer(model), "d-layer", printed=("12,592,128", 0))
    layers = all_layers(t, model, their_layer, ("302,211,072", model.inventory.values["L"] * layer.off))
    bias = model.inventory.tensor("encoder.layer.0.intermediate.dense.bias").count
    rows = (
        line_row(model, label("bias"), None, (I, bias), "d-layer-feed-forward-in"),
        layer,
        layers,
        subtotal_row(
            model,
            common("total"),
            their_total,
            total_of(model),
            "d-total",
            (
                Add((grouped(embeddings.formula), per_layer(their_layer), poly_expr(pooler.formula, ORDER))),
                closed_form(model),
            ),
            (printed_by(model, PRINTED_BY[t.key]), layers.off),
        ),
    )
    total = their_total.evaluate(model.inventory.values)
    symbols = used_symbols(model, rows)
    return erratum(t, model, symbols, rows, total, printed_by(model, PRINTED_BY[t.key]), sources=("issue-656",))


def tied_twice(t: Text, model: Model) -> Erratum:
    """A one-layer encoder-decoder's listing: one shared table printed under three names."""
    label = t.section("rows")
    inventory = model.inventory
    rows = []
    for entry in inventory.tied:
        target = inventory.tensor(entry.tied_to)
        rows.append(
            Row(
                label("tied", name=entry.name, target=entry.tied_to),
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
    shown = Add((closed_form(model), poly_expr(again, ORDER)))
    rows.append(Row(label("listing"), shown, listed, closed_form(model), model.total, "d-total", True))
    return erratum(
        t,
        model,
        used_symbols(model, rows),
        rows,
        listed,
        printed_by(model, PRINTED_BY[t.key]),
        sources=("issue-656",),
        method=t("method"),
        tensors=len(inventory.entries),
    )


def pooler_and_heads(t: Text, model: Model) -> Erratum:
    """The same checkpoint counted with and without its pooler and heads."""
    label = t.section("variants")
    base = model.total
    class_name = model.inventory.class_name
    pooler = block_of(model, "pooler").value
    variants = [
        Variant(label("base"), class_name, base, 0),
        Variant(label("no-pooler"), label("no-pooler-class", class_name=class_name), base - pooler, -pooler),
    ]
    for head, key in (
        (Head.MASKED_LM, "masked-lm"),
        (Head.PRETRAINING, "pretraining"),
        (Head.SEQUENCE_CLASSIFICATION, "classifier"),
    ):
        other = count_parameters(dataclasses.replace(model.card, head=head))
        variants.append(Variant(label(key), other.class_name, other.total, other.total - base))
    sources = ("qa-thread", "hf-pr", "textbook")
    return erratum(t, model, symbols_of(model, "VH"), (), None, sources=sources, variants=tuple(variants))


# The errata in the page's order; the cards each is worked on are choices (content/choices.yaml), by its id.
ERRATA = (
    per_head_projections,
    keras_bert_attention,
    lha_product,
    textbook_formula,
    layernorm_half,
    mean_and_variance,
    vocabulary_30000,
    attention_over_heads,
    feed_forward_8h2,
    intermediate_bias,
    tied_twice,
    pooler_and_heads,
)
BUILDERS: Sequence[tuple[Callable[..., Erratum], tuple[str, ...]]] = tuple(
    (build, load_choices().errata[erratum_id(build)]) for build in ERRATA
)
