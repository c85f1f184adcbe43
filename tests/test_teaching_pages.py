"""The errata page, the exercises page and the original checkpoint names.

Each published derivation's wrong and right numbers, each exercise's answer and a handful of
google-research/bert variable names are asserted exactly; the numbers must equal what the
inventories give, and the pages must show them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import MODELS, reference_for, text_of
from generator.analysis.checkpoint_names import Layout, tf_name
from generator.cards.card import load_cards
from generator.site.pages import errata, exercises
from generator.site.views import model_of

MODEL_LIST = [model_of(card) for card in load_cards(MODELS)]
BY_ID = {m.id: m for m in MODEL_LIST}
ERRATA = {e.id: e for e in errata.pages(MODEL_LIST)[0].gather()["errata"]}
EXERCISES = {x.id: x for x in exercises.pages(MODEL_LIST)[0].gather()["exercises"]}


@pytest.fixture(scope="module")
def files(site: Path) -> dict[str, str]:
    return {path.relative_to(site).as_posix(): path.read_text("utf-8") for path in site.rglob("*.html")}


# Errata: their number (the published method on the card's values) and the exact one -------------

ERRATA_TOTALS = {
    # id: (the published method's total, the exact total of the linked model, the figure as printed)
    "per-head-projections": (219_858_432, 88_409_856, 218_671_424),
    "lha-product": (110_592, 109_482_240, None),
    "textbook-formula": (108_977_664, 109_081_344, 109_227_552),
    "vocabulary-30000": (109_081_344, 109_482_240, None),
    "intermediate-bias": (335_043_584, 335_141_888, 335_043_584),
    "tied-twice": (15_676_928, 10_152_448, 10_152_448),
    "layernorm-half": (None, 109_482_240, None),
    "mean-and-variance": (None, 109_482_240, None),
    "feed-forward-8h2": (None, 109_482_240, None),
    "attention-over-heads": (None, 109_482_240, None),
    "keras-bert-attention": (None, 109_705_010, None),
    "pooler-and-heads": (None, 109_482_240, None),
}


def test_at_least_the_issues_eight_errata() -> None:
    assert set(ERRATA) == set(ERRATA_TOTALS)


@pytest.mark.parametrize(("erratum", "expected"), list(ERRATA_TOTALS.items()))
def test_errata_totals(erratum: str, expected: tuple[int | None, int, int | None]) -> None:
    theirs, exact, printed = expected
    e = ERRATA[erratum]
    assert (e.their_total, e.model.total, e.printed_value) == (theirs, exact, printed)


def rows(erratum: str) -> dict[str, tuple[int, int]]:
    return {r.label: (r.theirs_value, r.exact_value) for r in ERRATA[erratum].rows}


def test_per_head_projections_steps() -> None:
    assert rows("per-head-projections") == {
        "Token, position and segment tables": (31_114_752, 31_114_752),
        "Embedding LayerNorm": (0, 1_536),
        "Query, key and value (one layer)": (14_155_776, 1_771_776),
        "Attention output (one layer)": (4_718_592, 590_592),
        "Attention block (one layer)": (14_155_776 + 4_718_592, 1_771_776 + 590_592),
        "Feed-forward (one layer)": (4_718_592, 4_722_432),
        "Two LayerNorms (one layer)": (0, 3_072),
        "One encoder layer": (23_592_960, 7_087_872),
        "All 8 encoder layers": (8 * 23_592_960, 8 * 7_087_872),
        "Pooler": (0, 590_592),
        "Total": (219_858_432, 88_409_856),
    }
    # The printed answer is its own method's value less three slips of arithmetic.
    assert ERRATA["per-head-projections"].printed_value - 219_858_432 == -1_187_008  # type: ignore[operator]


def test_textbook_formula_steps() -> None:
    assert rows("textbook-formula") == {
        "Token, position and segment tables": (23_434_752, 23_434_752),
        "Embedding LayerNorm": (0, 1_536),
        "Query, key and value (one layer)": (1_769_472, 1_771_776),
        "Attention output (one layer)": (589_824, 590_592),
        "Feed-forward (one layer)": (4_718_592, 4_722_432),
        "LayerNorms (one layer)": (1_536, 3_072),
        "One encoder layer": (7_079_424, 7_087_872),
        "All 12 encoder layers": (12 * 7_079_424, 12 * 7_087_872),
        "Pooler": (589_824, 590_592),
        "Total": (108_977_664, 109_081_344),
    }


def test_the_smaller_errata_steps() -> None:
    assert rows("lha-product")["The whole model"] == (110_592, 109_482_240)
    assert rows("layernorm-half")["Every LayerNorm of the model"] == (18_432, 38_400)
    assert rows("mean-and-variance") == {"One LayerNorm": (2, 1_536), "Every LayerNorm of the model": (50, 38_400)}
    assert rows("vocabulary-30000")["Token embeddings"] == (23_040_000, 23_440_896)
    assert rows("feed-forward-8h2") == {
        "First linear layer, H → I": (2_360_064, 2_362_368),
        "Second linear layer, I → H": (2_360_064, 2_360_064),
        "Feed-forward block (one layer)": (4_720_128, 4_722_432),
    }
    assert rows("intermediate-bias") == {
        "Intermediate bias (one layer)": (0, 4_096),
        "One encoder layer": (12_592_128, 12_596_224),
        "All 24 encoder layers": (24 * 12_592_128, 24 * 12_596_224),
        "Total": (335_043_584, 335_141_888),
    }
    tied = rows("tied-twice")
    assert tied["All rows of the listing, added up"] == (15_676_928, 10_152_448)
    assert sorted(v for k, v in tied.items() if k != "All rows of the listing, added up") == [
        (2_762_240, 0),
        (2_762_240, 0),
    ]


def test_pooler_and_heads_variants() -> None:
    variants = [(v.class_name, v.count, v.difference) for v in ERRATA["pooler-and-heads"].variants]
    assert variants == [
        ("BertModel", 109_482_240, 0),
        ("BertModel (no pooling layer)", 108_891_648, -590_592),
        ("BertForMaskedLM", 109_514_298, 32_058),
        ("BertForPreTraining", 110_106_428, 624_188),
        ("BertForSequenceClassification", 109_483_778, 1_538),
    ]


def test_errata_page(files: dict[str, str]) -> None:
    page = text_of(files["errata/index.html"])
    assert "Published method, recomputed: 219,858,432. Exact: 88,409,856. Difference: +131,448,576." in page
    assert "The source prints 218,671,424, which is not what its own method gives either (−1,187,008)" in page
    assert "Published method, recomputed: 110,592. Exact: 109,482,240." in page
    assert (
        "The listing's rows, added up: 15,676,928. Exact: 10,152,448. Difference: +5,524,480. "
        "The source prints 10,152,448, which is the exact count." in page
    )
    assert (
        "Published method, recomputed: 335,043,584. Exact: 335,141,888. Difference: −98,304. "
        "The source prints 335,043,584, exactly" in page
    )
    assert "(V + P + T)H + L(4H²A + 2HI)" in page  # the assignment's method, as a formula
    assert "(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + H² + H" in page  # the exact closed form
    for source in (
        "assignment answer",
        "GitHub issue",
        "Q&A thread",
        "textbook-style worked solution",
        "interview notes",
    ):
        assert source in page
    html = files["errata/index.html"]
    assert 'href="../models/exercise-bert-40k-8l-8h/index.html#d-layer-query"' in html
    assert 'href="../models/transformer-seed-one-layer/index.html#derivation"' in html


def test_the_errata_list_numbers_what_the_headings_number(files: dict[str, str]) -> None:
    """The list at the top numbers the errata as their headings do; the training rules, unnumbered under
    their own heading, are listed under it, not as errata 13 to 15."""
    html = files["errata/index.html"]
    start = html.index('<nav aria-labelledby="errata-toc">')
    nav = html[start : html.index("</nav>", start)]
    numbered = re.findall(r'<li><a href="#([^"]+)">', nav[nav.index("<ol>") : nav.index("</ol>")])
    headings = dict(re.findall(r'<h2 id="([^"]+)">(\d+)\. ', html))
    assert [headings.get(anchor) for anchor in numbered] == [str(n) for n in range(1, len(numbered) + 1)]
    assert len(numbered) == len(headings) == 12
    rest = nav[nav.index("</ol>") :]
    assert '<a href="#compute">' in rest
    compute = re.findall(r'<li><a href="#([^"]+)">', rest)
    assert len(compute) == 3 and all(f'<h3 id="{anchor}">' in html for anchor in compute)


def test_errata_and_exercises_are_in_learn(files: dict[str, str]) -> None:
    index = files["index.html"]
    assert '<a href="errata/index.html">Errata: common derivations checked</a>' in index
    assert '<a href="exercises/index.html">Exercises: BERT&#39;s size, worked</a>' in index


# Exercises -----------------------------------------------------------------------------------------


def test_exercise_answers() -> None:
    answers = {x.id: (x.answer, x.model.total, x.model.inventory.class_name) for x in EXERCISES.values()}
    assert answers == {
        "vocabulary-30000": (109_081_344, 109_081_344, "BertModel"),
        "forty-k-eight-layers": (88_409_856, 88_409_856, "BertModel"),
        "classifier-5": (3_845, 109_486_085, "BertForSequenceClassification"),
        "classifier-2": (1_538, 177_854_978, "BertForSequenceClassification"),
        "keras-bert": (109_705_010, 109_705_010, "BertForPreTraining"),
        "lora-query-value": (298_757, 109_486_085, "BertForSequenceClassification"),
    }


def test_exercise_steps() -> None:
    vocab = EXERCISES["vocabulary-30000"]
    assert [s.count for s in vocab.compare] == [23_440_896, 109_482_240, 400_896]
    forty = {s.label: s.count for s in EXERCISES["forty-k-eight-layers"].lines}
    assert forty["One projection split into A = 8 heads of H/A = 96"] == 589_824
    assert forty["encoder layer × 8"] == 56_702_976 and forty["embeddings"] == 31_116_288
    five = [s.count for s in EXERCISES["classifier-5"].lines]
    assert five == [3_845, 109_482_240]


def test_language_identifier_sits_on_multilingual_cased_bert() -> None:
    """English/Hindi needs multilingual cased BERT: 177,853,440 + 1,538 = 177,854,978."""
    multilingual, exercise = reference_for("bert-base-multilingual-cased"), reference_for("exercise-language-id-2")
    assert exercise["class"] == "BertForSequenceClassification"
    assert multilingual["total"] + 768 * 2 + 2 == exercise["total"] == 177_853_440 + 1_538 == 177_854_978
    two = EXERCISES["classifier-2"]
    assert [s.count for s in two.lines] == [1_538, multilingual["total"]]
    assert two.title == "A 2-class language identifier on multilingual cased BERT-Base's [CLS]"
    assert BY_ID["exercise-language-id-2"].card.config["vocab_size"] == 119_547


def test_the_exercises_say_what_the_assignment_chose_and_what_they_chose() -> None:
    """The assignment's classifiers sit on "BERT" of hidden size 768, beside its own first model (~218 million):
    the cards say so before setting them on BERT-Base, and the 40,000-token question says what it counts."""
    for card_id in ("exercise-topic-classifier-5", "exercise-language-id-2"):
        notes = " ".join(BY_ID[card_id].card.notes.texts["en"].split())
        assert "~218 million" in notes and "first question" in notes, card_id
        assert "has in mind" not in notes and "on BERT-Base's [CLS]" not in notes, card_id
    forty = EXERCISES["forty-k-eight-layers"]
    assert "the bare encoder with its pooler" in forty.question
    assert forty.answer == forty.model.total and forty.model.inventory.class_name == "BertModel"
    assert any(part.block.key == "pooler" and part.value > 0 for part in forty.model.derivation.blocks)


def test_uncased_accent_stripping_deletes_devanagari_marks() -> None:
    """The rule of transformers' BasicTokenizer._run_strip_accents: NFD, then drop every mark of category Mn."""
    import unicodedata

    def strip_accents(text: str) -> str:
        return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")

    assert strip_accents("में") == "म"  # the vowel sign E and the anusvara go
    assert strip_accents("हिन्दी") == "हिनदी"  # the virama goes, joining what it separated
    assert strip_accents("café") == "cafe"
    assert '"में" arrives as "म"' in BY_ID["exercise-language-id-2"].card.notes.texts["en"]


