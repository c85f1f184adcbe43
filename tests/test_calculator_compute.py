"""The calculator's exported compute rules, evaluated here apart from its JavaScript and from the engine.

The evaluator below reads only the family documents (as the browser does): it picks each slot's
compute rules by the switches, applies their conditions to the config, keeps each storage once
(per block, or per model when shared), and adds Adam's bytes per parameter. For every card and
several (b, s), including b = 1 where ModernBERT keeps more, it must give the engine's figures,
which tests/test_compute.py holds to torch's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from test_calculator import CARDS, document, holds, polynomial, value

from conftest import card_by_id
from generator.analysis.address import query
from generator.analysis.calculator_data import family_export
from generator.cards.card import Card
from generator.counting.compute import declared_compute, measured, step_refusal
from generator.counting.conditions import HEAD
from generator.counting.families import FAMILIES

PRECISIONS = ("fp32", "bf16")
MEASURED_CARDS = [c for c in CARDS if measured(c.family)]


def _kept(step: dict[str, Any], rules: dict[str, Any], config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What a step keeps; an activation function keeps its input, its output or both, and maybe more."""
    if step["activation"] is None and step["function"] is None:
        return list(step["saved"])
    name = step["function"] or config.get(step["activation"])
    keeps = rules["activations"][name]
    before, after = step["saved"]
    kept = ([before] if keeps["input"] else []) + ([after] if keeps["output"] else [])
    extra = [
        {"key": f"{step['path']} intermediate {n}", "shape": before["shape"]} for n in range(keeps["intermediates"])
    ]
    return kept + extra


def figures(data: dict[str, Any], head: str, config: Mapping[str, Any], b: int, s: int) -> dict[str, int]:
    """Forward and backward FLOPs, activations and training memory from the document alone."""
    rules = data["compute"]
    on = {sw["name"]: holds(sw["when"], config) for sw in data["switches"]}
    values = {}
    stepped = {**config, "batch": b, "seq": s}  # a step symbol reads the step's b and s
    for symbol in data["symbols"] + rules["symbols"]:
        found = value(symbol["value"], stepped) if symbol["value"] else config.get(symbol["key"])
        if isinstance(found, int) and not isinstance(found, bool):
            values[symbol["name"]] = found
    values |= {"b": b, "s": s}
    out = {"forward": 0, "backward": 0, "fp32": 0, "bf16": 0, "parameters": 0, "frozen": 0}
    seen: set[str] = set()
    for slot in data["heads"][head]["slots"]:
        bits = "".join("1" if on[name] else "0" for name in slot["switches"])
        if slot["variants"][bits] is None:
            continue
        block, compute = data["blocks"][slot["variants"][bits]], rules["blocks"][slot["compute"][bits]]
        copies, runs = polynomial(block["copies"], values), polynomial(compute["runs"], values)
        for step in block["steps"]:
            each = polynomial(step["copies"], values) if step["copies"] else 1
            for tensor in step["tensors"]:
                if "shape" in tensor:
                    count = each * copies
                    for dim in tensor["shape"]:
                        count *= polynomial(dim, values)
                    out["parameters"] += count
                    out["frozen"] += count if tensor.get("frozen") else 0
        backward = block["kind"] not in rules["not_differentiated"][head]
        local: set[str] = set()
        for step in compute["steps"]:
            for product in step["products"]:
                if product["when"] is None or holds(product["when"], config):
                    flops = polynomial(product["flops"], values) * runs
                    out["forward"] += 0 if product.get("backward_only") else flops
                    out["backward"] += flops * product["backward"] if backward else 0
            for tensor in _kept(step, rules, config):
                if "when" in tensor and not holds(tensor["when"], config):
                    continue
                scope = seen if tensor.get("shared") else local
                if tensor["key"] in scope:
                    continue
                scope.add(tensor["key"])
                if tensor.get("batch_one") and (b != 1 or tensor.get("shared")):
                    continue
                if tensor.get("seq_above_one") and s == 1:
                    continue
                if tensor.get("batch_above_one") and b == 1:
                    continue
                elements = 1
                for dim in tensor["shape"]:
                    elements *= polynomial(dim, values)
                for precision in PRECISIONS:
                    size = elements * rules["element_bytes"][tensor.get("dtype", "activation")][precision]
                    out[precision] += size if tensor.get("shared") else size * runs
    trainable = out["parameters"] - out["frozen"]
    for memory, precision in (("fp32", "fp32"), ("bf16_mixed", "bf16")):
        per = rules["per_parameter"]
        bytes_ = per["trainable"][memory] * trainable + per["frozen"][memory] * out["frozen"]
        out[f"memory_{memory}"] = bytes_ + out[precision]
    return out


