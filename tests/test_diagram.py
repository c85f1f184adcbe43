"""A model page's architecture figure: drawn from the declarations for every card and sampled config.

Its blocks add up to the page's total, its steps to their blocks, and every box links to an id on
the page whose row shows the box's own count. The standalone file beside the page is the same
figure with its own style, its title and the page's address, and nothing outside the file.
"""

from __future__ import annotations

import dataclasses
import random
import re
from html import escape, unescape
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from test_config_sample import ENTRIES, write_sample_card

from conftest import MODELS
from generator.analysis.tensor_patterns import defaults
from generator.cards.card import Card, load_card, load_cards
from generator.cards.problems import InputError
from generator.counting.architecture import Architecture, Block, Head, Kind
from generator.counting.derivation import block_form
from generator.counting.expr import to_text
from generator.counting.families import FAMILIES, families, family_in
from generator.site import content
from generator.site.diagram import WIDE, Diagram, diagram_of, diagram_svg, in_run_order
from generator.site.pages import families as families_page
from generator.site.render import Renderer, SiteOptions
from generator.site.soft_space import SOFT_SPACE
from generator.site.typography import tidy_spacing
from generator.site.views import Model, model_of

CATALOG = load_cards(MODELS)
SEED = 43  # the sampled configs drawn, fixed so that a failure reproduces
PER_FAMILY_HEAD = 2  # accepted sampled configs drawn for each family and head
LINK = re.compile(r'<a href="#([^"]+)" class="(block|run|step|tied)">(.*?)</a>', re.S)
NUMBER = re.compile(r'class="number" text-anchor="end">([^<]+)</text>')
ROW_COUNT = re.compile(r'<tr id="(d-[^"]+)">.*?<td class="n count">([\d,]+)</td>', re.S)


def sampled_cards(folder: Path) -> list[Card]:
    """Accepted configs of the sampler's draw, PER_FAMILY_HEAD of each family and head, chosen with SEED."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for entry in ENTRIES:
        if entry["accepted"]:
            groups.setdefault((entry["family"], entry["head"]), []).append(entry)
    rng = random.Random(SEED)
    cards = []
    drawn = [e for key in sorted(groups) for e in rng.sample(groups[key], min(PER_FAMILY_HEAD, len(groups[key])))]
    for number, entry in enumerate(drawn):
        place = folder / str(number)
        place.mkdir()
        try:
            cards.append(load_card(write_sample_card(place, entry)))
        except InputError:  # the card check refuses some configs transformers builds (test_config_sample)
            continue
    return cards


def check_figure(model: Model, page: str) -> None:
    """The figure's counts add up and every link lands on an id of ``page`` that shows the same count."""
    diagram = diagram_of(model)
    assert sum(group.subtotal for group in diagram.groups) == model.total, model.id
    for group in diagram.groups:
        steps = [row for row in group.rows if not row.run]
        assert sum(row.count for row in steps) == group.per_copy, (model.id, group.anchor)
        assert group.per_copy * group.copies == group.subtotal or not group.copies, (model.id, group.anchor)
        for number, row in enumerate(group.rows):
            if row.run:  # a run's heading counts the steps indented below it
                below = [r.count for r in group.rows[number + 1 :]]
                depth = [r.depth for r in group.rows[number + 1 :]]
                inside = below[: next((i for i, d in enumerate(depth) if d < 2), len(depth))]
                assert row.count == sum(inside), (model.id, row.anchor)
    ids = set(re.findall(r' id="([^"]+)"', page))
    figure = page[page.index('<figure id="architecture"') : page.index("</figure>", page.index('id="architecture"'))]
    layouts = figure.split("</svg>")[:-1]
    assert [re.search(r'class="diagram (diagram-\w+)"', svg)[1] for svg in layouts] == [
        "diagram-wide",
        "diagram-narrow",
    ]
    shown = dict(ROW_COUNT.findall(page))
    copies = {row.anchor: group.copies for group in diagram.groups if group.stacked for row in group.rows}
    for svg in layouts:  # the same boxes and numbers in both
        links = LINK.findall(svg)
        assert len(links) == sum(1 + len(g.rows) for g in diagram.groups), model.id
        assert [anchor for anchor, *_ in links if anchor not in ids] == [], model.id
        for anchor, kind, inside in links:
            if kind == "step":  # a step's number is its derivation row's, times its block's copies if stacked
                (number,) = NUMBER.findall(inside)
                assert one_copy(number, copies.get(anchor)) == shown[anchor], (model.id, anchor)


