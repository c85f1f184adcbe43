"""Each formula's TeX source says what its MathML shows, token for token, and compiles.

The pages write every formula twice from one expression tree (generator/counting/expr.py): MathML to
read, and TeX in its annotation, to copy into LaTeX notes. These tests read both back and compare
them: the symbols, the numbers and the signs between them, in order. One test compiles a sample of the
sources with a real TeX engine (pdflatex, Debian's texlive-latex-base) and reads the symbols and
numbers back out of the PDF it writes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import shutil
import subprocess
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import MODELS, REFERENCE
from generator.cards.card import Card, load_card
from generator.cards.problems import InputError
from generator.counting.compute import declared_compute, step_refusal
from generator.counting.compute_derivation import derive_compute
from generator.counting.derivation import derive
from generator.counting.expr import Add, Expr, Mul, Num, Paren, Pow, Var, poly_expr, tex_symbol, to_mathml, to_tex
from generator.counting.families import FAMILIES
from generator.counting.inventory import count_parameters
from generator.counting.poly import Poly

SEED = 43  # the sample of sources the TeX engine compiles
COMPILED = 600  # how many: one document, one run, a few seconds
PER_FAMILY = 4  # the sampled configs whose formulas are read, of each family

SAMPLE: list[dict[str, Any]] = json.loads((REFERENCE / "sample" / "configs.json").read_text(encoding="utf-8"))[
    "configs"
]
Token = tuple[str, str]  # ("symbol", "H"), ("number", "30,522") or ("sign", "·")

# MathML's operators as the TeX writer spells them; the invisible times of juxtaposition has no token.
_TEX_SIGNS = {r"\cdot": "·", r"\times": "×", "-": "−", "+": "+", "/": "/", "(": "(", ")": ")"}
_TEX_TOKEN = re.compile(
    r"\\mathrm\{(?P<name>[A-Za-z]+)\}|(?P<letter>[A-Za-z])|(?P<number>\d+(?:\{,\}\d{3})*)"
    r"|\^\{(?P<exponent>\d+)\}|(?P<sign>\\cdot|\\times|[-+/()])|(?P<brace>[{}])|(?P<space> )"
)
_MATHML_TOKEN = re.compile(r"<(mi|mn|mo)>([^<]*)</\1>")


def tex_tokens(source: str) -> list[Token]:
    """The symbols, numbers and signs of a TeX source, in order; anything the writer never writes fails."""
    tokens: list[Token] = []
    position = 0
    while position < len(source):
        found = _TEX_TOKEN.match(source, position)
        assert found is not None, f"{source!r}: unexpected TeX at {source[position:]!r}"
        position = found.end()
        if found["name"] or found["letter"]:
            tokens.append(("symbol", found["name"] or found["letter"]))
        elif found["number"] or found["exponent"]:
            tokens.append(("number", (found["number"] or found["exponent"]).replace("{,}", ",")))
        elif found["sign"]:
            tokens.append(("sign", _TEX_SIGNS[found["sign"]]))
    return tokens


def mathml_parts(markup: str) -> tuple[str, str]:
    """The shown MathML of a ``<math>`` element and the TeX source of its annotation."""
    found = re.fullmatch(
        r'<math alttext="[^"]*"><semantics>(.*)<annotation encoding="application/x-tex">([^<]*)</annotation>'
        r"</semantics></math>",
        markup,
        re.S,
    )
    assert found is not None, f"no TeX annotation in {markup[:200]}"
    return found[1], unescape(found[2])


def mathml_tokens(shown: str) -> list[Token]:
    """The symbols, numbers and visible signs of MathML, in order."""
    kinds = {"mi": "symbol", "mn": "number", "mo": "sign"}
    return [(kinds[tag], unescape(text)) for tag, text in _MATHML_TOKEN.findall(shown) if text != "\u2062"]


def agree(markup: str) -> tuple[list[Token], list[Token]]:
    shown, source = mathml_parts(markup)
    return mathml_tokens(shown), tex_tokens(source)


# The formulas: every catalog card's and every sampled config's derivation and training step -------


def formulas_in(found: Any) -> Iterator[Expr]:
    """Every formula a derivation holds, at any depth of its dataclasses, tuples and dicts."""
    if isinstance(found, Num | Var | Pow | Mul | Add | Paren):
        yield found
    elif dataclasses.is_dataclass(found) and not isinstance(found, type):
        for field in dataclasses.fields(found):
            if field.name not in ("block", "split"):  # declarations, not formulas
                yield from formulas_in(getattr(found, field.name))
    elif isinstance(found, tuple | list):
        for item in found:
            yield from formulas_in(item)
    elif isinstance(found, dict):
        for item in found.values():
            yield from formulas_in(item)


def sampled_cards(folder: Path) -> list[Card]:
    """Some of the sampler's random configs (tests/reference/sample/configs.json) the card check accepts:
    ``PER_FAMILY`` of each family, drawn with a fixed seed."""
    rng = random.Random(SEED)
    cards: list[Card] = []
    for family in FAMILIES:
        entries = [(n, e) for n, e in enumerate(SAMPLE) if e["family"] == family and e["accepted"]]
        for number, entry in rng.sample(entries, len(entries)):
            path = folder / f"sample-{number}.yaml"
            card = {"title": "sample", "family": family, "head": entry["head"], "config": entry["config"]}
            path.write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")
            try:
                cards.append(load_card(path))
            except InputError:
                continue  # refused though transformers built it: tests/test_config_sample.py says why
            if sum(c.family.name == family for c in cards) == PER_FAMILY:
                break
    return cards


def card_formulas(card: Card) -> Iterator[Expr]:
    yield from formulas_in(derive(count_parameters(card)))
    if step_refusal(card) is None:
        yield from formulas_in(derive_compute(declared_compute(card), 2, 128))


def family_formulas() -> Iterator[Expr]:
    """Each family's symbols, alone and squared, as the family pages write its shapes."""
    for family in FAMILIES.values():
        for symbol in family.symbols:
            yield Var(symbol.name)
            yield Mul((Num(4), Pow(Var(symbol.name), 2)))


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> list[Card]:
    return sampled_cards(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def formulas(sampled: list[Card]) -> list[Expr]:
    """Every distinct formula of the catalog's cards, the sampled configs and the families' symbols."""
    found = dict.fromkeys(family_formulas())
    for card in [*(load_card(path) for path in sorted(MODELS.glob("*.yaml"))), *sampled]:
        found.update(dict.fromkeys(card_formulas(card)))
    return list(found)


def test_the_formulas_cover_every_family_and_the_sample(sampled: list[Card], formulas: list[Expr]) -> None:
    assert {c.family.name for c in sampled} == {e["family"] for e in SAMPLE}  # every family the sampler draws
    symbols = {t for f in formulas for kind, t in tex_tokens(to_tex(f)) if kind == "symbol"}
    assert {s.name for family in FAMILIES.values() for s in family.symbols} <= symbols
    assert {"b", "s"} <= symbols  # the training step's batch and sequence length


def test_every_formulas_tex_reads_as_its_mathml_token_for_token(formulas: list[Expr]) -> None:
    differ = [(to_tex(f), shown) for f in formulas for shown, tex in [agree(to_mathml(f))] if shown != tex]
    assert differ == [], differ[:3]


# The writer's own choices --------------------------------------------------------------------------


def test_tex_spells_numbers_products_and_powers_as_the_mathml_shows_them() -> None:
    H, V = Var("H"), Var("V")
    assert to_tex(Num(109_482_240)) == "109{,}482{,}240"
    assert to_tex(Add((Mul((Paren(Add((V, Num(2)))), H)), Mul((Num(-1), H)), Num(-3)))) == "(V + 2)H - H - 3"
    assert to_tex(Mul((Num(12), Pow(Num(768), 2)), "·")) == r"12 \cdot {768}^{2}"
    assert to_tex(Mul((H, Var("I")), "×")) == r"H \times I"
    assert to_tex(Mul((H, Var("A")), "/")) == "H / A"
    assert to_tex(Num(-1_024)) == "-1{,}024"
    assert to_mathml(Num(-1_024)).startswith('<math alttext="-1,024"><semantics><mrow><mo>−</mo><mn>1,024</mn></mrow>')
    assert to_tex(poly_expr(4 * Poly.symbol("H") * Poly.symbol("H"), ("H",))) == "4H^{2}"


def test_a_symbol_of_several_letters_is_upright_as_mathml_shows_it() -> None:
    assert tex_symbol("H") == "H"
    assert tex_symbol("Hv") == r"\mathrm{Hv}"
    assert tex_tokens(to_tex(Mul((Num(2), Var("Hv"))))) == [("number", "2"), ("symbol", "Hv")]
    with pytest.raises(ValueError, match="symbol 'H_1': expected ASCII letters"):
        tex_symbol("H_1")


def test_every_family_symbol_is_one_tex_reads() -> None:
    for family in FAMILIES.values():
        for symbol in (*family.symbols, *family.compute_symbols):
            assert tex_tokens(tex_symbol(symbol.name)) == [("symbol", symbol.name)], (family.name, symbol.name)


# A real TeX engine --------------------------------------------------------------------------------


def engine() -> str:
    found = shutil.which("pdflatex")
    if found and shutil.which("pdftotext"):
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("pdflatex or pdftotext is missing: apt-get install texlive-latex-base poppler-utils (.ci/run)")
    pytest.skip("no TeX engine here (apt-get install texlive-latex-base); CI=true runs it")


def test_a_sample_of_the_sources_compiles_and_shows_the_mathml_symbols_and_numbers(
    formulas: list[Expr], tmp_path: Path
) -> None:
    pdflatex = engine()
    sample = random.Random(SEED).sample(formulas, min(COMPILED, len(formulas)))
    # One formula a line, each after a mark, on a page wide enough that no formula is cut or broken.
    lines = [rf"\noindent F{number}: ${to_tex(f)}$\par" for number, f in enumerate(sample)]
    document = "\n".join(
        [
            r"\documentclass{article}",
            r"\pdfpagewidth=300cm \pdfpageheight=200cm \textwidth=295cm \textheight=190cm",
            r"\hoffset=-1in \voffset=-1in \oddsidemargin=1cm \topmargin=0cm \headheight=0pt \headsep=0pt",
            r"\pagestyle{empty}\begin{document}",
            *lines,
            r"\end{document}",
        ]
    )
    (tmp_path / "formulas.tex").write_text(document, encoding="utf-8")
    run = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "formulas.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    errors = [line for line in run.stdout.splitlines() if line.startswith("!") or "Overfull" in line]
    assert run.returncode == 0 and errors == [], errors[:5] or run.stdout[-2000:]
    text = subprocess.run(
        ["pdftotext", "formulas.pdf", "-"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    printed = dict(re.findall(r"^\f?F(\d+): ?(.*)$", text, re.M))  # a new page starts with a form feed
    assert len(printed) == len(sample)
    differ = []
    for number, f in enumerate(sample):
        # What the PDF shows, read back by pdftotext (an exponent follows its base), without the spaces.
        shown = "".join(t for _, t in mathml_tokens(mathml_parts(to_mathml(f))[0]))
        if printed[str(number)].replace(" ", "") != shown:
            differ.append((to_tex(f), printed[str(number)], shown))
    assert differ == [], differ[:3]


# Every page of the catalog's site, in both editions --------------------------------------------------

_MATH = re.compile(r"<math[ >].*?</math>", re.S)
_TEX_SCRIPT = re.compile(
    r'<script src="(?:\.\./)*static/tex\.js" data-label="[^"]+" data-copied="[^"]+" data-hint="[^"]+" defer></script>'
)


def test_every_formula_of_the_site_carries_its_tex_and_only_pages_with_formulas_load_the_script(site: Path) -> None:
    differ, counts, wrong = [], {}, []
    for path in sorted(site.rglob("*.html")):
        page, html = path.relative_to(site).as_posix(), path.read_text(encoding="utf-8")
        found = _MATH.findall(html)
        assert len(found) == html.count("<math"), page
        counts[page] = len(found)
        for markup in found:
            shown, tex = agree(markup)
            if shown != tex:
                differ.append((page, markup))
        # The calculator writes its formulas in the browser (static/calculator.js), with their TeX too.
        needed = bool(found) or page.endswith("calculator/index.html")
        if len(_TEX_SCRIPT.findall(html)) != needed:
            wrong.append(page)
    assert differ == [], differ[:3]
    assert wrong == []
    assert counts["models/bert-base-uncased/index.html"] > 0