def _engine(card: Card, b: int, s: int) -> dict[str, int]:
    found = declared_compute(card).at(b, s)  # the page refuses the step of a card transformers cannot run, below
    return {
        "forward": found.forward,
        "backward": found.backward,
        "fp32": found.activations["fp32"],
        "bf16": found.activations["bf16"],
        "memory_fp32": found.training_memory["fp32"],
        "memory_bf16_mixed": found.training_memory["bf16_mixed"],
    }


@pytest.mark.parametrize("card", MEASURED_CARDS, ids=[c.id for c in MEASURED_CARDS])
def test_the_exported_rules_give_the_engines_figures(card: Card) -> None:
    data = document(card.family.name)
    # The script shows no figure where transformers cannot run the step: its checks fail where Python's do,
    # the first of them the rule whose message step_refusal gives (the script words it as the card check's).
    checked = {**card.config, HEAD: card.head.value}
    refused = [rule for rule in data["compute"]["cannot_run"] if holds(rule["fails"], checked)]
    first = next((rule for rule in card.family.step_rules if rule(checked)), None)
    assert refused[:1] == ([first.to_json()] if first is not None else [])
    assert (first is None) == (step_refusal(card) is None)
    length = card.config["max_position_embeddings"]
    for b, s in ((1, 1), (1, min(length, 512)), (2, 3), (32, min(length, 512)), (3, length)):
        found = figures(data, card.head.value, card.config, b, s)
        assert {k: found[k] for k in _engine(card, b, s)} == _engine(card, b, s), (b, s)


def test_every_key_the_compute_reads_is_an_input() -> None:
    """A dropout, an activation function, a pooling choice: the calculator has a field for each."""
    for name in FAMILIES:
        data = family_export(name)
        keys = {i["key"] for i in data["inputs"]}
        for card in (c for c in CARDS if c.family.name == name):
            config = {k: card.config.get(k) for k in keys}
            expected = _engine(card, 2, 3) if measured(card.family) else None
            found = figures(data, card.head.value, config, 2, 3) if expected else None
            assert found is None or {k: found[k] for k in expected or {}} == expected, card.id


def test_batch_and_seq_are_inputs_with_defaults() -> None:
    inputs = {i["key"]: i for i in family_export("bert")["inputs"]}
    assert (inputs["batch"]["default"], inputs["batch"]["minimum"], inputs["batch"]["optional"]) == (1, 1, False)
    assert (inputs["seq"]["default"], inputs["seq"]["minimum"], inputs["seq"]["optional"]) == (None, 1, True)
    assert family_export("bert")["compute"]["default_seq"] == 512
    # The 2017 Transformer has no measured compute: no b and s to ask for.
    assert "batch" not in {i["key"] for i in family_export("transformer")["inputs"]}
    assert family_export("transformer")["compute"]["measured"] is False


def test_a_model_pages_link_carries_what_its_compute_reads() -> None:
    """ALBERT v2's card writes its dropouts as 0 where AlbertConfig says 0.0: the same to the compute, so
    not named; a BERT config with other dropouts or activations names them, in order."""
    albert = card_by_id("albert-base-v2")
    assert (albert.config["hidden_dropout_prob"], albert.family.name) == (0, "albert")
    assert query(albert.family, albert.head, albert.config) == (
        "family=albert&head=base&hidden_size=768&intermediate_size=3072&num_attention_heads=12"
    )
    bert = card_by_id("bert-large-uncased")
    changed = {**bert.config, "hidden_dropout_prob": 0.0, "hidden_act": "relu"}
    assert query(bert.family, bert.head, bert.config).endswith("&num_attention_heads=16")
    assert query(bert.family, bert.head, changed).endswith(
        "&num_attention_heads=16&hidden_dropout_prob=0.0&hidden_act=relu"
    )