def one_copy(number: str, copies: int | None) -> str:
    """A box's count of one copy: "590,592 × 12 · 6.5%" in a block of 12 copies, else "590,592 · 0.5%"."""
    count = number.split(" · ")[0]
    if copies is None:
        return count
    one, times = count.split(" × ")
    assert times == f"{copies:,}", number
    return one


@pytest.mark.slow  # renders every catalog card's page in both editions: some 20 s
@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_catalog_cards_figure_adds_up_and_links_its_page(language: str) -> None:
    renderer = Renderer(SiteOptions(search=False, language=language), cards=CATALOG)
    for card in CATALOG:
        model = model_of(card)
        check_figure(model, renderer.model_files(model)[f"models/{model.id}/index.html"].decode())


@pytest.mark.slow  # renders some 150 sampled configs' pages
def test_every_sampled_configs_figure_adds_up_and_links_its_page(tmp_path: Path) -> None:
    cards = sampled_cards(tmp_path)
    sampled = {name for name, family in FAMILIES.items() if family.ground_truth is not None}
    assert {c.family.name for c in cards} == sampled  # every family the sampler draws (not the 2017 Transformer)
    renderer = Renderer(SiteOptions(search=False))
    for card in cards:
        model = model_of(card)
        check_figure(model, renderer.model_files(model)[f"models/{model.id}/index.html"].decode())


def figure_of(card_id: str) -> tuple[Model, Diagram]:
    model = model_of(next(c for c in CATALOG if c.id == card_id))
    return model, diagram_of(model)


def test_bert_base_draws_its_blocks_and_runs_with_the_derivations_numbers() -> None:
    _, diagram = figure_of("bert-base-uncased")
    assert [(g.anchor, g.copies, g.subtotal) for g in diagram.groups] == [
        ("d-embeddings", 1, 23_837_184),
        ("d-layer", 12, 85_054_464),
        ("d-pooler", 1, 590_592),
    ]
    layer = diagram.groups[1]
    assert [(r.anchor, r.count) for r in layer.rows if r.run] == [
        ("d-layer-attention", 2_362_368),
        ("d-layer-feed-forward", 4_722_432),
    ]
    assert layer.repeat == (("L", 12),) and layer.applied is None


