"""Published figures reconciled with the exact count ("Claims reconciled" on a model page).

Every catalog claim either matches a count of its model at the figure's own precision, or carries
a one-line explanation; the figures and counts below are exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import MODELS, reference_for
from generator.analysis.claims import Fit, Variant, fits
from generator.build.pipeline import build
from generator.cards.card import load_cards
from generator.cards.problems import InputError
from generator.cards.published import FigurePart, Scope, parse_figure
from generator.site.render import SiteOptions
from generator.site.views import Model, model_of

MODEL_LIST = [model_of(card) for card in load_cards(MODELS)]
BY_ID = {m.id: m for m in MODEL_LIST}
CLAIMS = [(m.id, index, check) for m in MODEL_LIST for index, check in enumerate(m.claim_checks)]


def check(card_id: str, figure: str):  # type: ignore[no-untyped-def]
    return next(c for c in BY_ID[card_id].claim_checks if c.claim.figure == figure)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("110M", [(110_000_000, 1_000_000, Scope.TOTAL)]),
        ("14.5M", [(14_500_000, 100_000, Scope.TOTAL)]),
        ("25.3M", [(25_300_000, 100_000, Scope.TOTAL)]),
        ("12M", [(12_000_000, 1_000_000, Scope.TOTAL)]),
        ("10,152,448", [(10_152_448, 1, Scope.TOTAL)]),
        ("109,482,240", [(109_482_240, 1, Scope.TOTAL)]),
        (
            "86M backbone + 98M embedding",
            [(86_000_000, 1_000_000, Scope.BACKBONE), (98_000_000, 1_000_000, Scope.EMBEDDINGS)],
        ),
        (
            "418M total, 131M embedding",
            [(418_000_000, 1_000_000, Scope.TOTAL), (131_000_000, 1_000_000, Scope.EMBEDDINGS)],
        ),
        ("1.07B", [(1_070_000_000, 10_000_000, Scope.TOTAL)]),
        ("100K", [(100_000, 1_000, Scope.TOTAL)]),
    ],
)
def test_parse_figure(text: str, values: list[tuple[int, int, Scope]]) -> None:
    assert [(p.value, p.precision, p.scope) for p in parse_figure(text)] == values


def test_counts_names_the_scope_of_each_number() -> None:
    parts = parse_figure("3,845", "head")
    assert [(p.value, p.scope, p.stated_scope) for p in parts] == [(3_845, Scope.HEAD, True)]
    with pytest.raises(ValueError, match="counts names 1 part"):
        parse_figure("86M + 98M", "backbone")
    with pytest.raises(ValueError, match="counts says backbone"):
        parse_figure("86M embedding", "backbone")
    with pytest.raises(ValueError, match="expected a figure such as"):
        parse_figure("about a hundred million")


def test_trailing_zeros_give_a_finer_reading_first() -> None:
    (figure,) = parse_figure("110M")
    assert figure.precisions == (1_000_000, 10_000_000)
    assert parse_figure("100K")[0].precisions == (1_000, 10_000, 100_000)
    assert parse_figure("14.5M")[0].precisions == (100_000,)
    assert parse_figure("10,152,448")[0].precisions == (1,)


def test_rounding_is_at_the_figures_precision() -> None:
    (ten,) = parse_figure("110M")
    assert fits(109_482_240, ten) is None  # 109M to the nearest 1M: 109.5M <= count < 110.5M fails
    assert fits(110_106_428, ten) is Fit.ROUNDED
    assert fits(109_482_240, ten, 10_000_000) is Fit.ROUNDED  # 105M <= count < 115M
    assert fits(102_267_648, ten, 10_000_000) is None  # Chinese BERT: 100M at that precision
    assert ten.rounded(109_482_240, 1_000_000) == "109M" and ten.rounded(109_500_000, 1_000_000) == "110M"
    assert parse_figure("14.5M")[0].rounded(14_350_248, 100_000) == "14.4M"
    (one,) = parse_figure("11M")
    assert fits(11_683_584, one) is Fit.ROUNDED_DOWN  # 12M to the nearest million; 11M only cut down
    (exact,) = parse_figure("10,152,448")
    assert fits(10_152_448, exact) is Fit.EXACT and fits(10_152_449, exact) is None
    assert FigurePart("14.5M", "14.5M", 14_500_000, 100_000, Scope.TOTAL, False).precision_text == "0.1M"
    assert parse_figure("110M")[0].precision_text == "1M"
    assert parse_figure("110M")[0].text_of(10_000_000) == "10M"
    assert exact.precision_text == "1"


@pytest.mark.parametrize(
    ("card_id", "index", "claim"), CLAIMS, ids=lambda v: str(v) if isinstance(v, str | int) else ""
)
def test_every_catalog_claim_matches_or_explains_itself(card_id: str, index: int, claim) -> None:  # type: ignore[no-untyped-def]
    assert claim.explained, (
        f"{card_id}: the figure {claim.claim.figure!r} matches no count of the model at its precision; "
        "add a one-line `explanation` to the claim (or fix the figure)"
    )


def test_explanations_are_one_line() -> None:
    for _, _, claim in CLAIMS:
        assert claim.claim.explanation is None or "\n" not in claim.claim.explanation.strip()


# (card, figure) -> (the reason shown, the card's exact count of what each number covers, the matched count)
EXPECTED = {
    ("bert-base-uncased", "110M"): ("with the pre-training heads", (109_482_240,), (110_106_428,)),
    ("bert-base-uncased", "109,482,240"): ("exact", (109_482_240,), (109_482_240,)),
    ("bert-base-cased", "110M"): (
        "a different vocabulary; with the pre-training heads",
        (108_310_272,),
        (110_106_428,),
    ),
    ("bert-base-uncased-pretraining", "110M"): ("rounding", (110_106_428,), (110_106_428,)),
    ("bert-large-uncased", "340M"): ("rounding", (335_141_888,), (335_141_888,)),
    ("bert-large-uncased", "335,043,584"): ("not within rounding", (335_141_888,), (None,)),
    ("bert-large-cased", "340M"): ("a different vocabulary; rounding", (333_579_264,), (335_141_888,)),
    ("bert-base-chinese", "110M"): (
        "a different vocabulary; with the pre-training heads",
        (102_267_648,),
        (110_106_428,),
    ),
    ("bert-base-multilingual-cased", "110M"): (
        "a different vocabulary; with the pre-training heads",
        (177_853_440,),
        (110_106_428,),
    ),
    ("bert-base-multilingual-uncased", "110M"): (
        "a different vocabulary; with the pre-training heads",
        (167_356_416,),
        (110_106_428,),
    ),
    ("albert-base-v2", "12M"): ("rounding", (11_683_584,), (11_683_584,)),
    ("albert-base-v2", "11M"): ("rounded down", (11_683_584,), (11_683_584,)),
    ("albert-large-v2", "18M"): ("rounding", (17_683_968,), (17_683_968,)),
    ("albert-large-v2", "17M"): ("rounded down", (17_683_968,), (17_683_968,)),
    ("albert-xlarge-v2", "60M"): ("rounding", (58_724_864,), (58_724_864,)),
    ("albert-xlarge-v2", "58M"): ("rounded down", (58_724_864,), (58_724_864,)),
    ("albert-xxlarge-v2", "223M"): ("rounding", (222_595_584,), (222_595_584,)),
    ("albert-xxlarge-v2", "235M"): ("not within rounding", (222_595_584,), (None,)),
    ("all-minilm-l6-v2", "22M"): ("rounded down", (22_713_216,), (22_713_216,)),
    ("deberta-v3-base", "86M backbone + 98M embedding"): (
        "with the masked-LM head; rounding",
        (85_449_216, 98_382_336),
        (86_169_444, 98_382_336),
    ),
    ("deberta-v3-base", "183M total"): ("rounded down", (183_831_552,), (183_831_552,)),
    ("deberta-v3-large", "304M backbone + 131M embedding"): (
        "with the masked-LM head; rounding",
        (302_835_712, 131_176_448),
        (304_015_460, 131_176_448),
    ),
    ("deberta-v3-large", "418M total, 131M embedding"): (
        "not within rounding",
        (434_012_160, 131_176_448),
        (None, 131_176_448),
    ),
    ("deberta-v3-small", "44M backbone"): ("with the masked-LM head", (42_921_984,), (43_642_212,)),
    ("deberta-v3-small", "143M total, 98M embedding"): (
        "not within rounding",
        (141_304_320, 98_382_336),
        (None, 98_382_336),
    ),
    ("deberta-v3-xsmall", "22M backbone + 48M embedding"): (
        "not within rounding",
        (21_490_944, 49_191_168),
        (21_767_652, None),
    ),
    ("distilbert-base-uncased", "66M"): ("rounding", (66_362_880,), (66_362_880,)),
    ("distilbert-base-cased", "65M"): ("rounding", (65_190_912,), (65_190_912,)),
    ("distilbert-base-multilingual-cased", "134M"): ("rounded down", (134_734_080,), (134_734_080,)),
    ("electra-small-discriminator", "14M"): ("rounding", (13_549_057,), (13_549_057,)),
    ("electra-base-discriminator", "110M"): ("with the masked-LM head", (109_483_009,), (109_514_298,)),
    ("electra-large-discriminator", "335M"): ("rounding", (335_142_913,), (335_142_913,)),
    ("ernie-3.0-base-zh", "118M"): ("rounding", (117_944_832,), (117_944_832,)),
    ("ernie-3.0-medium-zh", "75M"): ("rounding", (75_427_584,), (75_427_584,)),
    ("ernie-3.0-mini-zh", "27M"): ("rounding", (26_949_504,), (26_949_504,)),
    ("layoutlm-base-uncased", "113M"): ("rounding", (112_627_968,), (112_627_968,)),
    ("layoutlm-large-uncased", "343M"): ("not within rounding", (339_336_192,), (None,)),
    ("mpnet-base", "109M"): ("rounded down", (109_518_527,), (109_518_527,)),
    ("mobilebert-uncased", "25.3M"): ("not within rounding", (24_581_888,), (None,)),
    ("modernbert-base", "149M"): ("rounding", (149_014_272,), (149_014_272,)),
    ("modernbert-large", "395M"): ("rounding", (394_781_696,), (394_781_696,)),
    ("roberta-base", "125M"): ("rounding", (124_645_632,), (124_645_632,)),
    ("roberta-base", "0.3M"): ("rounding", (294_912,), (294_912,)),  # LoRA r = 8 on query and value: 24 × 8 × 1,536
    ("roberta-large", "355M"): ("rounding", (355_359_744,), (355_359_744,)),
    ("roberta-large", "0.8M"): ("rounding", (786_432,), (786_432,)),  # 48 × 8 × 2,048
    # peft's IA3 notebook, run with an older peft: IA3 on four modules of each layer and the classifier twice.
    ("roberta-large", "2,201,604"): ("not within rounding", (172_032,), (None,)),
    ("bert-large-uncased", "0.08%"): ("rounding", (272_384,), (272_384,)),  # BitFit: every bias, 0.0813%
    ("tinybert-general-4l-312d", "14.5M"): ("with the pre-training heads", (14_350_248,), (14_479_676,)),
    ("transformer-base", "65M"): ("not within rounding", (63_136_768,), (None,)),
    ("transformer-big", "213M"): ("not within rounding", (214_353_920,), (None,)),
    ("transformer-seed-one-layer", "10,152,448"): ("exact", (10_152_448,), (10_152_448,)),
    ("camembert-base", "110M"): ("rounded down", (110_621_952,), (110_621_952,)),
    ("camembert-large", "335M"): ("without the pooler", (336_661_504,), (335_611_904,)),
    ("deberta-base", "100M backbone"): ("rounding", (99_996_672,), (99_996_672,)),
    ("deberta-large", "350M backbone"): ("rounding", (353_689_600,), (353_689_600,)),
    ("deberta-xlarge", "700M backbone"): ("rounded down", (706_330_624,), (706_330_624,)),
    ("esm2-t6-8m-ur50d", "8M"): ("rounding", (7_512_474,), (7_512_474,)),
    ("esm2-t12-35m-ur50d", "35M"): ("not within rounding", (33_501_394,), (None,)),
    ("esm2-t30-150m-ur50d", "150M"): ("rounding", (148_140_154,), (148_140_154,)),
    ("esm2-t33-650m-ur50d", "650M"): ("rounding", (651_043_254,), (651_043_254,)),
    ("esm2-t36-3b-ur50d", "3B"): ("rounding", (2_839_005_634,), (2_839_005_634,)),
    ("xlm-roberta-base", "250M"): ("not within rounding", (278_043_648,), (None,)),
    ("xlm-roberta-large", "560M"): ("rounding", (559_890_432,), (559_890_432,)),
    ("xlm-roberta-xl", "3.5B"): ("rounding", (3_482_485_760,), (3_482_485_760,)),
    ("xlm-roberta-xxl", "10.7B"): ("rounding", (10_712_735_744,), (10_712_735_744,)),
    ("jina-embeddings-v3", "570M"): ("not within rounding", (559_364_096,), (None,)),
    ("eurobert-210m", "210M"): ("rounding", (211_766_016,), (211_766_016,)),
    ("eurobert-610m", "610M"): ("rounding", (607_874_688,), (607_874_688,)),
    ("eurobert-2.1b", "2.1B"): ("rounding", (2_107_590_912,), (2_107_590_912,)),
    ("longformer-base-4096", "149M"): ("rounding", (148_659_456,), (148_659_456,)),
    ("longformer-large-4096", "435M"): ("rounding", (434_600_960,), (434_600_960,)),
    ("exercise-topic-classifier-5", "3,845"): ("exact", (3_845,), (3_845,)),
    ("exercise-language-id-2", "1,538"): ("exact", (1_538,), (1_538,)),
    ("exercise-bert-base-v30000", "109,227,552"): ("not within rounding", (109_081_344,), (None,)),
    ("exercise-bert-40k-8l-8h", "218,671,424"): ("not within rounding", (88_409_856,), (None,)),
    ("nomic-embed-text-v1.5", "137M"): ("rounding", (136_731_648,), (136_731_648,)),
    ("gte-multilingual-base", "305M"): ("rounding", (305_368_320,), (305_368_320,)),
}


@pytest.mark.parametrize(
    ("key", "expected"),
    list(EXPECTED.items()),
    ids=lambda v: "/".join(v) if isinstance(v, tuple) and isinstance(v[0], str) and len(v) == 2 else "",
)
def test_claim_explanations_exact(
    key: tuple[str, str], expected: tuple[str, tuple[int, ...], tuple[int | None, ...]]
) -> None:
    reason, exact, matched = expected
    found = check(*key)
    assert found.reason == reason
    assert tuple(p.exact for p in found.parts) == exact
    assert tuple(p.match.count if p.match else None for p in found.parts) == matched


def test_every_catalog_claim_is_in_the_expected_table() -> None:
    assert {(card_id, c.claim.figure) for card_id, _, c in CLAIMS} == set(EXPECTED)


def test_matched_variants_and_differences() -> None:
    tinybert = check("tinybert-general-4l-312d", "14.5M").parts[0]
    assert tinybert.match is not None and tinybert.match.variant is Variant.OTHER_HEAD
    assert tinybert.match.class_name == "BertForPreTraining"
    assert tinybert.difference == 149_752  # 14,500,000 − 14,350,248
    chinese = check("bert-base-chinese", "110M")
    assert chinese.vocabulary == (30_522, 21_128)
    assert chinese.parts[0].difference == 7_732_352
    base = check("bert-base-uncased", "110M").parts[0]
    assert base.difference == 517_760 and f"{base.relative:.4f}" == "0.0047"


def test_bert_base_110m_is_the_checkpoint_with_its_pretraining_heads() -> None:
    """110M is BertForPreTraining to the nearest million; BertModel is 109M, not "110M to the nearest 10M"."""
    bare, heads = reference_for("bert-base-uncased"), reference_for("bert-base-uncased-pretraining")
    assert (bare["class"], heads["class"]) == ("BertModel", "BertForPreTraining")
    assert round(bare["total"] / 10**6) == 109 and round(heads["total"] / 10**6) == 110
    for card_id in ("bert-base-uncased", "bert-base-uncased-pretraining"):
        for found in (c for c in BY_ID[card_id].claim_checks if c.claim.figure == "110M"):
            (part,) = found.parts
            assert part.match is not None and part.match.count == heads["total"]
            assert part.match.class_name == heads["class"]
            assert (part.precision, part.coarse) == (1_000_000, False)
    (part,) = check("bert-base-uncased", "110M").parts
    assert (part.exact, part.exact_rounded) == (bare["total"], "109M")


def test_bert_base_cased_110m_is_the_uncased_figure_reused() -> None:
    """110M is counted with the uncased vocabulary (30,522), not rounded from the cased count."""
    cased = reference_for("bert-base-cased")
    own_vocab = cased["tensors"][0]["shape"][0]  # embeddings.word_embeddings.weight is [V, H]
    assert cased["tensors"][0]["name"] == "embeddings.word_embeddings.weight" and own_vocab == 28_996
    for found in (c for c in BY_ID["bert-base-cased"].claim_checks if c.claim.figure == "110M"):
        assert found.vocabulary == (30_522, own_vocab)
        (part,) = found.parts
        assert part.exact == cased["total"] and part.exact_rounded == "108M"
        assert part.match is not None and part.match.count == reference_for("bert-base-uncased-pretraining")["total"]


def test_a_figure_matched_only_at_ten_million_says_so() -> None:
    large = reference_for("bert-large-uncased")["total"]
    (part,) = check("bert-large-uncased", "340M").parts
    assert part.exact == large and round(large / 10**6) == 335  # 335M to the nearest million, not 340M
    assert part.coarse and part.precision_text == "10M"
    assert part.match is not None and part.match.variant is Variant.AS_COUNTED


def test_model_page_shows_each_claim_explained() -> None:
    from generator.site.render import Renderer, SiteOptions

    renderer = Renderer(SiteOptions(search=False))
    chinese = renderer.model_files(BY_ID["bert-base-chinese"])["models/bert-base-chinese/index.html"].decode()
    assert "<strong>110M</strong>" in chinese
    assert "Exact count of the model 102,267,648; the figure is 7,732,352 (7.6%) higher." in chinese
    assert (
        "<strong>A different vocabulary:</strong> counted with a vocabulary of 30,522 instead of this card's "
        "21,128, with the pre-training heads (<code>BertForPreTraining</code>), the model holds 110,106,428, which is "
        "110M to the nearest 1M. This card's own count, 102,267,648, is 102M to the nearest 1M."
    ) in chinese
    xsmall = renderer.model_files(BY_ID["deberta-v3-xsmall"])["models/deberta-v3-xsmall/index.html"].decode()
    assert (
        "<em>48M embedding</em>: Exact count of the embeddings 49,191,168; the figure is 1,191,168 (2.4%) lower."
        in xsmall
    )
    assert (
        "(<code>DebertaV2ForMaskedLM</code>), everything but the embeddings holds 21,767,652, which is 22M to the nearest 1M."
        in xsmall
    )
    assert "<strong>Note:</strong> The backbone figure matches" in xsmall
    base = renderer.model_files(BY_ID["bert-base-uncased"])["models/bert-base-uncased/index.html"].decode()
    assert (
        "<strong>Another head:</strong> with the pre-training heads (<code>BertForPreTraining</code>), the model holds "
        "110,106,428, which is 110M to the nearest 1M. This card's own count, 109,482,240, is 109M to the nearest 1M."
    ) in base
    large = renderer.model_files(BY_ID["bert-large-uncased"])["models/bert-large-uncased/index.html"].decode()
    assert (
        "<strong>Rounding:</strong> the model holds 335,141,888, which is 340M to the nearest 10M. Read to the nearest "
        "1M, no count of this model gives 340M: the figure holds only if its trailing zero is not a significant digit."
    ) in large
    # 24 missing intermediate biases of 4,096 (the seed's table): 98,304 of 335,141,888, 0.029%, never "0.0%".
    assert "Exact count of the model 335,141,888; the figure is 98,304 (0.029%) lower." in large
    # A figure that is the count exactly says so once, with nothing to explain after it.
    assert "Exact count of the model 109,482,240; the figure is exactly the count.</p>" in base
    assert "exactly the figure" not in base


@pytest.fixture
def models_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "models"
    folder.mkdir()
    return folder


CARD = "title: t\nfamily: bert\nhead: base\nclaims:\n"


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        (
            "  - figure: about a hundred million\n    source: s\n    counts: total\n",
            "models/card.yaml:5:13: claims[0].figure: expected a figure such as 110M, 14.5M, 10,152,448 or "
            "86M backbone + 98M embedding, found 'about a hundred million'",
        ),
        (
            "  - figure: 86M + 98M\n    source: s\n    counts: backbone\n",
            "models/card.yaml:7:13: claims[0].counts: counts names 1 part(s), but the figure '86M + 98M' has 2",
        ),
        (
            "  - figure: 86M\n    source: s\n    counts: decoder\n",
            "models/card.yaml:7:13: claims[0].counts: counts: expected backbone, embedding, embeddings, encoder, "
            "head, total, found 'decoder'",
        ),
        (
            "  - figure: 110M\n    source: s\n    vocab_size: 30522.5\n",
            "models/card.yaml:7:17: claims[0].vocab_size: expected a whole number from 1 to 2,147,483,647, "
            "found the number 30522.5",
        ),
        (
            '  - figure: 110M\n    source: s\n    explanation: "two\\nlines"\n',
            "models/card.yaml:7:18: claims[0].explanation: expected one line of text",
        ),
        (
            "  - figure: 110M\n    source: s\n    explanation: 7\n",
            "models/card.yaml:7:18: claims[0].explanation: expected text, found the integer 7",
        ),
    ],
)
def test_bad_claims_are_located(models_dir: Path, claims: str, expected: str) -> None:
    (models_dir / "card.yaml").write_text(CARD + claims, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_cards(models_dir)
    assert expected in [str(p) for p in caught.value.problems]


def test_a_figure_in_words_loads_but_is_never_matched(models_dir: Path) -> None:
    (models_dir / "card.yaml").write_text(
        CARD + "  - figure: about a hundred million\n    source: s\n", encoding="utf-8"
    )
    (model,) = [model_of(card) for card in load_cards(models_dir)]
    (found,) = model.claim_checks
    assert not found.readable and not found.matched and not found.explained
    assert found.reason == "not a figure in numbers"


def test_a_figure_in_words_where_an_erratum_reads_the_printed_figure_builds(tmp_path: Path) -> None:
    """The errata and exercises read the figure the assignment's answer printed from its card's
    claim; written in words (as the card check allows) it is shown as given, never parsed."""
    folder = tmp_path / "models"
    folder.mkdir()
    text = (MODELS / "exercise-bert-40k-8l-8h.yaml").read_text(encoding="utf-8")
    assert 'figure: "218,671,424"' in text
    (folder / "exercise-bert-40k-8l-8h.yaml").write_text(
        text.replace('figure: "218,671,424"', "figure: 'about 219 million:'"), encoding="utf-8"
    )
    build(folder, tmp_path / "site", SiteOptions(search=False))
    errata = (tmp_path / "site" / "errata" / "index.html").read_text(encoding="utf-8")
    assert "printed: about 219 million:" in errata


def test_a_claim_without_match_or_explanation_is_caught(models_dir: Path) -> None:
    (models_dir / "card.yaml").write_text(CARD + "  - figure: 200M\n    source: s\n", encoding="utf-8")
    (model,) = [model_of(card) for card in load_cards(models_dir)]
    assert isinstance(model, Model)
    (found,) = model.claim_checks
    assert not found.matched and not found.explained and found.parts[0].exact == 109_482_240


@pytest.mark.parametrize("size", ["base", "large", "xlarge", "xxlarge"])
def test_albert_cites_the_paper_first_and_the_transformers_list_as_secondary(size: str) -> None:
    paper, listed = BY_ID[f"albert-{size}-v2"].card.claims
    assert paper.source == "Lan et al. 2020, the ALBERT paper (arXiv:1909.11942), Table 1"
    assert paper.url == "https://arxiv.org/abs/1909.11942"
    assert listed.source.startswith("Secondary source: transformers documentation") and "not the paper" in listed.source
