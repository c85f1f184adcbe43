"""The errata's published methods as data (generator/analysis/erratum_methods.py), for the answer checks.

The wrong figures come from the sources (/work/shared/CLAIMS.md, the seeds): the methods must give
them on the cards they were published for. The errata page, the exercises' check box and the
calculator read the same definitions; the calculator's copy is evaluated here without the
JavaScript, with the independent evaluator of tests/test_calculator.py, against every card.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any

import pytest
from test_calculator import CARDS, document, evaluate, polynomial, value, whole

from conftest import MODELS, ROOT, card_by_id
from generator.analysis.erratum_methods import ERRATUM_METHODS, candidates
from generator.cards.card import Card, load_cards
from generator.counting.inventory import count_parameters
from generator.counting.methods import Method
from generator.site.pages import calculator, errata, exercises
from generator.site.views import model_of


def found(card_id: str) -> set[tuple[str, int]]:
    return {(c.erratum, c.value) for c in candidates(count_parameters(card_by_id(card_id)))}


@pytest.mark.parametrize(
    ("card_id", "erratum", "figure"),
    [
        # google-research/bert#656: the bert-large table's total, the intermediate bias left out.
        ("bert-large-uncased", "intermediate-bias", 335_043_584),
        # The same issue: "12 * 768 * 12 = 110M"; the product is 110,592.
        ("bert-base-uncased", "lha-product", 110_592),
        # Its one-layer Transformer listing: 47 rows that add up to 15,676,928 (the shared table three times).
        ("transformer-seed-one-layer", "tied-twice", 15_676_928),
        # The keras-bert thread: BertForPreTraining counted instead of the bare encoder (2,362,368 per layer aside).
        ("bert-base-uncased", "pooler-and-heads", 110_106_428),
    ],
)
def test_a_published_wrong_figure_is_what_its_method_gives(card_id: str, erratum: str, figure: int) -> None:
    assert (erratum, figure) in found(card_id)


def test_the_errata_page_recomputes_with_the_same_methods() -> None:
    models = [model_of(card_by_id(i)) for i in sorted({n for _, needs in errata.BUILDERS for n in needs})]
    for erratum in errata.pages(models)[0].gather()["errata"]:
        if erratum.their_total is None or erratum.id == "vocabulary-30000":
            continue  # vocabulary-30000 is worked on the exercise card, whose V is the round one
        assert (erratum.id, erratum.their_total) in found(erratum.model.id), erratum.id


def test_a_mistake_that_gives_the_exact_count_is_no_candidate() -> None:
    # BERT-Base with V = 30,000 is the round vocabulary: that "mistake" gives the exact count there.
    assert not any(
        c.erratum == "vocabulary-30000" for c in candidates(count_parameters(card_by_id("exercise-bert-base-v30000")))
    )
    assert ("vocabulary-30000", 109_081_344) in found("bert-base-uncased")


def test_a_method_says_nothing_of_a_family_without_its_symbols_or_steps() -> None:
    # The 2017 Transformer has no segment table (T) and no pooler: only L·H·A and the tied names apply.
    assert {e for e, _ in found("transformer-base")} == {"lha-product", "tied-twice"}


def exported(data: dict[str, Any], head: str, config: Mapping[str, Any], total: int) -> set[tuple[str, int]]:
    """The calculator's mistakes, evaluated from the exported document alone (as calculator.js does)."""
    result = evaluate(data, head, config)
    values = {}
    for symbol in data["symbols"]:
        # A derived symbol (a head's size, H / A) is computed, as calculator.js computes it.
        v = value(symbol["value"], config) if symbol["value"] else config.get(symbol["key"])
        if whole(v):
            values[symbol["name"]] = v
    out = set()
    for mistake in data["mistakes"]:
        if not all(s in values for _, mono in mistake["theirs"] for s, _ in mono):
            continue
        replaced, complete = 0, True
        for key, keys in mistake["replaces"]:
            index = next((i for i, b in enumerate(result.blocks) if b["key"] == key), None)
            if index is None:
                complete = False
                break
            block = result.blocks[index]
            steps = [s for s in block["steps"] if not keys or s["key"] in keys]
            complete = complete and len(steps) == (len(keys) or len(block["steps"]))
            copies = polynomial(block["copies"], values)
            replaced += copies * sum(polynomial(s["formula"], values) for s in steps)
        if complete:
            theirs = polynomial(mistake["theirs"], values)
            out.add((mistake["erratum"], total - replaced + theirs if mistake["replaces"] else theirs))
    return {m for m in out if m[1] != total}


