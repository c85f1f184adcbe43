"""A comparison page's two architecture figures: each model's own, its differing steps marked.

Each figure shows the counts of its model's page and adds up to its total; every box links to an id
on that model's page. A step is marked exactly when the page lists a tensor of it as only in that
model or reshaped, and the figure's description names it. The two figures line up block for block,
and the file beside the page holds both, lined up the same, with nothing outside the file.
"""

from __future__ import annotations

import dataclasses
import random
import re
import xml.etree.ElementTree as ET
from collections import Counter
from html import unescape
from pathlib import Path

import pytest
from test_diagram import NUMBER, ROW_COUNT, one_copy, sampled_cards

from conftest import MODELS
from generator.cards.card import Card, load_cards
from generator.counting.families import family_in
from generator.counting.inventory import Tensor
from generator.site import content
from generator.site.diagram import Diagram, diagram_of
from generator.site.diagram_pair import pair_blocks
from generator.site.differences import PAIRS, Diff, Pair, compare
from generator.site.pages import diffs
from generator.site.render import Renderer, SiteOptions
from generator.site.typography import tidy_spacing
from generator.site.views import Model, model_of

SVG = "{http://www.w3.org/2000/svg}"

LINK = re.compile(
    r'<a href="\.\./\.\./models/([^/"]+)/index\.html#([^"]+)" class="(block|run|step|tied)((?: lacked)?(?: reshaped)?)">(.*?)</a>',
    re.S,
)


def anchors_of(tensors: list[Tensor]) -> set[str]:
    """The model page's step of each tensor: its block's and its module's keys."""
    return {f"d-{t.block.key}-{t.module.key}" for t in tensors}


def expected_marks(diff: Diff) -> tuple[dict[str, list[Tensor]], dict[str, set[str]]]:
    """For each side, the tensors the page lists as only in it, and the steps of those it lists as reshaped."""
    only = {"a": [t for r in diff.removed for t in r.tensors_a], "b": [t for r in diff.added for t in r.tensors_b]}
    reshaped = {
        "a": [t for r in diff.reshaped for t in r.tensors_a],
        "b": [t for r in diff.reshaped for t in r.tensors_b],
    }
    return only, {s: anchors_of(reshaped[s]) for s in "ab"}


def check_tables_hold_their_tensors(diff: Diff) -> None:
    """The tensors behind each listed row are as many as the page says, all of its side, none twice."""
    for rows, side in ((diff.added, "b"), (diff.removed, "a"), (diff.reshaped, "a"), (diff.reshaped, "b")):
        for row in rows:
            tensors = row.tensors_a if side == "a" else row.tensors_b
            assert len(tensors) == row.copies and sum(t.count for t in tensors) == (
                row.count_a if side == "a" else row.count_b
            )
    names = [t.name for r in (*diff.removed, *diff.reshaped) for t in r.tensors_a]
    assert len(names) == len(set(names))


def check_diagrams(diff: Diff, figures: tuple[Diagram, Diagram]) -> None:
    """Both figures add up, and their marks are exactly the steps of the tensors the page lists."""
    only, reshaped = expected_marks(diff)
    for side, model, figure in zip("ab", (diff.a, diff.b), figures, strict=True):
        plain = diagram_of(model)
        assert sum(g.subtotal for g in figure.groups) == model.total, (diff.pair.slug, side)
        assert [dataclasses.replace(r, lacked=False, reshaped=False) for g in figure.groups for r in g.rows] == [
            r for g in plain.groups for r in g.rows
        ]
        steps = {r.anchor for g in figure.groups for r in g.rows if not r.run}
        lacked = anchors_of(only[side])
        assert lacked | reshaped[side] <= steps, (diff.pair.slug, side)  # every listed tensor has its step
        # A step is barred where the other model lacks it in every copy of its block; a stacked block
        # some of whose copies only are lacked says how many in its heading instead.
        for group in figure.groups:
            copies = {r.anchor: len({t.index for t in only[side] if anchors_of([t]) == {r.anchor}}) for r in group.rows}
            some = [n for n in copies.values() if 0 < n < group.copies] if group.stacked else []
            barred = {a for a, n in copies.items() if n and not (group.stacked and n < group.copies)}
            assert {r.anchor for r in group.rows if r.lacked} == barred, (diff.pair.slug, side, group.anchor)
            assert group.lacked_copies == max(some, default=0), (diff.pair.slug, side, group.anchor)
        assert {r.anchor for g in figure.groups for r in g.rows if r.reshaped} == reshaped[side], (diff.pair.slug, side)


