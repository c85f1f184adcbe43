"""Sentences a careful reader found false for the page they were on, each tied to the figure
or structure that makes it true or false, so that it cannot come back on another card."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import MODELS, card_by_id, reference_for, text_of
from generator.analysis.tensor_patterns import head_forms
from generator.cards.card import load_cards
from generator.counting.architecture import Kind
from generator.counting.compute import count_compute, stored_bytes
from generator.counting.families import family_in
from generator.site.views import model_of


def _page(site: Path, path: str) -> str:
    return (site / path).read_text(encoding="utf-8")


def _model(site: Path, card: str) -> str:
    return text_of(_page(site, f"models/{card}/index.html"))


def test_a_model_without_masks_is_not_said_to_set_every_dropout_to_0(site: Path) -> None:
    # albert-base-v2 sets classifier_dropout_prob to 0.1, but AlbertModel runs no classifier.
    assert "classifier_dropout_prob: 0.1" in (MODELS / "albert-base-v2.yaml").read_text(encoding="utf-8")
    text = _model(site, "albert-base-v2")
    assert "sets every dropout probability to 0" not in text
    assert "None: every dropout this model's step runs has a probability of 0 in its config" in text
    # Nor are its masks said to take 2 bytes, when the table beside the sentence prints 0 for them.
    assert "it keeps no dropout mask (its dropout probabilities are 0)" in text
    assert "its masks take the activation's 2 bytes" not in text
    assert "its masks take the activation's 2 bytes" in _model(site, "bert-base-uncased")


def test_a_model_with_no_layernorm_statistics_is_not_said_to_keep_them(site: Path) -> None:
    text = _model(site, "mobilebert-uncased")  # NoNorm: an elementwise scale and shift, no statistics
    assert "Kept in fp32 (none)" in text
    assert "it keeps nothing in fp32" in text and "reciprocal deviation" not in text
    modern = _model(site, "modernbert-base")  # its softmax runs in fp32: b·A·s² of its fp32 bytes
    assert "Kept in fp32 (LayerNorm statistics and the attention probabilities)" in modern
    assert "and its softmax keeps the attention probabilities in fp32" in modern


def test_albert_s_shared_layer_runs_are_counted_in_l_not_in_its_stored_copies(site: Path) -> None:
    html = _page(site, "models/albert-base-v2/index.html")
    heading = re.search(r'<h4 id="c-layer">(.*?)<a class="permalink"', html, re.S)
    assert heading is not None
    assert text_of(heading[1]).strip() == "Shared encoder layer (one of 12: L = 12, K = 1)"
    assert "Shared encoder layer (the only one: G = 1, K = 1)" in text_of(html)  # the one stored


def test_a_step_without_labels_does_not_include_a_loss(site: Path) -> None:
    assert "Forward FLOPs Forward" not in _model(site, "bert-base-uncased")
    base = _page(site, "models/bert-base-uncased/index.html")
    assert '<th scope="row">Forward FLOPs</th>' in base
    head = _page(site, "models/bert-base-uncased-pretraining/index.html")
    assert '<th scope="row">Forward FLOPs (loss included)</th>' in head
    # The calculator's table for a reader without JavaScript: its starting model, BERT-Base, has no head.
    calculator = _page(site, "calculator/index.html")
    assert "Where it starts, BERT-Base, uncased," in calculator
    assert '<tr><th scope="row">Forward FLOPs</th>' in calculator and "loss included</th>" not in calculator


def test_products_made_once_per_batch_are_not_said_to_be_once_per_sequence(site: Path) -> None:
    # DeBERTa projects its relative position embeddings once per batch: its term has no b.
    text = _model(site, "deberta-v3-base")
    assert "Products once per sequence" not in text
    assert "Products not made once per token 8BH²L" in text
    assert "DeBERTa projects its relative position embeddings once per batch" in text


def test_modernbert_s_heads_are_a_symbol_of_its_page_and_of_the_comparison(site: Path) -> None:
    # No parameter count of ModernBERT uses A (one fused projection), but its attention scores do.
    page = _page(site, "models/modernbert-base/index.html")
    assert '<tr id="sym-A"><th scope="row"><var>A</var></th><td><code>num_attention_heads</code></td>' in page
    compare = _page(site, "compare/index.html")
    row = re.search(r'<tr id="modernbert-base".*?</tr>', compare, re.S)
    assert row is not None
    assert ">12</td>" in row[0]
    diff = text_of(_page(site, "diffs/bert-base-uncased--modernbert-base/index.html"))
    assert "A only in A" not in diff
    # Its compute's head size d (rotary tables of s·d) is defined where its formulas use it, and is no
    # config symbol the diff compares.
    assert '<td><code>hidden_size / num_attention_heads</code></td><td class="n count">64</td>' in page
    assert "d only in B" not in diff


def test_the_comparison_says_at_which_batch_it_counts_flops_per_token(site: Path) -> None:
    html = _page(site, "compare/index.html")
    assert "forward + backward<br>b = 32, s = 512</span>" in html
    assert "a batch of 32 sequences of s = 512 tokens" in text_of(html)
    options = re.findall(r'<option value="([\w-]+)">', html.split('name="family"')[1].split("</select>")[0])
    assert len(options) == len(set(options))  # the exercises' BERT is not a family of its own


def test_the_2017_transformer_s_gap_to_the_rule_is_its_decoder(site: Path) -> None:
    html = _page(site, "charts/index.html")
    row = re.search(r'<tr id="rule-transformer-base">.*?</tr>', html, re.S)
    assert row is not None
    assert "a decoder beside the encoder: 12 layers where <var>L</var> = 6 counts the encoder's" in row[0]
    assert "In the small models most parameters sit in the embeddings" not in html


def test_the_transformer_family_names_no_auto_class(site: Path) -> None:
    text = text_of(_page(site, "families/transformer/index.html"))
    assert "the class an Auto class builds" not in text and "the config class's defaults" not in text
    assert "which no Auto class of transformers builds" in text
    assert "the other heads wrap it" not in text  # it has one head
    assert "the other heads wrap it" in text_of(_page(site, "families/bert/index.html"))


def test_counts_and_their_nouns_agree(site: Path) -> None:
    diff = text_of(_page(site, "diffs/bert-base-cased--bert-base-uncased/index.html"))
    assert "In both, with another shape: 1 tensor #" in diff
    assert "1 tensors" not in diff
    calculator = text_of(_page(site, "calculator/index.html"))
    assert "( transformer ; head base)" in calculator
    deberta = _model(site, "deberta-v3-base")
    assert not re.search(r"(?<!but )the embeddings holds", deberta)  # "everything but the embeddings holds"
    assert "the embeddings hold 98,382,336" in deberta
    mobile = _model(site, "mobilebert-uncased")
    assert "1,058 more tensors" in mobile


def test_a_figure_that_is_the_count_says_so_once(site: Path) -> None:
    text = _model(site, "bert-base-uncased")
    assert "the figure is exactly the count." in text
    assert "exactly the figure" not in text


def test_notes_point_up_to_what_comes_before_them(site: Path) -> None:
    # A model page ends with its notes: the published figures, the derivation and the subtotals are above.
    for card in MODELS.glob("*.yaml"):
        html = _page(site, f"models/{card.stem}/index.html")
        notes = html.split('<h2 id="notes">')[1].split("</section>")[0] if '<h2 id="notes">' in html else ""
        for thing in ("published figures", "derivation", "subtotal", "tables", "exact counts"):
            assert not re.search(rf"{thing}\s+below", text_of(notes)), (card.stem, thing)


def test_related_pages_name_errata_and_exercises_as_their_pages_head_them(site: Path) -> None:
    # keras-bert is written in lower case, as its project writes it; the comparisons' topics, written to be
    # read inside a sentence, start with a capital in the list.
    html = _page(site, "models/exercise-keras-bert-pretraining/index.html")
    related = text_of(html.split('<h2 id="related">')[1].split("</section>")[0])
    assert "keras-bert's attention layer: heads, W_O and LayerNorm" in related
    assert "keras-bert's model.summary(), layer by layer" in related
    assert "Keras-bert" not in related
    errata = text_of(_page(site, "errata/index.html"))
    assert "keras-bert's attention layer: heads, W_O and LayerNorm" in errata
    assert "Cased to uncased: only the vocabulary changes" in _model(site, "bert-base-uncased")


def test_roberta_s_514_position_rows_hold_512_tokens(site: Path, tmp_path: Path) -> None:
    """RoBERTa numbers positions from pad_token_id + 1: a 514-row table takes 512 tokens, and a step of 513
    or 514 indexes past it (the grid and count showed one; the calculator accepted it)."""
    for card in ("roberta-base", "xlm-roberta-large"):
        html = _page(site, f"models/{card}/index.html")
        assert "-s514" not in html and 'id="c-grid-b32-s512"' in html, card
        assert "the longest length is the most the model takes" not in html
    assert "-s8192" in _page(site, "models/modernbert-base/index.html")  # rotary: P bounds s, nothing is numbered
    card = tmp_path / "r.yaml"
    card.write_text((MODELS / "roberta-base.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    refused = subprocess.run(
        [sys.executable, "-m", "generator", "count", str(card), "--seq", "513"], capture_output=True, text=True
    )
    assert refused.returncode == 1 and refused.stdout == ""
    assert "--seq: expected at most 512 for" in refused.stderr and "found 513" in refused.stderr
    document = json.loads(_page(site, "calculator/roberta.json"))["compute"]
    assert document["seq_too_long"]["message"] == "seq-too-long-numbered"
    assert document["longest_reads"] == ["max_position_embeddings", "pad_token_id"]
    assert document["seq_too_long"]["fails"] == {
        "gt": [
            {"key": "seq"},
            {"sub": [{"sub": [{"key": "max_position_embeddings"}, {"key": "pad_token_id"}]}, {"const": 1}]},
        ]
    }
    modern = json.loads(_page(site, "calculator/modernbert.json"))
    assert "max_position_embeddings" in {item["key"] for item in modern["inputs"]}  # so the page can bound s


def test_deberta_s_shared_projections_are_the_checkpoints_not_the_default(site: Path) -> None:
    """DebertaV2Config's share_att_key defaults to false (the switch table says so); every v3 card sets it."""
    switch = next(s for s in family_in("deberta-v2").switches if s.name == "shared_keys")
    assert switch.when.evaluate({}) is False  # off by default, as transformers' config class has it
    cards = sorted(MODELS.glob("deberta-v3-*.yaml"))
    assert cards and all("share_att_key: true" in card.read_text(encoding="utf-8") for card in cards)
    text = text_of(_page(site, "families/deberta-v2/index.html"))
    assert "shared by default" not in text
    assert "every v3 checkpoint shares its projections" in text and "with it false, the config class's default" in text


