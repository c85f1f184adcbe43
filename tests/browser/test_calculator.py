"""The calculator in Chromium: its totals equal the Python count, its address round-trips.

Every catalog and test card, and seeded random changes of their configs that transformers
accepts (every family and head), are opened by address alone, as a course page would link them;
the calculator's #total must hold the inventory's total, its block subtotals the inventory's, and
its closed form the model page's.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

import pytest

from conftest import ALL_CARD_PATHS
from generator.analysis.address import query
from generator.analysis.calculator_data import family_export
from generator.cards.card import Card, load_card
from generator.counting.architecture import Family, Head
from generator.counting.conditions import HEAD
from generator.counting.derivation import derive
from generator.counting.expr import to_tex, to_text
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters

from .conftest import PHONE, WIDE, axe_violations, one_of_each
from .test_accessibility import axe_report

CARDS = [load_card(path) for path in ALL_CARD_PATHS]
PAGE = "calculator/index.html"
PERTURBATIONS_PER_HEAD = 2  # seeded random configs for every family and head, besides the cards

# Values the random configs draw from for inputs that are not sizes.
TEXT_CHOICES = {
    "normalization_type": ["no_norm", "layer_norm"],
    "norm_rel_ebd": ["none", "layer_norm", "layer_norm|none"],
}
VALUE_CHOICES: dict[str, list[Any]] = {
    "pos_att_type": [None, "p2c|c2p", "c2p", ["c2p"], ["p2c"], ["p2c", "c2p"], []],
}


def _size(rng: random.Random) -> int:
    return rng.choice([rng.randint(1, 12), rng.randint(13, 700), rng.randint(701, 70_000), 2**31 - 1])


def _repeats(family: Family) -> set[str]:
    """Keys of the symbols that repeat blocks or modules (L, ...): kept small, every copy is listed."""
    data = family_export(family.name)
    names = {s for b in data["blocks"] for s in b["repeat"]}
    names |= {
        s for b in data["blocks"] for step in b["steps"] if step["copies"] for _, m in step["copies"] for s, _ in m
    }
    return {s["key"] for s in data["symbols"] if s["name"] in names}


def _perturb(card: Card, head: Head, rng: random.Random) -> Card | None:
    """A random change of a card's config, or None when transformers would refuse what came out."""
    family = card.family
    config = dict(card.config)
    inputs = [i for i in family_export(family.name)["inputs"] if i["group"] not in ("checked", "training")]
    repeats = _repeats(family)
    for item in rng.sample(inputs, k=min(len(inputs), rng.randint(2, 6))):
        key, kind = item["key"], item["kind"]
        if key in repeats:
            config[key] = rng.randint(1, 6)
        elif kind == "size":
            config[key] = None if item["optional"] and rng.random() < 0.3 else _size(rng)
        elif kind == "flag":
            config[key] = rng.random() < 0.5
        elif kind == "int":
            config[key] = rng.randint(-1, 40)
        elif kind == "text":
            config[key] = rng.choice(TEXT_CHOICES.get(key, [config[key]]))
        else:
            config[key] = rng.choice(VALUE_CHOICES.get(key, [config[key]]))
    # Keep the configs valid more often than chance would: heads that divide their width.
    for width in ("hidden_size", "dim", "intra_bottleneck_size"):
        heads = config.get("num_attention_heads", config.get("n_heads"))
        if isinstance(config.get(width), int) and isinstance(heads, int) and config[width] % heads:
            config[width] = heads * rng.randint(1, 96)
    if family.name == "transformer":
        config["d_word_vec"] = config["d_model"]
        if config["emb_src_tgt_weight_sharing"]:
            config["n_tgt_vocab"] = config["n_src_vocab"]
    if config.get("add_cross_attention"):
        config["is_decoder"] = True
    sizes = [config[i["key"]] for i in inputs if i["kind"] == "size"]
    checked = {**config, HEAD: head.value}  # rules about one head's modules are checked for that head
    if not all(v is None or 1 <= v <= 2**31 - 1 for v in sizes) or any(check(checked) for check in family.build_rules):
        return None
    return dataclasses.replace(card, head=head, config=config, id=f"{card.id}-random")