@pytest.fixture(scope="module")
def catalog() -> list[Card]:
    return load_cards(MODELS)


@pytest.mark.slow  # renders every comparison page and its models' pages in both editions: some 40 s
@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_comparison_shows_both_figures_marked_as_its_tables_say(catalog: list[Card], language: str) -> None:
    cards = [dataclasses.replace(c, family=family_in(c.family.name, language), language=language) for c in catalog]
    models = {card.id: model_of(card) for card in cards}
    renderer = Renderer(SiteOptions(search=False, language=language), cards=cards)
    shown = {card_id for p in PAIRS for card_id in (p.a, p.b)}
    model_pages = {i: renderer.model_files(models[i])[f"models/{i}/index.html"].decode() for i in shown}
    words = content.load("site", language).section("diagram")
    pages = {page.path: page for page in diffs.pages(list(models.values()), language)}
    assert len(pages) == len(PAIRS) + 1  # every declared pair is in the catalog, and the list of them
    pieces = {piece.name: piece for piece in renderer.site_files(list(models.values())) if piece.name in pages}
    for pair in PAIRS:
        diff = compare(pair, models[pair.a], models[pair.b])
        check_tables_hold_their_tensors(diff)
        figures = diffs.pair_diagrams(diff)
        check_diagrams(diff, figures)
        files = pieces[diffs.diff_path(pair.slug)]()  # the page and the file beside it, as a build makes them
        html = files[diffs.diff_path(pair.slug)].decode()
        svg_file = files[f"diffs/{pair.slug}/architecture.svg"].decode()
        check_pair_file(svg_file, diff, (models[pair.a], models[pair.b]), language, model_pages)
        assert '<a href="architecture.svg" download>' in html, pair.slug
        for side in "ab":  # the page's figures line up as the file's do
            start = html.index(f'<figure id="architecture-{side}"')
            assert html[html.index("<svg", start) : html.index("</svg>", start)] in svg_file, (pair.slug, side)
        ids = Counter(re.findall(r' id="([^"]+)"', html))
        assert [i for i, n in ids.items() if n > 1] == [], pair.slug
        for side, card_id, figure in zip("ab", (pair.a, pair.b), figures, strict=True):
            start = html.index(f'<figure id="architecture-{side}"')
            svg = html[start : html.index("</figure>", start)]
            links = LINK.findall(svg)
            assert len(links) == sum(1 + len(g.rows) for g in figure.groups), (pair.slug, side)
            page = model_pages[card_id]
            page_ids, rows = set(re.findall(r' id="([^"]+)"', page)), dict(ROW_COUNT.findall(page))
            assert {target for target, *_ in links} == {card_id}, (pair.slug, side)
            assert [a for _, a, *_ in links if a not in page_ids] == [], (pair.slug, side)
            copies = {r.anchor: g.copies for g in figure.groups if g.stacked for r in g.rows}
            for _, anchor, kind, _, inside in links:
                if kind == "step":  # the number of its row on the model page, times its block's copies
                    (number,) = NUMBER.findall(inside)
                    assert one_copy(number, copies.get(anchor)) == rows[anchor], (pair.slug, side, anchor)
            for kind in ("lacked", "reshaped"):  # each kind of mark, as a class of the step's link
                drawn = {anchor for _, anchor, box, marks, _ in links if kind in marks and box != "block"}
                assert drawn == {r.anchor for g in figure.groups for r in g.rows if getattr(r, kind)}, (pair.slug, kind)
            headed = {anchor for _, anchor, box, marks, _ in links if box == "block" and "lacked" in marks}
            assert headed == {g.anchor for g in figure.groups if g.lacked_copies}, (pair.slug, side)
            barred = len([r for g in figure.groups for r in g.rows if r.lacked]) + len(
                [g for g in figure.groups if g.lacked_copies]
            )
            assert svg.count('class="bar"') == barred
            other = (pair.b, pair.a)["ab".index(side)]
            lacked = [r.label for g in figure.groups for r in g.rows if r.lacked]
            if lacked:
                sentence = words(
                    "desc-lacked", title=models[other].card.title, blocks=words("separator").join(dict.fromkeys(lacked))
                )
                assert tidy_spacing(sentence, language).replace("'", "&#x27;") in svg, (pair.slug, side)


