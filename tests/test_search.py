"""What the search index knows of a model page: enough to find it, small enough for 10,000 cards."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import card_by_id
from generator.site import content
from generator.site.search import SITE_SHARD, WRITTEN, SearchIndex, merged_bundles, model_shards, shard_of
from generator.site.search_records import (
    ASIDE_WEIGHT,
    LIGHTER,
    NOTES_OPENING,
    RECORD_WEIGHT,
    TITLE_WEIGHT,
    SearchRecord,
    _opening,
    _without,
    _without_ignored,
    kind_of,
    model_record,
    page_record,
    searchable,
    stand_in,
)
from generator.site.views import model_of

SITE_TEXT = content.load("site")


def test_a_model_record_names_the_model_its_sizes_and_its_parts() -> None:
    record = model_record(model_of(card_by_id("albert-base-v2")), SITE_TEXT)
    assert (record.url, record.title, record.html, record.kind) == (
        "models/albert-base-v2/",
        "ALBERT-Base v2",
        None,
        "model",
    )
    lines = record.content.splitlines()
    # the title is the stub's heading, not repeated in its text (it would open every snippet)
    assert lines[:3] == [
        "albert-base-v2",
        "ALBERT (albert), base head, AlbertModel.",
        "11,683,584 parameters (11.7M).",
    ]
    assert lines[3] == "Made of: embeddings, embedding projection, shared encoder layer, pooler."
    # what names other models too (published figures, the notes) finds the page but barely ranks it
    aside = record.aside.splitlines()
    assert aside[0].startswith("Published: 12M, Lan et al. 2020")
    assert aside[1].startswith("The second release of ALBERT-Base from Google Research") and aside[1].endswith(" …")
    # numbers, step labels and tensor names stay on the page, out of the index (see model_record)
    assert len(lines) == 4 and len(aside) == 2
    assert "albert_layer_groups" not in record.content + record.aside and "30000" not in record.content + record.aside


def test_the_notes_opening_is_the_first_paragraph_cut_at_a_word() -> None:
    assert _opening("Short first paragraph,\nwrapped.\n\nSecond paragraph.") == "Short first paragraph, wrapped."
    cut = _opening("word " * 100)
    assert cut.endswith(" …") and len(cut) <= NOTES_OPENING + 2 and not cut.removesuffix(" …").endswith(" ")
    assert _opening("") == ""


def test_a_record_becomes_a_page_under_its_own_address_in_its_shard(tmp_path) -> None:  # type: ignore[no-untyped-def]
    record = model_record(model_of(card_by_id("bert-base-uncased")), SITE_TEXT)
    index = SearchIndex(tmp_path, models=1)
    index.add_model(record)
    assert index.write(tmp_path / "site", ["models-0"], jobs=1)["models-0"]  # its bundle, in pagefind/models-0/
    stub = (tmp_path / "models-0" / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    assert stub.startswith('<!doctype html><html lang="en">') and "<body data-pagefind-body>" in stub
    assert "<title>BERT-Base, uncased</title>" in stub and "109,482,240 parameters (109.5M)." in stub
    assert '<span data-pagefind-meta="kind:model"></span>' in stub
    assert f'<h1 data-pagefind-weight="{TITLE_WEIGHT}">BERT-Base, uncased</h1>' in stub
    assert f'<p data-pagefind-weight="{ASIDE_WEIGHT}">Published: 110M, Devlin et al.' in stub


def test_a_stand_in_written_beside_its_page_is_indexed_as_written_and_not_written_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A worker writes a model's stand-in as it makes the page (``write_model``); the build's own process
    only adds the record, and indexing the shard writes the stand-ins that are not there yet, no other."""
    first, second = (model_record(model_of(card_by_id(i)), SITE_TEXT) for i in ("bert-base-uncased", "albert-base-v2"))
    index = SearchIndex(tmp_path, models=1)
    index.write_model(first)
    stand_in = tmp_path / WRITTEN / "models-0" / "models" / "bert-base-uncased" / "index.html"
    assert "109,482,240 parameters" in stand_in.read_text(encoding="utf-8")
    stand_in.write_text("<p>as the worker left it</p>", encoding="utf-8")  # rewritten, this would show
    index.add_model(first, written=True)
    index.add_model(second)
    index.finish(index.start(["models-0"], jobs=1), tmp_path / "site")
    indexed = tmp_path / "models-0" / "models"  # where the stand-ins are moved for Pagefind (``_arrange``)
    assert (indexed / "bert-base-uncased" / "index.html").read_text(encoding="utf-8") == "<p>as the worker left it</p>"
    assert (indexed / "albert-base-v2" / "index.html").is_file()
    # the shard's digest is of the records, however their stand-ins were written
    assert index.contents(["models-0"]) == _both_added(tmp_path / "other", first, second)