def perturbed(seed: int = 5) -> list[Card]:
    rng = random.Random(seed)
    out = []
    for family in FAMILIES.values():
        own = [c for c in CARDS if c.family is family]
        for head in family.heads:
            made = 0
            while made < PERTURBATIONS_PER_HEAD:
                card = _perturb(rng.choice(own), head, rng)
                if card is not None:
                    out.append(card)
                    made += 1
    return out


CONFIGS = CARDS + perturbed()


def test_the_corpus_covers_every_family_and_head() -> None:
    assert len(CONFIGS) >= 150
    covered = {(c.family.name, c.head) for c in CONFIGS}
    assert covered == {(f.name, h) for f in FAMILIES.values() for h in f.heads}


def address(card: Card) -> str:
    return f"{PAGE}?{query(card.family, card.head, card.config)}"


def read_result(page: Any) -> dict[str, Any]:
    """The calculator's figures once it has counted: total, block subtotals, closed form."""
    page.wait_for_selector("#total[data-value]", state="attached", timeout=5_000)
    return page.evaluate(
        """() => ({
            total: document.getElementById("total").getAttribute("data-value"),
            blocks: Array.from(document.querySelectorAll("td[data-block]")).map(
                td => [td.getAttribute("data-block"), td.getAttribute("data-value")]),
            closed: document.querySelector("#calc-closed math").getAttribute("alttext"),
            closed_tex: document.querySelector("#calc-closed annotation").textContent,
        })"""
    )


def test_totals_equal_the_python_count_for_a_config_of_every_family_and_head(site_url: str, open_page: Any) -> None:
    """The page runs one script on its family's exported document, whatever the config. That document
    gives every card's count (tests/test_calculator.py, without a browser), so the script is checked
    here on one config of each family and head, drawn with a fixed seed."""
    page = open_page(WIDE)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    started = time.monotonic()
    mismatches = []
    for card in one_of_each(CONFIGS, lambda c: (c.family.name, c.head)):
        inventory = count_parameters(card)
        expected = {
            "total": str(inventory.total),
            "blocks": [[b.key, str(inventory.count_of(block=b.key))] for b in inventory.architecture.blocks],
            "closed": to_text(derive(inventory).closed_form),
            "closed_tex": to_tex(derive(inventory).closed_form),
        }
        page.goto(site_url + address(card), wait_until="commit")
        found = read_result(page)
        if found != expected:
            mismatches.append((card.id, address(card), found, expected))
    assert errors == []
    assert mismatches == [], mismatches[:3]
    print(f"{len(mismatches)} mismatches in {time.monotonic() - started:.1f} s")


def test_totals_beyond_double_precision_are_exact(site_url: str, open_page: Any) -> None:
    card = next(c for c in CARDS if c.id == "bert-base-uncased")
    big = {"vocab_size": 2**31 - 1, "hidden_size": 2**31 - 1, "num_attention_heads": 1, "num_hidden_layers": 1}
    huge = dataclasses.replace(card, config={**card.config, **big})
    total = count_parameters(huge).total
    assert total > 2**53
    page = open_page(WIDE)
    page.goto(site_url + address(huge))
    assert read_result(page)["total"] == str(total)


def field(page: Any, key: str) -> Any:
    return page.locator(f"#calc-{key}")


def wait_for_address(page: Any, fragment: str) -> None:
    page.wait_for_function("fragment => decodeURIComponent(window.location.search).includes(fragment)", arg=fragment)