@pytest.mark.parametrize("card", CARDS, ids=[c.id for c in CARDS])
def test_the_calculators_copy_gives_the_same_numbers(card: Card) -> None:
    inventory = count_parameters(card)
    data = document(card.family.name)
    assert data["mistakes"] == [m.to_json() for m in ERRATUM_METHODS]
    # The page counts the other heads itself, and leaves "tied weights counted twice" to the errata page.
    others = {
        count_parameters(dataclasses.replace(card, head=h)).total for h in card.family.heads if h is not card.head
    }
    heads = {("pooler-and-heads", total) for total in others if total != inventory.total}
    python = {(c.erratum, c.value) for c in candidates(inventory) if c.erratum != "tied-twice"}
    assert exported(data, card.head.value, card.config, inventory.total) | heads == python


def test_each_exercise_embeds_its_answer_and_the_printed_slips() -> None:
    page = exercises.pages([model_of(card) for card in load_cards(MODELS)])[0]
    checks = {x.id: json.loads(x.check) for x in page.gather()["exercises"]}
    forty = checks["forty-k-eight-layers"]
    assert forty["answer"] == str(count_parameters(card_by_id("exercise-bert-40k-8l-8h")).total)
    # The assignment's printed answer, "≈ 218,671,424", slips and all (seed 003).
    printed = [m for m in forty["mistakes"] if m["printed"]]
    assert [(m["value"], m["erratum"], m["title"]) for m in printed] == [
        ("218671424", "per-head-projections", "Projections counted once per head")
    ]
    # The textbook's printed total for V = 30,000 (seed 000).
    assert ("109227552", "textbook-formula") in {
        (m["value"], m["erratum"]) for m in checks["vocabulary-30000"]["mistakes"]
    }
    # A classifier's answer is what the task adds (768 × 5 + 5, seed 003); the whole model is the other half.
    classifier = checks["classifier-5"]
    whole = count_parameters(card_by_id("exercise-topic-classifier-5")).total
    assert classifier["answer"] == "3845" and classifier["whole"] == str(whole)
    assert all(m["value"] not in (classifier["answer"], classifier["whole"]) for m in classifier["mistakes"])


def test_every_word_the_calculator_script_shows_comes_from_the_content() -> None:
    static = ROOT / "templates" / "static"
    names = ("calculator.js", "calculator-methods.js", "calculator-step.js")
    script = "".join((static / name).read_text(encoding="utf-8") for name in names)
    used = set(re.findall(r"\b[th]\(\"([a-z0-9-]+)\"", script))
    used |= {
        f"{g}{suffix}" for g in ("training", "sizes", "structure", "checked", "compute") for suffix in ("", "-hint")
    }  # h(group + "-hint")
    used |= {"tensors-of-one", "tensors-of-the"}  # chosen by a condition
    used |= set(re.findall(r"\bS\[\"([a-z-]+)\"\]", script))  # read as they are (a rule's message template)
    used |= set(re.findall(r"\[\"([a-z0-9-]+)\", function", script))  # the training step's rows: h(row[0])
    used |= {"meaning-batch", "meaning-seq"}  # S["meaning-" + input.key]
    used |= {"seq-too-long-numbered", "seq-too-long-fixed"}  # S[too.message]: how the family numbers positions
    used |= set(re.findall(r"new Refusal\(\"[a-z_]+\", \"([a-z-]+)\"", script))  # a refusal's words, by key
    used |= set(re.findall(r"notDerived\(\"([a-z0-9-]+)\"", script))  # why a method's step is not derived, by key
    used -= {"method-", "tuning-"}  # h("method-" + m) and h("tuning-" + key): each method's name, each setting's
    used |= {f"method-{m.value}" for m in Method}
    used |= {
        f"tuning-{key}{suffix}" for key in ("rank", "targets", "feedforward", "tokens") for suffix in ("", "-meaning")
    }
    checks = {f"check-{k}" for k in (*exercises.CHECK_TEXTS, "close")}
    assert used - checks == set(calculator.SCRIPT_TEXTS), "calculator.js and pages/calculator.py: SCRIPT_TEXTS differ"
