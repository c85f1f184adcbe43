"""The calculator's training step in Chromium: its six figures equal the engine's.

A catalog card of every family and head is opened by address alone at b = 1 and b = 32, s = min(P, 512)
(one browser session); the page's data-value integers must be those of ``Compute.at(b, s)`` (which
tests/test_compute.py holds to torch's). Also: the link on BERT-Large's page answers an engineer's
question about its training memory, a sequence longer than the position table is refused with a fix,
and the 2017 Transformer shows no figure it never measured.
"""

from __future__ import annotations

import dataclasses
import re
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from conftest import MODELS, TEST_CARDS, card_by_id
from generator.analysis.address import query, step_query
from generator.analysis.calculator_compute import longest_of
from generator.cards.card import Card, load_card
from generator.counting.compute import count_compute, measured, step_inexact, step_refusal
from generator.counting.inventory import count_parameters
from generator.site.formats import binary

from .conftest import PHONE, WIDE, one_of_each

PAGE = "calculator/index.html"
CATALOG = [load_card(path) for path in sorted(MODELS.glob("*.yaml"))]
OUTPUTS = (
    "flops-forward",
    "flops-backward",
    "activations-fp32",
    "activations-bf16",
    "training-memory-fp32",
    "training-memory-bf16",
)


def expected(card: Any, b: int, s: int) -> dict[str, str]:
    figures = count_compute(card).at(b, s)
    values = (
        figures.forward,
        figures.backward,
        figures.activations["fp32"],
        figures.activations["bf16"],
        figures.training_memory["fp32"],
        figures.training_memory["bf16_mixed"],
    )
    return dict(zip(OUTPUTS, map(str, values), strict=True))


def read_step(page: Any) -> dict[str, str]:
    page.wait_for_selector("#training-memory-bf16[data-value]", state="attached", timeout=5_000)
    found: dict[str, str] = page.evaluate(
        "ids => Object.fromEntries(ids.map(id => [id, document.getElementById(id).getAttribute('data-value')]))",
        list(OUTPUTS),
    )
    return found


def test_the_page_equals_the_python_figures_for_a_card_of_every_family_and_head(site_url: str, open_page: Any) -> None:
    """The page runs one script on its family's exported rules, whatever the card. Those rules give every
    card's figures (tests/test_calculator_compute.py, without a browser), so the script is checked here
    on one catalog card of each family and head, drawn with a fixed seed."""
    page = open_page(WIDE)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    started = time.monotonic()
    mismatches, opened = [], 0
    # A card whose step no polynomial says has no figures to compare (BigBird's block-sparse models).
    stepped = [c for c in CATALOG if measured(c.family) and step_inexact(c) is None]
    sample = one_of_each(stepped, lambda c: (c.family.name, c.head))
    for card in sample:
        seq, _ = step_query(card.family, card.head, card.config, 1)
        for b in (1, 32):
            address = f"{PAGE}?{query(card.family, card.head, card.config)}&batch={b}&seq={seq}"
            page.goto(site_url + address, wait_until="commit")
            found, want = read_step(page), expected(card, b, seq)
            opened += 1
            if found != want:
                mismatches.append((card.id, b, seq, found, want))
    assert errors == []
    assert mismatches == [], mismatches[:3]
    assert opened == 2 * len(sample) >= 2 * len({c.family.name for c in stepped})
    print(f"{opened} training steps in {time.monotonic() - started:.1f} s")


def shows_step(card: Card) -> bool:
    """Whether the calculator shows the card's step: a measured family, and a polynomial that says it."""
    return measured(card.family) and not step_refusal(card) and not step_inexact(card)