def test_the_address_follows_the_form_and_restores_it(site_url: str, open_page: Any) -> None:
    page = open_page(WIDE)
    page.goto(site_url + PAGE + "?family=albert&head=base")
    read_result(page)
    field(page, "hidden_size").fill("1024")
    wait_for_address(page, "hidden_size=1024")
    wait_for_address(page, "intermediate_size=4096")  # ALBERT's defaults hold I = 4 × H, so I follows H
    field(page, "num_hidden_groups").fill("2")
    wait_for_address(page, "num_hidden_groups=2")
    field(page, "tie_word_embeddings").uncheck()
    wait_for_address(page, "tie_word_embeddings=false")
    page.select_option("#calc-head", "masked-lm")
    wait_for_address(page, "head=masked-lm")
    shown = read_result(page)
    link = page.url
    assert "family=albert" in link

    card = next(c for c in CARDS if c.family.name == "albert")
    config = {**dict(family_defaults("albert")), "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_groups": 2}
    config["tie_word_embeddings"] = False
    expected = count_parameters(dataclasses.replace(card, head=Head.MASKED_LM, config=config)).total
    assert shown["total"] == str(expected)

    again = open_page(WIDE)
    again.goto(link)
    assert read_result(again) == shown
    assert field(again, "hidden_size").input_value() == "1024"
    assert field(again, "num_hidden_groups").input_value() == "2"
    assert not field(again, "tie_word_embeddings").is_checked()
    assert again.locator("#calc-head").input_value() == "masked-lm"
    assert again.locator("#calc-family").input_value() == "albert"


def family_defaults(name: str) -> Iterator[tuple[str, Any]]:
    for item in family_export(name)["inputs"]:
        yield item["key"], item["default"]


def test_lists_and_flags_are_written_as_json(site_url: str, open_page: Any) -> None:
    page = open_page(WIDE)
    page.goto(site_url + PAGE + "?family=deberta-v2&head=base&relative_attention=true")
    read_result(page)
    field(page, "pos_att_type").fill('["p2c", "c2p"]')
    wait_for_address(page, 'pos_att_type=["p2c","c2p"]')
    assert "relative_attention=true" in page.url
    with_keys = read_result(page)
    field(page, "share_att_key").check()
    wait_for_address(page, "share_att_key=true")
    assert int(read_result(page)["total"]) < int(with_keys["total"])


def test_a_catalog_model_can_be_loaded_from_the_form(site_url: str, open_page: Any) -> None:
    page = open_page(WIDE)
    page.goto(site_url + PAGE)
    read_result(page)
    page.select_option("#calc-family", "electra")
    page.wait_for_function("() => window.location.search.includes('family=electra')")
    card = next(c for c in CARDS if c.id == "electra-small-discriminator")
    page.select_option("#calc-model", label=card.title)
    wait_for_address(page, f"head={card.head.value}")
    assert read_result(page)["total"] == str(count_parameters(card).total)


def test_a_family_chosen_while_another_loads_is_the_one_shown(site_url: str, open_page: Any) -> None:
    """DeBERTa-v2's document (330 KB) held back until ALBERT's form is shown: when it arrives, the form
    stays ALBERT's, as the family list says. It used to replace it: the list said ALBERT, the form and
    its address were DeBERTa's."""
    page = open_page(WIDE)
    page.goto(site_url + PAGE)
    read_result(page)
    held: list[Any] = []

    def hold(route: Any) -> None:  # answered below, once ALBERT's form is shown
        held.append(route)

    page.route("**/calculator/deberta-v2.json", hold)
    page.select_option("#calc-family", "deberta-v2")
    page.select_option("#calc-family", "albert")
    page.wait_for_function("() => window.location.search.includes('family=albert')")
    albert = read_result(page)["total"]
    assert len(held) == 1, "the DeBERTa-v2 document was not asked for"
    with page.expect_response("**/calculator/deberta-v2.json"):
        held[0].continue_()
    page.evaluate("() => new Promise(resolve => setTimeout(resolve, 500))")  # its handlers have run by then
    assert page.locator("#calc-family").input_value() == "albert"
    assert "family=albert" in page.evaluate("window.location.search")
    assert field(page, "pos_att_type").count() == 0  # a DeBERTa input
    assert field(page, "embedding_size").count() == 1  # an ALBERT one
    assert read_result(page)["total"] == albert


