"""Exercises and a calculator without dead ends, in Chromium.

The answers stay folded until asked, on the exercises page and off the home page; the "check your
answer" boxes name the erratum a published wrong figure comes from (the figures are the sources',
from /work/shared/CLAIMS.md and the seeds, not this program's output); every fix a refused
calculator config offers, for every kind of rule the exporter has, leads to a config that every
rule accepts and whose total is the Python count.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlparse

import pytest

from generator.analysis.address import query
from generator.analysis.calculator_compute import default_seq
from generator.analysis.calculator_data import family_export, rule_groups
from generator.analysis.choices import load_choices
from generator.analysis.lora_slips import lora_slips
from generator.cards.card import Card
from generator.counting.architecture import Family, Head
from generator.counting.compute import count_compute, step_refusal
from generator.counting.conditions import HEAD
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters
from generator.counting.switches import Rule
from generator.site import content
from generator.site.pages import exercises

from .conftest import PHONE, WIDE, axe_violations
from .test_accessibility import axe_report
from .test_calculator import CARDS, read_result

EXERCISES = "exercises/index.html"
CALCULATOR = "calculator/index.html"
EXERCISE_CARDS = [c for c in CARDS if c.id.startswith("exercise-") and c.path.parent.name == "models"]


def card(card_id: str) -> Card:
    return next(c for c in CARDS if c.id == card_id)


# --- exercises ------------------------------------------------------------------------------------


def test_answers_are_hidden_until_asked(site_url: str, open_page: Any) -> None:
    page = open_page(PHONE)
    page.goto(site_url + EXERCISES)
    sections = page.locator("section.exercise")
    assert sections.count() == len(load_choices().exercises) == 6  # the LoRA question shares a card
    answers = {f"{count_parameters(c).total:,}" for c in EXERCISE_CARDS} | {
        "3,845",
        "1,538",
    }  # the classifiers (seed 003)
    shown = page.locator("main").inner_text()
    assert not [a for a in answers if a in shown], "an answer is printed before it is asked for"
    for i in range(sections.count()):
        section = sections.nth(i)
        verdict = section.locator(".verdict")
        assert not verdict.is_visible()
        section.locator("details.answer > summary").click()
        assert verdict.is_visible()
        assert re.search(r"\d{1,3}(,\d{3})+|\d+", verdict.inner_text())
    shown = page.locator("main").inner_text()
    assert all(a in shown for a in answers)


def test_the_home_page_prints_no_answer(site_url: str, open_page: Any) -> None:
    page = open_page(WIDE)
    page.goto(site_url + "index.html")
    shown = page.locator("main").inner_text()
    for exercise in EXERCISE_CARDS:
        assert f"{count_parameters(exercise).total:,}" not in shown, exercise.id
    # The exercises have a section of their own that sends the reader to the questions first.
    section = page.locator("section[aria-labelledby=exercise-models]")
    assert section.locator("a", has_text="the exercises page").get_attribute("href") == "exercises/index.html"


def check(page: Any, box: str, answer: str) -> Any:
    """Type an answer into a check box, press Check, and return its output."""
    page.locator(f"{box} input").fill(answer)
    page.locator(f"{box} button[type=submit]").click()
    output = page.locator(f"{box} output")
    output.locator("p").first.wait_for()
    return output


@pytest.mark.parametrize(
    ("exercise", "answer", "erratum"),
    [
        ("forty-k-eight-layers", "218,671,424", "per-head-projections"),  # the assignment's answer (seed 003)
        ("forty-k-eight-layers", "218671424", "per-head-projections"),  # written without commas
        ("vocabulary-30000", "109,227,552", "textbook-formula"),  # the worked solution's total (seed 000)
        ("vocabulary-30000", "110,592", "lha-product"),  # 12 × 768 × 12 (seed 001)
    ],
)
def test_a_published_wrong_figure_names_its_erratum(
    site_url: str, open_page: Any, exercise: str, answer: str, erratum: str
) -> None:
    page = open_page(WIDE)
    page.goto(site_url + EXERCISES)
    output = check(page, f"section[aria-labelledby='{exercise}'] form.check", answer)
    text = output.inner_text()
    assert text.startswith("Not exact.")
    links = [a.get_attribute("href") for a in output.locator("a").all()]
    assert f"../errata/index.html#{erratum}" in links
    page.locator(f"section[aria-labelledby='{exercise}'] a[href$='#{erratum}']").first.click()
    page.wait_for_url(re.compile(f"errata/index.html#{erratum}$"))
    assert page.locator(f"#{erratum}").is_visible()


def test_the_lora_box_names_each_usual_slip_in_words(site_url: str, open_page: Any) -> None:
    """Every slip's figure, typed in, is named by its own sentence (each figure is the engine's: lora_slips)."""
    card = next(c for c in EXERCISE_CARDS if c.id == "exercise-topic-classifier-5")
    tuned, slipped = lora_slips(count_parameters(card), exercises.LORA)
    words = content.load("exercises").section("exercises").section("lora-query-value").section("slips")
    page = open_page(WIDE)
    page.goto(site_url + EXERCISES)
    box = "section[aria-labelledby='lora-query-value'] form.check"
    assert check(page, box, f"{tuned.trainable:,}").inner_text() == f"Exact: {tuned.trainable:,} is the count."
    for s in slipped:
        output = check(page, box, f"{s.value:,}")
        said = [li.inner_text() for li in output.locator("li").all()]
        assert output.locator("p").first.inner_text() == f"Not exact. {s.value:,} is what this slip gives:"
        assert said == [words(s.slip.value)], s.slip


def test_the_check_says_exact_close_and_not(site_url: str, open_page: Any) -> None:
    forty = count_parameters(card("exercise-bert-40k-8l-8h")).total
    page = open_page(WIDE)
    page.goto(site_url + EXERCISES)
    box = "section[aria-labelledby='forty-k-eight-layers'] form.check"
    assert check(page, box, f"{forty:,}").inner_text() == f"Exact: {forty:,} is the count."
    assert check(page, box, f"{forty}").inner_text() == f"Exact: {forty:,} is the count."
    # Close: a rounded figure stands for every count that rounds to it or is cut off there.
    millions = forty / 1e6
    for rounded in (f"{millions:.1f}M", f"{int(millions)}M", f"{millions:.2f} million"):
        assert check(page, box, rounded).inner_text().startswith("Right to the precision you wrote"), rounded
    for wrong in (f"{forty + 1:,}", f"{forty - 1}", f"{millions + 0.2:.1f}M", f"{int(millions) + 2}M"):
        assert check(page, box, wrong).inner_text().startswith("Not exact"), wrong
    assert "is not a number the box can read" in check(page, box, "about a hundred million").inner_text()
    classifier = "section[aria-labelledby='classifier-5'] form.check"
    assert check(page, classifier, "3,845").inner_text() == "Exact: 3,845 is the count."
    whole = count_parameters(card("exercise-topic-classifier-5")).total
    assert check(page, classifier, f"{whole:,}").inner_text().startswith("Right for the whole model")
    # keras-bert's question asks first where the attention layer's figure comes from: that figure is right
    # for its first half (it was "no published mistake gives it"), and the whole model's count is the answer.
    keras = "section[aria-labelledby='keras-bert'] form.check"
    tensors = count_parameters(card("exercise-keras-bert-pretraining")).tensors
    layer = "bert.encoder.layer.0.attention."
    attention = sum(t.count for t in tensors if t.name.startswith(layer) and "LayerNorm" not in t.name)
    assert attention == 4 * (768 * 768 + 768)  # query, key, value and output, each with its bias
    assert check(page, keras, f"{attention:,}").inner_text() == (
        f"Right for the first half of the question: {attention:,} is the figure keras-bert's summary gives "
        "each multi-head self-attention layer. The other half asks for the whole model's count."
    )
    total = count_parameters(card("exercise-keras-bert-pretraining")).total
    assert check(page, keras, f"{total:,}").inner_text() == f"Exact: {total:,} is the count."


# --- the calculator's check -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("card_id", "answer", "erratum"),
    [
        (
            "exercise-bert-40k-8l-8h",
            "218,671,424",
            "per-head-projections",
        ),  # "I got 218,671,424", a reader's wrong answer
        ("bert-large-uncased", "335,043,584", "intermediate-bias"),  # google-research/bert#656's bert-large table
        ("bert-base-uncased", "110,592", "lha-product"),  # "12 * 768 * 12 = 110M"
        ("bert-base-uncased", "110,106,428", "pooler-and-heads"),  # BertForPreTraining counted instead
    ],
)
def test_the_calculator_says_where_a_figure_went_wrong(
    site_url: str, open_page: Any, card_id: str, answer: str, erratum: str
) -> None:
    model = card(card_id)
    page = open_page(WIDE)
    page.goto(f"{site_url}{CALCULATOR}?{query(model.family, model.head, model.config)}")
    read_result(page)
    output = check(page, "#calc-check", answer)
    assert output.inner_text().startswith("Not exact.")
    assert f"../errata/index.html#{erratum}" in [a.get_attribute("href") for a in output.locator("a").all()]
    total = count_parameters(model).total
    assert check(page, "#calc-check", f"{total:,}").inner_text() == f"Exact: {total:,} is the count."


# --- fixes ----------------------------------------------------------------------------------------

# A refused config for every rule the exporter has (family, head, what breaks it), each with the
# rule's message, so that a rule added without a case here is noticed (test_every_rule_has_a_case).
REFUSED = [
    ("bert", "base", "hidden_size=1024&num_hidden_layers=24", "is not a multiple of the number of attention heads"),
    ("bert", "base", "add_cross_attention=true", "add_cross_attention is true but is_decoder is false"),
    ("big_bird", "base", "attention_type=sparse", "BigBird knows only original_full and block_sparse"),
    ("bert", "base", "pad_token_id=40000", "is not a row of the"),
    ("albert", "base", "hidden_size=1000", "is not a multiple of the number of attention heads"),
    ("distilbert", "base", "dim=770", "does not divide dim"),
    ("distilbert", "base", "vocab_size=5&pad_token_id=9", "leaves no row for pad_token_id"),
    ("roberta", "base", "max_position_embeddings=1", "max_position_embeddings (1) leaves no row"),
    ("xlm-roberta", "masked-lm", "hidden_size=100", "is not a multiple of the number of attention heads"),
    ("electra", "pretraining", "add_cross_attention=true", "add_cross_attention is true"),
    ("deberta-v2", "base", "type_vocab_size=", "type_vocab_size must be a whole number"),
    ("deberta-v2", "base", "max_relative_positions=", "max_relative_positions must be a whole number"),
    ("deberta-v2", "base", "conv_kernel_size=", "conv_kernel_size must be a whole number"),
    ("deberta-v2", "base", "relative_attention=true&position_buckets=", "position_buckets must be a whole number"),
    ("deberta-v2", "sequence-classification", "pooler_hidden_size=-5", "is below 0"),
    ("deberta-v2", "base", "pos_att_type=5", "pos_att_type must be a string"),
    ("deberta-v2", "base", "conv_kernel_size=3&conv_groups=0", "conv_groups must be a whole number from 1"),
    ("deberta-v2", "base", "conv_kernel_size=3&conv_groups=7", "does not divide the hidden size"),
    ("mobilebert", "base", "normalization_type=rms_norm", "normalization_type must be"),
    ("mobilebert", "base", "true_hidden_size=100", "as use_bottleneck is true"),
    ("mobilebert", "base", "use_bottleneck=false&true_hidden_size=100", "as use_bottleneck is false"),
    ("mobilebert", "base", "intra_bottleneck_size=130", "the bottleneck size intra_bottleneck_size"),
    (
        "mobilebert",
        "base",
        "use_bottleneck=false&hidden_size=514",
        "is not a multiple of the number of attention heads",
    ),
    ("mobilebert", "masked-lm", "embedding_size=1024", "is larger than the hidden size"),
    ("mobilebert", "base", "use_bottleneck=false&hidden_size=0", "each attention head is 0 wide"),
    ("deberta", "base", "pos_att_type=5", "pos_att_type must be a string"),
    ("mpnet", "base", "vocab_size=1", "has no row 1"),
    ("modernbert", "base", "hidden_size=770", "is not a multiple of the number of attention heads"),
    (
        "roberta",
        "sequence-classification",
        "problem_type=%22single_label_classification%22&num_labels=1",
        "needs more than one label",
    ),
    ("bert", "sequence-classification", "problem_type=%22multi_label%22", "problem_type must be regression"),
    ("bert", "base", "hidden_dropout_prob=1.5", "hidden_dropout_prob is a dropout probability"),
    (
        "distilbert",
        "sequence-classification",
        "seq_classif_dropout=-0.5",
        "seq_classif_dropout is a dropout probability",
    ),
    ("modernbert", "base", "hidden_activation=gelux", "hidden_activation names no activation function"),
    ("transformer", "base", "d_word_vec=500", "must equal d_model"),
    ("transformer", "base", "n_tgt_vocab=100", "needs one vocabulary"),
    ("nomic_bert", "base", "hidden_size=4&num_attention_heads=8", "each attention head is 0 wide"),
    ("nomic_bert", "base", "head_dim=5", "odd and above 4"),
    ("gte", "base", "num_attention_heads=1000", "which rounds down to 0"),
    ("longformer", "base", "attention_window=0", "holds a window below 2"),
    ("longformer", "base", "attention_window=3", "holds an odd window"),
    ("longformer", "base", "attention_window=[512,512]", "not one window for each of the 12 layers"),
    ("jina_embeddings_v3", "base", "num_attention_heads=7", "is not a multiple of the number of attention heads"),
]


# Rules the form cannot break: its fields only ever hand over a whole number or nothing for
# pooler_hidden_size (an int field), and text for norm_rel_ebd (a text field). DeBERTa v1's config
# class declares max_relative_positions an int, so the type check refuses anything else first.
# EuroBERT's heads are 0 wide only with head_dim 0, which the form's size field refuses first: a hidden
# size below the head count is refused as not a multiple of it.
UNREACHABLE = {
    "each attention head is 0 wide (head_dim {head_dim}, hidden_size {hidden_size})",
    "pooler_hidden_size must be a whole number",
    "norm_rel_ebd must be a string",
    "max_relative_positions must be a whole number (below 1",
}


def test_every_kind_of_rule_has_a_case() -> None:
    """Each rule the exporter has, by its message (families share the common ones), is broken by a case above."""
    covered = set()
    for family, head, broken, _ in REFUSED:
        fixed, _ = config_at(f"?family={family}&head={head}&{broken}")
        checked = {**fixed.config, HEAD: head}
        covered |= {rule.message for rule in all_rules(fixed.family) if rule(checked)}
    everything = {rule.message for f in FAMILIES.values() for rule in all_rules(f)}
    left = {m for m in everything - covered if not any(m.startswith(u) for u in UNREACHABLE)}
    assert left == set()


def all_rules(family: Family) -> list[Rule]:
    return [rule for rules in rule_groups(family) for rule in rules]


def config_at(url: str) -> tuple[Card, dict[str, Any]]:
    """The card a calculator address stands for: the family's first card with the address's head and values."""
    params = dict(parse_qsl(urlparse(url).query, keep_blank_values=True))
    family = FAMILIES[params.pop("family")]
    head = Head(params.pop("head"))
    inputs = {i["key"]: i for i in family_export(family.name)["inputs"]}
    config = {key: i["default"] for key, i in inputs.items()}
    for key, text in params.items():
        kind = inputs[key]["kind"]
        if text in ("", "null"):
            config[key] = None
        elif kind in ("size", "int"):
            config[key] = int(text)
        elif kind in ("flag", "json"):
            try:
                config[key] = json.loads(text)
            except json.JSONDecodeError:
                config[key] = text
        else:
            config[key] = text
    first = next(c for c in CARDS if c.family is family and c.path.parent.name == "models")
    return dataclasses.replace(first, head=head, config={**first.config, **config}), config


@pytest.mark.parametrize(("family", "head", "broken", "message"), REFUSED, ids=[f"{f}-{b}" for f, _, b, _ in REFUSED])
def test_each_fix_of_a_refused_config_leads_to_a_valid_total(
    site_url: str, open_page: Any, family: str, head: str, broken: str, message: str
) -> None:
    address = f"{site_url}{CALCULATOR}?family={family}&head={head}&{broken}"
    page = open_page(WIDE)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(address)
    page.wait_for_selector(".calc-problems")
    assert message in page.locator(".calc-problems").inner_text()
    fixes = page.locator(".calc-fixes a")
    assert fixes.count() >= 1, f"no fix offered for {broken}"
    offered = [(a.inner_text(), a.get_attribute("href")) for a in fixes.all()]
    for i, (label, _) in enumerate(offered):
        page.goto(address)
        page.wait_for_selector(".calc-fixes a")
        page.locator(".calc-fixes a").nth(i).click()
        total = read_result(page)["total"]
        fixed, config = config_at(page.url)
        assert not any(check({**config, HEAD: fixed.head.value}) for check in fixed.family.build_rules), label
        assert total == str(count_parameters(fixed).total), (label, page.url)
    # The same fixes work as plain links, without the script's help (a new page load).
    for label, href in offered:
        page.goto(address.split("?")[0] + href)
        assert read_result(page)["total"] == str(count_parameters(config_at(page.url)[0]).total), label
    assert errors == []


@pytest.mark.parametrize(
    "broken",
    [
        "family=modernbert&head=base&hidden_size=770",  # 780 and 14 heads: heads of 65, which rotate in pairs
        "family=bert&head=base&hidden_act=swishy",  # gelu_10, gelu_accurate: no saved tensors declared
    ],
)
def test_a_fix_leads_to_a_config_whose_step_runs_where_one_does(site_url: str, open_page: Any, broken: str) -> None:
    """A fix was the nearest counted value even when its training step cannot run; it prefers one that runs."""
    address = f"{site_url}{CALCULATOR}?{broken}"
    page = open_page(WIDE)
    page.goto(address)
    page.wait_for_selector(".calc-fixes a")
    offered = [a.get_attribute("href") for a in page.locator(".calc-fixes a").all()]
    assert len(offered) >= 2, offered
    for href in offered:
        page.goto(address.split("?")[0] + str(href))
        fixed = config_at(page.url)[0]
        assert step_refusal(fixed) is None, href
        page.locator("#flops-forward").wait_for(state="attached")
        assert page.locator("#calc-compute .calc-problems").count() == 0, href
        figures = count_compute(fixed).at(1, default_seq(fixed.family, fixed.config))
        assert page.locator("#flops-forward").get_attribute("data-value") == str(figures.forward), href


def test_the_issues_example_offers_the_issues_fixes(site_url: str, open_page: Any) -> None:
    page = open_page(WIDE)
    page.goto(f"{site_url}{CALCULATOR}?family=bert&head=base&hidden_size=1024&num_hidden_layers=24")
    page.wait_for_selector(".calc-fixes a")
    offered = page.locator(".calc-fixes a").all_inner_texts()
    # "set the heads to 16", "set the hidden size to 1,032", and the nearest on the other side.
    assert offered == [
        "set hidden_size (H) to 1,020",
        "set hidden_size (H) to 1,032",
        "set num_attention_heads (A) to 8",
        "set num_attention_heads (A) to 16",
    ]


def test_the_last_derivation_stays_marked_out_of_date(site_url: str, open_page: Any) -> None:
    bert = card("bert-base-uncased")
    page = open_page(WIDE)
    page.goto(f"{site_url}{CALCULATOR}?{query(bert.family, bert.head, bert.config)}")
    counted = read_result(page)
    page.locator("#calc-hidden_size").fill("1000")
    page.wait_for_selector(".calc-problems")
    assert page.locator("#total").get_attribute("data-value") is None
    body = page.locator("#calc-body")
    assert "calc-stale" in (body.get_attribute("class") or "")
    note = page.locator("#calc-stale-note")
    assert note.is_visible() and note.inner_text().startswith("Out of date")
    assert note.locator("a").get_attribute("href") == f"?{query(bert.family, bert.head, bert.config)}"
    kept = page.evaluate("() => Array.from(document.querySelectorAll('td[data-block]')).map(td => td.dataset.value)")
    assert kept == [value for _, value in counted["blocks"]]
    page.locator(".calc-fixes a").first.click()
    read_result(page)
    assert "calc-stale" not in (body.get_attribute("class") or "")
    assert not note.is_visible()


def test_the_feed_forward_size_can_follow_the_hidden_size(site_url: str, open_page: Any) -> None:
    bert = card("bert-base-uncased")
    page = open_page(WIDE)
    page.goto(f"{site_url}{CALCULATOR}?family=bert&head=base")
    read_result(page)
    ratio = page.locator("#calc-keep-ratio")
    assert ratio.is_checked()  # BERT-Base holds I = 4 × H, so a new H brings I along
    page.locator("#calc-hidden_size").fill("1020")
    page.wait_for_function("() => location.search.includes('hidden_size=1020')")
    assert page.locator("#calc-intermediate_size").input_value() == "4080"
    page.locator("#calc-intermediate_size").fill("4000")  # an I of the reader's own: the box lets go
    page.wait_for_function("() => location.search.includes('intermediate_size=4000')")
    assert not ratio.is_checked()
    page.locator("#calc-hidden_size").fill("384")
    page.wait_for_function("() => location.search.includes('hidden_size=384')")
    assert page.locator("#calc-intermediate_size").input_value() == "4000"
    ratio.check()  # asked for again: I follows at once
    assert page.locator("#calc-intermediate_size").input_value() == "1536"
    config = {**bert.config, "hidden_size": 384, "intermediate_size": 1536}
    assert read_result(page)["total"] == str(count_parameters(dataclasses.replace(bert, config=config)).total)
    # A link's values stay as written: its H without I does not hold the ratio, and nothing follows.
    page.goto(f"{site_url}{CALCULATOR}?family=bert&head=base&hidden_size=1020")
    read_result(page)
    assert page.locator("#calc-intermediate_size").input_value() == "3072" and not ratio.is_checked()


def test_a_family_says_where_its_values_come_from_and_offers_its_base_model(site_url: str, open_page: Any) -> None:
    page = open_page(WIDE)
    page.goto(f"{site_url}{CALCULATOR}")
    read_result(page)
    page.select_option("#calc-family", "albert")
    page.wait_for_function("() => location.search.includes('family=albert')")
    origin = page.locator("#calc-origin").inner_text()
    # ALBERT's defaults are xxlarge's sizes (transformers' AlbertConfig): the issue's complaint.
    assert "AlbertConfig" in origin and card("albert-xxlarge-v2").title in origin
    page.locator("#calc-origin a").click()
    page.wait_for_function("() => location.search.includes('hidden_size=768')")
    assert read_result(page)["total"] == str(count_parameters(card("albert-base-v2")).total)


# --- accessibility of the new states ----------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_axe_violations_with_answers_and_checks_open(
    site_url: str, open_page: Any, output_dir: Path, scheme: str
) -> None:
    page = open_page(WIDE, scheme)
    page.goto(site_url + EXERCISES)
    check(page, "section[aria-labelledby='forty-k-eight-layers'] form.check", "218,671,424")
    check(page, "section[aria-labelledby='vocabulary-30000'] form.check", "1")
    page.evaluate("() => document.querySelectorAll('details.answer').forEach(d => d.open = true)")
    page.screenshot(path=output_dir / f"exercises-checked-{WIDE}-{scheme}.png", full_page=True)
    violations = axe_violations(page, scheme)
    assert not violations, f"axe-core on the exercises ({scheme})" + axe_report(violations)
    forty = card("exercise-bert-40k-8l-8h")
    page.goto(f"{site_url}{CALCULATOR}?{query(forty.family, forty.head, forty.config)}")
    read_result(page)
    check(page, "#calc-check", "218,671,424")
    page.locator("#calc-hidden_size").fill("770")
    page.wait_for_selector(".calc-fixes a")
    page.screenshot(path=output_dir / f"calculator-refused-{WIDE}-{scheme}.png", full_page=True)
    violations = axe_violations(page, scheme)
    assert not violations, f"axe-core on the calculator, refused ({scheme})" + axe_report(violations)


def test_the_students_homework_on_a_phone(site_url: str, open_page: Any, output_dir: Path) -> None:
    """ "6 layers, hidden 512, 30k vocabulary", from the home page at 390 px, through a refusal and its fix."""
    page = open_page(PHONE, height=844)
    page.goto(site_url + "index.html")
    page.locator("a[href='calculator/index.html']").first.click()
    read_result(page)
    page.locator("#calc-vocab_size").fill("30000")
    page.locator("#calc-num_hidden_layers").fill("6")
    assert page.locator("#calc-keep-ratio").is_checked()  # on by default: I = 4 × H comes along with H
    page.locator("#calc-hidden_size").fill("512")  # 12 heads do not divide 512
    page.wait_for_selector(".calc-fixes a")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE  # the page never scrolls sideways
    page.screenshot(path=output_dir / f"homework-refused-{PHONE}.png", full_page=True)
    page.locator(".calc-fixes a", has_text="num_attention_heads").first.click()
    total = read_result(page)["total"]
    bert = card("bert-base-uncased")
    config = {**bert.config, "vocab_size": 30_000, "num_hidden_layers": 6, "hidden_size": 512}
    config |= {"intermediate_size": 2048, "num_attention_heads": 8}
    assert total == str(count_parameters(dataclasses.replace(bert, config=config)).total)
    page.screenshot(path=output_dir / f"homework-{PHONE}.png", full_page=True)


# --- a link to an answer ---------------------------------------------------------------------------


@pytest.mark.parametrize("script", [False, True])
def test_a_link_to_an_answer_shows_it(browser: Any, site_url: str, script: bool) -> None:
    """A lecturer's link to exercises/#answer-<id> opens onto the answer, not onto "Show the answer…"."""
    context = browser.new_context(viewport={"width": WIDE, "height": 800}, java_script_enabled=script)
    try:
        page = context.new_page()
        page.goto(site_url + EXERCISES)
        ids = [
            a.removeprefix("#")
            for a in page.locator("nav[aria-labelledby=exercise-list] li a").evaluate_all(
                "as => as.map(a => a.getAttribute('href'))"
            )
        ]
        assert len(ids) == len(load_choices().exercises)
        for exercise in ids:
            page.goto(f"{site_url}{EXERCISES}#answer-{exercise}")
            verdict = page.locator(f"#answer-{exercise} .verdict")
            assert verdict.is_visible(), exercise
            assert re.search(r"\d{1,3}(,\d{3})+", verdict.inner_text())
            in_view = "v => { const r = v.getBoundingClientRect(); return r.top >= -1 && r.bottom <= innerHeight; }"
            assert verdict.evaluate(in_view), exercise
    finally:
        context.close()


def test_the_script_opens_an_answer_where_the_browser_does_not(open_page: Any, site_url: str) -> None:
    """check.js opens the fold around a fragment's target for browsers that leave it closed: a hash set without
    navigating (which Chromium does not reveal) and the hashchange event stand in for them."""
    page = open_page(WIDE)
    page.goto(site_url + EXERCISES)
    page.evaluate(
        "() => { history.replaceState(null, '', '#answer-keras-bert'); dispatchEvent(new HashChangeEvent('hashchange')); }"
    )
    assert page.locator("#answer-keras-bert .verdict").is_visible()
    assert page.locator("details.answer[open]").count() == 1