def test_bert_to_albert_marks_the_factorized_embeddings_and_the_layers_albert_lacks(catalog: list[Card]) -> None:
    by_id = {c.id: c for c in catalog}
    pair = next(p for p in PAIRS if (p.a, p.b) == ("bert-base-uncased", "albert-base-v2"))
    bert, albert = diffs.pair_diagrams(compare(pair, model_of(by_id[pair.a]), model_of(by_id[pair.b])))

    def marks(figure: Diagram, kind: str) -> list[str]:
        return [r.anchor for g in figure.groups for r in g.rows if getattr(r, kind)]

    tables = ["d-embeddings-token-embeddings", "d-embeddings-position-embeddings", "d-embeddings-segment-embeddings"]
    assert marks(bert, "reshaped") == marks(albert, "reshaped") == [*tables, "d-embeddings-embedding-layernorm"]
    assert marks(albert, "lacked") == ["d-embedding-projection-e-to-h-projection"]  # E to H: only in ALBERT
    # BERT's layers 1 to 11 are only in BERT; ALBERT's one layer matches BERT's first. No step of BERT's
    # layer is barred: its heading says that ALBERT lacks 11 of its 12 copies.
    assert marks(bert, "lacked") == []
    assert [(g.anchor, g.lacked_copies) for g in bert.groups] == [("d-embeddings", 0), ("d-layer", 11), ("d-pooler", 0)]
    assert bert.against == "ALBERT-Base v2" and albert.against == "BERT-Base, uncased"
    svg = diffs.diagram_svg(bert, content.load("site").section("diagram"))
    assert ">ALBERT-Base v2 lacks 11 of these 12 copies</text>" in svg
    assert "the encoder layer: ALBERT-Base v2 lacks 11 of its 12 copies." in svg


@pytest.mark.slow  # compares some 150 sampled configs, two of each family and head
def test_sampled_pairs_mark_exactly_the_steps_their_tables_list(tmp_path: Path) -> None:
    cards = sampled_cards(tmp_path)
    by_group: dict[tuple[str, str], list[Model]] = {}
    for card in cards:
        by_group.setdefault((card.family.name, card.head.value), []).append(model_of(card))
    pairs = [group for group in by_group.values() if len(group) == 2]
    assert pairs
    for a, b in pairs:
        diff = compare(Pair(a.id, b.id), a, b)
        check_tables_hold_their_tensors(diff)
        check_diagrams(diff, diffs.pair_diagrams(diff))


def check_pair_file(
    text: str, diff: Diff, models: tuple[Model, Model], language: str, pages: dict[str, str] | None = None
) -> None:
    """The file of both figures: XML with its title and description, nothing outside it, links to the
    models' pages (to ids on them, when ``pages`` holds them), blocks that add up to each total, and
    each block level with one of its kind in the other figure or with a dotted box saying it has none."""
    where = diff.pair.slug
    root = ET.fromstring(text)  # well-formed, or this raises
    assert root.tag == f"{SVG}svg" and [child.tag for child in root][:3] == [f"{SVG}style", f"{SVG}title", f"{SVG}desc"]
    words = content.load("site", language).section("diagram")
    title = words("pair-title", title=models[0].card.title, target=models[1].card.title)
    assert root[1].text == tidy_spacing(title, language), where
    elements = list(root.iter())
    assert {e.tag for e in elements} <= {
        f"{SVG}{tag}"
        for tag in ["svg", "style", "title", "desc", "defs", "marker", "path", "text", "rect", "a", "g", "circle"]
    }
    ids = [e.get("id") for e in elements if e.get("id")]
    assert len(ids) == len(set(ids)), where
    style = root[0].text or ""
    assert "url(" not in style and "@import" not in style, where
    for e in elements:  # only links lead outside the file, and only to the two models' pages
        for name, value in e.attrib.items():
            assert "url(" not in value or value in {f"url(#{i})" for i in ids}, (where, name, value)
            if name == "href":
                assert e.tag == f"{SVG}a", (where, value)
    figures = root.findall(f"{SVG}svg/{SVG}svg")
    assert len(figures) == 2, where
    rows: list[dict[float, str]] = []
    for model, figure in zip(models, figures, strict=True):
        kinds = {f"d-{b.block.key}": b.block.kind.value for b in model.derivation.blocks}
        prefix = f"../../models/{model.id}/index.html#"
        links = [a.get("href", "") for a in figure.iter(f"{SVG}a")]
        assert links and all(link.startswith(prefix) for link in links), where
        if pages is not None:
            page_ids = set(re.findall(r' id="([^"]+)"', pages[model.id]))
            assert [link for link in links if link.removeprefix(prefix) not in page_ids] == [], where
        blocks = {a.get("href", "").split("#")[1]: a for a in figure.iter(f"{SVG}a") if "block" in a.get("class", "")}
        # A block's heading: its count and share beside its title, or on the line below it.
        counts = [
            next(t.text or "" for t in a.iter(f"{SVG}text") if t.get("class") in {"total", "count"})
            for a in blocks.values()
        ]
        assert sum(int(c.split(" · ")[0].replace(",", "")) for c in counts) == model.total, where
        level = {float(a[0].get("y", "")): kinds[anchor] for anchor, a in blocks.items()}
        level |= {float(r.get("y", "")): "absent" for r in figure.iter(f"{SVG}rect") if r.get("class") == "absent"}
        rows.append(level)
    assert rows[0].keys() == rows[1].keys(), where  # every block level with a block or a dotted box
    for y in rows[0]:
        assert "absent" in (rows[0][y], rows[1][y]) or rows[0][y] == rows[1][y], (where, y)
        assert (rows[0][y], rows[1][y]) != ("absent", "absent"), (where, y)


