"""The calculator checks every key of its address as `generator count` checks a card's config.

Each address below is turned into the config a card would hold (``card_config``: the calculator's
reading of its fields, json for the other keys, as Python reads them) and checked with
``resolve_config``; the page must refuse what it refuses, for the same keys, in the same words
(but a value's type and range, worded as the form words them), with the same near miss for an unknown key,
and count the total it counts otherwise. Every fix the page offers is followed and checked the same way.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import random
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlparse

import pytest

from generator.analysis.calculator_data import family_export
from generator.cards.config import load_schema, resolve_config
from generator.cards.problems import Problem
from generator.cards.yamlsource import Document
from generator.counting.architecture import Head
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters

from .conftest import WIDE
from .test_calculator import CARDS

PAGE = "calculator/index.html"

COUNTED = [
    "family=bert&head=base&layer_norm_eps=1e-6",  # a known key that changes no count, of its declared type
    "family=bert&head=base&layer_norm_eps=1.0",  # a float written as a whole number is still a float
    "family=distilbert&head=base&hidden_size=512&num_attention_heads=8",  # DistilBertConfig's aliases
    "family=distilbert&head=base&hidden_size=768&dim=768",  # an alias that agrees with its key
    "family=deberta-v2&head=base&embedding_size=",  # left empty: no key at all, as a field left empty
    "family=mobilebert&head=base&true_hidden_size=",
    "family=electra&head=base&summary_type=%22mean%22&use_cache=false",
    # id2label, where num_labels is not given, is the number of labels (PretrainedConfig; count)
    'family=roberta&head=sequence-classification&id2label={"0":"a","1":"b","2":"c"}',
    'family=bert&head=sequence-classification&num_labels=3&id2label={"0":"a","1":"b","2":"c"}',
]
REFUSED = [
    "family=bert&head=base&num_hiden_layers=2",  # the review's typo: counted with 12 layers before
    "family=distilbert&head=sequence-classification&n_layer=3",
    "family=albert&head=masked-lm&embeding_size=64",
    "family=deberta-v2&head=base&relative_attentoin=true",
    "family=mobilebert&head=base&true_hiden_size=128",
    "family=modernbert&head=base&num_hidden_layer=4",
    "family=roberta&head=base&colour=blue",  # nothing near it
    "family=transformer&head=base&d_modle=256",
    "family=bert&head=base&layer_norm_eps=text",  # a known key of the wrong declared type
    "family=bert&head=base&layer_norm_eps=1",  # a whole number where the class declares a float
    "family=xlm-roberta&head=base&use_cache=yes",
    "family=electra&head=base&summary_type=5",
    "family=modernbert&head=base&norm_eps=%5B1%5D",
    "family=mobilebert&head=base&true_hidden_size=null",  # a null transformers reads as given
    "family=deberta-v2&head=base&embedding_size=null",
    "family=deberta-v2&head=base&attention_head_size=null",
    "family=distilbert&head=base&hidden_size=512&dim=768",  # an alias that disagrees with its key
    "family=bert&head=base&hidden_size=770&pad_token_id=40000",  # two rules at once
    "family=bert&head=base&hidden_size=770&num_hiden_layers=2",  # a rule and a typo
    "family=bert&head=base&hidden_size=0",  # out of range
    "family=bert&head=base&hidden_dropout_prob=abc",  # the wrong type
    "family=bert&head=base&hidden_size=abc&num_hiden_layers=2",
    'family=bert&head=sequence-classification&num_labels=2&id2label={"0":"a","1":"b","2":"c"}',
    "family=albert&head=sequence-classification&id2label=5",
]


def card_config(address: str) -> tuple[str, Head, dict[str, Any]]:
    """The family, head and config keys a card would hold for a calculator address, as the page reads it."""
    params = parse_qsl(urlparse(address).query, keep_blank_values=True)
    fields = dict(params)
    family, head = fields.pop("family"), Head(fields.pop("head"))
    data = family_export(family)
    inputs = {i["key"]: i for i in data["inputs"]}
    # The inputs without a default (the 2017 Transformer's vocabularies) start from the first catalog model's values.
    first = next(c for c in CARDS if c.family.name == family and c.path.parent.name == "models")
    config = {k: first.config[k] for k, i in inputs.items() if i["default"] is None and not i["optional"]}
    for key, text in fields.items():
        kind = inputs[key]["kind"] if key in inputs else None
        if key in data["config"]["null_refused"] and not text.strip():
            continue  # left empty: the key is left out
        if kind == "text":
            config[key] = text
        elif kind in ("size", "int"):
            config[key] = None if text.strip() in ("", "null") else _whole(text)
        else:  # a flag, a JSON value, or a key that is no input: as Python's json reads it, else text
            config[key] = None if not text.strip() else _json(text)
    return family, head, config


def _whole(text: str) -> object:
    digits = re.sub(r"[,_\s]", "", text)
    return int(digits) if re.fullmatch(r"-?\d+", digits) else text


def _json(text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def count_verdict(address: str) -> tuple[list[Problem], int | None]:
    """What `generator count` says of the address's config: its problems, else its total."""
    family_name, head, config = card_config(address)
    family = FAMILIES[family_name]
    problems: list[Problem] = []
    resolved, _ = resolve_config(
        family, Document(Path("address"), {"config": config}), ("config",), problems, head.value
    )
    if problems:
        return problems, None
    card = next(c for c in CARDS if c.family is family)
    return [], count_parameters(dataclasses.replace(card, head=head, config=resolved)).total