@pytest.mark.parametrize(
    ("query_string", "key", "message"),
    [
        (
            "family=bert&head=base&hidden_size=abc",
            "hidden_size",
            'expected a whole number (hidden size, H), found "abc"',
        ),
        ("family=bert&head=base&hidden_size=0", "hidden_size", "expected a whole number from 1 to 2,147,483,647"),
        (
            "family=bert&head=base&hidden_size=770",
            "hidden_size",
            "the hidden size (770) is not a multiple of the number of attention heads (12)",
        ),
        (
            "family=mobilebert&head=base&normalization_type=rms_norm",
            "normalization_type",
            "normalization_type must be 'no_norm' or 'layer_norm', found 'rms_norm'",
        ),
        (
            "family=deberta-v2&head=base&pos_att_type=[p2c",
            "pos_att_type",
            "expected a JSON value",
        ),
        (  # a rule about one head: only the masked-LM and pretraining heads build the H − E matrix
            "family=mobilebert&head=masked-lm&embedding_size=1024",
            "embedding_size",
            "the embedding size (1024) is larger than the hidden size (512)",
        ),
        (
            "family=distilbert&head=base&tie_word_embeddings=yes",
            "tie_word_embeddings",
            'expected true or false, found "yes"',
        ),
        (  # the types the config class declares (generator/cards/types.py), as the card check applies them
            "family=bert&head=base&hidden_dropout_prob=abc",
            "hidden_dropout_prob",
            'expected float | int, as the config class declares it; found "abc"',
        ),
        (
            "family=bert&head=base&hidden_dropout_prob=true",
            "hidden_dropout_prob",
            'expected float | int, as the config class declares it; found "true"',
        ),
        (
            "family=bert&head=sequence-classification&classifier_dropout=x",
            "classifier_dropout",
            'expected float | int | None, as the config class declares it; found "x"',
        ),
        (  # a rule, as the card check's (generator/counting/families/dropouts.py)
            "family=bert&head=base&hidden_dropout_prob=1.5",
            "hidden_dropout_prob",
            "hidden_dropout_prob is a dropout probability, and dropout takes one from 0 to 1",
        ),
        (  # JSON reads 1e400 as an infinite number, which nn.Dropout refuses as Python's float('inf'), and
            # which the message writes as Python does (the card check's, for hidden_dropout_prob: .inf)
            "family=bert&head=base&hidden_dropout_prob=1e400",
            "hidden_dropout_prob",
            "hidden_dropout_prob is a dropout probability, and dropout takes one from 0 to 1 (nn.Dropout refuses "
            "others when it is made, nn.functional.dropout when it runs); found inf",
        ),
        (  # as Python's json writes it
            "family=bert&head=base&hidden_dropout_prob=-Infinity",
            "hidden_dropout_prob",
            "dropout takes one from 0 to 1 (nn.Dropout refuses others when it is made, nn.functional.dropout when "
            "it runs); found -inf",
        ),
        (  # a key no config class types (DeBERTa reads cls_dropout with getattr): the rule tests it
            "family=deberta-v2&head=sequence-classification&cls_dropout=text",
            "cls_dropout",
            "cls_dropout is a dropout probability, and dropout takes one from 0 to 1",
        ),
        (
            "family=modernbert&head=base&classifier_pooling=max",
            "classifier_pooling",
            "expected Literal['cls', 'mean'], as the config class declares it; found \"max\"",
        ),
    ],
)
def test_invalid_input_shows_a_message_and_no_total(
    site_url: str, open_page: Any, query_string: str, key: str, message: str
) -> None:
    page = open_page(WIDE)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{site_url}{PAGE}?{query_string}")
    page.wait_for_selector(".calc-problems")
    assert message in page.locator(f"#calc-{key}-error").inner_text()
    assert message in page.locator(".calc-problems").inner_text()
    assert page.locator("#total").get_attribute("data-value") is None
    assert page.locator(f"#calc-{key}").get_attribute("aria-invalid") == "true"
    assert errors == []


