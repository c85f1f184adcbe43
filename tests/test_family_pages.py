"""Family pages and the handout: every tensor name transformers registers has its row, and the
numbers are the inventory's.

The names come from tests/reference/ (written by transformers itself, tools/reference.py), never
from the generator: each must match exactly one pattern of its family's page, an index standing
where the pattern has a placeholder, and the built page must hold that row's anchor.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import ROOT
from generator.analysis.tensor_patterns import family_patterns, head_forms, pattern_name
from generator.counting.architecture import Head
from generator.counting.expr import to_text
from generator.counting.families import FAMILIES
from generator.counting.poly import Poly

REFERENCES = sorted((ROOT / "tests" / "reference").glob("*.json"))
PLACEHOLDER = re.compile(r"\\\{[a-z]\\\}")


def _matcher(pattern: str) -> re.Pattern[str]:
    """A pattern as a regular expression: each placeholder ({n}, {m}, {k}) stands for an index."""
    return re.compile(PLACEHOLDER.sub(r"\\d+", re.escape(pattern)) + r"\Z")


def _reference_names() -> dict[str, set[str]]:
    """Every tensor name and tied slot transformers registers, by family, over every reference card."""
    names: dict[str, set[str]] = defaultdict(set)
    for path in REFERENCES:
        data = json.loads(path.read_text(encoding="utf-8"))
        if "family" not in data or data["family"] not in FAMILIES:
            continue
        names[data["family"]].update(t["name"] for t in data["tensors"])
        names[data["family"]].update(t["name"] for t in data.get("tied", []))
    return names


REFERENCE_NAMES = _reference_names()


def test_the_references_cover_every_family() -> None:
    assert set(REFERENCE_NAMES) == set(FAMILIES)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_reference_name_has_exactly_one_row_on_its_family_page(family: str, site: Path) -> None:
    rows = [row.name for block in family_patterns(FAMILIES[family]) for row in block.rows]
    assert len(rows) == len(set(rows)), f"{family}: a name has two rows"
    matchers = [(row, _matcher(row)) for row in rows]
    page = (site / "families" / family / "index.html").read_text(encoding="utf-8")
    anchors = set(re.findall(r'<tr id="t-([^"]+)">', page))
    unmatched, ambiguous = [], []
    for name in sorted(REFERENCE_NAMES[family]):
        # A name written out (ModernBERT's layers.0, whose {n} counts from 1) is its own row.
        found = [name] if name in rows else [row for row, matcher in matchers if matcher.match(name)]
        if not found:
            unmatched.append(name)
        elif len(found) > 1:
            ambiguous.append((name, found))
        else:
            assert html.escape(found[0]) in anchors, f"{family}: the row of {found[0]} is not on the built page"
    assert not unmatched, f"{family}: no row for {unmatched}"
    assert not ambiguous, f"{family}: several rows for {ambiguous}"


def test_bert_layer_rows_are_patterns_with_shapes_and_counts_in_symbols(site: Path) -> None:
    page = (site / "families" / "bert" / "index.html").read_text(encoding="utf-8")
    row = re.search(r'<tr id="t-encoder\.layer\.\{n\}\.attention\.self\.query\.weight">(.*?)</tr>', page, re.DOTALL)
    assert row is not None
    # The shape [H, H] in variables, and the count H² as MathML with its plain-text alternative.
    assert '<td class="shape"><span class="form">[<var>H</var>, <var>H</var>]</span></td>' in row.group(1)
    assert re.findall(r'alttext="([^"]+)"', row.group(1)) == ["H²"]
    intermediate = re.search(
        r'<tr id="t-bert\.encoder\.layer\.\{n\}\.intermediate\.dense\.weight">(.*?)</tr>', page, re.DOTALL
    )
    assert intermediate is not None
    assert "[<var>I</var>, <var>H</var>]" in intermediate.group(1)
    assert re.findall(r'alttext="([^"]+)"', intermediate.group(1)) == ["HI"]
    assert "counts the encoder layers from 0 to" in page


def test_a_placeholder_is_written_for_each_level_of_a_repeat() -> None:
    albert = FAMILIES["albert"]
    architecture = albert.declare(dict.fromkeys([s.name for s in albert.switches], False), Head.BASE)  # type: ignore[arg-type]
    layer = next(b for b in architecture.blocks if b.key == "layer")
    module = layer.modules[0]
    assert pattern_name(layer, module, module.params[0]).startswith(
        "encoder.albert_layer_groups.{n}.albert_layers.{m}."
    )


def test_the_closed_forms_are_the_model_pages_formulas(site: Path) -> None:
    bert = {h.head: h for h in head_forms(FAMILIES["bert"])}
    assert to_text(bert[Head.BASE].closed_form) == "(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + H² + H"
    masked = bert[Head.MASKED_LM]
    assert [p.title for p in masked.removed] == ["pooler"] and [p.title for p in masked.added] == ["masked-LM head"]
    # The model page of BERT-Base (BertModel, the defaults' switches) prints the same closed form.
    model_page = (site / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    family_page = (site / "families" / "bert" / "index.html").read_text(encoding="utf-8")
    closed = f'alttext="{to_text(bert[Head.BASE].closed_form)}"'
    assert closed in model_page and closed in family_page


def test_a_block_a_head_holds_in_another_form_is_said_to_change_not_to_go_and_come_back() -> None:
    """XLM-RoBERTa's masked-LM head ties its decoder to the token table, which its declaration then holds as
    a block of its own: the embeddings change form, and the page said "without the embeddings ... and the
    embeddings" before."""
    forms = {h.head: h for h in head_forms(FAMILIES["xlm-roberta"])}
    changes = [(kind, piece.title, to_text(piece.expression)) for kind, piece, _ in forms[Head.MASKED_LM].changes]
    assert [kind for kind, *_ in changes] == ["without", "with", "with", "as"]
    assert changes[0][1] == "pooler" and changes[-1][1] == "embeddings"
    before = forms[Head.MASKED_LM].changes[-1][2]
    assert before is not None and to_text(before.expression) == "VH + PH + TH + 2H"
    assert changes[-1][2] == "PH + TH + 2H"
    # BERT's heads change no block's form: each block is only left out or added.
    for h in head_forms(FAMILIES["bert"]):
        assert all(kind != "as" for kind, *_ in h.changes), h.head


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_head_is_the_base_model_less_what_it_leaves_out_plus_what_it_adds(family: str) -> None:
    forms = head_forms(FAMILIES[family])
    base = next(h for h in forms if h.head is Head.BASE)
    for h in forms:
        left = base.formula + sum((p.formula for p in h.added), Poly())
        assert left == h.formula + sum((p.formula for p in h.removed), Poly()), f"{family} {h.head.value}"
        assert h.head is Head.BASE or h.added or h.removed, (
            f"{family} {h.head.value}: no difference from the base model"
        )