def page_verdict(page: Any, address: str) -> dict[str, Any]:
    page.goto(address)
    page.wait_for_selector("#total", state="attached")
    return page.evaluate(
        """() => ({
            total: document.getElementById("total").getAttribute("data-value"),
            problems: Array.from(document.querySelectorAll(".calc-problems li")).map(li => li.innerText),
            fixes: Array.from(document.querySelectorAll(".calc-fixes a")).map(a => a.getAttribute("href")),
            each: document.querySelector(".calc-fixes p") !== null
                && document.querySelector(".calc-fixes p").innerText.startsWith("No single change"),
        })"""
    )


def worded_as_count(problem: Problem, family: str) -> bool:
    """Whether the page words a problem as count does: all but a value's own type or range, and the values of an
    alias that disagrees with its key (the page shows them as the address writes them, count as YAML reads them)."""
    if problem.message == family_export(family)["config"]["null_refused_message"]:
        return True
    return not problem.message.startswith("expected ") and " is another name for " not in problem.message


def assert_agrees(shown: dict[str, Any], address: str) -> tuple[list[Problem], int | None]:
    problems, total = count_verdict(address)
    family = card_config(address)[0]
    if total is not None:
        assert shown["problems"] == [], address
        assert shown["total"] == str(total), address
        return problems, total
    assert shown["total"] is None, address
    page_keys = {text.split(": ", 1)[0]: text.split(": ", 1)[1] for text in shown["problems"]}
    count_keys = {p.key.removeprefix("config."): p for p in problems}
    assert page_keys.keys() == count_keys.keys(), (address, shown["problems"], [str(p) for p in problems])
    for key, problem in count_keys.items():
        if worded_as_count(problem, family):
            assert page_keys[key] == problem.message, address
    return problems, total


@pytest.mark.parametrize("address", COUNTED + REFUSED)
def test_the_page_refuses_what_count_refuses(site_url: str, open_page: Any, address: str) -> None:
    page = open_page(WIDE)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    shown = page_verdict(page, f"{site_url}{PAGE}?{address}")
    _, total = assert_agrees(shown, f"?{address}")
    assert (total is None) == (address in REFUSED)
    assert errors == []


@pytest.mark.parametrize("address", REFUSED)
def test_each_fix_is_one_count_agrees_with(site_url: str, open_page: Any, address: str) -> None:
    """A fix leads to a config count accepts, or, where the page says no single change does, to one with
    fewer of count's problems and none new."""
    page = open_page(WIDE)
    shown = page_verdict(page, f"{site_url}{PAGE}?{address}")
    before, _ = count_verdict(f"?{address}")
    assert shown["fixes"], f"no fix offered for {address}"
    for href in shown["fixes"]:
        after, total = assert_agrees(page_verdict(page, f"{site_url}{PAGE}{href}"), href)
        if not shown["each"]:
            assert total is not None, (address, href)
            continue
        had = {p.key for p in before}
        assert {p.key for p in after} < had, (address, href, [str(p) for p in after])


