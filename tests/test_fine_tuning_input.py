"""Fine-tuning methods asked for on the command line or written in a card: the counts, and every refusal.

The counts themselves are checked against peft in test_fine_tuning.py; here, that ``count
--method`` prints them, and that a method the model cannot take is an error that says where,
what was expected and what was found, never a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_fine_tuning import tuning_of

from conftest import MODELS, REFERENCE, ROOT
from generator.analysis.fine_tuning import fine_tuning_of
from generator.cards.card import load_card
from generator.cards.problems import InputError
from generator.count import METHOD_STEP
from generator.counting.inventory import count_parameters
from generator.counting.methods import Method, Tuning, tune
from generator.counting.tuned_step import tuned_compute

CLASSIFIER = MODELS / "exercise-topic-classifier-5.yaml"  # BertForSequenceClassification, five labels


def count(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", "count", *args], capture_output=True, text=True, cwd=ROOT, check=False
    )


def peft_says(card: str, method: str, **settings: object) -> dict[str, object]:
    """The reference's variant of a card for a method, at peft's defaults unless settings say otherwise."""
    reference = json.loads((REFERENCE / "fine-tuning" / f"{card}.json").read_text(encoding="utf-8"))
    return next(
        v
        for v in reference["variants"]
        if v["method"] == method and all(v.get(key) == value for key, value in settings.items())
    )


def test_count_prints_what_lora_trains_as_peft_reports_it() -> None:
    """LoRA at peft's defaults on a five-label BERT classifier: the adapters and the classifier's copy."""
    peft = peft_says("exercise-topic-classifier-5", "lora", targets=None)
    result = count(str(CLASSIFIER), "--method", "lora", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    card = load_card(CLASSIFIER)
    assert record["method"] == "lora" and record["rank"] == 8 and record["targets"] == ["query", "value"]
    assert record["trainable"] == peft["trainable"]
    assert record["parameters"] + record["added"] == peft["total"]
    assert sorted(record["adapted"]) == sorted(peft["adapted"])
    assert record["saved_modules"] == ["classifier"]
    frozen = peft["total"] - peft["trainable"]
    assert record["parameter_memory"] == {
        "fp32": 4 * frozen + 16 * peft["trainable"],
        "bf16_mixed": 2 * frozen + 16 * peft["trainable"],
    }
    # The step under LoRA at the default point, as the engine torch is checked against gives it.
    tuned = tune(count_parameters(card), tuning_of(peft))
    step = tuned_compute(card, tuned).at(record["batch"], record["seq"])
    assert record["flops"] == {"forward": step.forward, "backward": step.backward}
    assert record["activations"] == step.activations and "no_step" not in record
    assert record["training_memory"] == {
        "fp32": record["parameter_memory"]["fp32"] + step.activations["fp32"],
        "bf16_mixed": record["parameter_memory"]["bf16_mixed"] + step.activations["bf16"],
    }
    text = count(str(CLASSIFIER), "--method", "lora").stdout.splitlines()
    assert (
        text[1]
        == f"lora: {peft['trainable']:,} trainable of {peft['total']:,} ({100 * peft['trainable'] / peft['total']:.2f}%)"
    )
    assert text[4].startswith(
        "  query: 12 × 12,288 = 147,456 (Linear 768 → 768: bert.encoder.layer.0.attention.self.query"
    )
    assert count_parameters(card).total == record["parameters"]


def test_prompt_tuning_s_step_leaves_room_for_its_virtual_tokens() -> None:
    """The 20 virtual tokens take positions too: by default the step runs on P − 20 tokens, and a longer
    --seq is refused with the number that fits."""
    record = json.loads(count(str(CLASSIFIER), "--method", "prompt-tuning", "--json").stdout)
    positions = load_card(CLASSIFIER).config["max_position_embeddings"]
    assert (record["seq"], record["virtual_tokens"]) == (positions - 20, 20)
    longer = count(str(CLASSIFIER), "--method", "prompt-tuning", "--seq", str(positions))
    took = f"the 20 virtual tokens take 20 of its {positions:,} positions"
    assert longer.returncode == 1
    assert longer.stderr == f"error: --seq: expected at most {positions - 20:,}, since {took}, found {positions:,}\n"


def test_a_step_the_flow_does_not_derive_is_left_out_and_said_so() -> None:
    """A step the data flow cannot say (a target that adapts one layer's query and not the others') gets
    its counts, and no step figure it would have to guess."""
    one_layer = ("--method", "lora", "--targets", "1.attention.self.query", "--json")
    record = json.loads(count(str(MODELS / "bert-base-uncased.yaml"), *one_layer).stdout)
    assert record["trainable"] > 0 and record["flops"] is None and record["training_memory"] is None
    assert record["no_step"] == METHOD_STEP


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("--method", "ia3", "--rank", "4"), "error: --rank: expected only with --method lora, found --method ia3"),
        (
            ("--virtual-tokens", "5"),
            "error: --virtual-tokens: expected only with --method prompt-tuning, found --method full",
        ),
        (
            ("--method", "lora", "--targets", "output"),
            "error: --targets: expected names of Linear, Embedding or Conv1d layers, which lora adapts, found output, "
            "which matches bert.encoder.layer.0.attention.output, another kind of module",
        ),
        (
            ("--method", "lora", "--targets", "self.dropout,query"),
            "error: --targets: expected names of Linear, Embedding or Conv1d layers, which lora adapts, found "
            "self.dropout, which matches bert.encoder.layer.{i}.attention.self.dropout, a module without parameters",
        ),
        (
            ("--method", "ia3", "--targets", "word_embeddings"),
            "error: --targets: expected names of Linear layers, which ia3 adapts, found word_embeddings, which matches "
            "bert.embeddings.word_embeddings, another kind of module",
        ),
        (
            ("--method", "ia3", "--targets", "query", "--feedforward", "dense"),
            "error: --feedforward: expected names among the targets (query), found dense",
        ),
    ],
)
def test_a_method_the_model_cannot_take_is_refused_with_what_was_found(args: tuple[str, ...], error: str) -> None:
    result = count(str(CLASSIFIER), *args)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines()[0].removesuffix(f" ({CLASSIFIER.relative_to(ROOT)})") == error


def test_targets_that_match_nothing_list_the_names_the_model_has() -> None:
    result = count(str(MODELS / "bert-base-uncased.yaml"), "--method", "lora", "--targets", "q_proj")
    assert result.returncode == 1
    assert result.stderr.startswith(
        "error: --targets: expected names the layers of BertModel end in (dense, key, position_embeddings, query, "
        "token_type_embeddings, value, word_embeddings), found q_proj, which no module is named or ends in"
    )
    head = count(str(MODELS / "bert-base-uncased.yaml"), "--method", "head")
    assert head.stderr.startswith("error: --method: expected a class with a head")
    none = count(str(MODELS / "albert-base-v2.yaml"), "--method", "lora")
    assert none.stderr.startswith(
        "error: --targets: expected the modules to adapt, such as query,key, since peft has no default for albert, found none"
    )
    assert count(str(MODELS / "bert-base-uncased.yaml"), "--method", "lora", "--rank", "0").returncode == 2  # argparse
    own = count(str(MODELS / "transformer-base.yaml"), "--method", "bitfit")
    assert (own.returncode, own.stdout) == (1, "")
    assert own.stderr.startswith("error: --method: expected a model transformers builds, found transformer")


CARD = """\
title: A classifier fine-tuned with LoRA
family: bert
head: sequence-classification
config: {hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 2, intermediate_size: 128, vocab_size: 100}
"""


@pytest.mark.parametrize(
    ("written", "problem"),
    [
        (
            "fine_tuning: {method: lora, rank: 0}",
            "5:35: fine_tuning.rank: expected a whole number from 1 to 2,147,483,647, found the integer 0",
        ),
        (
            "fine_tuning: {method: qlora}",
            "5:23: fine_tuning.method: expected one of full, head, bitfit, lora, ia3, prompt-tuning, found the string 'qlora'",
        ),
        ("fine_tuning: {method: ia3, rank: 4}", "5:34: fine_tuning.rank: expected only with method lora, found ia3"),
        (
            "fine_tuning: {method: lora, targets: [q_proj]}",
            "5:38: fine_tuning.targets: expected names the layers of BertForSequenceClassification end in (dense, key, position_embeddings, query, token_type_embeddings, value, word_embeddings), found q_proj, which no module is named or ends in",
        ),
        ("fine_tuning: lora", "5:14: fine_tuning: expected a mapping with method, found the string 'lora'"),
        (
            "claims:\n  - {figure: 0.1M, source: a paper, trained: {method: lora, targets: []}}",
            "6:70: claims[0].trained.targets: expected a list of module names, found an empty list",
        ),
    ],
)
def test_a_method_written_in_a_card_is_checked_where_it_is_written(tmp_path: Path, written: str, problem: str) -> None:
    path = tmp_path / "card.yaml"
    path.write_text(CARD + written + "\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        load_card(path)
    assert [str(p) for p in raised.value.problems] == [f"{path}:{problem}"]


def test_a_card_s_own_method_is_the_one_its_page_works(tmp_path: Path) -> None:
    """A card that says how it is fine-tuned gets that rank and those targets on its page: r·(in + out)
    for each of 3 projections in 2 layers, and the classifier's copy (64 × 2 + 2 for two labels)."""
    path = tmp_path / "card.yaml"
    path.write_text(CARD + "fine_tuning: {method: lora, rank: 4, targets: [query, key, value]}\n", encoding="utf-8")
    card = load_card(path)
    section = fine_tuning_of(card)
    assert section is not None and section.own_lora
    lora = section.lora.tuned
    assert lora is not None and lora.tuning == Tuning(Method.LORA, rank=4, targets=("query", "key", "value"))
    assert lora.trainable == tune(count_parameters(card), lora.tuning).trainable == 2 * 3 * 4 * (64 + 64) + 64 * 2 + 2