def test_a_chinese_page_is_indexed_with_a_piece_starting_at_each_han_character() -> None:
    """Pagefind cuts a Chinese query into pieces (层归一化 as 层|归|一|化): each must start a word."""
    html = "<h1>层归一化</h1><p>BERT-Base 的参数量：109,482,240（约 1.09 亿）。</p>"
    assert searchable(html, "zh-CN") == (
        "<h1>层归一化 归一化 一化 化</h1><p>BERT-Base 的参数量 参数量 数量 量：109,482,240（约 1.09 亿）。</p>"
    )
    assert searchable(html, "en") == html  # a language that spaces its words is indexed as written
    record = SearchRecord("models/bert-base-uncased/", "BERT-Base", "参数量", kind="model")
    assert f'<p data-pagefind-weight="{RECORD_WEIGHT}">参数量 数量 量</p>' in stand_in(record, "zh-CN")


SITE_URLS = (
    "",
    "compare/",
    "diffs/",
    "diffs/a--b/",
    "diffs/a-c--d/",
    "families/",
    "families/bert/",
    "families/albert/",
)


def _laid_out(scratch: Path, urls: Sequence[str], monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Write a site shard's stand-ins in the order given, lay the shard out for Pagefind, and return
    what was made there, in order: each folder made and each page moved, below the shard's folder."""
    index = SearchIndex(scratch, models=1)
    for url in urls:
        index.add_page(SearchRecord(url, "", html=f"<p>{url}</p>"))
    done: list[tuple[str, str]] = []
    real_makedirs, real_replace = os.makedirs, os.replace
    shard = scratch / SITE_SHARD

    def makedirs(name: str, *args: Any, **kwargs: Any) -> None:
        done.append(("folder", Path(name).relative_to(shard).as_posix()))
        real_makedirs(name, *args, **kwargs)

    def replace(source: str, target: str) -> None:
        done.append(("moved", Path(target).relative_to(shard).as_posix()))
        real_replace(source, target)

    with monkeypatch.context() as patched:
        patched.setattr(os, "makedirs", makedirs)
        patched.setattr(os, "replace", replace)
        index._arrange(SITE_SHARD)
    assert sorted(p.relative_to(shard).as_posix() for p in shard.rglob("index.html")) == sorted(
        f"{url}index.html" for url in urls
    )
    return done


def test_a_shard_is_laid_out_for_pagefind_in_address_order_whatever_order_its_pages_were_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pagefind numbers pages in its walk's order, which on a tmpfs or btrfs is the order the entries were
    made; workers write stand-ins in any order, so the folder Pagefind reads is made afresh in address order."""
    forward = _laid_out(tmp_path / "forward", SITE_URLS, monkeypatch)
    backward = _laid_out(tmp_path / "backward", SITE_URLS[::-1], monkeypatch)
    assert (
        forward
        == backward
        == [
            ("folder", "."),
            ("moved", "index.html"),  # the root page holds the others: its file alone
            ("moved", "compare"),  # a page with none below it: its folder whole
            ("folder", "diffs"),
            ("moved", "diffs/index.html"),
            ("moved", "diffs/a--b"),
            ("moved", "diffs/a-c--d"),
            ("folder", "families"),
            ("moved", "families/index.html"),
            ("moved", "families/albert"),
            ("moved", "families/bert"),
        ]
    )


def _both_added(scratch, *records) -> dict[str, str]:  # type: ignore[no-untyped-def]
    index = SearchIndex(scratch, models=1)
    for record in records:
        index.add_model(record)
    return index.contents(["models-0"])


def test_each_address_has_its_kind() -> None:
    kinds = {
        "models/bert-base-uncased/": "model",
        "models/exercise-bert-base-v30000/": "exercise",
        "families/bert/": "family",
        "families/": "page",
        "diffs/bert-base-uncased--bert-large-uncased/": "diff",
        "diffs/": "page",
        "errata/": "erratum",
        "exercises/": "exercise",
        "compare/": "page",
        "handout/": "page",
        "": "page",
    }
    assert {url: kind_of(url) for url in kinds} == kinds


def test_a_page_is_indexed_without_permalinks_crumbs_or_table_headers_and_with_its_kind() -> None:
    page = (
        '<html><body><main id="main" data-pagefind-body><p class="crumbs"><a href="..">All</a> › X</p>'
        '<h1 id="top">Title <a class="permalink" href="#top" aria-label="Link to Title">#</a></h1>'
        "<table><thead><tr><th>Tensor</th></tr></thead><tbody><tr><td><code>a.b</code></td></tr></tbody></table>"
        "</main></body></html>"
    )
    family = page_record("families/bert/index.html", page.encode())
    assert family is not None and family.kind == "family" and family.url == "families/bert/"
    assert family.html is not None
    assert "#</a>" not in family.html and "crumbs" not in family.html and "<thead>" not in family.html
    assert '<main id="main" data-pagefind-body><span data-pagefind-meta="kind:family"' in family.html
    assert "<code>a.b</code>" in family.html  # a family page keeps its tensor names: they are what is searched
    diff = page_record("diffs/a--b/index.html", page.encode())
    assert diff is not None and diff.html is not None and diff.kind == "diff"
    # a comparison is lighter, and its tables (hundreds of model names in tensor lists) stay out
    assert f'<div data-pagefind-weight="{LIGHTER["diff"]}">' in diff.html and "<table" not in diff.html
    assert diff.html.endswith("</div></main></body></html>")
    # elsewhere the title keeps its weight (a search for "errata" ranks the errata first), the rest is lighter
    errata = page_record("errata/index.html", page.encode())
    assert errata is not None and errata.html is not None and errata.kind == "erratum"
    assert f'Title </h1><div data-pagefind-weight="{LIGHTER["erratum"]}"><table>' in errata.html
    assert page_record("search/index.html", page.encode()) is None


def _record_html(path: str, main: str) -> str:
    """The record of a page at ``path`` whose <main> holds ``main``: the HTML Pagefind is given."""
    page = f'<html><body><main id="main" data-pagefind-body>{main}</main></body></html>'
    record = page_record(path, page.encode())
    assert record is not None and record.html is not None
    return record.html


def test_a_chart_s_drawing_never_reaches_pagefind_nor_do_the_rows_of_every_model() -> None:
    """Pagefind indexes no text of an <svg>: the record leaves the drawing out before Pagefind parses it.
    The table that gives the chart's figures has a row for every model, each found by its own record:
    it is left out too, and the prose kept. A family page keeps its tables (all but its list of models)."""
    main = (
        '<h1 id="top">Charts</h1><p>Where the parameters are.</p>'
        '<svg class="chart" role="img"><title>Shares</title><text>bert-base-uncased</text></svg>'
        '<table class="shares"><tbody><tr><th>BERT-Base</th><td>21.7%</td></tr></tbody></table>'
    )
    charts = _record_html("charts/index.html", main)
    assert "<svg" not in charts and "bert-base-uncased" not in charts
    assert "<p>Where the parameters are.</p>" in charts
    assert "<table" not in charts and "21.7%" not in charts
    for every_model in ("index.html", "compare/index.html"):
        assert "<table" not in _record_html(every_model, main)
    assert '<table class="shares">' in _record_html("families/bert/index.html", main)


def test_model_records_spread_over_shards_by_address_and_the_search_page_merges_each_that_holds_one() -> None:
    assert [model_shards(n) for n in (0, 1, 128, 129, 1000, 1024, 1025, 10_000)] == [1, 1, 1, 2, 8, 8, 8, 8]
    assert shard_of("", 8) == shard_of("families/bert/", 8) == shard_of("errata/", 8) == SITE_SHARD
    ids = [f"card-{n}" for n in range(1000)]
    shards = [shard_of(f"models/{card_id}/", 8) for card_id in ids]
    assert set(shards) == {f"models-{n}" for n in range(8)}
    assert max(map(shards.count, set(shards))) < 1.25 * 1000 / 8  # spread evenly, give or take
    assert shard_of("models/card-7/", 8) == shards[7]  # the same in every build
    assert merged_bundles(ids) == [f"models-{n}" for n in range(8)]
    assert merged_bundles(["bert-base-uncased"]) == ["models-0"] and merged_bundles([]) == []


def test_an_element_is_cut_from_its_start_tag_to_the_next_end_tag_and_nothing_else() -> None:
    html = '<p>a</p><svg class="c"><text>x</text></svg><p>b</p><svg>y</svg><tbody>kept</tbody><table>t</table>'
    assert _without(html, "svg") == "<p>a</p><p>b</p><tbody>kept</tbody><table>t</table>"
    assert _without(html, "table") == html.removesuffix("<table>t</table>")
    assert _without("<table_x>same</table_x><tablet>same</tablet>", "table") == (
        "<table_x>same</table_x><tablet>same</tablet>"  # other elements whose names start the same
    )
    assert _without("<p>a</p><svg>never closed", "svg") == "<p>a</p><svg>never closed"


def test_what_pagefind_ignores_whole_is_cut_with_what_it_holds_and_the_pages_own_data_is_left_out() -> None:
    """A list of models on a page other than theirs is marked for Pagefind to ignore; the record cuts it,
    nested elements of its kind and all, so that editing a card leaves the page's record as it was."""
    html = _record_html(
        "families/bert/index.html",
        '<h1 id="top" data-pagefind-ignore>BERT</h1>'
        '<table class="tensors" data-value="12"><tbody><tr><td><code>encoder.layer.0.x</code></td></tr></tbody></table>'
        '<div data-pagefind-ignore="all"><div><a data-query="n_layers=12">BERT-Base</a></div>, 110M</div>'
        '<p data-pagefind-weight="0.3" data-start="h=768">Any config: <span data-pagefind-ignore="all">'
        '<a href="x">RoBERTa</a></span>the calculator.</p>',
    )
    assert "BERT-Base" not in html and "110M" not in html and "RoBERTa" not in html
    assert "data-value" not in html and "data-query" not in html and "data-start" not in html
    # what Pagefind reads stays: its own attributes, a heading it ignores for words but not for metadata
    assert '<h1 id="top" data-pagefind-ignore>BERT</h1>' in html
    assert '<p data-pagefind-weight="0.3">Any config: the calculator.</p>' in html
    assert '<table class="tensors"><tbody><tr><td><code>encoder.layer.0.x</code>' in html
    with pytest.raises(ValueError, match="never closed"):
        _without_ignored('<p>a</p><ul data-pagefind-ignore="all"><li>b</li>')
