"""Configs transformers built (or refused), checked against the card check, the import, the count and the calculator.

``tests/reference/sample/configs.json`` is written by ``tools/config_sample.py`` (``make
reference``): a seeded draw of small configs of every family and head, sentinel values
(-1, 0, null, legacy strings, absent keys) drawn far more often than their share, each built
by transformers on the meta device; ``compute.json`` beside it holds the training steps of
those configs, measured by ``tools/compute_reference.py --sample``. This test needs neither
torch nor transformers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_calculator import calculator_accepts, document, evaluate, holds
from test_compute import at_points

from conftest import REFERENCE
from generator.cards.card import load_card
from generator.cards.importer import import_config
from generator.cards.problems import InputError
from generator.counting.compute import declared_compute, step_inexact, step_refusal
from generator.counting.conditions import HEAD
from generator.counting.families import FAMILIES, common
from generator.counting.families.roberta import no_token_position
from generator.counting.families.step_rules import no_token_type_row
from generator.counting.inventory import count_parameters
from generator.counting.switches import FirstOf

SAMPLE = json.loads((REFERENCE / "sample" / "configs.json").read_text(encoding="utf-8"))
ENTRIES: list[dict[str, Any]] = SAMPLE["configs"]
# The same configs' training steps, measured by tools/compute_reference.py --sample; "error" where
# the class cannot run one (a 0-wide head, a width the rotary tables do not fit, ...).
COMPUTE_SAMPLE: list[dict[str, Any]] = json.loads((REFERENCE / "sample" / "compute.json").read_text(encoding="utf-8"))[
    "configs"
]
RAN = [row for row in COMPUTE_SAMPLE if "points" in row]


# Configs transformers builds that the card check refuses all the same: (family, or None for
# every family; the problem's key; words of its message), each with its reason. A refused config
# must have at least one such problem (its other problems may follow from it: with no layers,
# transformers never reads the head count at all).
LAYER_COUNTS = ("num_hidden_layers", "n_layers", "num_hidden_groups", "inner_group_num", "num_feedforward_networks")
COUNTS = (*LAYER_COUNTS, "num_attention_heads", "n_heads", "num_labels")
REFUSED_THOUGH_BUILT: tuple[tuple[str | None, str, str], ...] = (
    # ALBERT, ELECTRA and RoFormer skip BERT's head check when the config has embedding_size, so the
    # model is built with A·(H // A)-wide projections, but its forward pass cannot use them.
    ("albert", "config.hidden_size", "is not a multiple of the number of attention heads"),
    ("electra", "config.hidden_size", "is not a multiple of the number of attention heads"),
    ("roformer", "config.hidden_size", "is not a multiple of the number of attention heads"),
    # JinaEmbeddingsV3Attention has no head check: it builds A·(H // A)-wide projections and its forward
    # runs on them. The site does not count that narrower model.
    ("jina_embeddings_v3", "config.hidden_size", "is not a multiple of the number of attention heads"),
    # The same in MobileBertSelfAttention, which has no such check, at either width.
    ("mobilebert", "config.intra_bottleneck_size", "is not a multiple of the number of attention heads"),
    ("mobilebert", "config.hidden_size", "is not a multiple of the number of attention heads"),
    # A given true_hidden_size wins over the derived one and changes the model; the card must agree.
    ("mobilebert", "config.true_hidden_size", "disagrees with the value MobileBertConfig derives"),
    # Every tensor empty: nothing to count, and a page of shares would divide by 0.
    (None, "config", "without a single parameter"),
    # No layers is accepted for BERT, RoBERTa, XLM-R, ALBERT, ELECTRA, DistilBERT and DeBERTa (the
    # layer block shows what one copy would hold, times L = 0). Still refused: MobileBERT without
    # layers (its per-layer rules and true_hidden_size would need the same treatment), ALBERT
    # without groups or with empty groups, and MobileBERT's F = 0 (it builds F − 1 extra networks
    # only when F > 1, so F = 0 is F = 1 over again).
    ("mobilebert", "config.num_hidden_layers", "found the integer 0"),
    *((None, f"config.{key}", "found the integer 0") for key in LAYER_COUNTS[2:]),
    # Without layers transformers never builds an attention module, so it also builds a model 0
    # wide (BERT, ELECTRA, DistilBERT) or with 0 heads; such a model has nothing to derive.
    (None, "config.hidden_size", "found the integer 0"),
    ("distilbert", "config.dim", "found the integer 0"),
    (None, "config.num_attention_heads", "found the integer 0"),
    ("distilbert", "config.n_heads", "found the integer 0"),
    # A negative count: range(-1) is empty, -1 heads give the same tensors as 1, -1 labels none;
    # the formulas multiply by the count as it is written.
    *((None, f"config.{key}", "found the integer -") for key in COUNTS),
)


NULL_WRITTEN = "transformers reads null as given"  # generator/cards/config.py, Family.null_refused


def refused_though_built(entry: dict[str, Any], error: InputError) -> bool:
    return any(
        family in (None, entry["family"]) and problem.key == key and words in problem.message
        for problem in error.problems
        for family, key, words in REFUSED_THOUGH_BUILT
    )


def _id(entry: dict[str, Any]) -> str:
    return f"{entry['family']}-{entry['head']}"


def write_sample_card(folder: Path, entry: dict[str, Any]) -> Path:
    """The card a user would write for the sampled config."""
    card = {"title": "sample", "family": entry["family"], "head": entry["head"], "config": entry["config"]}
    path = folder / "sample.yaml"
    path.write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")
    return path


def imports(folder: Path, entry: dict[str, Any]) -> bool:
    """``python -m generator import`` takes the config as a config.json."""
    source = folder / "config.json"
    source.write_text(json.dumps({"model_type": entry["family"], **entry["config"]}), encoding="utf-8")
    try:
        import_config(source, "imported", entry["head"], folder / "models")
    except InputError:
        return False
    return True


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{i}-{_id(e)}" for i, e in enumerate(ENTRIES)])
def test_the_card_check_and_the_calculator_accept_exactly_what_transformers_built(
    entry: dict[str, Any], tmp_path: Path
) -> None:
    path = write_sample_card(tmp_path, entry)
    imported = imports(tmp_path, entry)
    try:
        card = load_card(path)
    except InputError as error:
        assert not entry["accepted"] or refused_though_built(entry, error), [str(p) for p in error.problems]
        assert not imported
        if not any(NULL_WRITTEN in p.message for p in error.problems):  # the form cannot write such a null
            defaults = {item["key"]: item["default"] for item in document(entry["family"])["inputs"]}
            assert not calculator_accepts(document(entry["family"]), entry["head"], {**defaults, **entry["config"]})
        return
    assert entry["accepted"], (entry["config"], entry["error"])
    assert imported
    inventory = count_parameters(card)
    assert inventory.class_name == entry["class"]
    assert [[t.name, list(t.shape)] for t in inventory.tensors] == entry["tensors"]
    assert [[t.name, t.tied_to] for t in inventory.tied] == entry["tied"]
    assert inventory.total == entry["total"]
    data = document(card.family.name)
    assert calculator_accepts(data, card.head.value, card.config)
    assert evaluate(data, card.head.value, card.config).total == entry["total"]


@pytest.mark.parametrize("row", RAN, ids=[f"{r['index']}-{r['family']}-{r['head']}" for r in RAN])
def test_the_compute_of_every_sampled_config_that_runs_matches_torch(row: dict[str, Any], tmp_path: Path) -> None:
    """FLOPs and saved bytes at four points of each sampled config whose training step torch ran."""
    entry = ENTRIES[row["index"]]
    try:
        card = load_card(write_sample_card(tmp_path, entry))
    except InputError as error:
        assert refused_though_built(entry, error), [str(p) for p in error.problems]
        return
    if step_inexact(card) is not None:  # piecewise beyond one polynomial: its page shows no figure
        return
    # A config only META_BLIND refuses ran on the meta device: its figures are the declaration's all the same.
    found, expected = at_points(declared_compute(card), row["points"])
    assert found == expected


# The step checks the meta device cannot see: it checks no index, so a lookup in a table of 0 rows runs
# there and raises on a CPU (test-bert-no-token-types, whose reference also runs on CPU: tests/test_compute.py).
# The same for RoBERTa's table of no more rows than pad_token_id + 1: the sample's input_ids are all the
# padding id, whose positions all stay below it. A family declares its own such rules (GroundTruth.meta_blind).
META_BLIND = (
    no_token_type_row.name,
    no_token_position.name,
    *(name for family in FAMILIES.values() if family.ground_truth for name in family.ground_truth.meta_blind),
)


@pytest.mark.slow  # loads and checks every sampled config torch stepped: some 10 s
def test_the_step_checks_name_exactly_the_sampled_configs_torch_could_not_train(tmp_path: Path) -> None:
    """Every config transformers built and the card check accepts: its family's step checks refuse it
    exactly when torch's training step raised on it (compute.json's "error", measured on the meta
    device, so without the checks of META_BLIND), and the calculator's copy of the checks
    (calculator/<family>.json: compute.cannot_run) says what ``step_refusal`` says."""
    verdicts, blind = {}, set()
    for row in COMPUTE_SAMPLE:
        entry = ENTRIES[row["index"]]
        try:
            card = load_card(write_sample_card(tmp_path, entry))
        except InputError:
            continue
        checked = {**card.config, HEAD: card.head.value}
        exported = [r for r in document(card.family.name)["compute"]["cannot_run"] if holds(r["fails"], checked)]
        assert (step_refusal(card) is None) == (exported == []), row["index"]
        seen = [rule for rule in card.family.step_rules if rule.name not in META_BLIND and rule(checked)]
        verdicts[row["index"]] = (bool(seen), "error" in row)
        if not seen and step_refusal(card) is not None:
            blind.add(row["index"])
    assert sorted(set(verdicts.values())) == [(False, False), (True, True)], {
        index: verdict for index, verdict in verdicts.items() if verdict[0] != verdict[1]
    }
    assert sum(refused for refused, _ in verdicts.values()) >= 50
    # The meta device ran every config that only META_BLIND refuses (what a CPU would not run).
    assert blind and all(verdicts[index] == (False, False) for index in blind)
    numbers_from_padding = {
        name
        for name, family in FAMILIES.items()
        if any(rule.name == no_token_position.name for rule in family.step_rules)
    }
    assert numbers_from_padding >= {"roberta", "xlm-roberta"}
    own_blind = {name for name, family in FAMILIES.items() if family.ground_truth and family.ground_truth.meta_blind}
    assert all(
        ENTRIES[index]["config"].get("type_vocab_size") == 0
        or ENTRIES[index]["family"] in numbers_from_padding | own_blind
        for index in blind
    )


@pytest.mark.slow  # loads every sampled config with a head count the heads do not divide: some 6 s
def test_a_head_count_refused_where_transformers_builds_says_it_builds(tmp_path: Path) -> None:
    """The card check refuses hidden sizes the heads do not divide. Where transformers builds such a config
    all the same (a copy of the check that is skipped, or a head size rounded down), the message must not
    say that transformers refuses it, but what it builds."""
    said: dict[tuple[str, bool], set[bool]] = {}
    for entry in ENTRIES:
        try:
            load_card(write_sample_card(tmp_path, entry))
        except InputError as error:
            for problem in error.problems:
                if (
                    problem.key == "config.hidden_size"
                    and "not a multiple of the number of attention" in problem.message
                ):
                    builds = "transformers would build" in problem.message
                    said.setdefault((entry["family"], entry["accepted"]), set()).add(builds)
    built = {family for family, accepted in said if accepted}
    unchecked = {
        name
        for name, family in FAMILIES.items()
        if any(
            rule.name == common.heads_divide_hidden_unchecked.name
            for check in family.build_rules
            for rule in (check.rules if isinstance(check, FirstOf) else (check,))
        )
    }
    assert built and built <= unchecked
    assert all(said[family, True] == {True} for family in built)
    assert all(said[family, False] == {False} for family, accepted in said if not accepted and family not in built)


def test_the_compute_sample_runs_configs_of_every_family() -> None:
    """Each family with a transformers class has sampled configs whose step ran (and the card check takes)."""
    ran = {r["family"] for r in RAN}
    assert ran == {e["family"] for e in ENTRIES}
    assert len(RAN) >= 100
    assert {r["index"] for r in COMPUTE_SAMPLE} == {i for i, e in enumerate(ENTRIES) if e["accepted"]}
    # Every loss a classifier can end in ran in every family: cross-entropy, mean squared error on one
    # output and on three, binary cross-entropy on one label and on three.
    losses = {
        (
            ENTRIES[r["index"]]["family"],
            ENTRIES[r["index"]]["config"].get("problem_type"),
            ENTRIES[r["index"]]["config"].get("num_labels"),
        )
        for r in RAN
    }
    for problem, labels in (
        ("single_label_classification", 3),
        ("regression", 1),
        ("regression", 3),
        ("multi_label_classification", 1),
        ("multi_label_classification", 3),
    ):
        assert {family for family, p, n in losses if (p, n) == (problem, labels)} == ran, (problem, labels)


def test_the_sample_holds_sentinels_and_refusals_of_every_family() -> None:
    families = {e["family"] for e in ENTRIES}  # every family transformers implements: test_family_coverage.py
    assert all(any(e["accepted"] for e in ENTRIES if e["family"] == f) for f in families)
    assert sum(not e["accepted"] for e in ENTRIES) >= 50
    deberta = [e["config"] for e in ENTRIES if e["family"] == "deberta-v2" and e["accepted"]]
    assert any(c.get("conv_kernel_size") in (0, -1) for c in deberta)
    assert any(c.get("position_buckets") == -1 and c.get("relative_attention") for c in deberta)
    assert any(c.get("pos_att_type") == "p2c|c2p" for c in deberta)
    assert any(e["config"].get("type_vocab_size") == 0 for e in ENTRIES if e["family"] == "bert" and e["accepted"])
    assert any(
        "num_labels" not in e["config"] for e in ENTRIES if e["head"] == "sequence-classification" and e["accepted"]
    )
