"""The data flow the calculator's export holds, beside its compute rules, and the engine's words for no step.

``static/calculator-step.js`` reads each compute block's ``flow`` step by step beside its compute
rules, so the two must list the same steps, products and saved tensors. A family gives a step under
a method exactly where its flow is declared in every block. The browser test
(``tests/browser/test_calculator_methods.py``) holds the page's step equal to ``count --json``'s.
"""

from __future__ import annotations

import re

import pytest
from test_fine_tuning_step import DERIVED

from conftest import MODELS, TEST_CARDS
from generator.analysis.calculator_data import family_export
from generator.cards.card import load_card
from generator.count import METHOD_STEP
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters
from generator.counting.methods import Method, Tuning, tune
from generator.counting.tuned_step import LOSS_UNREACHED, VIEWS_AT_ONE, StepNotDerivedError, tuned_compute
from generator.site import content
from generator.site.pages.calculator import SCRIPT_TEXTS

# Script words named step-... that are not the engine's reasons for no step.
NOT_DETAILS = {"step-cannot-run", "step-not-exact", "step-at"}
BUILT = sorted(name for name, family in FAMILIES.items() if family.ground_truth is not None)


def test_each_compute_step_has_its_flow_step_product_for_product() -> None:
    for name in BUILT:
        for block in family_export(name)["compute"]["blocks"]:
            flow = block["flow"]
            assert len(flow["steps"]) == len(block["steps"]), name
            for step, own in zip(block["steps"], flow["steps"], strict=True):
                assert len(own["products"]) == len(step["products"]), (name, step["path"])
                assert len(own["needs"]) == len(step["saved"]), (name, step["path"])


def test_a_family_the_engine_derives_declares_its_flow_and_one_it_does_not_leaves_a_block_undeclared() -> None:
    """The page says "not derived" where a block it meets has no flow; a derived family's blocks have one (some
    variants, such as a decoder's cross-attention, may not: their configs are not derived either)."""
    some, every = set(), set()
    for name in BUILT:
        declared = [bool(b["flow"]["joins"] or b["flow"]["inputs"] or b["flow"]["outputs"]) for b in blocks_of(name)]
        some |= {name} if any(declared) else set()
        every |= {name} if all(declared) else set()
    assert some >= DERIVED and every <= DERIVED


def blocks_of(name: str) -> list[dict[str, object]]:
    return family_export(name)["compute"]["blocks"]  # type: ignore[no-any-return]


def test_the_pages_words_for_no_step_are_the_engines() -> None:
    script = content.load("calculator", "en").section("script")
    assert script.template("method-loss-unreached") == LOSS_UNREACHED
    assert METHOD_STEP in " ".join(script.template("method-step-not-derived").split())
    assert script.template("method-views-at-one") == " ".join(VIEWS_AT_ONE.split())
    assert script.template("method-step-not-derived") == METHOD_STEP + ": {detail}"


def test_the_pages_words_for_a_step_the_engine_does_not_derive_are_the_engines() -> None:
    """Each refusal the engine raises on these cards is one of the page's sentences, word for word."""
    script = content.load("calculator", "en").section("script")
    details = [script.template(key) for key in SCRIPT_TEXTS if key.startswith("step-") and key not in NOT_DETAILS]
    patterns = [re.compile(re.sub(r"\\\{\w+\\\}", ".+", re.escape(text))) for text in details]
    conv = load_card(TEST_CARDS / "test-deberta-v2-conv-regression.yaml")
    cases = [
        (load_card(MODELS / "bert-base-uncased.yaml"), Tuning(Method.LORA, targets=("layer.0.attention.self.query",))),
        (conv, Tuning(Method.LORA, targets=("conv.conv",))),
        (load_card(MODELS / "roformer-chinese-base.yaml"), Tuning(Method.LORA, targets=("embed_positions",))),
    ]
    for card, tuning in cases:
        with pytest.raises(StepNotDerivedError) as raised:
            tuned_compute(card, tune(count_parameters(card), tuning))
        assert sum(bool(p.fullmatch(str(raised.value))) for p in patterns) == 1, str(raised.value)
