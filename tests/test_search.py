"""What the search index knows of a model page: enough to find it, small enough for 10,000 cards."""

from __future__ import annotations

from conftest import card_by_id
from generator.site import content
from generator.site.search import NOTES_OPENING, SearchIndex, _opening, model_record
from generator.site.views import model_of

SITE_TEXT = content.load("site")


def test_a_model_record_names_the_model_its_sizes_and_its_parts() -> None:
    record = model_record(model_of(card_by_id("albert-base-v2")), SITE_TEXT)
    assert (record.url, record.title, record.html) == ("models/albert-base-v2/", "ALBERT-Base v2", None)
    lines = record.content.splitlines()
    assert lines[:4] == [
        "ALBERT-Base v2",
        "albert-base-v2",
        "ALBERT (albert), base head, AlbertModel.",
        "11,683,584 parameters (11.7M).",
    ]
    assert lines[4].startswith("Published: 12M, Lan et al. 2020")
    assert lines[5].startswith("The second release of ALBERT-Base from Google Research") and lines[5].endswith(" …")
    assert lines[6] == "Made of: embeddings, embedding projection, shared encoder layer, pooler."
    # numbers, step labels and tensor names stay on the page, out of the index (see model_record)
    assert len(lines) == 7 and "albert_layer_groups" not in record.content and "30000" not in record.content


def test_the_notes_opening_is_the_first_paragraph_cut_at_a_word() -> None:
    assert _opening("Short first paragraph,\nwrapped.\n\nSecond paragraph.") == "Short first paragraph, wrapped."
    cut = _opening("word " * 100)
    assert cut.endswith(" …") and len(cut) <= NOTES_OPENING + 2 and not cut.removesuffix(" …").endswith(" ")
    assert _opening("") == ""


def test_a_record_becomes_a_page_under_its_own_address(tmp_path) -> None:  # type: ignore[no-untyped-def]
    record = model_record(model_of(card_by_id("bert-base-uncased")), SITE_TEXT)
    SearchIndex(tmp_path).add(record)
    stub = (tmp_path / "models" / "bert-base-uncased" / "index.html").read_text(encoding="utf-8")
    assert stub.startswith('<!doctype html><html lang="en">') and "<body data-pagefind-body>" in stub
    assert "<title>BERT-Base, uncased</title>" in stub and "109,482,240 parameters (109.5M)." in stub
