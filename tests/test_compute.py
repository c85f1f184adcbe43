"""Compute and memory of a training step: every card against torch's figures, and BERT worked by hand.

The reference files (tests/reference/compute/, written by tools/compute_reference.py with torch)
hold, for each card, the forward and backward FLOPs and the saved-activation bytes in fp32 and
bf16 at several (b, s). Each figure is a polynomial of degree 1 in b and at most 2 in s, and the
points include a 2 × 3 grid that determines one, and further points that check it (one at s = P),
so matching every point proves the closed form on the whole range, not at a sample.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import ALL_CARD_PATHS, REFERENCE, TEST_CARDS, card_by_id
from generator.cards.card import load_card
from generator.counting import architecture as arch
from generator.counting import compute, layouts
from generator.counting.compute import Compute, count_compute, declared_compute, step_inexact, step_refusal
from generator.counting.compute_derivation import derive_compute, kept_at
from generator.counting.expr import to_text
from generator.counting.poly import Poly
from generator.site.render import Renderer, SiteOptions
from generator.site.views import model_of

COMPUTE = REFERENCE / "compute"
# Cards whose class cannot run a training step as defined: torch's error is the reference.
CANNOT_RUN = {
    "test-bert-no-token-types": "index_select(): self indexing axis dim should be positive",
    "test-albert-pretraining": "AlbertForPreTraining gives no loss for these labels",
    "test-deberta-v2-factorized-mlm": "a and b must have same reduction dim, but got [1, 42] X [36, 36].",
    "test-deberta-v2-pooler-id2label": "a and b must have same reduction dim, but got [1, 40] X [56, 56].",
    "test-modernbert-norm-bias-base": "Attempting to broadcast a dimension of length 16 at -1! Mismatching argument "
    "at index 1 had torch.Size([1, 1, 1, 16]); but expected shape should be broadcastable to [1, 2, 1, 15]",
}
MEASURED = [path for path in ALL_CARD_PATHS if (COMPUTE / f"{path.stem}.json").exists()]
# Cards whose step torch runs but whose figures are piecewise beyond one polynomial (Family.inexact_steps).
INEXACT = [path for path in MEASURED if step_inexact(load_card(path))]


def _reference(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((COMPUTE / f"{path.stem}.json").read_text(encoding="utf-8"))
    return data


def _cases() -> list[Any]:
    cases = []
    for path in MEASURED:
        if path.stem in CANNOT_RUN or path in INEXACT:
            continue
        cases.append(pytest.param(path, id=path.stem))
    return cases


def test_every_transformers_card_is_measured() -> None:
    """Every card but the 2017 Transformer's (no transformers class to run) has its reference."""
    missing = [p.stem for p in ALL_CARD_PATHS if p not in MEASURED and load_card(p).family.name != "transformer"]
    assert missing == []


def at_points(compute: Compute, points: list[dict[str, int]]) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """The engine's FLOPs and saved bytes at each measured (b, s), and torch's, side by side."""
    found, expected = [], []
    for point in points:
        figures = compute.at(point["batch"], point["seq"])
        found.append((figures.forward, figures.backward, figures.activations["fp32"], figures.activations["bf16"]))
        expected.append((point["forward"], point["backward"], point["fp32"], point["bf16"]))
    return found, expected


@pytest.mark.parametrize("path", _cases())
def test_matches_torch(path: Path) -> None:
    reference = _reference(path)
    card = load_card(path)
    assert card.head.value == reference["head"]
    found, expected = at_points(count_compute(card), reference["points"])
    assert found == expected


@pytest.mark.parametrize("path", INEXACT, ids=[p.stem for p in INEXACT])
def test_a_step_declared_inexact_is_one_no_polynomial_matches(path: Path) -> None:
    """A card whose family declares its step inexact: the declaration's polynomial misses torch at some
    measured point, so the page is right to show no figure (``count_compute`` refuses it)."""
    found, expected = at_points(declared_compute(load_card(path)), _reference(path)["points"])
    assert found != expected
    with pytest.raises(compute.StepNotExactError):
        count_compute(load_card(path))


def test_cards_that_cannot_run_say_why() -> None:
    """A segment table with no rows cannot be looked up; ALBERT's pre-training head with 3 sentence-order
    labels reshapes its logits to pairs and takes no sentence label, so it has no loss to train; a
    ModernBERT head size of 15 does not fit its rotary tables of 16 (odd sizes are rounded up); DeBERTa's
    heads A·D = 42 wide, read by a 36 × 36 output projection, and its pooler with pooler_hidden_size ≠ H,
    multiply mismatched shapes (the parameters exist, the forward fails). The families' step checks
    refuse exactly these cards (``step_refusal``), so their pages and ``count`` give no step figure."""
    found = {p.stem: _reference(p).get("error") for p in MEASURED if "error" in _reference(p)}
    assert found == CANNOT_RUN
    refused = {
        p.stem for p in ALL_CARD_PATHS if load_card(p).family.name != "transformer" and step_refusal(load_card(p))
    }
    assert refused == set(CANNOT_RUN)