def test_a_change_of_heads_is_not_said_to_make_h_over_a_heads_on_a_bottleneck(site: Path) -> None:
    """MobileBERT's 4 heads split its bottleneck's B = 128, not H = 512: heads of B/A = 32, not H/A."""
    text = text_of(_page(site, "diffs/bert-large-uncased--mobilebert-uncased/index.html"))
    assert "H/A" not in text and "H × H matrix" not in text
    assert "each head is a slice of one projection matrix, whose size does not depend on how many heads" in text


def test_the_handout_names_every_catalog_model_its_forms_miss(site: Path) -> None:
    """The handout's closed forms take the config class's defaults: ELECTRA-Base (E = H, no projection),
    MobileBERT (no pooler) and DeBERTa-v3 (relative positions) are not counted by them. The sheet names
    each catalog model whose reference total (transformers') its head's form does not give, and no other."""
    page = _page(site, "handout/index.html")
    paragraph = re.search(r'<p id="departures">(.*?)</p>', page, re.S)
    assert paragraph is not None
    named = re.findall(r'href="\.\./models/([^/]+)/index\.html">[^<]+</a> ([\d,]+) (more|fewer)', paragraph[1])
    expected = []
    for card in load_cards(MODELS):
        form = next(f for f in head_forms(card.family) if f.head is card.head)
        off_by = form.formula.evaluate(model_of(card).values) - reference_for(card.id)["total"]
        if off_by:
            expected.append((card.id, f"{abs(off_by):,}", "more" if off_by > 0 else "fewer"))
    assert sorted(named) == sorted(expected)
    assert {card_id for card_id, _, _ in named} >= {
        "electra-base-discriminator",
        "mobilebert-uncased",
        "deberta-v3-base",
    }


