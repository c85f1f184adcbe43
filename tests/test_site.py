"""The built site: every page, export and link, and a build that fails changes nothing."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import shutil
import urllib.parse
from pathlib import Path

import pytest

from conftest import MODELS, ROOT, SITE_JOBS, TEST_CARDS, reference_for, snapshot
from generator.build.output import MARKER
from generator.build.pipeline import build
from generator.cards.card import load_card, load_cards
from generator.cards.problems import InputError
from generator.counting.inventory import count_parameters
from generator.site import exports
from generator.site.page import SiteOptions

CARD_IDS = [card.id for card in load_cards(MODELS)]


def test_every_card_has_a_page_and_exports(site: Path) -> None:
    assert (site / "index.html").is_file() and (site / "compare" / "index.html").is_file()
    for card_id in CARD_IDS:
        assert (site / "models" / card_id / "index.html").is_file()
        assert (site / "models" / f"{card_id}.json").is_file()
        assert (site / "models" / f"{card_id}.csv").is_file()


@pytest.mark.parametrize("card_id", CARD_IDS)
def test_json_export_matches_transformers(site: Path, card_id: str) -> None:
    exported = json.loads((site / "models" / f"{card_id}.json").read_text(encoding="utf-8"))
    reference = reference_for(card_id)
    assert list(exported) == ["id", "family", "head", "class", "total", "tensors", "tied", "compute"]
    assert (exported["class"], exported["total"]) == (reference["class"], reference["total"])
    assert [{k: t[k] for k in ("name", "shape", "count")} for t in exported["tensors"]] == reference["tensors"]
    assert exported["tied"] == reference["tied"]


def test_json_components(site: Path) -> None:
    exported = json.loads((site / "models" / "bert-base-uncased-pretraining.json").read_text(encoding="utf-8"))
    components = {t["name"]: t["component"] for t in exported["tensors"]}
    assert components["bert.embeddings.LayerNorm.bias"] == "embeddings"
    assert components["bert.encoder.layer.11.output.dense.weight"] == "encoder layer 11"
    assert components["bert.pooler.dense.bias"] == "pooler"
    assert components["cls.predictions.bias"] == "masked-LM head"
    assert components["cls.seq_relationship.weight"] == "next-sentence head"


def test_csv_export_lists_tied_rows_with_zero(site: Path) -> None:
    with (site / "models" / "bert-base-uncased-pretraining.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 5 + 12 * 16 + 2 + 5 + 2 + 2  # embeddings, layers, pooler, MLM, NSP, tied
    assert sum(int(r["count"]) for r in rows) == 110_106_428
    decoder = next(r for r in rows if r["name"] == "cls.predictions.decoder.weight")
    assert decoder == {
        "name": "cls.predictions.decoder.weight",
        "shape": "",
        "count": "0",
        "component": "masked-LM head",
        "tied_to": "bert.embeddings.word_embeddings.weight",
    }


def test_the_tied_slots_are_listed_with_what_each_is_and_the_tensor_it_holds(site: Path) -> None:
    """Each line: the slot, what it is (its role, a verb phrase from content/en/families.yaml), and the
    tensor it is, each name linking to its row of the tensor tables."""
    page = (site / "models" / "bert-base-uncased-pretraining" / "index.html").read_text(encoding="utf-8")
    section = re.search(r'<section aria-labelledby="tied">(.*?)</section>', page, re.S)
    assert section is not None
    lines = [re.sub(r"<[^>]+>", "", item) for item in re.findall(r"<li>(.*?)</li>", section[1])]
    assert lines == [
        "cls.predictions.decoder.weight reuses the token embeddings: it is bert.embeddings.word_embeddings.weight",
        "cls.predictions.decoder.bias is the output bias: it is cls.predictions.bias",
    ]
    for name in ("cls.predictions.decoder.bias", "cls.predictions.bias"):  # the slot's row, and its tensor's
        assert f'<a href="#t-{name}"><code>{name}</code></a>' in section[1] and f'id="t-{name}">' in page


def test_csv_export_quotes_a_name_that_needs_it_as_the_csv_module_does() -> None:
    """The export writes plain rows itself; a field with a comma, a quote or a line break goes through the
    csv module's writer, so the file reads back the same (names from a transformers class never hold one)."""
    inventory = count_parameters(load_card(MODELS / "bert-base-uncased-pretraining.yaml"))
    first, tied = inventory.entries[0], inventory.tied[0]
    odd = (
        dataclasses.replace(first, name='odd,"name"'),
        dataclasses.replace(tied, component="masked-LM\nhead"),
        *(e for e in inventory.entries if e not in (first, tied)),
    )
    text = exports.to_csv(dataclasses.replace(inventory, entries=odd))
    assert text.splitlines()[1].startswith('"odd,""name""",30522x768,23440896,')
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1][0] == 'odd,"name"' and rows[2][3] == "masked-LM\nhead" and len(rows) == len(odd) + 1
    assert (
        exports.to_csv(inventory).splitlines()[1]
        == "bert.embeddings.word_embeddings.weight,30522x768,23440896,embeddings,"
    )


