"""The calculator's fine-tuning methods in Chromium: each equals ``generator count --method ... --json``.

One page load evaluates many addresses: each is set as the page's address and announced as a
back-button move (popstate), as a reader going back through links would. The cases are a catalog card
of every family and head and a sampled random config of every family
(``tests/reference/sample/fine-tuning.json``, drawn with a fixed seed), each with the methods, ranks and target
sets the peft reference ran on it (random ones included), refusals too, at a batch size and sequence
length drawn with a fixed seed. The page's trainable and added counts, parameter memory, adapted and
saved modules must be the engine's, and a refusal's words the engine's message, beside the field it
names. Its step under the method (static/calculator-step.js) must be ``count --json``'s FLOPs,
activations and training memory, or say why there is none in the page's words for count's reason.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_fine_tuning import SAMPLE, tuning_of

from conftest import MODELS, REFERENCE, ROOT, TEST_CARDS
from generator.analysis.address import query
from generator.analysis.calculator_compute import longest_of
from generator.cards.card import Card, load_card
from generator.cards.problems import InputError
from generator.count import METHOD_STEP, STEP_RAISES, count, method_record
from generator.counting.architecture import Head
from generator.counting.inventory import count_parameters
from generator.counting.methods import Method, Tuning, TuningError, tune
from generator.counting.tuned_step import LOSS_UNREACHED, VIEWS_AT_ONE
from generator.site import content

from .conftest import PHONE, SAMPLE_SEED, axe_violations, one_of_each
from .test_accessibility import axe_report, keep_screenshot

PAGE = "calculator/index.html"
LAPTOP = 1366
# The engine's name of each setting a refusal is about, and the page's field for it.
FIELDS = {
    "method": "method",
    "rank": "rank",
    "targets": "targets",
    "feedforward": "feedforward",
    "virtual_tokens": "tokens",
}

# Sets the address, announces it, and reads what the page then shows: its figures, names and refusal.
READ = """async (addresses) => {
  const found = [];
  const text = id => { const e = document.getElementById(id); return e ? e.textContent : null; };
  const value = id => { const e = document.getElementById(id); return e ? e.getAttribute("data-value") : null; };
  const names = id => { const e = document.getElementById(id); return e ? JSON.parse(e.getAttribute("data-names")) : []; };
  for (const address of addresses) {
    document.getElementById("calc-summary").innerHTML = "";
    history.pushState(null, "", location.pathname + "?" + address);
    dispatchEvent(new PopStateEvent("popstate"));
    // A family's document already loaded is drawn within microtasks, before the browser paints; one to fetch takes a task.
    for (let waited = 0; !document.getElementById("calc-method") && waited < 3000; waited++) {
      await (waited < 100 ? Promise.resolve() : new Promise(resolve => setTimeout(resolve, 5)));
    }
    const errors = {};
    for (const field of ["method", "rank", "targets", "feedforward", "tokens"]) {
      const error = text("calc-tuning-" + field + "-error");
      if (error) { errors[field] = error; }
    }
    found.push({
      drawn: Boolean(document.getElementById("calc-method")),
      trainable: value("method-trainable"), added: value("method-added"),
      fp32: value("method-memory-fp32"), bf16_mixed: value("method-memory-bf16"),
      adapted: names("method-adapted"), saved_modules: names("method-saved"),
      refusal: text("method-refusal"), errors: errors,
      step: ["flops-forward", "flops-backward", "activations-fp32", "activations-bf16", "training-memory-fp32",
        "training-memory-bf16"].map(value),
      step_note: text("method-step-note"), step_refusal: text("method-step-refusal")
    });
  }
  return found;
}"""


def tuning_query(tuning: Tuning, variant: dict[str, Any]) -> str:
    """The address's method keys for a variant: only what the variant sets, so that defaults are the page's."""
    parts = [f"method={tuning.method.value}"]
    if "rank" in variant:
        parts.append(f"rank={tuning.rank}")
    if variant.get("targets") is not None:
        parts.append("targets=" + ",".join(tuning.targets or ()))
    if variant.get("feedforward") is not None:
        parts.append("feedforward=" + ",".join(tuning.feedforward or ()))
    if "virtual_tokens" in variant:
        parts.append(f"tokens={tuning.virtual_tokens}")
    return "&".join(parts)


def expected(card: Card, tuning: Tuning) -> dict[str, Any]:
    """What the page must show: ``count --json``'s figures and names, or the refusal's words by its field."""
    try:
        record = method_record(tune(count_parameters(card), tuning))
    except TuningError as error:
        return {"refused": {FIELDS[error.what]: str(error)}}
    memory = record["parameter_memory"]
    return {
        "trainable": str(record["trainable"]),
        "added": str(record["added"]) if tuning.method is not Method.FULL else None,
        "fp32": str(memory["fp32"]),
        "bf16_mixed": str(memory["bf16_mixed"]),
        "adapted": record["adapted"],
        "saved_modules": record["saved_modules"],
    }


SCRIPT = content.load("calculator", "en").section("script")


def no_step_words(reason: str | None) -> str | None:
    """The page's sentence for count's reason for no step under a method (content/en/calculator.yaml): count's
    words themselves. None for a reason the full step gives too (the page then shows the full step's)."""
    if reason == STEP_RAISES + LOSS_UNREACHED:
        return SCRIPT.template("step-cannot-run").replace("{reason}", LOSS_UNREACHED)
    if reason is not None and (reason.startswith(METHOD_STEP + ": ") or reason == VIEWS_AT_ONE):
        return SCRIPT.template("method-step-none").replace("{reason}", reason)
    return None


def count_options(tuning: Tuning, variant: dict[str, Any]) -> dict[str, Any]:
    """count's options for a variant, as its parser gives them: what ``tuning_query`` writes in the address, no more."""
    return {
        "method": tuning.method.value,
        "rank": tuning.rank if "rank" in variant else None,
        "targets": tuning.targets if variant.get("targets") else None,
        "feedforward": tuning.feedforward if variant.get("feedforward") else None,
        "virtual_tokens": tuning.virtual_tokens if "virtual_tokens" in variant else None,
    }


def count_step(card: Card, options: dict[str, Any], batch: int, seq: int | None) -> dict[str, Any]:
    """The step ``count --json`` gives (its command run in this process, past the parser), as the page shows it:
    six figures, the page's words for why there is none, or count's refusal of the sequence length."""
    out, err = io.StringIO(), io.StringIO()
    args = argparse.Namespace(card=card.path, batch=batch, seq=seq, json=True, **options)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = count(args)
    if status != 0:  # a prompt that leaves no room for the tokens: the only refusal the engine left to count
        found = re.fullmatch(r"error: --seq: (.*)\n", err.getvalue())
        assert found is not None, err.getvalue()
        return {"refusal": found.group(1)}
    record = json.loads(out.getvalue())
    if record.get("flops") is None:
        return {"note": no_step_words(record.get("no_step"))}  # None: a reason the full step gives too, any words
    flops, kept, memory = record["flops"], record["activations"], record["training_memory"]
    figures = (flops["forward"], flops["backward"], kept["fp32"], kept["bf16"], memory["fp32"], memory["bf16_mixed"])
    return {"figures": [str(n) for n in figures]}


def shown_step(found: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
    """The page's step in the shape of ``count_step``."""
    if found["step_refusal"] is not None:
        return {"refusal": found["step_refusal"]}
    if "note" in want:
        return {"note": found["step_note"] if want["note"] is not None else None, "figures": found["step"]}
    return {"figures": found["step"]}


def shown(found: dict[str, Any]) -> dict[str, Any]:
    """The page's reading in the shape of ``expected``; a refusal also stands as the section's one sentence."""
    if found["errors"]:
        assert found["refusal"] in found["errors"].values()
        return {"refused": found["errors"]}
    return {key: found[key] for key in ("trainable", "added", "fp32", "bf16_mixed", "adapted", "saved_modules")}


def step_point(card: Card, draw: random.Random) -> tuple[int, int | None]:
    """A batch size and a sequence length for a case (None: the field left empty), within the card's positions."""
    batch, seq = draw.choice((1, 2, 3, 32)), draw.choice((1, 3, 17, 256, None))
    longest = longest_of(card.family, card.config)
    return batch, seq if seq is None or longest is None or seq <= longest else None


def sampled_cards(folder: Path) -> list[tuple[Card, dict[str, Any]]]:
    """One sampled random config of every family that the card check accepts, with its reference (the catalog's
    cards cover every head)."""
    cards = []
    for entry in SAMPLE:
        path = folder / f"sample-{entry['index']}.yaml"
        card = {"title": "sample", "family": entry["family"], "head": entry["head"], "config": entry["config"]}
        path.write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")
        try:
            cards.append((load_card(path), entry))
        except InputError:
            continue
    return one_of_each(cards, lambda pair: pair[0].family.name)


def catalog_cards() -> list[tuple[Card, dict[str, Any]]]:
    """A catalog card of every family and head that peft's reference covers, with its reference."""
    pairs = []
    for path in sorted((REFERENCE / "fine-tuning").glob("*.json")):
        reference = json.loads(path.read_text(encoding="utf-8"))
        pairs.append((load_card(MODELS / f"{reference['id']}.yaml"), reference))
    return one_of_each(pairs, lambda pair: (pair[0].family.name, pair[0].head))


def test_every_method_equals_count_on_catalog_cards_and_random_configs(
    site_url: str, open_page: Any, tmp_path: Path
) -> None:
    page = open_page(LAPTOP)
    page.set_default_timeout(120_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(site_url + PAGE)
    page.wait_for_selector("#calc-method", state="attached")
    cases = []
    draw = random.Random(SAMPLE_SEED)
    for card, reference in catalog_cards() + sampled_cards(tmp_path):
        base = query(card.family, card.head, card.config)
        # An empty list of feed-forward modules is peft's to take, but count (and so the page) has no way to
        # write it: an empty option or field means peft's default. Those variants are asked of neither.
        variants = [{"method": "full"}, *(v for v in reference["variants"] if v.get("feedforward") != [])]
        for variant in variants:
            tuning = tuning_of(variant)
            batch, seq = step_point(card, draw)
            step = f"&batch={batch}" + (f"&seq={seq}" if seq is not None else "")
            want = expected(card, tuning)
            if "refused" not in want and tuning.method is not Method.FULL:  # full: test_calculator_compute.py
                want["step"] = count_step(card, count_options(tuning, variant), batch, seq)
            cases.append((card.id, variant, f"{base}{step}&{tuning_query(tuning, variant)}", want))
    started = time.monotonic()
    found = page.evaluate(READ, [address for *_, address, _ in cases])
    seconds = time.monotonic() - started
    mismatches = []
    for (card_id, _, address, want), got in zip(cases, found, strict=True):
        assert got["drawn"], f"{card_id}: the page drew no method for {address}"
        page_shows = shown(got)
        if "step" in want:
            page_shows["step"] = shown_step(got, want["step"])
            if "note" in want["step"]:
                want["step"] = {**want["step"], "figures": [None] * 6}
        if page_shows != want:
            mismatches.append((card_id, address, page_shows, want))
    assert errors == []
    assert mismatches == [], mismatches[:2]
    methods = {variant["method"] for _, variant, *_ in cases}
    refused = sum("refused" in want for *_, want in cases)
    assert methods == {m.value for m in Method} and 0 < refused < len(cases)
    # The step is worked, and not derived, each at least once (a prompt too long: the refusals' test).
    steps = [want["step"] for *_, want in cases if "step" in want]
    assert all(any(key in step for step in steps) for key in ("figures", "note"))
    print(f"{len(cases)} methods evaluated ({refused} refusals) in {seconds:.1f} s, one page load")


def card_with_head(path: Path, head: Head, folder: Path) -> Card:
    """A catalog card under another head, written where count can read it."""
    card = yaml.safe_load(path.read_text(encoding="utf-8"))
    written = folder / f"{card['id']}-{head.value}.yaml"
    written.write_text(yaml.safe_dump({**card, "head": head.value}, sort_keys=False), encoding="utf-8")
    return load_card(written)


def test_the_step_under_a_method_where_the_references_have_no_variant(
    site_url: str, open_page: Any, tmp_path: Path
) -> None:
    """LoRA on a token table, a masked LM whose tied decoder is declared first, DeBERTa v1 at b = 1 and b = 2,
    a target that names one layer's module, a table looked up by no ids, MPNet's bias table: the page's step is
    count's, figures or words."""
    bert = load_card(MODELS / "bert-base-uncased.yaml")
    xlmr = card_with_head(MODELS / "xlm-roberta-base.yaml", Head.MASKED_LM, tmp_path)
    deberta = load_card(MODELS / "deberta-base.yaml")
    roformer = load_card(MODELS / "roformer-chinese-base.yaml")
    mpnet = load_card(MODELS / "mpnet-base.yaml")  # its attention reads the bias table's rows
    lora = {"method": "lora", "rank": 8, "targets": None, "feedforward": None, "virtual_tokens": None}
    cases = [
        (bert, {**lora, "targets": ("word_embeddings",)}, 2, 17, "figures"),
        (bert, {**lora, "targets": ("query", "word_embeddings")}, 3, 256, "figures"),
        (xlmr, lora, 2, 17, "figures"),
        (xlmr, {**lora, "targets": ("decoder", "query")}, 2, 3, "figures"),
        (deberta, lora, 1, 17, "note"),
        (deberta, lora, 2, 1, "note"),
        (deberta, lora, 2, 17, "figures"),
        (bert, {**lora, "targets": ("layer.0.attention.self.query",)}, 2, 17, "note"),
        (roformer, {**lora, "targets": ("embed_positions",)}, 2, 17, "note"),
        (mpnet, {**lora, "targets": ("relative_attention_bias",)}, 2, 17, "figures"),
    ]
    addresses, wanted = [], []
    for card, options, batch, seq in ((c, o, b, s) for c, o, b, s, _ in cases):
        targets = "&targets=" + ",".join(options["targets"]) if options["targets"] else ""
        addresses.append(f"{query(card.family, card.head, card.config)}&batch={batch}&seq={seq}&method=lora{targets}")
        wanted.append(count_step(card, options, batch, seq))
    # Each case is what it stands for: count gives figures, or words the page has a sentence for.
    assert [next(iter(want)) for want in wanted] == [kind for *_, kind in cases]
    assert all(want.get("note", "") is not None for want in wanted)
    page = open_page(LAPTOP)
    page.goto(site_url + PAGE)
    page.wait_for_selector("#calc-method", state="attached")
    found = page.evaluate(READ, addresses)
    shows = [
        {"note": got["step_note"]} if "note" in want else {"figures": got["step"]}
        for got, want in zip(found, wanted, strict=True)
    ]
    assert shows == wanted


def count_error(*args: str) -> str:
    """What ``generator count`` says to stderr of the option it refuses (its own words, or argparse's)."""
    run = subprocess.run(
        [sys.executable, "-m", "generator", "count", *args], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert run.returncode != 0, run
    found = re.search(r"--[a-z-]+: (.*)$", run.stderr.strip().splitlines()[-1])
    assert found is not None, run.stderr
    return found.group(1)


def engine_refusal(card: Card, head: Head, tuning: Tuning) -> str:
    with pytest.raises(TuningError) as raised:
        tune(count_parameters(replace(card, head=head)), tuning)
    return str(raised.value)


def test_refusals_are_counts_words_beside_their_field(site_url: str, open_page: Any) -> None:
    bert, classifier = load_card(MODELS / "bert-base-uncased.yaml"), Head.SEQUENCE_CLASSIFICATION
    albert = load_card(MODELS / "albert-base-v2.yaml")
    # A convolution in 4 groups takes a LoRA rank that 4 divides.
    conv = load_card(TEST_CARDS / "test-deberta-v2-conv-regression.yaml")
    grouped = replace(conv, config={**conv.config, "conv_groups": 4})
    address = "family=bert&head=sequence-classification&"
    cases = [
        (address + "method=lora&rank=0", "rank", engine_refusal(bert, classifier, Tuning(Method.LORA, rank=0))),
        (
            address + "method=lora&targets=quarry",
            "targets",
            engine_refusal(bert, classifier, Tuning(Method.LORA, targets=("quarry",))),
        ),
        (
            address + "method=lora&targets=LayerNorm",
            "targets",
            engine_refusal(bert, classifier, Tuning(Method.LORA, targets=("LayerNorm",))),
        ),
        (
            address + "method=ia3&targets=dropout",
            "targets",
            engine_refusal(bert, classifier, Tuning(Method.IA3, targets=("dropout",))),
        ),
        (
            address + "method=ia3&feedforward=query",
            "feedforward",
            engine_refusal(bert, classifier, Tuning(Method.IA3, feedforward=("query",))),
        ),
        (
            address + "method=prompt-tuning&tokens=0",
            "tokens",
            engine_refusal(bert, classifier, Tuning(Method.PROMPT_TUNING, virtual_tokens=0)),
        ),
        ("family=bert&head=base&method=head", "method", engine_refusal(bert, Head.BASE, Tuning(Method.HEAD))),
        (
            "family=albert&head=base&method=ia3&targets=value",
            "feedforward",
            engine_refusal(albert, Head.BASE, Tuning(Method.IA3, targets=("value",))),
        ),
        (
            query(grouped.family, grouped.head, grouped.config) + "&method=lora&rank=3&targets=conv.conv",
            "rank",
            engine_refusal(grouped, grouped.head, Tuning(Method.LORA, rank=3, targets=("conv.conv",))),
        ),
        # count's own options refuse these before the engine sees them.
        (address + "method=lora&rank=eight", "rank", count_error("models/bert-base-uncased.yaml", "--rank", "eight")),
        (
            address + "method=lora&targets=query,",
            "targets",
            count_error("models/bert-base-uncased.yaml", "--targets", "query,"),
        ),
        (
            "family=transformer&head=base&method=lora",
            "method",
            count_error("models/transformer-base.yaml", "--method", "lora"),
        ),
    ]
    page = open_page(LAPTOP)
    page.goto(site_url + PAGE)
    page.wait_for_selector("#calc-method", state="attached")
    found = page.evaluate(READ, [address for address, *_ in cases])
    assert [(f["errors"], f["refusal"]) for f in found] == [({field: words}, words) for _, field, words in cases]
    # In words a reader can act on: an unmatched target is told the names the model's layers end in.
    assert "query" in found[1]["refusal"] and "LayerNorm" in found[2]["refusal"] and "dropout" in found[3]["refusal"]
    # A prompt that leaves the tokens no room: count refuses the sequence length, and the page its step.
    prompt = address + "method=prompt-tuning&seq=500"
    words = count_error("models/bert-base-uncased.yaml", "--method", "prompt-tuning", "--seq", "500")
    assert page.evaluate(READ, [prompt])[0]["step_refusal"] == words


def test_a_lecturers_link_survives_and_the_second_edition_speaks_its_own_words(
    edition_url: str, open_page: Any
) -> None:
    page = open_page(LAPTOP)
    link = "family=bert&head=sequence-classification&num_labels=3&method=lora&rank=8&targets=query,value"
    page.goto(edition_url + PAGE + "?" + link)
    page.wait_for_selector("#method-trainable")
    assert page.evaluate("location.search") == "?" + link
    assert page.locator("#calc-tuning-method").input_value() == "lora"
    assert page.locator("#calc-tuning-rank").input_value() == "8"
    page.goto(edition_url + "zh/" + PAGE + "?family=bert&head=sequence-classification&method=lora&rank=0")
    page.wait_for_selector("#method-refusal")
    words = content.load("calculator", "zh").section("script").template("refuse-rank").replace("{found}", "0")
    assert page.locator("#calc-tuning-rank-error").inner_text() == words.replace("\ue000", " ")
    # A step the engine refuses, in this edition's words around count's names.
    page.goto(edition_url + "zh/" + PAGE + "?family=bert&head=base&method=lora&targets=layer.0.attention.self.query")
    page.wait_for_selector("#method-step-note")
    script = content.load("calculator", "zh").section("script")
    one_layer = script.template("step-one-layer").replace("{name}", "encoder.layer.0.attention.self.query")
    one_layer = one_layer.replace("{module}", "encoder.layer.1.attention.self.query")
    reason = script.template("method-step-not-derived").replace("{detail}", one_layer)
    sentence = script.template("method-step-none").replace("{reason}", reason)
    assert page.locator("#method-step-note").inner_text() == sentence.replace("\ue000", " ")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [LAPTOP, PHONE])
def test_no_axe_violations_and_no_sideways_scroll(
    site_url: str, open_page: Any, output_dir: Path, scheme: str, width: int
) -> None:
    page = open_page(width, scheme)
    page.goto(site_url + PAGE + "?family=bert&head=sequence-classification&method=lora&rank=8&targets=query,value")
    page.wait_for_selector("#method-trainable")
    keep_screenshot(page, output_dir / f"calculator-lora-{width}-{scheme}.png")
    violations = axe_violations(page, scheme)
    assert not violations, f"axe-core on the calculator's LoRA ({scheme}, {width}px)" + axe_report(violations)
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    page.locator("#calc-tuning-targets").fill("dropout")
    page.wait_for_selector("#method-refusal")
    keep_screenshot(page, output_dir / f"calculator-lora-refused-{width}-{scheme}.png")
    violations = axe_violations(page, scheme)
    assert not violations, f"axe-core on the calculator's refusal ({scheme}, {width}px)" + axe_report(violations)
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