def test_the_korthikanti_rows_add_up_to_the_layer_the_page_shows(site: Path) -> None:
    """The rows are worked at b = 1, where ModernBERT's layer also keeps the rest of its fused QKV output: the
    exact row (for any b) and the b = 1 row together are one layer's bf16 bytes, as the layer's own table
    gives them (its "All L" row over L). Before, the b = 1 bytes were nowhere in the rows."""
    checked = set()
    for path in sorted((site / "models").glob("*/index.html")):
        page = path.read_text(encoding="utf-8")
        rows = re.search(r'<tbody id="c-korthikanti">(.*?)</tbody>', page, re.S)
        if rows is None:
            continue
        values = dict(re.findall(r'<tr(?: id="([^"]*)")?><th scope="row">[^<]*</th>.*?data-value="(-?\d+)"', rows[1]))
        exact = int(re.search(r'<th scope="row">Exact, one [^<]*</th>.*?data-value="(\d+)"', rows[1])[1])  # type: ignore[index]
        layer = re.search(r'id="c-layer".*?<th scope="row">All (\d+)</th>.*?data-bf16="(\d+)"', page, re.S)
        assert layer is not None, path
        count, every = int(layer[1]), int(layer[2])
        # Storages every layer reads but the step saves once (rotary tables made once a step) are in the
        # "All L" row once, and in no one layer's row.
        once = _saved_once_by_every_layer(path.parent.name)
        assert (exact + int(values.get("c-korthikanti-b1", 0))) * count + once == every, path.parent.name
        checked.add(path.parent.name)
    assert {"modernbert-base", "bert-base-uncased", "deberta-v3-base"} <= checked
    assert '<tr id="c-korthikanti-b1">' in (site / "models/modernbert-base/index.html").read_text(encoding="utf-8")