def test_bert_and_albert_pair_their_blocks_and_bert_says_it_has_no_projection(catalog: list[Card]) -> None:
    by_id = {c.id: c for c in catalog}
    bert, albert = model_of(by_id["bert-base-uncased"]), model_of(by_id["albert-base-v2"])
    keys = [("d-embeddings", "embeddings"), ("d-layer", "encoder"), ("d-pooler", "pooler")]
    with_projection = [keys[0], ("d-embedding-projection", "embeddings"), *keys[1:]]
    assert pair_blocks(keys, with_projection) == [(0, 0), (None, 1), (1, 2), (2, 3)]
    assert pair_blocks(with_projection, keys) == [(0, 0), (1, None), (2, 1), (3, 2)]
    # Blocks of one kind pair when their keys differ; blocks of two kinds never do.
    assert pair_blocks([("d-transformer", "encoder")], [("d-layer", "encoder")]) == [(0, 0)]
    assert pair_blocks([("d-pooler", "pooler")], [("d-head", "head")]) == [(0, None), (None, 0)]
    diff = compare(next(p for p in PAIRS if (p.a, p.b) == (bert.id, albert.id)), bert, albert)
    drawn = diffs.drawn_pair(diff, content.load("site").section("diagram"))
    a, b = drawn.layouts
    assert a.tops == (b.tops[0], b.tops[2], b.tops[3]) and b.absent == ()
    ((top, height, text),) = a.absent
    assert (top, text) == (b.tops[1], "BERT-Base, uncased has no embedding projection")
    assert a.tall == b.tall and height > 0
    (svg,) = diffs.pair_file(diff, drawn, SiteOptions(search=False)).values()
    check_pair_file(svg.decode(), diff, (bert, albert), "en")
    assert 'class="address">diffs/bert-base-uncased--albert-base-v2/</text>' in svg.decode()
    # A legend for a slide, which has not the page's words: every mark these figures draw, one line each.
    words = content.load("site").section("diagram")
    legend = [words(key) for key in ("legend-reshaped", "legend-lacked", "legend-shared", "legend-join")]
    found = re.findall(r'<text x="26" y="[\d.]+" class="count">([^<]+)</text>', svg.decode())
    assert [unescape(text) for text in found] == legend


@pytest.mark.slow  # counts some 30 catalog cards and compares them in pairs, in both editions
@pytest.mark.parametrize("language", ["en", "zh"])
def test_random_pairs_of_cards_draw_one_valid_file_with_their_blocks_lined_up(
    catalog: list[Card], language: str
) -> None:
    rng = random.Random(4343)  # fixed: a failure reproduces
    cards = [dataclasses.replace(c, family=family_in(c.family.name, language), language=language) for c in catalog]
    words = content.load("site", language).section("diagram")
    options = SiteOptions(search=False, language=language, editions=("en", "zh"))
    for a, b in (rng.sample(cards, 2) for _ in range(14)):
        models = (model_of(a), model_of(b))
        diff = compare(Pair(a.id, b.id), *models)
        files = diffs.pair_file(diff, diffs.drawn_pair(diff, words), options)
        assert list(files) == [f"diffs/{a.id}--{b.id}/architecture.svg"]
        check_pair_file(next(iter(files.values())).decode(), diff, models, language)
