"""A derivation's runs (generator/site/runs.py): the steps of one attention module, or of the feed-forward, under
one heading and one anchor, checked against the modules the tensors' own names say hold them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import MODELS, ROOT, card_by_id, text_of
from generator.cards.card import load_card, load_cards
from generator.counting.architecture import Part
from generator.counting.inventory import Tensor
from generator.site.runs import line_runs
from generator.site.views import Model, model_of

# The catalog, and the test card whose BERT layers hold two attentions (a decoder's cross-attention).
CARDS = [*load_cards(MODELS), load_card(ROOT / "tests" / "cards" / "test-bert-cross-attention.yaml")]


def holder(tensor: Tensor) -> str:
    """The child module of its block that holds a tensor, read off its name (``slf_attn`` in
    ``decoder.layer_stack.0.slf_attn.w_qs.weight``)."""
    prefix = tensor.block.prefix.format(*tensor.index)
    assert tensor.name.startswith(prefix), (tensor.name, prefix)
    return tensor.name.removeprefix(prefix).split(".")[0]


@pytest.mark.parametrize("card", CARDS, ids=lambda c: c.id)
def test_no_run_mixes_the_steps_of_two_attention_modules(card: object) -> None:
    model = model_of(card)  # type: ignore[arg-type]
    tensors = {t.name: t for t in model.inventory.tensors}
    for block in model.derivation.blocks:
        for run in line_runs(model, block):
            held = [tensors[n] for step in run.lines for n in step.names]
            attention = {holder(t) for t in held if t.part is Part.ATTENTION}
            assert len(attention) <= 1, (block.block.key, run.anchor, sorted(attention))
            if run.anchor is not None and run.part is Part.ATTENTION:  # its every step, the norm inside it too
                assert {holder(t) for t in held} == attention, (block.block.key, run.anchor)


def layer_zero(model: Model, key: str) -> list[Tensor]:
    """The tensors of the first copy of a block, the one its derivation shows."""
    block = next(b for b in model.architecture.blocks if b.key == key)
    return [t for t in model.inventory.of_block(block) if isinstance(t, Tensor) and t.index == block.first]


def rows(block: str, tensors: list[Tensor], where: str, part: Part | None = None) -> list[str]:
    """The derivation rows (their anchors) of the steps whose tensors ``where`` holds, of ``part`` if given."""
    chosen = (t for t in tensors if holder(t) == where and (part is None or t.part is part))
    return list(dict.fromkeys(f"d-{block}-{t.module.key}" for t in chosen))


def shown_runs(site: Path, card_id: str, block: str) -> list[tuple[str | None, str | None, list[str]]]:
    """A block's derivation table as the page shows it: each ``<tbody>``'s anchor, heading and rows."""
    html = (site / "models" / card_id / "index.html").read_text(encoding="utf-8")
    table = re.search(rf'<h3 id="d-{block}">.*?<table[^>]*>(.*?)</table>', html, re.S)
    assert table is not None
    found = []
    for anchor, body in re.findall(r'<tbody(?: id="([^"]+)")?>(.*?)</tbody>', table[1], re.S):
        heading = re.search(r'<tr class="run"><th[^>]*>(.*?) <a class="permalink"', body, re.S)
        title = text_of(heading[1]) if heading else None
        found.append((anchor or None, title, re.findall(r'<tr id="([^"]+)">', body)))
    return found


def test_the_2017_decoder_layer_shows_one_run_per_attention(site: Path) -> None:
    tensors = layer_zero(model_of(card_by_id("transformer-base")), "decoder-layer")
    own = rows("decoder-layer", tensors, "slf_attn")  # its LayerNorm, registered before the output, inside
    cross = rows("decoder-layer", tensors, "enc_attn")
    feed_forward = rows("decoder-layer", tensors, "pos_ffn", Part.FEED_FORWARD)
    assert shown_runs(site, "transformer-base", "decoder-layer") == [
        ("d-decoder-layer-attention", f"Self-attention ({len(own)} steps)", own),
        ("d-decoder-layer-attention-2", f"Encoder-decoder attention ({len(cross)} steps)", cross),
        ("d-decoder-layer-feed-forward", f"Feed-forward ({len(feed_forward)} steps)", feed_forward),
        (None, None, rows("decoder-layer", tensors, "pos_ffn", Part.NORMS)),
    ]
    assert (len(own), len(cross), len(feed_forward)) == (5, 5, 2)


def test_bert_base_layer_keeps_its_runs_and_anchors(site: Path) -> None:
    tensors = layer_zero(model_of(card_by_id("bert-base-uncased")), "layer")
    attention = rows("layer", tensors, "attention", Part.ATTENTION)  # the LayerNorm after it stays outside
    feed_forward = list(dict.fromkeys(f"d-layer-{t.module.key}" for t in tensors if t.part is Part.FEED_FORWARD))
    assert shown_runs(site, "bert-base-uncased", "layer") == [
        ("d-layer-attention", f"Self-attention ({len(attention)} steps)", attention),
        (None, None, rows("layer", tensors, "attention", Part.NORMS)),
        ("d-layer-feed-forward", f"Feed-forward ({len(feed_forward)} steps)", feed_forward),
        (None, None, rows("layer", tensors, "output", Part.NORMS)),
    ]
    assert (len(attention), len(feed_forward)) == (4, 2)