def test_a_page_offers_the_calculators_step_only_where_a_step_runs() -> None:
    """The related pages link "A training step at batch size 32" in the calculator; for a card whose step
    transformers cannot run, that link led to the calculator's "No training step": the page offers it
    no more, and its compute section says why. A card whose step runs keeps the link."""
    renderer = Renderer(SiteOptions(search=False))
    for stem, offered in (("test-albert-pretraining", False), ("test-bert-no-token-types", False)):
        model = model_of(load_card(TEST_CARDS / f"{stem}.yaml"))
        html = renderer.model_files(model)[f"models/{model.id}/index.html"].decode()
        assert ("A training step at batch size 32" in html) is offered, stem
        assert ('id="c-not-measured"' in html) is not offered, stem
    model = model_of(card_by_id("albert-base-v2"))
    html = renderer.model_files(model)[f"models/{model.id}/index.html"].decode()
    assert "A training step at batch size 32 and 512 tokens" in html and 'id="c-not-measured"' not in html


def test_points_determine_the_polynomial() -> None:
    """The points of every file contain a 2 × 3 grid (b in {1, 2}, three lengths) and reach s = P."""
    for path in MEASURED:
        if path.stem in CANNOT_RUN:
            continue
        points = {(p["batch"], p["seq"]) for p in _reference(path)["points"]}
        card = load_card(path)
        length = card.config["max_position_embeddings"]
        seqs = {s for b, s in points if b == 1 and (2, s) in points}
        assert len(seqs) >= 3, path.stem
        assert (1, length) in points, path.stem


def _bert_base_by_hand(b: int, s: int) -> tuple[int, int, int]:
    """BertModel (BERT-Base) worked from the modeling file, independently of the declarations."""
    V, P, T, H, I, L, A = 30522, 512, 2, 768, 3072, 12, 12
    assert (V, P, T) == (30522, 512, 2)
    # Per layer: Q, K, V and the output projection (4 of H × H), the feed-forward (H × I and I × H),
    # then QKᵀ and the probabilities times V, each 2·b·s²·H; the pooler: one b × H by H × H product.
    layer = 2 * b * s * (4 * H * H + 2 * H * I) + 2 * 2 * b * s * s * H
    pooler = 2 * b * H * H
    forward = L * layer + pooler
    # The backward doubles every product but the pooler's: the loss is the encoder's output.
    backward = 2 * L * layer
    # Kept per layer (elements of the model's type): its input, Q, K, V, the context, two dropout
    # masks, two LayerNorm inputs, the feed-forward input, the GELU's input and output (b·s·I each),
    # and the probabilities, their dropout mask and the dropped probabilities (b·A·s² each);
    # in fp32 the four LayerNorm statistics per token.
    per_layer = 4 * (10 * b * s * H + 2 * b * s * I + 3 * b * A * s * s) + 4 * 4 * b * s
    embeddings = 8 * b * s + 8 * s + 4 * 2 * b * s * H + 4 * 2 * b * s  # ids, token types, LayerNorm, dropout
    pooled = 4 * b * s * H + 4 * b * H  # the encoder output (token 0 is a view of it), the tanh output
    return forward, backward, embeddings + L * per_layer + pooled


@pytest.mark.parametrize(("b", "s"), [(1, 128), (32, 512), (7, 3)])
def test_bert_base_by_hand(b: int, s: int) -> None:
    figures = count_compute(card_by_id("bert-base-uncased")).at(b, s)
    assert (figures.forward, figures.backward, figures.activations["fp32"]) == _bert_base_by_hand(b, s)


def test_training_memory_adds_weights_gradients_adam_and_activations() -> None:
    figures = count_compute(card_by_id("bert-large-uncased")).at(32, 512)
    n = 335_141_888
    assert figures.parameters == n
    assert figures.training_memory == {
        "fp32": 16 * n + figures.activations["fp32"],
        "bf16_mixed": 16 * n + figures.activations["bf16"],
    }
    # At batch 32 of 512 tokens the activations outweigh the 16 bytes per parameter several times.
    assert figures.activations["bf16"] > 3 * 16 * n


@pytest.mark.parametrize(
    ("card_id", "batch"),
    [("bert-base-uncased", 4), ("bert-base-uncased-pretraining", 4), ("albert-base-v2", 4), ("modernbert-base", 1)],
)
def test_derivation_lines_add_up_to_the_figures(card_id: str, batch: int) -> None:
    compute = count_compute(card_by_id(card_id))
    derivation = derive_compute(compute, batch, 128)
    figures = compute.at(batch, 128)
    forward = backward = 0
    activations = dict.fromkeys(("fp32", "bf16"), 0)
    for component in derivation.components:
        one = sum(line.value for step in component.modules for line in step.forward)
        assert component.forward == one * component.copies
        forward += component.forward
        backward += sum(s.backward.value for s in component.modules if s.backward) * component.copies
        for precision in activations:
            lines = [line for step in component.modules for line in step.saved[precision]]
            kept = sum(line.value * (1 if line.once else component.copies) for line in lines)
            assert component.activations[precision] == kept
            activations[precision] += kept
    assert (forward, backward, activations) == (figures.forward, figures.backward, dict(figures.activations))