def test_the_rule_messages_are_the_card_checks(site_url: str, open_page: Any) -> None:
    card = next(c for c in CARDS if c.id == "mobilebert-uncased")
    config = {**card.config, "use_bottleneck": False, "true_hidden_size": 128}
    expected = [f for check in card.family.build_rules if (f := check(config))]
    assert expected
    page = open_page(WIDE)
    page.goto(site_url + f"{PAGE}?" + query(card.family, card.head, config))
    page.wait_for_selector(".calc-problems")
    shown = page.locator(".calc-problems li").all_inner_texts()
    assert shown == [f"{keys[0]}: {text}" for text, keys in expected]


def test_what_the_address_cannot_use_is_said(site_url: str, open_page: Any) -> None:
    page = open_page(WIDE)
    page.goto(site_url + PAGE + "?family=roberta&head=pretraining&layer_norm_eps=1e-6&hidden_dropout_prob=0.2")
    read_result(page)
    notes = page.locator("#calc-address-notes").inner_text()
    assert 'RoBERTa has no head "pretraining"; showing base' in notes
    # A key the config class knows is checked and then left out; an unknown one is refused (test_calculator_keys.py).
    assert "layer_norm_eps does not change the count" in notes
    # A dropout changes no parameter but what a training step keeps: the address may set it.
    assert "hidden_dropout_prob" not in notes
    assert page.locator("#calc-hidden_dropout_prob").input_value() == "0.2"
    page.goto(site_url + PAGE + "?family=gpt2")
    read_result(page)
    assert 'there is no family "gpt2"' in page.locator("#calc-address-notes").inner_text()


def test_it_works_from_a_file(built_site: Path, open_page: Any) -> None:
    card = next(c for c in CARDS if c.id == "transformer-seed-one-layer")
    page = open_page(WIDE)
    page.goto((built_site / PAGE).as_uri() + "?" + query(card.family, card.head, card.config))
    assert read_result(page)["total"] == str(count_parameters(card).total)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [WIDE, PHONE])
def test_no_axe_violations_once_drawn(site_url: str, open_page: Any, output_dir: Path, scheme: str, width: int) -> None:
    page = open_page(width, scheme)
    card = next(c for c in CARDS if c.id == "test-deberta-v2-unshared-classifier")
    page.goto(site_url + address(card))
    read_result(page)
    page.locator("details.calc-tensors").first.evaluate("d => d.open = true")
    page.screenshot(path=output_dir / f"calculator-{width}-{scheme}.png", full_page=True)
    violations = axe_violations(page, scheme)
    assert not violations, f"axe-core on the calculator ({scheme}, {width}px)" + axe_report(violations)
    field(page, "hidden_size").fill("61")
    page.wait_for_selector(".calc-problems")
    violations = axe_violations(page, scheme)
    assert not violations, f"axe-core on the calculator with a problem ({scheme})" + axe_report(violations)


def test_families_without_catalog_defaults_start_from_a_model(site_url: str, open_page: Any) -> None:
    # The 2017 Transformer has no default vocabulary; the calculator starts from its first model's.
    family: Family = FAMILIES["transformer"]
    page = open_page(WIDE)
    page.goto(site_url + PAGE + "?family=transformer")
    found = read_result(page)
    first = next(c for c in CARDS if c.family is family and c.path.parent.name == "models")
    config = dict(family_defaults("transformer"))
    for key in ("n_src_vocab", "n_tgt_vocab", "len_max_seq"):
        config[key] = first.config[key]
    assert found["total"] == str(count_parameters(dataclasses.replace(first, config=config)).total)