def test_model_page_content(site: Path) -> None:
    html = (site / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    assert '<strong id="total" data-value="109482240">109,482,240</strong>' in html
    assert "≈ 109.5M" in html
    assert "<title>BERT-Base, uncased: 109,482,240 parameters · BERT Parameter Atlas</title>" in html
    closed_form = (
        '<math alttext="(V + P + T + 2)H + L(4H² + 2HI + 9H + I) + H² + H"><semantics><mrow><mrow><mrow><mo>(</mo>'
        "<mrow><mi>V</mi><mo>+</mo><mi>P</mi><mo>+</mo><mi>T</mi><mo>+</mo><mn>2</mn></mrow><mo>)</mo></mrow>"
        "<mo>\u2062</mo><mi>H</mi></mrow>"
    )
    assert closed_form in html
    tex = "(V + P + T + 2)H + L(4H^{2} + 2HI + 9H + I) + H^{2} + H"
    assert f'<annotation encoding="application/x-tex">{tex}</annotation></semantics></math>' in html
    assert '12 × 7,087,872</td><td class="n count">85,054,464</td>' in html
    assert "<strong>110M</strong>" in html  # the published claim, beside the exact count
    assert 'id="t-encoder.layer.11.output.LayerNorm.bias"' in html  # the full list of layers
    assert "A does not change the count" in html.replace("<var>", "").replace("</var>", "")


def test_pretraining_page_shows_tied_tensors(site: Path) -> None:
    html = (site / "models" / "bert-base-uncased-pretraining" / "index.html").read_text(encoding="utf-8")
    assert re.search(
        r'<tr class="tied" id="t-cls.predictions.decoder.weight">.*?tied to <a href="#t-bert.embeddings.word_embeddings.weight">',
        html,
        re.S,
    )


def test_index_and_compare_list_every_card(site: Path) -> None:
    index = (site / "index.html").read_text(encoding="utf-8")
    compare = (site / "compare" / "index.html").read_text(encoding="utf-8")
    for card_id in CARD_IDS:
        total = f"{reference_for(card_id)['total']:,}"
        # The home page lists an exercise without its total: the total is the exercise's answer.
        pages = (compare,) if card_id.startswith("exercise-") else (index, compare)
        for page in pages:
            row = re.search(rf'<tr id="{re.escape(card_id)}"[^>]*>(.*?)</tr>', page, re.S)
            assert row and total in row.group(1), card_id
        if card_id.startswith("exercise-"):
            assert f'href="models/{card_id}/index.html"' in index, card_id
            assert total not in index, card_id
    bert_base = re.search(r'<tr id="bert-base-uncased"[^>]*>(.*?)</tr>', compare, re.S)
    assert bert_base is not None and "21.8%" in bert_base.group(1)


def test_internal_links_resolve(site: Path) -> None:
    for page in site.rglob("*.html"):
        if page.name == "404.html":
            continue  # served at any depth, so its links are absolute (see test_not_found_page)
        html = page.read_text(encoding="utf-8")
        ids = set(re.findall(r'id="([^"]+)"', html))
        for href in re.findall(r'(?:href|src)="([^"]+)"', html):
            if href.startswith(("http://", "https://")):
                continue
            target, _, fragment = href.partition("#")
            target = target.partition("?")[0]  # the calculator's state rides in the query string
            assert not target.startswith("/"), f"{page}: absolute link {href}"
            resolved = (page.parent / target).resolve() if target else page
            assert resolved.is_file(), f"{page.relative_to(site)}: broken link {href}"
            if fragment:
                target_ids = (
                    ids if not target else set(re.findall(r'id="([^"]+)"', resolved.read_text(encoding="utf-8")))
                )
                # as a browser does: the fragment as written, else percent-decoded (#t-layer.%7Bn%7D... is t-layer.{n}...)
                found = fragment in target_ids or urllib.parse.unquote(fragment) in target_ids
                assert found, f"{page.relative_to(site)}: missing anchor {href}"


def test_builds_are_byte_identical_whatever_the_number_of_jobs(site: Path, tmp_path: Path) -> None:
    """A second build, in this process and with one job where the session's had SITE_JOBS, is the same byte for byte."""
    again = tmp_path / "again"
    assert SITE_JOBS > 1
    assert build(MODELS, again, jobs=1).cards == len(list(MODELS.glob("*.yaml")))
    built = snapshot(site)
    assert len(built) > 3 * len(list(MODELS.glob("*.yaml")))
    assert snapshot(again) == built


def test_failed_build_leaves_the_previous_site_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    models = tmp_path / "models"
    models.mkdir()
    for name in ("bert-base-uncased", "albert-base-v2", "roberta-base"):  # a few cards: the card check fails first
        shutil.copy(MODELS / f"{name}.yaml", models)
    out = tmp_path / "site"
    build(models, out)
    before = snapshot(out)
    (models / "broken.yaml").write_text(
        "title: x\nfamily: bert\nhead: base\nconfig: {hidden_size: -1}\n", encoding="utf-8"
    )
    with pytest.raises(InputError):
        build(models, out)
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models", "site"]  # no staging left behind


def test_output_directory_guards(tmp_path: Path) -> None:
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "thesis.tex").write_text("keep me", encoding="utf-8")
    with pytest.raises(InputError, match="no build made"):
        build(MODELS, stranger)
    assert (stranger / "thesis.tex").read_text(encoding="utf-8") == "keep me"
    with pytest.raises(InputError, match="refusing to write the site over"):
        build(MODELS, MODELS)
    with pytest.raises(InputError, match="refusing to write the site over"):
        build(MODELS, ROOT)


