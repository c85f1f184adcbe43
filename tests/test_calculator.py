"""The calculator's exported formulas, evaluated here independently of its JavaScript.

A small evaluator of the exported documents (conditions, values, polynomials) stands in for the
browser: for every card it must give the inventory's total, block for block, and the families'
rules must refuse exactly what the Python checks refuse, with the same words. The switches each
block is looked up by are checked against every combination of every family's switches.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from conftest import ALL_CARD_PATHS, MODELS, card_by_id
from generator.analysis.address import query
from generator.analysis.calculator_compute import block_compute
from generator.analysis.calculator_data import _texts, block_json, export_text, family_export, slot_switches
from generator.cards import types
from generator.cards.card import Card, load_card
from generator.cards.config import load_schema, resolve_config
from generator.cards.problems import Problem
from generator.cards.yamlsource import Document
from generator.counting.architecture import Architecture, Family, Head
from generator.counting.conditions import HEAD
from generator.counting.derivation import derive
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters
from generator.counting.switches import Switches, per_setting_read

CARDS = [load_card(path) for path in ALL_CARD_PATHS]


@functools.cache
def _text(family: str) -> str:
    return export_text(family)


def document(family: str) -> dict[str, Any]:
    """The family's document as the browser receives it: through JSON text."""
    data: dict[str, Any] = json.loads(_text(family))
    return data


# --- an evaluator of the exported language, written apart from generator/counting/switches.py -----------