def test_every_family_has_a_page_linked_from_the_index(site: Path) -> None:
    index = (site / "families" / "index.html").read_text(encoding="utf-8")
    for name in FAMILIES:
        assert (site / "families" / name / "index.html").is_file()
        assert f'href="../families/{name}/index.html"' in index


def test_a_family_page_lists_its_catalog_models_with_their_totals(site: Path) -> None:
    page = (site / "families" / "albert" / "index.html").read_text(encoding="utf-8")
    reference = json.loads((ROOT / "tests" / "reference" / "albert-base-v2.json").read_text(encoding="utf-8"))
    row = re.search(r'<tr id="albert-base-v2">(.*?)</tr>', page, re.DOTALL)
    assert row is not None and re.search(rf'<td class="n count"[^>]*>{reference["total"]:,}</td>', row.group(1))
    assert "deberta" not in re.sub(r"<[^>]+>", "", page.split('id="models"')[1]).lower()


def test_the_handout_works_bert_base_with_the_inventorys_numbers(site: Path) -> None:
    page = (site / "handout" / "index.html").read_text(encoding="utf-8")
    reference = json.loads((ROOT / "tests" / "reference" / "bert-base-uncased.json").read_text(encoding="utf-8"))
    total = reference["total"]
    assert f"<strong>{total:,}</strong>" in page
    for bytes_per_parameter in (4, 2, 1, 16):  # fp32, fp16/bf16, int8, Adam in mixed precision (ZeRO 3.1)
        assert f'<td class="n count">{total * bytes_per_parameter:,}</td>' in page
    for name in FAMILIES:
        assert f'<tr id="closed-{name}">' in page


def test_anchors_of_a_family_page_are_pinned(site: Path) -> None:
    """Links from course materials point at these (docs/site.md, "Stable addresses"); changing them must be deliberate.

    Regenerate after a deliberate change with: UPDATE_GOLDEN=1 make test
    """
    page = (site / "families" / "bert" / "index.html").read_text(encoding="utf-8")
    content = page.split("<main", 1)[1].split(">", 1)[1].split("</main>", 1)[0]  # not the ids every page has
    anchors = "\n".join(re.findall(r' id="([^"]+)"', content)) + "\n"
    golden = ROOT / "tests" / "golden" / "families-bert.anchors"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(anchors, encoding="utf-8")
    assert anchors == golden.read_text(encoding="utf-8")


def _plain(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_the_2017_transformer_is_not_said_to_be_a_transformers_model_type(site: Path) -> None:
    """Every other family is a transformers model_type built by its config class; the Transformer's pages say
    whose code builds it instead (the handout, the list of families and its own family page)."""
    own = next(f for f in FAMILIES.values() if f.own_config is not None)
    assert own.own_config is not None and own.name == "transformer"
    family = (site / "families" / "transformer" / "index.html").read_text(encoding="utf-8")
    lede = re.search(r'<p class="lede"[^>]*>(.*?)</p>', family)
    assert lede is not None
    assert _plain(lede[1]).startswith(
        "Transformer (2017): model_type transformer (the atlas's own: transformers has no such type) · built by "
        f"Transformer in {own.own_config.source} · 1 head · "
    )
    bert = (site / "families" / "bert" / "index.html").read_text(encoding="utf-8")
    assert "· config class <code>BertConfig</code> ·" in bert and "the atlas's own" not in bert
    listing = (site / "families" / "index.html").read_text(encoding="utf-8")
    assert "the 2017 Transformer, which transformers does not build, is a family of its own" in listing
    handout = (site / "handout" / "index.html").read_text(encoding="utf-8")
    assert "and of the 2017 Transformer they grew from as the 2018 attention-is-all-you-need-pytorch code" in handout