def _saved_once_by_every_layer(card_id: str) -> int:
    """The bf16 bytes of the first repeated encoder block's shared storages, at b = 1 and the page's length."""
    card = card_by_id(card_id)
    compute = count_compute(card)
    layer = next(x for x in compute.blocks if x.block.kind is Kind.ENCODER and x.block.repeat)
    seq = min(card.config["max_position_embeddings"], 512)
    return sum(
        stored_bytes(t.shape, t.dtype, "bf16").evaluate({**compute.values, "b": 1, "s": seq})
        for module in layer.modules
        for t in module.saved
        if t.shared
    )


def test_m_counts_a_table_tied_to_an_output_layer_and_the_page_says_so(site: Path) -> None:
    """M, the weights in a product for every token, from transformers' own tensor list: every matrix but the
    embedding tables and the pooler (once per sequence), plus the token table where an output layer is tied
    to it. The page said "the embedding tables are looked up, not multiplied", false for a tied head."""
    for card_id, tied in (("bert-base-uncased", False), ("electra-base-generator", True)):
        reference = reference_for(card_id)
        matrices = [t for t in reference["tensors"] if len(t["shape"]) == 2]
        weights = sum(t["count"] for t in matrices if "embeddings." not in t["name"] and "pooler" not in t["name"])
        table = {t["tied_to"] for t in reference["tied"]}
        assert bool(table) is tied
        weights += sum(t["count"] for t in matrices if t["name"] in table)
        text = _model(site, card_id)
        assert f"Here M = {weights:,} weights take part in a product for every token" in text, card_id
        assert "the embedding tables are looked up, not multiplied" not in text
        assert "an embedding table tied to an output layer counts in M too" in text
