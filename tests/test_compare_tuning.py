"""The comparison's fine-tuning sections: LoRA on every model, and each method's memory on a few.

Each cell is held to ``counting.methods.tune`` on the class the model page counts (a bare encoder
with a classifier put on it), and to ``count --method lora --json`` where the card is a classifier.
tests/test_fine_tuning.py holds ``tune`` to peft.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import MODELS, ROOT, card_by_id, catalog_copy
from generator.analysis.calculator_compute import default_seq
from generator.analysis.choices import load_choices
from generator.analysis.fine_tuning import STEP_BATCH, fine_tuning_of
from generator.build.pipeline import build
from generator.counting.architecture import Head
from generator.counting.compute import StepCannotRunError, UndeclaredActivationError, shows_step
from generator.counting.inventory import Inventory, count_parameters
from generator.counting.methods import Method, Tuned, Tuning, TuningError, tune
from generator.counting.step_totals import StepTotals, parameter_memory
from generator.counting.tuned_step import StepNotDerivedError, tuned_compute, tuned_seq
from generator.site import formats
from generator.site.comparison_tuning import LORA, method_bar
from generator.site.page import SiteOptions

CATALOG = sorted(p.stem for p in MODELS.glob("*.yaml"))


def page(site: Path, language: str = "") -> str:
    return (site / language / "compare" / "index.html").read_text(encoding="utf-8")


def rows(html: str, table_id: str) -> dict[str, str]:
    """Each row of a table by its id, its markup inside the <tr>."""
    table = re.search(rf'<table [^>]*id="{table_id}">(.*?)</table>', html, re.S)
    assert table is not None, table_id
    return dict(re.findall(r'<tr id="([^"]+)">(.*?)</tr>', table[1], re.S))


def values(row: str) -> list[int]:
    return [int(v) for v in re.findall(r'data-value="(\d+)"', row)]


def lora_asked(card_id: str) -> tuple[Tuning, object] | None:
    """The LoRA a model page shows, asked of ``tune`` directly: peft's targets, else the query and value
    projections by their module keys; None for a model no transformers class builds."""
    card = card_by_id(card_id)
    if card.family.ground_truth is None:
        return None
    if card.head is Head.BASE and Head.SEQUENCE_CLASSIFICATION in card.family.heads:
        card = dataclasses.replace(card, head=Head.SEQUENCE_CLASSIFICATION)
    inventory = count_parameters(card)
    targets = card.family.peft.lora
    if targets is None:  # the last names of the repeated layer's query and value projections, in that order
        names = {t.module.key: t.name.split(".")[-2] for t in inventory.tensors if t.block.repeat}
        targets = tuple(names[key] for key in ("query", "value") if key in names)
    return Tuning(Method.LORA, rank=LORA.rank, targets=targets), inventory


def step_asked(inventory: Inventory, tuned: Tuned, seq: int) -> StepTotals | None:
    """One step under the method at (32, seq), asked of the step engine; None where it is not derived."""
    if not shows_step(inventory.card):
        return None
    try:
        return tuned_compute(inventory.card, tuned).at(STEP_BATCH, tuned_seq(tuned, seq))
    except (StepNotDerivedError, StepCannotRunError, UndeclaredActivationError):
        return None


def test_every_model_s_lora_cell_is_what_tune_gives(site: Path) -> None:
    found = rows(page(site), "lora-models")
    assert set(found) == {f"lora-{card_id}" for card_id in CATALOG}
    refused, unstepped = [], []
    for card_id in CATALOG:
        row = found[f"lora-{card_id}"]
        asked = lora_asked(card_id)
        if asked is None:
            assert "No transformers class builds this model" in row and values(row) == [], card_id
            refused.append(card_id)
            continue
        tuning, inventory = asked
        try:
            tuned = tune(inventory, tuning)  # type: ignore[arg-type]
        except TuningError:
            assert values(row) == [] and "must name its targets" in row, card_id
            refused.append(card_id)
            continue
        memory = parameter_memory(tuned.total, tuned.trainable)
        full = tune(inventory, Tuning())  # type: ignore[arg-type]
        full_memory = parameter_memory(full.total, full.trainable)
        expected = [tuned.trainable, memory["bf16_mixed"], full_memory["bf16_mixed"]]
        seq = default_seq(inventory.card.family, inventory.card.config)  # type: ignore[attr-defined]
        step, full_step = step_asked(inventory, tuned, seq), step_asked(inventory, full, seq)  # type: ignore[arg-type]
        if step is None or full_step is None:
            assert "The step is not derived for this model yet." in row, card_id
            unstepped.append(card_id)
        else:
            training = (step.training_memory["bf16_mixed"], full_step.training_memory["bf16_mixed"])
            expected += training
            assert f'<td class="n">{formats.percent(*training)}</td>' in row, card_id
        assert values(row) == expected, card_id
        assert re.findall(r"<code>([^<]+)</code>", row) == list(tuned.targets), card_id
        assert f'<td class="n">{formats.percent(tuned.trainable, tuned.total)}</td>' in row, card_id
    # The 2017 Transformer (no transformers class) and ModernBERT (one fused Wqkv, no query or value to adapt).
    assert {c.split("-")[0] for c in refused} == {"transformer", "modernbert"}
    assert unstepped == []  # every family transformers builds has its step under a method


def test_a_classifier_s_cell_is_what_count_prints(site: Path) -> None:
    """On a card that is a classifier already, the page counts the card's own class, as count does."""
    found = rows(page(site), "lora-models")
    for card_id in ("exercise-topic-classifier-5", "exercise-language-id-2"):
        asked = ("--method", "lora", "--batch", str(STEP_BATCH), "--json")  # s: count's default, min(P, 512)
        result = subprocess.run(
            [sys.executable, "-m", "generator", "count", str(MODELS / f"{card_id}.yaml"), *asked],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        record = json.loads(result.stdout)
        memory = record["parameter_memory"]
        shown = values(found[f"lora-{card_id}"])
        expected = (record["trainable"], memory["bf16_mixed"], record["training_memory"]["bf16_mixed"])
        assert (shown[0], shown[1], shown[3]) == expected


def test_the_method_chart_and_its_table_hold_tune_s_figures(site: Path) -> None:
    html = page(site)
    table = rows(html, "method-memory")
    chosen = load_choices().method_models
    assert len(table) == len(chosen) * 6
    for n, card_id in enumerate(chosen):
        asked = lora_asked(card_id)
        assert asked is not None
        _, inventory = asked
        analysis = fine_tuning_of(card_by_id(card_id))
        assert analysis is not None
        for method in Method:
            tuning = LORA if method is Method.LORA else Tuning(method)
            tuned = tune(inventory, tuning)  # type: ignore[arg-type]
            step = step_asked(inventory, tuned, analysis.seq_of(tuning))  # type: ignore[arg-type]
            assert step is not None and step.batch == STEP_BATCH, (card_id, method)  # every chart model has its steps
            row = table[f"methods-{card_id}-{method.value}"]
            trained, *parts, total = values(row)
            weights, gradients, states, activations = parts
            # Weights, gradients and states are the parameters' memory; the weights, what a frozen model holds.
            assert trained == tuned.trainable, (card_id, method)
            assert weights + gradients + states == parameter_memory(tuned.total, tuned.trainable)["bf16_mixed"]
            assert weights == parameter_memory(tuned.total, 0)["bf16_mixed"], (card_id, method)
            # With the activations, they are the step's training memory.
            assert activations == step.activations["bf16"], (card_id, method)
            assert total == sum(parts) == step.training_memory["bf16_mixed"], (card_id, method)
            assert method_bar(tuning, tuned.trainable, tuned.total, step).parts == tuple(parts)
            if n == 0 and method not in (Method.FULL, Method.HEAD):  # the description: "most of it activations"
                assert activations > total / 2, method
            for part in parts[1:] if method is Method.FULL else ():  # each segment's tooltip, exact
                assert f"({part:,} bytes)</title>" in html
    svg = re.findall(r'<svg class="chart chart-(wide|narrow)" id="chart-methods(?:-narrow)?"', html)
    assert svg == ["wide", "narrow"]
    said = f"The activations are those one step keeps for the backward, in bf16, at <var>b</var> = {STEP_BATCH} and"
    assert said in html and "not included yet" not in html


def test_the_chinese_edition_shows_the_same_figures(tmp_path: Path) -> None:
    """Both editions of the chart's models and two refused ones: the same rows, ids and figures."""
    cards = (*load_choices().method_models, "modernbert-base", "transformer-base")
    site = tmp_path / "site"
    build(catalog_copy(tmp_path / "models", cards), site, SiteOptions(search=False, editions=("en", "zh")), jobs=1)
    english, chinese = page(site), page(site, "zh")
    assert len(rows(chinese, "lora-models")) == len(cards)
    assert "没有 transformers 类能构建这个模型" in chinese
    for table_id in ("lora-models", "method-memory"):
        en, zh = rows(english, table_id), rows(chinese, table_id)
        assert en.keys() == zh.keys()
        assert all(values(en[key]) == values(zh[key]) for key in en)
    # Each edition joins a list with its own mark, and a title may hold a comma ("BERT-Base, uncased").
    targets = rows(chinese, "lora-models")["lora-bert-base-uncased"]
    assert "<td><code>query</code>、<code>value</code></td>" in targets
    titles = [card_by_id(card_id).title for card_id in load_choices().method_models]
    assert f"（{'、'.join(titles)}）" in chinese and f"({', '.join(titles)})" in english