def test_keras_bert_layers_hold_the_same_tensors() -> None:
    keras = EXERCISES["keras-bert"]
    layers = {k.layer: k.count for k in keras.keras}
    assert layers["Encoder-1-MultiHeadSelfAttention"] == 2_362_368  # 4(H² + H): no LayerNorm inside
    assert layers["Encoder-1-MultiHeadSelfAttention-Norm"] == 1_536
    assert layers["Embedding-Token"] == 23_040_000
    assert layers["MLM-Sim"] == 30_000 and layers["NSP-Dense"] == 590_592 and layers["NSP"] == 1_538
    per_layer = sum(v for k, v in layers.items() if k.startswith("Encoder-"))
    assert per_layer == 7_087_872
    assert sum(layers.values()) + 11 * per_layer == 109_705_010 == BY_ID["exercise-keras-bert-pretraining"].total


def test_exercises_page(files: dict[str, str]) -> None:
    page = text_of(files["exercises/index.html"])
    assert "Parameters: 88,409,856." in page
    assert "Task-specific parameters: 3,845 (the whole model: 109,486,085)." in page
    assert "Task-specific parameters: 1,538 (the whole model: 177,854,978)." in page
    assert "Difference: (30,522 − 30,000) × H 522 × H 400,896" in page
    assert "All layers, the encoder layers 12 times 109,705,010" in page
    assert 'href="../models/exercise-keras-bert-pretraining/index.html#derivation"' in files["exercises/index.html"]