@pytest.mark.parametrize(
    ("written", "family", "head", "changes"),
    [
        (
            "family=albert&head=base&hidden_size=4096&num_hidden_groups=1",
            "albert",
            Head.BASE,
            {"hidden_size": 4096, "num_hidden_groups": 1},
        ),
        (
            "family=mobilebert&head=masked-lm&use_bottleneck=true",
            "mobilebert",
            Head.MASKED_LM,
            {"use_bottleneck": True},
        ),
        (
            'family=deberta-v2&head=base&relative_attention=true&pos_att_type=["p2c","c2p"]',
            "deberta-v2",
            Head.BASE,
            {"relative_attention": True, "pos_att_type": ["p2c", "c2p"]},
        ),
    ],
)
def test_a_hand_written_link_is_counted_and_kept(
    site_url: str, open_page: Any, written: str, family: str, head: Head, changes: dict[str, Any]
) -> None:
    page = open_page(WIDE)
    page.goto(f"{site_url}{PAGE}?{written}")
    found = read_result(page)
    card = next(c for c in CARDS if c.family.name == family)
    config = {**dict(family_defaults(family)), **changes}
    assert found["total"] == str(count_parameters(dataclasses.replace(card, head=head, config=config)).total)
    kept = page.evaluate("window.location.search").removeprefix("?")
    assert kept.startswith(f"family={family}&head={head.value}&")
    assert dict(parse_qsl(kept)) == dict(parse_qsl(written))  # every key kept, as written


@pytest.mark.parametrize(
    "card_id",
    [
        "bert-base-uncased-pretraining",
        "mobilebert-uncased-pretraining",
        "test-deberta-v2-unshared-classifier",
        "test-bert-no-layers",
    ],
)
def test_every_step_reads_as_on_the_model_page(site_url: str, open_page: Any, card_id: str) -> None:
    card = next(c for c in CARDS if c.id == card_id)
    derivation = derive(count_parameters(card))
    expected = [
        [
            step.label,
            *([to_text(step.symbolic), to_text(step.substituted)] if not step.formula.is_zero() else []),
            step.value,
        ]
        for block in derivation.blocks
        for step in block.lines
    ]
    page = open_page(WIDE)
    page.goto(site_url + address(card))
    read_result(page)
    shown = page.evaluate(
        """() => Array.from(document.querySelectorAll("table.derivation:not(.total) tbody tr")).map(row => [
            row.querySelector("th").textContent,
            ...Array.from(row.querySelectorAll("math")).map(m => m.getAttribute("alttext")),
            Number(row.querySelector("td.n").textContent.replace(/,/g, "")),
        ])"""
    )
    assert shown == expected


def test_an_address_full_of_markup_runs_nothing(site_url: str, open_page: Any) -> None:
    payload = "<img src=x onerror=alert(1)><script>alert(2)</script>"
    page = open_page(WIDE)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for query_string in (
        f"family=bert&head=base&hidden_size={quote(payload)}&{quote(payload)}=1",
        f"family={quote(payload)}&head={quote(payload)}",
        f"family=mobilebert&head=base&normalization_type={quote(payload)}",
        f"family=deberta-v2&head=base&pos_att_type={quote(json.dumps([payload]))}",
    ):
        page.goto(f"{site_url}{PAGE}?{query_string}")
        page.wait_for_selector("#total", state="attached")
        page.wait_for_timeout(200)
        assert page.locator("main img, main script:not([src])").count() == 0
    assert dialogs == []


@pytest.mark.parametrize(
    "card_id",
    [
        "test-deberta-v2-sentinels",
        "test-bert-no-token-types",
        "test-roberta-classifier-default-labels",
        "test-bert-no-layers",
    ],
)
def test_sentinels_are_counted_as_transformers_counts_them(site_url: str, open_page: Any, card_id: str) -> None:
    card = next(c for c in CARDS if c.id == card_id)
    page = open_page(WIDE)
    page.goto(f"{site_url}{PAGE}?{query(card.family, card.head, card.config)}")
    assert read_result(page)["total"] == str(count_parameters(card).total)


def test_a_config_without_parameters_is_refused_in_the_card_checks_words(site_url: str, open_page: Any) -> None:
    page = open_page(WIDE)
    page.goto(
        f"{site_url}{PAGE}?family=deberta-v2&head=base&hidden_size=0&intermediate_size=0&max_position_embeddings=0"
    )
    page.wait_for_selector(".calc-problems")
    assert family_export("deberta-v2")["no_parameters"] in page.locator(".calc-problems").inner_text()
    assert page.locator("#total").get_attribute("data-value") is None