def test_the_backward_skips_the_pooler_of_a_bare_model() -> None:
    """BertModel's backward starts from last_hidden_state, so its pooler's product is never differentiated:
    that is the whole gap between the backward and twice the forward."""
    compute = count_compute(card_by_id("bert-base-uncased"))
    derivation = derive_compute(compute, 2, 64)
    figures = compute.at(2, 64)
    assert [(s.component, s.what) for s in derivation.skipped] == [("pooler", "pooler-dense")]
    assert 2 * figures.forward - figures.backward == derivation.skipped[0].flops == 2 * (2 * 2 * 768 * 768)
    assert to_text(derivation.forward) == "36,864bs² + 169,869,312bs + 1,179,648b"


def test_cards_that_read_the_same_share_their_step_blocks_and_no_other_does() -> None:
    """A step's blocks are kept by declaration and by the value of every key its rules read: a card that
    differs in a size only shares them; one whose dropout probabilities differ gets its own, and keeps
    no dropout mask; and what is kept gives the figures a fresh count gives."""
    base = card_by_id("bert-base-uncased")
    wider = dataclasses.replace(base, config={**base.config, "vocab_size": 40_000})
    still = dataclasses.replace(
        base, config={**base.config, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    )
    first, other_size, no_dropout = (count_compute(card) for card in (base, wider, still))
    assert other_size.steps is first.steps and no_dropout.steps is not first.steps
    assert other_size.parameters == first.parameters + (40_000 - base.config["vocab_size"]) * base.config["hidden_size"]
    kept, bare = first.at(8, 128).activations["fp32"], no_dropout.at(8, 128).activations["fp32"]
    assert bare < kept
    counted = [count_compute(card).at(8, 128) for card in (base, still)]
    compute._steps.clear()  # counted afresh: the same figures
    assert [count_compute(card).at(8, 128) for card in (base, still)] == counted


def test_a_copy_kept_only_above_a_batch_of_one_is_taken_off_at_b_1() -> None:
    """A storage kept only when b > 1 counts at every b and comes off at b = 1, where the view it
    replaces (kept only when b = 1) counts instead."""
    b, s, width = layouts.b, layouts.s, Poly.symbol("H")
    copy = arch.Saved("repeated key", (b, s, 4 * width), batch_above_one=True)
    view = arch.Saved("key head", (s, width), batch_one=True)
    block = arch.Block("layer", arch.Kind.ENCODER, "", ())
    module = compute.ModuleCompute("attention", "attention", (), Poly(), (copy, view))
    saved = compute.BlockCompute(block, (module,), Poly.constant(1)).saved_bytes("fp32")
    assert saved.at(2, 3).evaluate({"H": 8, "b": 2, "s": 3}) == 4 * 2 * 3 * 4 * 8  # the copy alone
    assert saved.at(1, 3).evaluate({"H": 8, "b": 1, "s": 3}) == 4 * 3 * 8  # the view alone


def test_a_source_each_layer_casts_is_kept_once_in_fp32_and_its_copies_in_bf16() -> None:
    """An fp32 mask that every layer casts to the model's type: in fp32 the casts are no-ops, so one
    storage is kept for the model; in bf16 each layer keeps its own cast copy, and the source none."""
    shape, layers, values = (layouts.b, layouts.s), 4, {"b": 2, "s": 3}

    def kept(precision: str) -> int:
        source = compute.stored_bytes(shape, arch.Dtype.UNCAST, precision)
        return (source + compute.stored_bytes(shape, arch.Dtype.CAST, precision) * layers).evaluate(values)

    assert (kept("fp32"), kept("bf16")) == (4 * 2 * 3, layers * 2 * 2 * 3)


@pytest.mark.parametrize(
    ("flag", "kept"),
    [("batch_one", ((1, 3), (1, 1))), ("batch_above_one", ((2, 3), (2, 1))), ("seq_above_one", ((1, 3), (2, 3)))],
)
def test_a_page_works_out_only_the_storages_kept_at_its_point(flag: str, kept: tuple[tuple[int, int], ...]) -> None:
    """The page's derivation and its list of storages both take the storages kept at (b, s): a copy kept
    only above b = 1 is not listed at b = 1, beside the view kept there instead."""
    tensor = arch.Saved("copy", (layouts.b, layouts.s), **{flag: True})
    points = ((1, 1), (1, 3), (2, 1), (2, 3))
    assert tuple(p for p in points if kept_at(tensor, *p)) == tuple(sorted(kept))
