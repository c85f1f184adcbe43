"""A claim that states a share ("0.08%") of what a fine-tuning method trains, read at its own precision.

A share is trainable / total, as peft's ``trainable%`` prints it, compared in integers so that
a share on the edge of rounding reads the same every time.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import card_by_id
from generator.analysis.claims import Fit, Variant, check_claims, fits
from generator.cards.card import load_card
from generator.cards.problems import InputError
from generator.cards.published import SHARE_SCALE, parse_figure, percent
from generator.counting.architecture import Head
from generator.counting.inventory import count_parameters
from generator.counting.methods import Method, Tuning, tune

CARD = """\
title: A bare encoder whose biases a paper trained
family: bert
head: base
config: {hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 2, intermediate_size: 128, vocab_size: 100}
"""


@pytest.mark.parametrize(
    ("written", "problem"),
    [
        (
            "claims:\n  - {figure: 0.08%, source: a paper}",
            "6:14: claims[0].figure: expected trained: {method: ...} beside the share 0.08%, since a share is of what a method trains",
        ),
        (
            "claims:\n  - {figure: 0.08%, counts: total, source: a paper, trained: {method: bitfit}}",
            "6:14: claims[0].figure: expected a share alone, such as 0.08%, without counts, found '0.08%'",
        ),
        (
            "claims:\n  - {figure: 0.08% + 3M, source: a paper, trained: {method: bitfit}}",
            "6:14: claims[0].figure: expected a share alone, such as 0.08%, without counts, found '0.08% + 3M'",
        ),
        (
            "claims:\n  - {figure: 0.08%, source: a paper, trained: {method: bitfit, rank: 8}}",
            "6:70: claims[0].trained.rank: expected only with method lora, found bitfit",
        ),
    ],
)
def test_a_share_is_checked_where_it_is_written(tmp_path: Path, written: str, problem: str) -> None:
    path = tmp_path / "card.yaml"
    path.write_text(CARD + written + "\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_card(path)
    assert [str(p) for p in raised.value.problems] == [f"{path}:{problem}"]


def test_a_share_holds_every_ratio_that_rounds_to_it_and_no_other() -> None:
    (part,) = parse_figure("0.08%")
    assert (part.share, part.value, part.precision) == (True, 8 * SHARE_SCALE // 10_000, SHARE_SCALE // 10_000)
    total = 10**6  # 0.075% of it is 750, 0.085% is 850
    reads = {count: fits(count, part, of=total) for count in (749, 750, 800, 849, 850)}
    assert reads == {749: None, 750: Fit.ROUNDED, 800: Fit.ROUNDED, 849: Fit.ROUNDED, 850: Fit.ROUNDED_DOWN}
    assert fits(900, part, of=total) is None
    assert percent(272_384, 335_141_888, 4) == f"{float(Fraction(272_384 * 100, 335_141_888)):.4f}%"


def test_bitfit_s_share_is_bert_large_s_biases_with_or_without_a_classifier() -> None:
    card = card_by_id("bert-large-uncased")
    inventory = count_parameters(card)
    (check,) = [c for c in check_claims(card, inventory) if c.claim.figure == "0.08%"]
    (part,) = check.parts
    biases = sum(t.count for t in inventory.tensors if t.name.endswith("bias"))
    assert (part.exact, part.of, part.share_text) == (biases, inventory.total, "0.0813%")
    assert part.match is not None and part.match.variant is Variant.AS_COUNTED and part.fit is Fit.ROUNDED

    def share(card_id: str, head: Head) -> str:
        model = card_by_id(card_id)
        tuned = tune(count_parameters(dataclasses.replace(model, head=head)), Tuning(Method.BITFIT))
        return percent(tuned.trainable, tuned.total, 2)

    # A classifier's few parameters leave the two decimals as they are; BERT-Base's biases and a
    # masked-LM head (trained whole, its biases with it) give other figures.
    assert share("bert-large-uncased", Head.SEQUENCE_CLASSIFICATION) == "0.08%"
    assert share("bert-base-uncased", Head.BASE) == "0.09%"
    assert share("bert-large-uncased", Head.MASKED_LM) == "0.40%"