def test_a_catalog_card_of_every_kind_opens_with_its_count_and_its_step(site_url: str, open_page: Any) -> None:
    """A course links a catalog model's calculator by its address alone: the page shows the inventory's
    total, and for a measured family the step's six figures at b = 1, s = min(P, 512), unless no
    polynomial says the step (BigBird's block-sparse models show why instead). One card of each family,
    head and of each of those two cases, drawn with a fixed seed: a page runs its family's script on the
    address, and every card's figures in that script's document are checked without a browser
    (tests/test_calculator.py, tests/test_calculator_compute.py)."""
    page = open_page(WIDE)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    started = time.monotonic()
    mismatches = []
    sample = one_of_each(CATALOG, lambda card: (card.family.name, card.head, shows_step(card)))
    for card in sample:
        with_step = shows_step(card)
        seq, _ = step_query(card.family, card.head, card.config, 1)
        step = f"&batch=1&seq={seq}" if with_step else ""
        page.goto(f"{site_url}{PAGE}?{query(card.family, card.head, card.config)}{step}", wait_until="commit")
        page.wait_for_selector("#total[data-value]", state="attached", timeout=5_000)
        found = {"total": page.get_attribute("#total", "data-value")}
        want = {"total": str(count_parameters(card).total)}
        if with_step:
            found |= read_step(page)
            want |= expected(card, 1, seq)
        if found != want:
            mismatches.append((card.id, found, want))
    assert errors == []
    assert mismatches == [], mismatches[:3]
    print(f"{len(sample)} catalog cards in {time.monotonic() - started:.1f} s")


def test_the_piecewise_and_backward_only_rules_run_in_the_page(site_url: str, open_page: Any) -> None:
    """The test cards whose figures are not one polynomial in b and s, or that count a product only in
    the backward: DeBERTa's convolution (grouped and whole: no input copy at s = 1, a kernel gradient
    the counter overcounts), ModernBERT with one head (all of its QKV output at any b), and Longformer's
    step symbols (the padded length, and the copies made only for b > 1)."""
    page = open_page(WIDE)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    mismatches = []
    piecewise = ("test-deberta-v2-unshared-classifier", "test-deberta-v2-conv-regression", "test-modernbert-one-head")
    for name in (*piecewise, "test-longformer-masked-lm"):
        card = load_card(TEST_CARDS / f"{name}.yaml")
        for b, s in ((1, 1), (2, 1), (2, 3), (3, longest_of(card.family, card.config))):
            page.goto(f"{site_url}{PAGE}?{query(card.family, card.head, card.config)}&batch={b}&seq={s}")
            found, want = read_step(page), expected(card, b, s)
            if found != want:
                mismatches.append((name, b, s, found, want))
    assert errors == []
    assert mismatches == []


def test_bert_large_page_answers_the_engineers_question(site: Path, site_url: str, open_page: Any) -> None:
    """ "How much memory does fine-tuning BERT-Large take at batch 32 and 512 tokens?" One link away."""
    card = card_by_id("bert-large-uncased")
    html = (site / "models" / card.id / "index.html").read_text(encoding="utf-8")
    link = re.search(r'<a href="(\.\./\.\./calculator/index\.html\?[^"]*batch=32[^"]*)">([^<]*)</a>', html)
    assert link is not None
    assert link[2] == "A training step at batch size 32 and 512 tokens"
    page = open_page(WIDE)
    page.goto(site_url + f"models/{card.id}/index.html")
    page.get_by_role("link", name=link[2]).click()
    found = read_step(page)
    assert found == expected(card, 32, 512)
    memory = count_compute(card).at(32, 512).training_memory["bf16_mixed"]
    assert page.locator("#training-memory-bf16").inner_text() == f"{memory:,}"
    # In binary units as the model page prints them: ≈ 36.6 GiB, not 36.59 (and small steps in MiB or KiB).
    assert f"≈ {binary(memory)}" in page.locator("#calc-compute").inner_text()
    assert "batch=32&seq=512" in page.url