def test_a_typo_is_fixed_in_one_click_keeping_its_value(site_url: str, open_page: Any) -> None:
    page = open_page(WIDE)
    page_verdict(page, f"{site_url}{PAGE}?family=bert&head=base&num_hiden_layers=2")
    page.locator(".calc-fixes a", has_text="rename").click()
    page.wait_for_selector("#total[data-value]", state="attached")
    assert page.evaluate("window.location.search") == "?family=bert&head=base&num_hidden_layers=2"
    assert page.locator("#calc-num_hidden_layers").input_value() == "2"
    assert count_verdict("?family=bert&head=base&num_hidden_layers=2")[1] == int(
        page.locator("#total").get_attribute("data-value")
    )


def test_an_explicit_null_is_no_longer_offered_as_a_fix(site_url: str, open_page: Any) -> None:
    page = open_page(WIDE)
    shown = page_verdict(page, f"{site_url}{PAGE}?family=mobilebert&head=base&true_hidden_size=100")
    assert not any("true_hidden_size=null" in href for href in shown["fixes"])
    assert "?family=mobilebert&head=base" in shown["fixes"]  # left out: MobileBertConfig derives it


def typos(words: list[str], rng: random.Random, count: int) -> list[str]:
    """Deletions, insertions, swaps and substitutions, one to four of them, of random keys; some long words."""
    letters = "abcdefghijklmnopqrstuvwxyz_0123456789é😀"
    out = []
    for _ in range(count):
        word = list(rng.choice(words))
        for _ in range(rng.randint(1, 4)):
            i, edit = rng.randrange(len(word) + 1), rng.random()
            if edit < 0.3 and word:
                del word[min(i, len(word) - 1)]
            elif edit < 0.6:
                word.insert(i, rng.choice(letters))
            elif edit < 0.8 and len(word) > 1:
                j = min(i, len(word) - 2)
                word[j], word[j + 1] = word[j + 1], word[j]
            elif word:
                word[min(i, len(word) - 1)] = rng.choice(letters)
        out.append("".join(word))
    # 200 characters and more: difflib's autojunk treats the frequent ones as popular
    out += ["".join(rng.choice("ab_c") for _ in range(rng.randint(190, 260))) for _ in range(20)]
    return [*out, "", "x", "hidden", "num", "eps"]


def test_the_near_miss_is_difflibs(site_url: str, open_page: Any) -> None:
    rng = random.Random(7)
    cases = []
    for family in FAMILIES.values():
        candidates = load_schema(family).candidates()
        assert family_export(family.name)["config"]["keys"] == candidates
        cases += [[word, candidates] for word in typos(candidates, rng, 400)]
    longs = ["".join(rng.choice("ab_c") for _ in range(rng.randint(150, 260))) for _ in range(30)]
    cases += [[word[: rng.randint(100, len(word))] + "ab" * rng.randint(0, 60), longs] for word in longs]
    page = open_page(WIDE)
    page.goto(f"{site_url}{PAGE}")
    page.wait_for_function("() => typeof window.atlasCloseMatch === 'function'")
    found = page.evaluate("cases => cases.map(c => window.atlasCloseMatch(c[0], c[1]))", cases)
    expected = [next(iter(difflib.get_close_matches(word, candidates, n=1)), None) for word, candidates in cases]
    assert len(cases) > 3_000 and sum(e is not None for e in expected) > 2_000
    assert [c[0] for c, f, e in zip(cases, found, expected, strict=True) if f != e] == []


@pytest.mark.parametrize(
    "address",
    [
        "family=bert&head=base&hidden_size=770&pad_token_id=40000",
        "family=bert&head=base&hidden_size=770&num_hiden_layers=2",
        "family=bert&head=base&hidden_size=abc&num_hiden_layers=2",
        "family=roberta&head=base&colour=blue&layer_norm_eps=1",
    ],
)
def test_where_no_single_change_fixes_all_one_link_makes_them_all(site_url: str, open_page: Any, address: str) -> None:
    page = open_page(WIDE)
    page_verdict(page, f"{site_url}{PAGE}?{address}")
    assert page.locator(".calc-fixes p").first.inner_text().startswith("No single change")
    together = page.locator(".calc-fixes > p a")
    assert together.count() == 1
    href = together.get_attribute("href")
    together.click()
    page.wait_for_selector("#total[data-value]", state="attached")
    assert page.evaluate("window.location.search") == href
    _, total = count_verdict(str(href))
    assert page.locator("#total").get_attribute("data-value") == str(total)