# Original checkpoint names -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("card_id", "name", "variable", "shape", "layout"),
    [
        (
            "bert-base-uncased",
            "embeddings.word_embeddings.weight",
            "bert/embeddings/word_embeddings",
            (30_522, 768),
            Layout.SAME,
        ),
        ("bert-base-uncased", "embeddings.LayerNorm.weight", "bert/embeddings/LayerNorm/gamma", (768,), Layout.SAME),
        (
            "bert-base-uncased",
            "encoder.layer.3.attention.self.query.weight",
            "bert/encoder/layer_3/attention/self/query/kernel",
            (768, 768),
            Layout.TRANSPOSED,
        ),
        (
            "bert-base-uncased",
            "encoder.layer.0.intermediate.dense.weight",
            "bert/encoder/layer_0/intermediate/dense/kernel",
            (768, 3_072),
            Layout.TRANSPOSED,
        ),
        (
            "bert-base-uncased",
            "encoder.layer.11.output.LayerNorm.bias",
            "bert/encoder/layer_11/output/LayerNorm/beta",
            (768,),
            Layout.SAME,
        ),
        ("bert-large-uncased", "pooler.dense.weight", "bert/pooler/dense/kernel", (1_024, 1_024), Layout.TRANSPOSED),
        (
            "bert-base-uncased-pretraining",
            "cls.predictions.bias",
            "cls/predictions/output_bias",
            (30_522,),
            Layout.SAME,
        ),
        (
            "bert-base-uncased-pretraining",
            "cls.seq_relationship.weight",
            "cls/seq_relationship/output_weights",
            (2, 768),
            Layout.SAME,
        ),
        ("exercise-topic-classifier-5", "classifier.weight", "output_weights", (5, 768), Layout.SAME),
    ],
)
def test_tf_names(card_id: str, name: str, variable: str, shape: tuple[int, ...], layout: Layout) -> None:
    model = BY_ID[card_id]
    tensor = model.inventory.tensor(name)
    found = model.tf_name(tensor)
    assert found is not None
    assert (found.variable, found.shape(tensor.shape), found.layout) == (variable, shape, layout)