def test_the_forward_says_loss_only_where_there_is_one_and_per_token_is_exact(site_url: str, open_page: Any) -> None:
    """A base model's step has no loss (its backward starts from last_hidden_state.sum()), so its forward is
    not "loss included", as on its own page; and TinyBERT's 191,065,165,824 forward FLOPs over 16,384
    tokens are 11,661,692.25 a token, as the comparison writes them (the quarter used to be dropped)."""
    page = open_page(WIDE)
    labels = {}
    for card_id in ("tinybert-general-4l-312d", "bert-base-uncased-pretraining"):
        card = card_by_id(card_id)
        page.goto(f"{site_url}{PAGE}?{query(card.family, card.head, card.config)}&batch=32&seq=512")
        read_step(page)
        row = page.locator("tr", has=page.locator("#flops-forward"))
        labels[card.head.value] = row.locator("th").inner_text()
        figures = count_compute(card).at(32, 512)
        shown = re.findall(r"([\d,.]+) per token", row.locator(".rounded").inner_text())
        assert [Fraction(x.replace(",", "")) for x in shown] == [Fraction(figures.forward, 32 * 512)], shown
    assert labels == {"base": "Forward FLOPs", "pretraining": "Forward FLOPs (loss included)"}
    assert Fraction(count_compute(card_by_id("tinybert-general-4l-312d")).at(32, 512).forward, 32 * 512).denominator > 1


def test_a_small_step_s_bytes_are_in_kib_not_0_00_gib(site_url: str, open_page: Any) -> None:
    card = card_by_id("bert-uncased-l2-h128-a2")
    page = open_page(WIDE)
    page.goto(site_url + f"{PAGE}?{query(card.family, card.head, card.config)}&batch=1&seq=8")
    page.locator("#activations-fp32").wait_for()
    kept = count_compute(card).at(1, 8).activations["fp32"]
    assert kept < 2**20 and f"≈ {binary(kept)}" in page.locator("#calc-compute").inner_text()
    assert "0.00 GiB" not in page.locator("#calc-compute").inner_text()


def test_batch_one_keeps_modernberts_qkv_view(site_url: str, open_page: Any) -> None:
    """At b = 1 ModernBERT keeps all of its fused QKV output: the page's b = 1 piece is the engine's."""
    card = card_by_id("modernbert-large")
    page = open_page(WIDE)
    base = f"{PAGE}?{query(card.family, card.head, card.config)}"
    page.goto(site_url + base + "&batch=1")
    one = read_step(page)
    page.goto(site_url + base + "&batch=2")
    two = read_step(page)
    compute = count_compute(card)
    extra = compute.in_batch(compute.saved_bytes("fp32").batch_one).evaluate({"b": 1, "s": 512})
    assert extra > 0
    assert (one, two) == (expected(card, 1, 512), expected(card, 2, 512))
    linear = 2 * int(one["activations-fp32"]) - int(two["activations-fp32"])
    assert linear == compute.activations("fp32").evaluate({**compute.values, "b": 0, "s": 512}) + 2 * extra


def test_a_sequence_longer_than_the_positions_is_refused_with_a_fix(site_url: str, open_page: Any) -> None:
    page = open_page(PHONE)
    page.goto(site_url + PAGE + "?family=bert&head=base&seq=1000")
    error = page.locator("#calc-seq-error")
    error.wait_for()
    assert error.inner_text() == (
        "the sequence length (1000) is longer than max_position_embeddings (512), the longest input counted "
        "for this model"
    )
    assert page.locator("#calc-seq").get_attribute("aria-invalid") == "true"
    assert page.locator("#flops-forward").count() == 0
    page.get_by_role("link", name="set seq (s) to 512").click()
    assert read_step(page) == expected(card_by_id("bert-base-uncased"), 1, 512)
    page.locator("#calc-batch").fill("0")
    page.locator("#calc-batch-error").wait_for()
    assert "expected a whole number from 1 to 2,147,483,647" in page.locator("#calc-batch-error").inner_text()
    page.locator("#calc-batch").fill("8")
    page.wait_for_function("() => window.location.search.includes('batch=8')")
    assert read_step(page) == expected(card_by_id("bert-base-uncased"), 8, 512)


def test_an_empty_sequence_length_is_min_p_512(site_url: str, open_page: Any) -> None:
    card = card_by_id("bert-uncased-l2-h128-a2")
    page = open_page(WIDE)
    page.goto(site_url + f"{PAGE}?{query(card.family, card.head, card.config)}&max_position_embeddings=128")
    shrunk = dataclasses.replace(card, config={**card.config, "max_position_embeddings": 128})
    assert read_step(page) == expected(shrunk, 1, 128)
    assert page.locator("#calc-seq").get_attribute("placeholder") == "128"