def test_marker_identifies_a_build(site: Path) -> None:
    assert (site / MARKER).is_file()


def test_shared_layers_are_explained_with_their_depth(site: Path) -> None:
    html = (site / "models" / "albert-base-v2" / "index.html").read_text(encoding="utf-8")
    assert 'id="sym-L"' in html  # L is not in the formula, but the page says where it goes
    text = re.sub(r"<[^>]+>", "", html)
    assert "the model applies this one stored shared encoder layer L = 12 times in all" in text


def test_comparison_leaves_out_sizes_a_model_does_not_use(site: Path) -> None:
    compare = (site / "compare" / "index.html").read_text(encoding="utf-8")
    row = re.search(r'<tr id="deberta-v3-base"[^>]*>(.*?)</tr>', compare, re.S)
    assert row is not None
    cells = re.findall(r'<td class="n">([^<]*)</td>', row.group(1))
    # The embedding share, then L, H, A, I, E, V, P: no embedding projection and no absolute position
    # table in DeBERTa-v3.
    assert cells[1:8] == ["12", "768", "12", "3,072", "—", "128,100", "—"]


def test_a_classifier_without_labels_says_it_counts_the_default(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    for stem in ("test-roberta-classifier-default-labels", "test-roberta-classifier-3"):
        shutil.copy(TEST_CARDS / f"{stem}.yaml", models)
    build(models, tmp_path / "site", SiteOptions(search=False))
    sentence = "gives neither <code>num_labels</code> nor <code>id2label</code>, so the classifier is counted with"
    default = (tmp_path / "site" / "models" / "test-roberta-classifier-default-labels" / "index.html").read_text(
        "utf-8"
    )
    assert f"{sentence} transformers' default of 2 labels." in default
    given = (tmp_path / "site" / "models" / "test-roberta-classifier-3" / "index.html").read_text("utf-8")
    assert sentence not in given


def test_on_this_page_links_every_section_of_every_model_page(site: Path) -> None:
    """A lecturer finds a section to link to in "On this page": every h2 and h3 with an id is listed there
    (the compute section's s², masks and backward paragraphs, and the published figures, were not)."""
    listed_anywhere = set()
    for card_id in CARD_IDS:
        page = (site / "models" / card_id / "index.html").read_text(encoding="utf-8")
        toc = page[page.index('<nav class="toc"') : page.index("</nav>", page.index('<nav class="toc"'))]
        listed = set(re.findall(r'<a href="#([^"]+)"', toc))
        headings = set(re.findall(r'<h[23][^>]* id="([^"]+)"', page))
        assert headings - listed == set(), card_id
        listed_anywhere |= listed
    assert {"claims", "c-s2", "c-masks", "c-backward-ratio"} <= listed_anywhere


def test_every_section_heading_of_every_page_shows_its_permalink(site: Path) -> None:
    """docs/site.md promises a `#` on every heading: a reader copies a section's link from it."""
    bare = []
    for path in sorted(site.rglob("*.html")):
        html = path.read_text(encoding="utf-8")
        for _level, anchor, inner in re.findall(r'<h([2-4]) id="([^"]+)"[^>]*>(.*?)</h\1>', html, re.S):
            if f'class="permalink" href="#{anchor}"' not in inner:
                bare.append(f"{path.relative_to(site)}#{anchor}")
    assert bare == []