def test_bert_base_shows_its_widths_heads_and_the_share_of_all_twelve_layers() -> None:
    model, diagram = figure_of("bert-base-uncased")
    v = model.inventory.values
    rows = {row.anchor: row for group in diagram.groups for row in group.rows}
    assert (rows["d-embeddings-token-embeddings"].widths, rows["d-embeddings-token-embeddings"].table) == (
        (v["V"], v["H"]),
        True,
    )
    assert rows["d-layer-feed-forward"].widths == (v["H"], v["I"], v["H"])
    assert rows["d-layer-feed-forward-in"].widths == (v["H"], v["I"])
    assert rows["d-layer-attention"].heads == (v["A"], v["H"] // v["A"])
    assert rows["d-layer-attention-layernorm"].widths == ()  # a norm's vector: no widths drawn
    svg = diagram_svg(diagram, content.load("site").section("diagram"))
    assert ">30,522 × 768</text>" in svg and ">768 → 3,072 → 768</text>" in svg and ">12 heads of 64</text>" in svg
    # Inside the layer, a box is one copy times the 12 copies, with the share of all twelve.
    assert ">4,722,432 × 12 · 51.8%</text>" in svg
    assert ">L = 12: 12 layers, 7,087,872 parameters each</text>" in svg  # stored 12 times, each its own
    layer = diagram.groups[1]
    steps = [row for row in layer.rows if not row.run]
    assert sum(row.count * layer.copies for row in steps) == layer.subtotal


def test_both_editions_draw_the_same_widths_and_heads_for_every_catalog_card() -> None:
    """The widths come from the shapes and the modules, never from a worded role: the same in Chinese."""
    for card in CATALOG:
        english = diagram_of(model_of(card))
        chinese = diagram_of(
            model_of(dataclasses.replace(card, family=family_in(card.family.name, "zh"), language="zh"))
        )
        drawn = [[(r.anchor, r.widths, r.table, r.heads) for g in d.groups for r in g.rows] for d in (english, chinese)]
        assert drawn[0] == drawn[1], card.id
    assert any(r.table for g in english.groups for r in g.rows)


def test_the_wide_layout_sets_each_rows_widths_in_one_column() -> None:
    _, diagram = figure_of("bert-base-uncased")
    svg = diagram_svg(diagram, content.load("site").section("diagram"), width=WIDE)
    assert svg.startswith('<svg class="diagram diagram-wide" viewBox="0 0 600 ')
    columns = set(re.findall(r'<text x="([\d.]+)" y="[\d.]+" class="shape">', svg))
    assert len(columns) == 1  # every box on one line, its widths aligned with the others'
    assert 'class="shape">' in svg and svg.count('class="shape">') == 12


def test_albert_draws_one_stored_layer_applied_l_times() -> None:
    _, diagram = figure_of("albert-base-v2")
    (layer,) = [g for g in diagram.groups if g.anchor == "d-layer"]
    assert (layer.copies, layer.applied, layer.repeat) == (1, ("L", 12), (("G", 1), ("K", 1)))
    svg = diagram_svg(diagram, content.load("site").section("diagram"))
    # On a phone its heading takes two lines: the title with its count, then its copies on one line.
    heading = svg[svg.index('<a href="#d-layer" class="block">') : svg.index("</a>", svg.index('href="#d-layer"'))]
    assert re.findall(r">([^<]+)</text>", heading) == [
        "Shared encoder layer × 12",
        "7,087,872 · 60.7%",
        "G = 1, K = 1: 1 layer, applied L = 12 times",
    ]
    assert len(set(re.findall(r' y="([\d.]+)" class="(?:title|count)"', heading))) == 2
    assert ">30,000 × 128</text>" in svg and ">128 → 768</text>" in svg  # the factorized table and E to H
    assert ">590,592 · 5.1%</text>" in svg  # one stored copy: no "× 1"
    assert "shared encoder layer (7,087,872, 60.7%)" in svg  # one stored copy: no "1 copies"
    assert [g.anchor for g in diagram.groups] == ["d-embeddings", "d-embedding-projection", "d-layer", "d-pooler"]


def test_a_tied_decoder_points_at_the_token_table() -> None:
    _, diagram = figure_of("bert-base-uncased-pretraining")
    svg = diagram_svg(diagram, content.load("site").section("diagram"))
    ties = re.findall(r'<path [^>]*class="tie"[^>]*><title>([^<]+)</title>', svg)
    assert ties == [
        "decoder (tied) reuses the tensor of token embeddings",
        "decoder (tied) reuses the tensor of output bias",
    ]
    assert "The decoder (tied) reuses the tensor of the token embeddings, counted once where it lives." in svg


@pytest.mark.parametrize("base_url", [None, "https://example.org/atlas/"])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_standalone_figure_is_self_contained_with_its_title_and_address(
    base_url: str | None, language: str
) -> None:
    editions = ("en", "zh")
    options = SiteOptions(base_url=base_url, search=False, language=language, editions=editions)
    model = model_of(next(c for c in CATALOG if c.id == "bert-base-uncased"))
    files = Renderer(options, cards=CATALOG).model_files(model)
    svg = files["models/bert-base-uncased/architecture.svg"].decode()
    page = files["models/bert-base-uncased/index.html"].decode()
    prefix = "" if language == "en" else "zh/"
    address = f"{base_url or ''}{prefix}models/bert-base-uncased/"
    assert svg.startswith('<svg class="diagram diagram-wide"') and "<style>" in svg  # a slide is wide
    page_link = address if base_url else "index.html"  # the page, at its address or beside the file
    assert set(re.findall(r'(?:href|src)="([^"#]*)#', svg)) == {page_link}
    assert "url(" not in svg.replace("url(#diagram-arrow)", "") and "@import" not in svg
    words = content.load("site", language).section("diagram")
    title = tidy_spacing(words("title", title=model.card.title, total="109,482,240"), language)
    assert f'<title id="diagram-title">{title}</title>' in svg
    assert f'class="heading">{model.card.title}</text>' in svg
    assert f'class="count">{tidy_spacing(words("heading-total", total="109,482,240"), language)}</text>' in svg
    assert f'class="address">{address}</text>' in svg
    assert SOFT_SPACE not in svg  # resolved as on the page: "11,683,584 个参数", never a private-use mark
    assert '<a href="architecture.svg" download' in page


@pytest.mark.parametrize("card_id", ["deberta-v3-base", "deberta-base", "roformer-chinese-base", "mpnet-base"])
def test_a_table_every_layer_reads_is_drawn_just_above_the_layers(card_id: str) -> None:
    model, diagram = figure_of(card_id)
    (read,) = [b.block for b in model.derivation.blocks if b.block.read_by is not None]
    keys = [g.anchor for g in diagram.groups]
    assert read.read_by == "layer" and keys.index("d-layer") == keys.index(f"d-{read.key}") + 1
    svg = diagram_svg(diagram, content.load("site").section("diagram"))
    assert f"The {read.title} is stored once and read by every copy of the encoder layer." in svg
    assert svg.count('class="reads"') == 1


def test_a_block_read_by_no_repeated_block_is_refused() -> None:
    layer = Block("layer", Kind.ENCODER, "layer.{0}.", (), repeat=("L",))
    with pytest.raises(ValueError, match="Model: relative is read by pooler, no repeated block"):
        Architecture("Model", (layer, Block("relative", Kind.ENCODER, "", (), read_by="pooler")))


FIGURE = re.compile(r'<figure class="diagram"[^>]*>|<figure id="architecture"[^>]*>')


@pytest.mark.slow  # renders every family's page in both editions
@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_familys_figures_are_in_symbols_and_link_their_page(language: str) -> None:
    """The default figure in the config's symbols, and each switch's figure, folded under it."""
    renderer = Renderer(SiteOptions(search=False, language=language))
    family_pages = {page.path: page for page in families_page.pages([], language)}
    for name, family in families(language).items():
        html = renderer.render(family_pages[families_page.family_path(name)]).decode()
        diagram = families_page.family_diagram(family)
        ids = set(re.findall(r' id="([^"]+)"', html))
        figure = html[
            html.index('<figure id="architecture"') : html.index("</figure>", html.index('id="architecture"'))
        ]
        links = re.findall(r'<a href="#([^"]+)" class="block">', figure)
        assert links == 2 * [g.anchor for g in diagram.groups] and set(links) <= ids, name  # the wide, the narrow
        order = tuple(s.name for s in family.symbols)
        blocks = in_run_order(family.architecture(defaults(family), Head.BASE).blocks)
        assert [g.anchor for g in diagram.groups] == [f"tensors-{block.key}" for block in blocks], name
        for block in blocks:
            form = block_form(block, order)
            shown = to_text(form.subtotal_expression) if block.repeat else to_text(form.expression)
            assert f">{escape(shown)}</text>" in figure, (name, block.key)
        assert ">1,<" not in figure and not re.search(r">[\d,]{4,}", figure), name  # no number of any card
        # The switch figures under it, folded: each with ids of its own, and every link on the page.
        listed = re.findall(r' id="([^"]+)"', html)
        assert len(listed) == len(set(listed)), name  # each figure's title, desc and arrow ids are its own
        variants = families_page.switch_variants(family)
        assert re.findall(r'<details class="diagram-variant" id="architecture-([^"]+)"', html) == [
            v.ident for v in variants
        ]
        figures = [html[m.start() : html.index("</figure>", m.start())] for m in FIGURE.finditer(html)]
        assert len(figures) == 1 + len(variants), name
        diagrams = [families_page.family_diagram(family), *(v.diagram for v in variants)]
        for figure, diagram in zip(figures, diagrams, strict=True):
            links = [unquote(unescape(a)) for a in re.findall(r'<a href="#([^"]+)"', figure)]
            steps = [row.anchor for g in diagram.groups for row in g.rows]
            assert len(links) >= len(diagram.groups) + len(steps), name
            assert [link for link in links if link not in ids] == [], name


def test_mobilebert_family_figure_shows_its_bottlenecks_and_stacked_networks() -> None:
    family = families("en")["mobilebert"]
    (layer,) = [g for g in families_page.family_diagram(family).groups if g.anchor == "tensors-layer"]
    labels = {row.label: row.formula for row in layer.rows}
    assert labels["bottleneck in (H to B)"] == "B × H + B"
    assert labels["extra feed-forward network"] == "(F − 1)(I × B + I + B × I + B + B + B)"
    # Each weight's widths in symbols, as the model pages give them in numbers: in → out, a table's rows × width.
    widths = {row.label: (row.formula_widths, row.table) for row in layer.rows}
    assert widths["bottleneck in (H to B)"] == (("H", "B"), False)
    assert widths["feed-forward in"] == (("B", "I"), False)
    assert widths["attention NoNorm"] == ((), False)  # a vector: no widths
    albert = families_page.family_diagram(families("en")["albert"])
    tables = {row.label: (row.formula_widths, row.table) for g in albert.groups for row in g.rows}
    assert tables["token embeddings"] == (("V", "E"), True) and tables["E to H projection"] == (("E", "H"), False)
    assert layer.copies_formula == "L"