def test_the_2017_transformer_shows_no_figure_it_never_measured(site_url: str, open_page: Any) -> None:
    card = card_by_id("transformer-base")
    page = open_page(WIDE)
    page.goto(site_url + f"{PAGE}?{query(card.family, card.head, card.config)}")
    page.wait_for_selector("#total[data-value]", state="attached")
    assert page.locator("#flops-forward").count() == 0
    assert page.locator("#calc-batch").count() == 0
    assert "Not measured: transformers has no class for" in page.locator("#calc-compute").inner_text()


def test_a_config_transformers_builds_but_cannot_train_shows_its_total_and_why_no_step(
    site_url: str, open_page: Any
) -> None:
    """RoBERTa-Base with pad_token_id null: the model is built (its total is exact), but RobertaEmbeddings
    numbers positions from the padding index, so the step raises: the page gives the same reason as
    ``count`` (compute.step_refusal) and no figure; the same config with its padding index has them all."""
    card = card_by_id("roberta-base")
    broken = dataclasses.replace(card, config={**card.config, "pad_token_id": None})
    page = open_page(WIDE)
    page.goto(site_url + f"{PAGE}?{query(broken.family, broken.head, broken.config)}")
    shows_no_step(page, broken, "pad_token_id is null")
    page.goto(site_url + f"{PAGE}?{query(card.family, card.head, card.config)}")
    assert read_step(page) == expected(card, 1, 512)


def shows_no_step(page: Any, card: Card, reason_starts: str) -> None:
    """The calculator counts ``card``'s parameters and, instead of a step's figures, gives the reason
    ``count`` gives (compute.step_refusal), which starts with ``reason_starts``."""
    page.wait_for_selector("#total[data-value]", state="attached")
    assert page.locator("#total").get_attribute("data-value") == str(count_parameters(card).total)
    assert page.locator("#flops-forward").count() == 0
    reason = step_refusal(card)
    assert reason is not None and reason.startswith(reason_starts)
    shown = page.locator("#calc-compute .calc-problems").inner_text()
    assert shown == f"No training step: transformers builds this model, but a step of it raises: {reason}."


def test_a_nan_dropout_is_read_as_the_page_writes_it_and_has_no_step(site_url: str, open_page: Any) -> None:
    """BERT-Base with hidden_dropout_prob NaN: nn.Dropout takes it, so the model is built, and the step's
    dropout raises on it. The model page's link writes NaN as Python's json does; the calculator reads it
    as the number, counts the parameters and gives the step check's reason, as ``count`` does."""
    card = card_by_id("bert-base-uncased")
    broken = dataclasses.replace(card, config={**card.config, "hidden_dropout_prob": float("nan")})
    address = query(broken.family, broken.head, broken.config)
    assert "hidden_dropout_prob=NaN" in address.split("&")
    page = open_page(WIDE)
    page.goto(site_url + f"{PAGE}?{address}")
    shows_no_step(page, broken, "hidden_dropout_prob is NaN")
    # The calculator's own address (and its link to this calculation) writes NaN back as it read it, not as
    # JSON.stringify would (null): reloaded, the page is the same.
    assert page.evaluate("window.location.search") == f"?{address}"
    page.reload()
    shows_no_step(page, broken, "hidden_dropout_prob is NaN")


def test_a_block_sparse_bigbird_step_equals_count_past_its_fallback_length(site_url: str, open_page: Any) -> None:
    """BigBird-RoBERTa-Base runs block-sparse attention at s = P, and full attention at 512: the script works
    out the step symbols of the padded length and of the copies kept when b > 1, and equals count at each."""
    card = card_by_id("bigbird-roberta-base")
    longest = card.config["max_position_embeddings"]
    page = open_page(WIDE)
    for b, seq in ((2, longest), (1, longest), (1, 512)):
        page.goto(site_url + f"{PAGE}?{query(card.family, card.head, card.config)}&batch={b}&seq={seq}")
        assert read_step(page) == expected(card, b, seq), (b, seq)