def test_tied_decoder_has_no_variable_of_its_own() -> None:
    model = BY_ID["bert-base-uncased-pretraining"]
    decoder = next(t for t in model.inventory.tied if t.name == "cls.predictions.decoder.weight")
    found = model.tf_name(decoder)
    assert found is not None and found.layout is Layout.NONE and found.variable == "bert/embeddings/word_embeddings"


def test_only_bert_cards_have_tf_names(files: dict[str, str]) -> None:
    assert tf_name(BY_ID["roberta-base"].card, "embeddings.word_embeddings.weight") is None
    assert 'id="tf-names"' not in files["models/roberta-base/index.html"]
    html = files["models/bert-base-uncased-pretraining/index.html"].replace("<wbr>", "")  # names break at / and .
    row = re.search(r'<tr id="tf-bert.encoder.layer.0.intermediate.dense.weight">(.*?)</tr>', html, re.S)
    assert row is not None
    assert "<code>bert/encoder/layer_0/intermediate/dense/kernel</code>" in row.group(1)
    assert "[768, 3,072]" in row.group(1) and "[3,072, 768]" in row.group(1) and "transposed: [in, out]" in row.group(1)
    assert "none of its own: reuses <code>bert/embeddings/word_embeddings</code>" in html


def test_exercise_models_label_their_checkpoint_names_hypothetical(files: dict[str, str]) -> None:
    exercise = files["models/exercise-topic-classifier-5/index.html"]
    assert 'id="tf-names"' in exercise  # the anchor stays for every BERT card
    assert "Checkpoint names (hypothetical)" in exercise and "No checkpoint of this model exists." in exercise
    assert "the TensorFlow variables google-research/bert's code gives them" in exercise
    real = files["models/bert-base-uncased/index.html"]
    assert "TensorFlow checkpoint names" in real and "hypothetical" not in text_of(real).lower()
    # TinyBERT and all-MiniLM were trained in PyTorch: no page says their tensors were converted from TensorFlow.
    for card in ("bert-base-uncased", "tinybert-general-4l-312d", "all-minilm-l6-v2"):
        assert "were converted from" not in files[f"models/{card}/index.html"], card
    assert "A model trained in PyTorch (TinyBERT, the sentence-transformers models) has no such" in text_of(real)


def test_optimizer_slots_belong_to_training_checkpoints_only(files: dict[str, str]) -> None:
    page = files["models/bert-base-uncased/index.html"]
    assert "Only a checkpoint written during training (by <code>run_pretraining.py</code> or" in page
    assert "<code>…/adam_m</code>, <code>…/adam_v</code>) and <code>global_step</code>" in page
    assert "Checkpoints also carry optimizer slots" not in page
    # transformers 5 has no load_tf_weights_in_bert (the reference venv's 5.23 defines none).
    assert "by these rules, up to transformers 4; version 5 no longer reads TensorFlow checkpoints." in page