def whole(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def number(v: object) -> bool:
    """What calculator.js isNumber takes: a whole number (BigInt) or a decimal one, infinite ones and NaN included."""
    return whole(v) or isinstance(v, float)


def value(node: dict[str, Any], config: Mapping[str, Any]) -> Any:
    if "key" in node:
        return config.get(node["key"])
    if "const" in node:
        return node["const"]
    if "neg" in node:
        a = value(node["neg"], config)
        return -a if whole(a) else None
    if "length" in node:
        found = value(node["length"], config)
        return len(found) if isinstance(found, list) else None
    for op, pick in (("largest", max), ("smallest", min)):
        if op in node:
            found = value(node[op], config)
            many = isinstance(found, list) and found and all(whole(x) for x in found)
            return found if whole(found) else pick(found) if many else None
    (op, (left, right)), *_ = node.items()
    a, b = value(left, config), value(right, config)
    if not (whole(a) and whole(b)):
        return None
    if op == "mul":
        return a * b
    if op == "sub":
        return a - b
    if op in ("min", "max"):
        return min(a, b) if op == "min" else max(a, b)
    if b == 0:
        return None
    return a // b if op == "div" else a % b


def holds(node: dict[str, Any], config: Mapping[str, Any]) -> bool:
    (op, arg), *_ = node.items()
    if op == "truthy":
        return bool(config.get(arg)) and config.get(arg) != []
    if op == "null":
        return config.get(arg) is None
    if op == "not":
        return not holds(arg, config)
    if op == "all":
        return all(holds(c, config) for c in arg)
    if op == "any":
        return any(holds(c, config) for c in arg)
    if op == "is":
        found, kind = config.get(arg[0]), arg[1]
        return {
            "int": whole(found),
            "str": isinstance(found, str),
            "bool": isinstance(found, bool),
            "strings": isinstance(found, list) and all(isinstance(x, str) for x in found),
            "number": isinstance(found, (int, float)),
        }[kind]
    if op == "contains":
        found = config.get(arg[0])
        if isinstance(found, str):
            return arg[1] in [p.strip() for p in found.lower().split("|")]
        return isinstance(found, list) and arg[1] in found
    a, b = value(arg[0], config), value(arg[1], config)
    if op in ("eq", "ne"):
        equal = type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b
        return equal if op == "eq" else not equal
    if not (number(a) and number(b)):
        return False
    return {"gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b}[op]


def polynomial(poly: list[Any], values: Mapping[str, int]) -> int:
    total = 0
    for coeff, mono in poly:
        term = coeff
        for symbol, exponent in mono:
            term *= values[symbol] ** exponent
        total += term
    return total


@dataclasses.dataclass
class Evaluated:
    class_name: str
    blocks: list[dict[str, Any]]
    subtotals: list[int]
    total: int


def evaluate(data: dict[str, Any], head: str, config: Mapping[str, Any]) -> Evaluated:
    on = {s["name"]: holds(s["when"], config) for s in data["switches"]}
    values = {}
    for symbol in data["symbols"]:
        found = value(symbol["value"], config) if symbol["value"] else config.get(symbol["key"])
        if whole(found):
            values[symbol["name"]] = found
    blocks = []
    for slot in data["heads"][head]["slots"]:
        index = slot["variants"]["".join("1" if on[s] else "0" for s in slot["switches"])]
        if index is not None:
            blocks.append(data["blocks"][index])
    subtotals = [
        sum(polynomial(step["formula"], values) for step in block["steps"]) * polynomial(block["copies"], values)
        for block in blocks
    ]
    return Evaluated(data["heads"][head]["class_name"], blocks, subtotals, sum(subtotals))


# --- every card --------------------------------------------------------------------------------


@pytest.mark.parametrize("card", CARDS, ids=[c.id for c in CARDS])
def test_the_exported_formulas_give_every_cards_count(card: Card) -> None:
    inventory = count_parameters(card)
    result = evaluate(document(card.family.name), card.head.value, card.config)
    assert result.class_name == inventory.class_name
    assert [b["key"] for b in result.blocks] == [b.key for b in inventory.architecture.blocks]
    assert result.subtotals == [inventory.count_of(block=b.key) for b in inventory.architecture.blocks]
    assert result.total == inventory.total


@pytest.mark.parametrize("card", CARDS, ids=[c.id for c in CARDS])
def test_the_exported_steps_name_the_inventorys_tensors(card: Card) -> None:
    derivation = derive(count_parameters(card))
    result = evaluate(document(card.family.name), card.head.value, card.config)
    for block, derived in zip(result.blocks, derivation.blocks, strict=True):
        first = [block["start"] if i == 0 else 0 for i in range(len(block["repeat"]))]
        prefix = block["prefix"].format(*first)
        assert [s["label"] for s in block["steps"]] == [s.label for s in derived.lines]
        if derived.repeat == 0:  # no layers: the export still names one copy's tensors; there are none
            assert all(exact.names == () for exact in derived.lines)
            continue
        for step, exact in zip(block["steps"], derived.lines, strict=True):
            counted = [prefix + t["name"].replace("{n}", "0") for t in step["tensors"] if "shape" in t]
            tied = [prefix + t["name"] for t in step["tensors"] if "tied_to" in t]
            if step["copies"] is None:
                assert counted == list(exact.names)
            else:  # F − 1 copies: the inventory lists them all, the export one of each
                assert counted == [n for n in exact.names if ".0." in n.removeprefix(prefix)]
            assert tied == [name for name, _ in exact.tied]


def test_bert_base_in_numbers() -> None:
    card = card_by_id("bert-base-uncased-pretraining")
    result = evaluate(document("bert"), "pretraining", card.config)
    assert [b["key"] for b in result.blocks] == ["embeddings", "layer", "pooler", "mlm-head", "nsp-head"]
    assert result.subtotals == [23_837_184, 85_054_464, 590_592, 622_650, 1_538]
    assert result.total == 110_106_428


# --- the switches that look a block up are enough, for every combination -------------------------


class Probe(Mapping[str, bool]):
    """Switches for one path of a builder: forced ones as given, the rest off, reads recorded."""

    def __init__(self, names: set[str], forced: Mapping[str, bool]) -> None:
        self.names, self.forced, self.reads = names, forced, list[str]()

    def __getitem__(self, name: str) -> bool:
        if name not in self.names:
            raise KeyError(name)
        if name not in self.reads:
            self.reads.append(name)
        return self.forced.get(name, False)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def every_path(family: Family, head: Head) -> Iterator[tuple[dict[str, bool], Architecture]]:
    """Each distinct way through the builder: the switches it read, their values, the result."""
    names = {s.name for s in family.switches}

    def run(forced: dict[str, bool]) -> Iterator[tuple[dict[str, bool], Architecture]]:
        probe = Probe(names, forced)
        architecture = family.declare(probe, head)
        reads = list(probe.reads)
        yield {name: forced.get(name, False) for name in reads}, architecture
        for i, name in enumerate(reads):
            if name not in forced:
                yield from run({**{r: forced.get(r, False) for r in reads[:i]}, **forced, name: True})

    yield from run({})


@pytest.mark.parametrize(
    ("family", "head"),
    [(f, h) for f in FAMILIES.values() for h in f.heads],
    ids=[f"{f.name}-{h.value}" for f in FAMILIES.values() for h in f.heads],
)
def test_blocks_depend_only_on_their_declared_switches(family: Family, head: Head) -> None:
    data = family_export(family.name)["heads"][head.value]
    names = [s.name for s in family.switches]
    cache: dict[tuple[str, str], Any] = {}

    def expected(key: str, on: Mapping[str, bool]) -> Any:
        deciding = slot_switches(family, key)
        bits = "".join("1" if on.get(s, False) else "0" for s in deciding)
        if (key, bits) not in cache:
            forced = dict(zip(deciding, (b == "1" for b in bits), strict=True))
            built = family.declare({n: forced.get(n, False) for n in names}, head)
            cache[key, bits] = next((b for b in built.blocks if b.key == key), None)
        return cache[key, bits]

    paths = 0
    for assignment, architecture in every_path(family, head):
        paths += 1
        for unread in (False, True):  # a switch the path never read must not matter
            on = {n: assignment.get(n, unread) for n in names}
            found = [expected(slot["key"], on) for slot in data["slots"]]
            assert tuple(b for b in found if b is not None) == architecture.blocks, (assignment, unread)
    assert paths >= 1


def test_deberta_has_thousands_of_paths_but_few_blocks() -> None:
    data = family_export("deberta-v2")
    paths = sum(1 for _ in every_path(FAMILIES["deberta-v2"], Head.MASKED_LM))
    # The relative block reads the switches that decide which projections run on the relative
    # table and how wide (c2p, p2c, shared_keys, wide_heads): each setting is a path of its own.
    assert paths == 7_776
    assert len(data["blocks"]) < 100


# --- the rules ----------------------------------------------------------------------------------


def python_format(template: str, shown: Mapping[str, Any]) -> str:
    """str.format's {name} and {name!r}, written apart from Rule.__call__."""

    def one(match: re.Match[str]) -> str:
        found = shown.get(match.group(1))
        return repr(found) if match.group(2) else str(found)

    return re.sub(r"\{(\w+)(!r)?\}", one, template)


def exported_verdict(
    data: dict[str, Any], config: Mapping[str, Any], head: str | None = None
) -> list[tuple[str, tuple[str, ...]] | None]:
    """Each check's verdict, the head beside the config as calculator.js puts it ("@head")."""
    config = {**config, "@head": head}
    verdicts = []
    for rules in data["checks"]:
        verdict = None
        for rule in rules:
            if holds(rule["fails"], config):
                shown = {**config, **{name: value(v, config) for name, v in rule["values"].items()}}
                verdict = (python_format(rule["message"], shown), tuple(rule["keys"]))
                break
        verdicts.append(verdict)
    return verdicts


def inputs_accepted(data: dict[str, Any], config: Mapping[str, Any]) -> bool:
    """The form's own checks on each value (calculator.js parse): sizes in range, whole numbers, flags,
    and the types the config class declares (calculator.js typed).

    A key the config does not hold keeps the field's default (a card holds no batch size)."""
    for item in data["inputs"]:
        found = config.get(item["key"], item["default"])
        if item["kind"] in ("size", "int"):
            if found is None:
                if not item["optional"]:
                    return False
            elif not whole(found) or (item["kind"] == "size" and not item["minimum"] <= found <= 2**31 - 1):
                return False
        elif item["kind"] == "flag" and not isinstance(found, bool):
            return False
        if item["type"] is not None and not types.matches(found, item["type"]):
            return False
    return True


def calculator_accepts(data: dict[str, Any], head: str, config: Mapping[str, Any]) -> bool:
    """The calculator counts a config: every value passes the form, no rule refuses it, and the total is not 0."""
    if not inputs_accepted(data, config) or exported_verdict(data, config, head) != [None] * len(data["checks"]):
        return False
    return evaluate(data, head, config).total > 0


BREAKS = {
    "hidden_size": lambda v: v + 1,
    "dim": lambda v: v + 1,
    "pad_token_id": lambda v: 10**6,
    "add_cross_attention": lambda v: True,
    "normalization_type": lambda v: "rms_norm",
    "true_hidden_size": lambda v: 7,
    "embedding_size": lambda v: 10**5,
    "intra_bottleneck_size": lambda v: 130,
    "conv_kernel_size": lambda v: 3,
    "conv_groups": lambda v: 7,
    "type_vocab_size": lambda v: -1,
    "max_relative_positions": lambda v: "far",
    "norm_rel_ebd": lambda v: 1,
    "pos_att_type": lambda v: [1],
    "d_word_vec": lambda v: 3,
    "n_tgt_vocab": lambda v: 5,
}


@pytest.mark.parametrize("card", CARDS, ids=[c.id for c in CARDS])
def test_the_exported_rules_refuse_what_the_checks_refuse(card: Card) -> None:
    data = document(card.family.name)
    configs = [dict(card.config)]
    for key, change in BREAKS.items():
        if key in card.config:
            configs.append({**card.config, key: change(card.config[key])})
    configs.append({**card.config, "use_bottleneck": False, "hidden_size": 770})
    refused = 0
    head = card.head.value
    for config in configs:
        checked = {**config, HEAD: head}
        assert exported_verdict(data, config, head) == [check(checked) for check in card.family.build_rules], config
        refused += any(check(checked) for check in card.family.build_rules)
    assert exported_verdict(data, card.config, head) == [None] * len(card.family.build_rules)
    assert refused >= 1


# --- the address ------------------------------------------------------------------------------


def test_a_model_pages_link_names_only_what_differs_from_the_defaults() -> None:
    card = card_by_id("albert-base-v2")
    assert query(card.family, card.head, card.config) == (
        "family=albert&head=base&hidden_size=768&intermediate_size=3072&num_attention_heads=12"
    )
    assert query(card.family, card.head, {**card.config, "hidden_size": 4096, "num_hidden_groups": 1}) == (
        "family=albert&head=base&intermediate_size=3072&num_attention_heads=12"
    )
    deberta = load_card(next(p for p in ALL_CARD_PATHS if p.stem == "test-deberta-v2-factorized-mlm"))
    assert "pos_att_type=%5B%22c2p%22%5D" in query(deberta.family, deberta.head, deberta.config)
    assert "tie_word_embeddings=false" in query(deberta.family, deberta.head, deberta.config)


def test_every_key_the_count_reads_is_an_input() -> None:
    for name, family in FAMILIES.items():
        data = family_export(name)
        keys = {i["key"] for i in data["inputs"]}
        for symbol in family.symbols:
            assert symbol.value is not None or symbol.key in keys, (name, symbol.key)
        for switch in family.switches:
            assert switch.when.reads() <= keys, (name, switch.name)
        assert len(keys) == len(data["inputs"])


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_address_keys_are_checked_as_count_checks_a_cards(name: str) -> None:
    """Every key the config class knows is an input or has its declared type here, and the unknown ones
    are what resolve_config refuses; a null the family refuses is an input's (the page tells it from a key
    left out only there)."""
    family, data = FAMILIES[name], family_export(name)
    schema = load_schema(family)
    config, inputs = data["config"], {i["key"]: i for i in data["inputs"]}
    assert config["keys"] == sorted(set(schema.defaults) | schema.bookkeeping)
    assert config["aliases"] == schema.aliases
    assert config["class"] == schema.config_class and config["version"] == schema.version
    for key, kind in schema.types.items():
        # A float the form reads as a number: the declared type, with whole numbers (config_keys.checked_type).
        members = list(kind["union"]) if isinstance(kind, dict) and "union" in kind else [kind]
        as_number = {"union": [*members, "int"]}  # a bare "float" too (NomicBertConfig's dropouts)
        assert (config["types"].get(key) if key not in inputs else inputs[key]["type"]) in (kind, as_number, None), key
        assert (key in config["types"]) is (key not in inputs), key
    assert set(config["null_refused"]) == set(family.null_refused) <= inputs.keys()
    problems: list[Problem] = []
    given = dict.fromkeys(config["null_refused"]) | {"num_hiden_layers": 1, "dim": 1, "embedings": 1}
    resolve_config(family, Document(Path("card.yaml"), {"config": given}), ("config",), problems)
    refused = {p.key.removeprefix("config."): p.message for p in problems}
    unknown = {k for k in given if k not in config["keys"] and k not in config["aliases"]}
    assert {k for k, m in refused.items() if m.startswith("unknown key")} == unknown
    assert {k for k, m in refused.items() if m == config["null_refused_message"]} == set(config["null_refused"])


# --- the page without JavaScript ------------------------------------------------------------------


def test_the_page_explains_itself_and_links_every_model(site: Path) -> None:
    html = (site / "calculator" / "index.html").read_text(encoding="utf-8")
    assert '<div id="calculator" class="calculator" data-first="bert" data-strings=' in html
    assert "<noscript>" in html and "needs JavaScript" in html
    for path in sorted(MODELS.glob("*.yaml")):
        assert f'href="../models/{load_card(path).id}/index.html"' in html
    assert '<script src="../static/calculator.js" defer></script>' in html
    index = (site / "index.html").read_text(encoding="utf-8")
    assert '<a href="calculator/index.html">Parameter calculator</a>' in index


def test_each_family_is_written_as_json_and_as_a_script(site: Path) -> None:
    for name in FAMILIES:
        data = json.loads((site / "calculator" / f"{name}.json").read_text(encoding="utf-8"))
        assert data == family_export(name)
        script = (site / "calculator" / f"{name}.js").read_text(encoding="utf-8")
        assert script.endswith(f"window.atlasCalculatorData[{json.dumps(name)}] = {export_text(name)};\n")


def test_every_model_page_links_the_calculator_with_its_card(site: Path) -> None:
    for path in sorted(MODELS.glob("*.yaml")):
        card = load_card(path)
        html = (site / "models" / card.id / "index.html").read_text(encoding="utf-8")
        address = "../../calculator/index.html?" + query(card.family, card.head, card.config)
        assert f'<a href="{escape(address)}">' in html


def test_a_kept_block_text_is_the_one_worked_out_afresh_for_each_block() -> None:
    family = FAMILIES["deberta-v2"]
    order = tuple(s.name for s in family.symbols)
    blocks = family.declared({s.name: False for s in family.switches}, Head.MASKED_LM).blocks
    kept = [_texts(block, order) for block in blocks]
    # Worked out from each half of a block (what the tensors' and the compute's JSON each read), the
    # texts are those of the whole block.
    afresh = [(block_json(block, order), block_compute(block)) for block in blocks]
    assert kept == [((_dumps(data), data), (_dumps(rules), rules)) for data, rules in afresh]
    assert len({texts[0][0] for texts in kept}) == len(blocks)  # each block its own text: keyed by the block
    # Found again by identity, and a copy equal by value (as an assembly may build) finds the same texts.
    assert all(_texts(block, order) is texts for block, texts in zip(blocks, kept, strict=True))
    copies = [dataclasses.replace(block) for block in blocks]
    assert [_texts(copy, order) for copy in copies] == kept


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_halves_a_block_is_written_from_give_the_whole_blocks_texts(name: str) -> None:
    """``_texts`` writes a block's JSON from its tensors alone and its compute from its compute alone: for
    every head, with every switch off and every switch on, the texts are those of the whole block."""
    family = FAMILIES[name]
    order = tuple(s.name for s in family.symbols)
    for head, on in itertools.product(family.heads, (False, True)):
        for block in family.declared({s.name: on for s in family.switches}, head).blocks:
            data, rules = block_json(block, order), block_compute(block)
            assert _texts(block, order) == ((_dumps(data), data), (_dumps(rules), rules)), (head, on, block.key)


def test_a_worded_declaration_hashed_once_is_equal_and_hashes_equal_to_a_copy() -> None:
    """``texts.Worded`` keeps its hash (every declaration a build asks for looks it up): a copy equal by
    value has the same hash and finds the same cached declarations; other words make another key."""
    family = FAMILIES["bert"]
    copy = dataclasses.replace(family.declare)
    assert copy == family.declare and hash(copy) == hash(family.declare)
    off = {s.name: False for s in family.switches}
    assert dataclasses.replace(family, declare=copy).declared(off, Head.BASE) is family.declared(off, Head.BASE)
    other = dataclasses.replace(family.declare, titles=())
    assert other != family.declare and hash(other) != hash(family.declare)


def _dumps(data: Any) -> str:
    """The text the calculator's documents hold: compact, keys sorted, UTF-8 as is."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def test_a_family_document_is_its_data_written_whole() -> None:
    # export_text writes the listings of blocks into the rest of the document: the text must be the
    # very one json.dumps gives for the whole document.
    for name in FAMILIES:
        assert export_text(name) == _dumps(family_export(name)), name


def test_settings_that_decide_a_block_alike_declare_the_very_same_worded_block() -> None:
    family = FAMILIES["deberta-v2"]
    off = {s.name: False for s in family.switches}
    first = family.declared(off, Head.MASKED_LM).blocks
    # Another setting of a switch only the relative attention reads: a new architecture, the same embeddings.
    second = family.declared({**off, "c2p": True}, Head.MASKED_LM).blocks
    assert second is not first
    embeddings = [b for b in first if b.key == "embeddings"]
    assert len(embeddings) == 1
    assert any(b is embeddings[0] for b in second)
    assert embeddings[0].title and all(m.label for m in embeddings[0].modules)


def test_a_block_builder_runs_once_per_setting_of_the_switches_it_reads() -> None:
    """The export declares every setting of a family's switches; a builder is run again only when a
    switch it read differs (``switches.per_setting_read``), and one that iterates reads them all."""
    runs: list[str] = []

    @per_setting_read
    def block(on: Mapping[str, bool], prefix: str) -> tuple[str, bool]:
        runs.append(prefix)
        return (prefix, on["b"]) if on["a"] else (prefix, False)

    settings = [Switches(dict(zip("abc", bits, strict=True))) for bits in itertools.product((False, True), repeat=3)]
    assert [block(on, "x.") for on in settings] == [("x.", on["a"] and on["b"]) for on in settings]
    assert runs == ["x."] * 3  # a off (a read), a on with b off and with b on; c is never read
    assert block(settings[0], "y.") == ("y.", False)
    assert runs == ["x."] * 3 + ["y."]

    @per_setting_read
    def every(on: Mapping[str, bool]) -> dict[str, bool]:
        runs.append("every")
        return dict(on)

    assert [every(on) for on in settings] == [dict(on) for on in settings]
    assert runs.count("every") == 8


def test_a_builder_found_again_reads_the_switches_it_read_when_it_ran_in_that_order() -> None:
    """A builder inside another reports its reads to the outer one's switches, and the outer one's
    decision tree follows them; a builder found again must read what its run read, in its order."""

    class Noting(Mapping[str, bool]):
        def __init__(self, values: Mapping[str, bool]) -> None:
            self.values, self.read = values, list[str]()

        def __getitem__(self, name: str) -> bool:
            self.read.append(name)
            return self.values[name]

        def __iter__(self) -> Iterator[str]:
            return iter(self.values)

        def __len__(self) -> int:
            return len(self.values)

    @per_setting_read
    def block(on: Mapping[str, bool]) -> tuple[bool, bool]:
        first = on["a"] and on["b"]  # b is read only when a is on
        return first, on["c"]

    for bits in itertools.product((False, True), repeat=3):
        values = dict(zip("abc", bits, strict=True))
        expected = ["a", "b", "c"] if values["a"] else ["a", "c"]
        for _ in range(2):  # run, then found again
            noting = Noting(values)
            assert block(noting) == (values["a"] and values["b"], values["c"])
            assert list(dict.fromkeys(noting.read)) == expected
